"""Purposeful changes on real dbt and DuckDB: a small project is seeded and built, the changes are
found and measured on its build (propose/purpose.candidates), and each one's broken and right
texts are built by dbt. The right state keeps the purpose (the new count is there, the asked-for
rows are gone) and leaves everything else as it was; the broken state differs from it."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from adegen.propose.purpose import ModelText, candidates
from adegen.realism.probe import ProbeDB
from adegen.rewrite.purposes import EXCLUSION, METRIC

MODEL = """with orders as (

    select * from {{ ref('raw_orders') }}

)

select
    customer_id,
    count(*) as order_count,
    sum(amount) as revenue
from orders
group by customer_id
"""

ROWS = [(1, 1, 10, "completed"), (2, 1, 20, "returned"), (3, 2, 5, "completed"), (4, 2, 7, ""),
        (5, 3, 3, "placed"), (6, 3, 4, "completed"), (7, 1, 1, "placed"), (8, 3, 2, "shipped"),
        (9, 2, 6, "shipped"), (10, 1, 8, "completed"), (11, 4, 9, "completed"), (12, 4, 2, "returned")]


def _dbt(project: Path, *args: str) -> None:
    dbt = Path(sys.executable).resolve().parent / "dbt"
    r = subprocess.run([str(dbt), *args, "--project-dir", str(project), "--profiles-dir", str(project)],
                       capture_output=True, text=True, timeout=300, cwd=project)
    assert r.returncode == 0, r.stdout[-3000:]


def _table(db: Path, sql: str) -> set:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return set(con.execute(sql).fetchall())
    finally:
        con.close()


@pytest.fixture(scope="module")
def shop(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("purpose-shop")
    (p / "dbt_project.yml").write_text("name: shop\nversion: '1.0'\nprofile: shop\nconfig-version: 2\n"
                                       "models:\n  shop:\n    +materialized: table\n")
    (p / "profiles.yml").write_text("shop:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n"
                                    f"      path: '{p / 'shop.duckdb'}'\n      schema: main\n")
    (p / "seeds").mkdir()
    (p / "seeds" / "raw_orders.csv").write_text(
        "order_id,customer_id,amount,status\n" + "".join(f"{a},{b},{c},{d}\n" for a, b, c, d in ROWS))
    (p / "models").mkdir()
    (p / "models" / "order_summary.sql").write_text(MODEL)
    _dbt(p, "build")
    return p


def test_purposeful_changes_build_and_keep_their_purpose(shop):
    db = shop / "shop.duckdb"
    compiled = (shop / "target" / "compiled" / "shop" / "models" / "order_summary.sql").read_text()
    model = ModelText("model.shop.order_summary", "order_summary", "models/order_summary.sql", MODEL, compiled)
    probe = ProbeDB(db, None)
    try:
        found = {c.kind: c for c in candidates([model], probe)}
    finally:
        probe.close()
    assert set(found) == {METRIC, EXCLUSION}
    today = _table(db, "select customer_id, order_count, revenue from order_summary")
    metric, excl = found[METRIC], found[EXCLUSION]
    states = {f"{k}_{state}": getattr(c, state) for k, c in (("metric", metric), ("excl", excl))
              for state in ("broken", "fixed")}
    for name, text in states.items():  # every state beside the model, built by one dbt run
        (shop / "models" / f"{name}.sql").write_text(text)
    _dbt(shop, "run", "--select", *states)
    got = {name: _table(db, f"select * from {name}") for name in states}
    # done right: the old figures as today, the new count beside them; broken: the old figures change
    assert {r[:3] for r in got["metric_fixed"]} == today
    assert {r[:3] for r in got["metric_broken"]} != today
    counts = {r[0]: r[3] for r in got["metric_fixed"]}
    assert any(counts.values()) and counts != {r[0]: r[1] for r in got["metric_fixed"]}
    left = _table(db, "select customer_id, count(*), sum(amount) from raw_orders "
                      f"where status is distinct from '{excl.ask.value}' group by customer_id")
    assert got["excl_fixed"] == left != today            # only the asked-for rows are gone
    assert got["excl_broken"] != got["excl_fixed"]       # the `<>` took the NULL-status rows too


def test_purposeful_changes_are_the_default_with_an_opt_out(tmp_path):
    from adegen.cli.build_args import parse_args
    from adegen.core.errors import InputError

    project, out = str(Path(__file__).resolve().parent / "fixtures" / "shopfix"), str(tmp_path / "out")
    assert parse_args([project, "--output-dir", out]).purpose == "auto"
    assert parse_args([project, "--output-dir", out, "--purpose"]).purpose == "on"
    assert parse_args([project, "--output-dir", out, "--no-purpose"]).purpose == "off"
    assert parse_args([project, "--output-dir", out, "--no-validate"]).purpose == "off"  # nothing to prove on
    with pytest.raises(InputError, match="needs validation") as err:
        parse_args([project, "--output-dir", out, "--purpose", "--no-validate"])
    assert err.value.field == "--purpose"


def test_purposeful_tasks_take_slots_of_the_count_ahead_of_plain_slips():
    from types import SimpleNamespace

    from adegen.pipeline.purpose import make_room, slots

    def prop(number, story=None, siblings=(), compound=None, origin=None):
        return SimpleNamespace(number=number, story=story, siblings=siblings, compound=compound,
                               candidate=SimpleNamespace(origin=origin))

    picked = [prop(1), prop(2, story="extract_cte"), prop(3), prop(4, siblings=("b",)), prop(5, origin="history")]
    assert [slots(n) for n in (3, 4, 5)] == [2, 2, 2] and slots(1) == 0
    kept, out = make_room(picked, 2, 5)  # two proven: the two plain slips leave, a diff from the history stays
    assert [p.number for p in kept] == [2, 4, 5] and [p.number for p in out] == [1, 3]
    kept, out = make_room(picked, 4, 5)  # no plain slip left to give: the lowest ranked of the rest
    assert [p.number for p in kept] == [2] and [p.number for p in out] == [1, 3, 4, 5]
    assert make_room(picked[:2], 2, 5) == (picked[:2], [])  # a pick that fits stays whole
    assert make_room(picked, 0, 5) == (picked, [])  # none proven: every slot stays a slip's
