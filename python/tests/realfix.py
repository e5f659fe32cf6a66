"""Small generated dbt projects with the shapes real projects have (issue 11): hub packages installed
in dbt_packages/, nested `local:` packages, a `data-tests` layout, a typed macro in `on-run-start`,
a top-N model with ties, a table big enough for a self-join to explode. Each is a few models on
generated DuckDB data, built in seconds."""
from __future__ import annotations

from pathlib import Path

import duckdb
import yaml

ORDERS_SQL = """select
    o.order_id,
    o.customer_id,
    o.amount,
    o.status
from {{ source('raw', 'orders') }} as o
where o.status != 'cancelled'
"""

CUSTOMER_TOTALS_SQL = """{{ config(materialized='table') }}
select
    c.customer_id,
    c.name,
    count(o.order_id) as order_count,
    sum(o.amount) as total_amount
from {{ source('raw', 'customers') }} as c
left join {{ ref('stg_orders') }} as o
    on c.customer_id = o.customer_id
group by 1, 2
"""


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def raw_database(db: Path, tables: dict[str, str]) -> None:
    """Create `db` with `tables` (name -> SELECT that generates the rows)."""
    con = duckdb.connect(str(db))
    try:
        for name, select in tables.items():
            con.execute(f"create table main.{name} as {select}")
    finally:
        con.close()


SHOP_TABLES = {
    "customers": "select i as customer_id, 'c' || i as name from range(1, 41) r(i)",
    "orders": ("select i as order_id, 1 + i % 40 as customer_id, (i * 7 % 100) + 0.5 as amount, "
               "case when i % 9 = 0 then 'cancelled' when i % 4 = 0 then 'returned' else 'complete' end as status "
               "from range(1, 401) r(i)"),
}


def shop_project(root: Path, name: str, *, project_extra: dict | None = None, models: dict | None = None,
                 files: dict | None = None, tables: dict | None = None, sources: tuple = ()) -> Path:
    """A two-layer shop project (staging view, marts table) on generated raw tables; `tables` adds
    raw tables (`sources` names those declared as sources too)."""
    root.mkdir(parents=True, exist_ok=True)
    cfg = {"name": name, "version": "1.0.0", "config-version": 2, "profile": name,
           "models": {name: {"marts": {"+materialized": "table"}}}}
    cfg.update(project_extra or {})
    (root / "dbt_project.yml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    (root / "profiles.yml").write_text(yaml.safe_dump({name: {"target": "dev", "outputs": {"dev": {
        "type": "duckdb", "path": f"./{name}.duckdb", "schema": "main", "threads": 1}}}}))
    write(root, {
        "models/staging/_sources.yml": yaml.safe_dump({"version": 2, "sources": [
            {"name": "raw", "schema": "main", "tables": [{"name": t} for t in ("orders", "customers", *sources)]}]}),
        "models/staging/stg_orders.sql": ORDERS_SQL,
        "models/marts/customer_totals.sql": CUSTOMER_TOTALS_SQL,
        **(models or {}), **(files or {})})
    raw_database(root / f"{name}.duckdb", {**SHOP_TABLES, **(tables or {})})
    return root


def package(root: Path, name: str, version: str, macros: dict[str, str], deps: list | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "dbt_project.yml").write_text(yaml.safe_dump({"name": name, "version": version, "config-version": 2}))
    write(root, {f"macros/{m}.sql": body for m, body in macros.items()})
    if deps is not None:
        (root / "packages.yml").write_text(yaml.safe_dump({"packages": deps}))
    return root
