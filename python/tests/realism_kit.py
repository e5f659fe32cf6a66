"""Shared helpers of the realism tests (`test_realism_*.py`): a tiny DuckDB file in tmp_path, SQL
written the way dbt compiles a model against it, and one precondition check run on an intact /
mutant pair (real DuckDB, no mocks).

The database file is `shop.duckdb`, so compiled names read `"shop"."main".<table>` (`T` below).
Test modules import what they need: `from realism_kit import ...`."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import duckdb

from adegen.realism import ProbeDB
from adegen.realism.locate import locate
from adegen.realism.registry import CheckInput, Verdict, run_check

T = '"shop"."main".'  # the prefix dbt compiles a relation of shop.duckdb's main schema to


def duck(path: Path, *statements: str) -> Path:
    """A DuckDB file at `path` made by plain SQL statements (tables land in `main`)."""
    con = duckdb.connect(str(path))
    try:
        for s in statements:
            con.execute(s)
    finally:
        con.close()
    return path


def shop(tmp_path: Path, *statements: str) -> Path:
    return duck(tmp_path / "shop.duckdb", *statements)


def table_statements(data: dict, columns: dict) -> list[str]:
    """The statements that build `data`'s tables in order: `name: VALUES rows` (typed columns from
    `columns[name]`), `name(a, b): VALUES rows`, or `name: select ...`."""
    out = []
    for key, rows in data.items():
        name, _, cols = key.partition("(")
        if rows.lstrip().lower().startswith("select"):
            out.append(f"create table {name} as {rows}")
        elif cols:
            out.append(f"create table {name} as select * from (values {rows}) v({cols.rstrip(')')})")
        else:
            out += [f"create table {name}({columns[name]})", f"insert into {name} values {rows}"]
    return out


def swap(sql: str, old: str, new: str) -> str:
    """`sql` with the one occurrence of `old` replaced (the edit a pattern makes)."""
    assert sql.count(old) == 1, f"{old!r} occurs {sql.count(old)} times"
    return sql.replace(old, new)


def measure(check: str, db: Path, intact: str, mutant: str, *, catalog: str | None = None, **params) -> Verdict:
    """The verdict of `check` (with `params`) on the change from `intact` to `mutant`, probed on `db`."""
    scope = locate(intact, mutant)
    assert scope is not None, "the change was not located"
    probe = ProbeDB(db, catalog)
    try:
        return run_check({"check": check, **params}, CheckInput(scope, probe, {}, {}, {}, None))
    finally:
        probe.close()


def graph(check: str, model: dict, placeholders: dict | None = None, raw: dict | None = None) -> Verdict:
    """The verdict of a graph check (needs_sql=False): the model's discovery entry, the site's
    placeholders and the raw SQL of other models by unique id."""
    site = SimpleNamespace(placeholders=placeholders or {})
    inp = CheckInput(None, None, {}, model, {"models": [model]}, site, {"raw_sql": (raw or {}).get})
    return run_check({"check": check}, inp)
