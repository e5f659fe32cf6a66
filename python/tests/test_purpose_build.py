"""Purposeful changes on real dbt and DuckDB: a small project is seeded and built, the changes are
found and measured on its build (propose/purpose.candidates), and each one's broken and right
texts are built by dbt. The right state keeps the purpose (the new count is there, the asked-for
rows are gone) and leaves everything else as it was; the broken state differs from it."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from adegen.core.graph import ProjectGraph
from adegen.prompts import mechanisms
from adegen.propose import dedup, grain
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
        (9, 2, 6, "shipped"), (10, 1, 8, "completed"), (11, 4, 9, "completed"), (12, 4, 2, "returned"),
        (13, 5, 4, "placed")]  # customer 5: none completed (a new count's group that matches nothing)


# The grain kind's project: orders (one row each) and their items (several per order, each item
# carrying its order's channel: a column the order id determines there). fct_orders is the mart a
# column is brought into; rpt_order_lines reads fct_orders (downstream: never a side) and repeats
# the order id with a column of its own.
ITEMS = [(1, 1, "pen", "web"), (2, 1, "ink", "web"), (3, 2, "pad", "store"), (4, 3, "pen", "web"),
         (5, 3, "pad", "web"), (6, 3, "ink", "web"), (7, 5, "pen", "phone"), (8, 6, "pad", "store"),
         (9, 7, "ink", "web"), (10, 7, "pen", "web"), (11, 9, "pad", "store"), (12, 10, "pen", "phone")]
GRAIN_MODELS = {
    "stg_order_items": "select item_id, order_id, product, channel from {{ ref('raw_order_items') }}\n",
    "fct_orders": ("with orders as (\n\n    select * from {{ ref('raw_orders') }}\n\n)\n\nselect\n"
                   "    order_id,\n    customer_id,\n    amount,\n    status\nfrom orders\n"),
    "rpt_order_lines": ("select\n    f.order_id,\n    f.amount,\n    i.channel as line_channel\n"
                        "from {{ ref('fct_orders') }} as f\njoin {{ ref('stg_order_items') }} as i\n"
                        "    on f.order_id = i.order_id\n"),
}


# The dedup kind's project: events delivered at least once (event 2 and 5 loaded twice), deduplicated
# in stg_events and counted per order downstream; stg_orders_latest deduplicates orders that are
# unique already (no task: the cleanup would be right there).
EVENTS = [(1, 1, "2024-01-01 10:00"), (2, 1, "2024-01-01 10:05"), (2, 1, "2024-01-01 11:00"), (3, 2, "2024-01-02 09:00"),
          (4, 3, "2024-01-03 09:00"), (5, 3, "2024-01-03 09:30"), (5, 3, "2024-01-03 12:00"), (6, 4, "2024-01-04 08:00")]
DEDUP_MODELS = {
    "stg_events": ("with source as (\n\n    select * from {{ ref('raw_events') }}\n\n),\n\n"
                   "deduplicated as (\n\n    select\n        *,\n        row_number() over (\n"
                   "            partition by event_id\n            order by loaded_at\n        ) as delivery_number\n"
                   "    from source\n\n)\n\nselect\n    event_id,\n    order_id\nfrom deduplicated\n"
                   "where delivery_number = 1\n"),
    "fct_order_events": ("select\n    order_id,\n    count(*) as event_count\nfrom {{ ref('stg_events') }}\n"
                         "group by order_id\n"),
    "stg_orders_latest": ("select\n    order_id,\n    status\nfrom {{ ref('raw_orders') }}\n"
                          "qualify row_number() over (partition by order_id order by amount desc) = 1\n"),
}


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
    (p / "seeds" / "raw_order_items.csv").write_text(
        "item_id,order_id,product,channel\n" + "".join(f"{a},{b},{c},{d}\n" for a, b, c, d in ITEMS))
    (p / "seeds" / "raw_events.csv").write_text(
        "event_id,order_id,loaded_at\n" + "".join(f"{a},{b},{c}\n" for a, b, c in EVENTS))
    (p / "models").mkdir()
    for name, text in DEDUP_MODELS.items():
        (p / "models" / f"{name}.sql").write_text(text)
    (p / "models" / "order_summary.sql").write_text(MODEL)
    for name, text in GRAIN_MODELS.items():
        (p / "models" / f"{name}.sql").write_text(text)
    _dbt(p, "build")
    return p


def _grain_model(shop: Path) -> ModelText:
    compiled = (shop / "target" / "compiled" / "shop" / "models" / "fct_orders.sql").read_text()
    return ModelText("model.shop.fct_orders", "fct_orders", "models/fct_orders.sql", GRAIN_MODELS["fct_orders"],
                     compiled, "marts")


@pytest.fixture(scope="module")
def states(shop) -> dict:
    """Every kind's changes found on the shop, and each one's broken and right states built beside
    the models by one dbt run (a dropped dedup's: the model without it, and a table downstream):
    {"found": {kind: change}, "joins": [...], "dedups": [...], "tables": {state: rows}}."""
    db = shop / "shop.duckdb"
    compiled = (shop / "target" / "compiled" / "shop" / "models" / "order_summary.sql").read_text()
    model = ModelText("model.shop.order_summary", "order_summary", "models/order_summary.sql", MODEL, compiled)
    graph = ProjectGraph.from_manifest(json.loads((shop / "target" / "manifest.json").read_text()))
    # rpt_order_lines first by name: only its being downstream of fct_orders keeps it from being the side
    sides = [grain.Side(f"model.shop.{n}", n, f'"shop"."main"."{n}"', layer)
             for n, layer in (("rpt_order_lines", "marts"), ("stg_order_items", "staging"), ("fct_orders", "marts"))]
    probe = ProbeDB(db, None)
    try:
        found = {c.kind: c for c in candidates([model], probe)}
        joins = grain.candidates([_grain_model(shop)], sides, graph, probe)
        dedups = dedup.candidates([_model(shop, n, DEDUP_MODELS[n]) for n in ("stg_orders_latest", "stg_events")], probe)
    finally:
        probe.close()
    found.update({c.kind: c for c in joins})
    short = {METRIC: "metric", EXCLUSION: "excl", grain.GRAIN: "grain"}
    built = {f"{short[k]}_{state}": getattr(c, state) for k, c in found.items() for state in ("broken", "fixed")}
    if dedups:  # the model without its dedup, and the table downstream of it reading that one
        built["dedup_broken"] = dedups[0].broken
        built["dedup_downstream"] = DEDUP_MODELS["fct_order_events"].replace("ref('stg_events')", "ref('dedup_broken')")
    for name, text in built.items():  # every state beside the models, built by one dbt run
        (shop / "models" / f"{name}.sql").write_text(text)
    _dbt(shop, "run", "--select", *built)
    return {"found": found, "joins": joins, "dedups": dedups, "tables": {name: _rows(db, f"select * from {name}") for name in built}}


def test_purposeful_changes_build_and_keep_their_purpose(shop, states):
    db = shop / "shop.duckdb"
    found = states["found"]
    assert {METRIC, EXCLUSION} <= set(found)
    today = _table(db, "select customer_id, order_count, revenue from order_summary")
    metric, excl = found[METRIC], found[EXCLUSION]
    got = {name: set(rows) for name, rows in states["tables"].items()}
    # done right: the old figures as today, the new count beside them; broken: the old figures change
    assert {r[:3] for r in got["metric_fixed"]} == today
    assert {r[:3] for r in got["metric_broken"]} != today
    counts = {r[0]: r[3] for r in got["metric_fixed"]}
    assert any(counts.values()) and counts != {r[0]: r[1] for r in got["metric_fixed"]}
    left = _table(db, "select customer_id, count(*), sum(amount) from raw_orders "
                      f"where status is distinct from '{excl.ask.value}' group by customer_id")
    assert got["excl_fixed"] == left != today            # only the asked-for rows are gone
    assert got["excl_broken"] != got["excl_fixed"]       # the `<>` took the NULL-status rows too


def test_a_column_brought_in_at_the_wrong_grain_and_at_the_right_one(shop, states):
    """The grain kind (propose/grain.py): the side that repeats the key is found on the data, the
    broken state gains rows (and its total amount grows), the right state is today's table with
    the new column beside it; a model downstream of the changed one is never the side."""
    db = shop / "shop.duckdb"
    found = states["joins"]
    assert len(found) == 1
    c = found[0]
    assert (c.ask.source, c.ask.key, c.ask.column) == ("stg_order_items", "order_id", "channel")
    today = _table(db, "select order_id, customer_id, amount, status from fct_orders")
    broken, fixed = states["tables"]["grain_broken"], states["tables"]["grain_fixed"]  # columns: today's, then channel
    assert len(broken) > len(today) and sum(r[2] for r in broken) > sum(r[2] for r in today)
    assert len(fixed) == len(today) and {r[:4] for r in fixed} == today
    assert {r[0]: r[4] for r in fixed} == {1: "web", 2: "store", 3: "web", 4: None, 5: "phone", 6: "store",
                                           7: "web", 8: None, 9: "store", 10: "phone", 11: None, 12: None,
                                           13: None}
    assert c.facts["rows_today"] == len(today) and c.facts["rows_broken"] == len(broken)
    # the copies are whole rows (set-based equality passes them): the task grades the model's key
    assert len(set(broken)) == len(today) and c.facts["unique_key"] == "order_id"
    assert c.assertions() == [{"type": "columns_must_be_unique",
                               "args": {"model": "fct_orders", "columns": ["order_id"]}}]
    # the prompts report rows and a total, never the construct the fix puts back
    words = mechanisms.slip_classes("grain") + mechanisms.slip_classes("join") + mechanisms.slip_classes("dedup-set-ops")
    for key, text in c.prompts():
        assert mechanisms.mechanism_words(text, words, allowed={"channel"}) == [], (key, text)
    base = dict(c.prompts())["base"]
    assert "`amount` total has gone up" in base and f"{len(broken)} rows" not in base  # rough words, not counts


def test_no_grain_change_where_the_side_is_unique_or_the_column_varies(shop):
    """The precondition is measured on the data: a side at the key's own grain (fct_orders, one
    row per order) offers nothing; on the items, only the column that holds one value per order
    (its channel), not the product nor the item id."""
    db = shop / "shop.duckdb"
    probe = ProbeDB(db, None)
    try:
        facts = grain._Sides(probe)
        unique = grain.Side("model.shop.fct_orders", "fct_orders", '"shop"."main"."fct_orders"')
        items = grain.Side("model.shop.stg_order_items", "stg_order_items", '"shop"."main"."stg_order_items"')
        assert facts.determined(unique, "order_id") == []
        assert facts.determined(items, "order_id") == ["channel"]   # not product, not item_id
    finally:
        probe.close()


def _rows(db: Path, sql: str) -> list:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


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
    # a slip removing a dedup of a model whose dedup a purposeful task dropped leaves whatever the count
    twice = [prop(1), prop(2, story="extract_cte"), prop(3)]
    twice[0].model, twice[0].family = "stg_events", "dedup-set-ops"
    for p in twice[1:]:
        p.model, p.family = "stg_events", "filter"
    kept, out = make_room(twice, 1, 5, repeated=frozenset({"stg_events"}))
    assert [p.number for p in kept] == [2, 3] and [p.number for p in out] == [1]
    assert make_room(twice, 1, 5) == (twice, [])


def _model(shop: Path, name: str, text: str) -> ModelText:
    compiled = (shop / "target" / "compiled" / "shop" / "models" / f"{name}.sql").read_text()
    return ModelText(f"model.shop.{name}", name, f"models/{name}.sql", text, compiled, "staging")


def test_a_dedup_over_copies_is_dropped_as_a_cleanup_and_one_over_a_unique_input_is_not(shop, states):
    """The dedup kind (propose/dedup.py) on real dbt and DuckDB: the precondition is measured on the
    build (the events repeat their key; the orders do not), and the broken text, built by dbt, brings
    the copies back into the model and inflates the count of the table downstream."""
    db = shop / "shop.duckdb"
    found = states["dedups"]
    assert [c.model.name for c in found] == ["stg_events"]  # the orders are unique: no cleanup to slip in
    c = found[0]
    assert (c.ask.form, c.ask.key, c.ask.source) == ("row_number", "event_id", "source")
    assert (c.facts["rows_today"], c.facts["rows_broken"]) == (6, 8)
    assert c.fixed == DEDUP_MODELS["stg_events"] and "delivery_number" not in c.broken
    (path, today, broken, right), = c.files()
    assert today == right != broken  # solved is the original: the dedup restored
    intact = dict(_rows(db, "select order_id, event_count from fct_order_events"))
    inflated = dict(states["tables"]["dedup_downstream"])
    assert len(states["tables"]["dedup_broken"]) == 8
    assert intact == {1: 2, 2: 1, 3: 2, 4: 1} and inflated == {1: 3, 2: 1, 3: 3, 4: 1}
    # the prompts' words: none of the construct the fix puts back
    words = mechanisms.slip_classes(dedup.FAMILY)
    assert [m.name for m in words] == ["dedup_dropped"]
    assert mechanisms.mechanism_words("stg_events has duplicate events again.", words)
    assert not mechanisms.mechanism_words("fct_order_events counts more events per order than it did.", words)


def _metric_task(shop: Path, c, root: Path) -> tuple[Path, Path, Path]:
    """(task, project copy, database) of the METRIC change as pipeline/purpose.py writes it (its
    seed entry, taskgen's files), its solution seed exported from the right state's table."""
    from adegen.adebench.procedure.seeds import export_solution_seeds
    from adegen.dbt.relations import Relation
    from adegen.pipeline.purpose import graded_seeds
    from adegen.tasks.task_yaml import PromptEntry, Variant
    from adegen.tasks.taskgen import TaskPlan, build_task_files, unified_diff

    app = root / "projects" / "shop"
    states = {f"{k}_{s}.sql" for k in ("metric", "excl", "grain") for s in ("broken", "fixed")}
    shutil.copytree(shop, app, ignore=lambda d, names: [n for n in names if n in states or n in ("target", "logs")
                                                        or n.endswith((".duckdb", ".wal"))])
    (app / "profiles.yml").write_text("shop:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n"
                                      "      path: 'shop.duckdb'\n      schema: main\n")
    db = root / "databases" / "shop.duckdb"
    db.parent.mkdir(parents=True)
    shutil.copyfile(shop / "shop.duckdb", db)
    plan = TaskPlan(task_id="metric001", description=c.subject(), prompts=[PromptEntry(*c.prompts()[0])],
                    difficulty="medium", tags=["dbt"], test_setup_models=[c.model.name],
                    solution_seeds=graded_seeds(c), variant=Variant("duckdb", "shop", "shop", str(app.parent)),
                    seed_based=True, solution_rebuild=[c.model.name])
    files = c.files()
    built = build_task_files(plan, b"".join(unified_diff(o, b, p) for p, o, b, _ in files),
                             b"".join(unified_diff(b, r, p) for p, _, b, r in files), [])
    task = root / "tasks" / "metric001"
    for rel, data in built.files.items():
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_bytes(data)
    export_solution_seeds(shop / "shop.duckdb", [c.model.name], "shop", task / "seeds",
                          relations={c.model.name: Relation(None, "main", "metric_fixed")})
    return task, app, db


def test_a_new_count_is_graded_with_null_or_zero_where_nothing_matches(shop, states, tmp_path):
    """Issue 52: an agent that writes the new count as `sum(case when ... then 1 end)` (NULL where
    nothing matches, as the broken state showed) fixes the task as `count(case ...)` does; the
    graded table's other columns, and the count's other values, are still compared exactly, and the
    broken state fails. Graded by ade-bench's procedure on real dbt and DuckDB."""
    from adegen.adebench.procedure.emulate import run_harness
    from adegen.tasks.task_yaml import read_task_yaml
    from adegen.tasks.taskgen import unified_diff

    c = states["found"][METRIC]
    assert 0 in {r[3] for r in states["tables"]["metric_fixed"]}  # a group that matches nothing: 0 done right
    task, app, db = _metric_task(shop, c, tmp_path)
    seed = read_task_yaml(task / "task.yaml").solution_seeds[0]
    assert seed.exclude_columns == [c.ask.name] and not seed.exclude_tests  # AUTO equality: every other column
    assert (task / "tests" / "order_summary_zero_or_null.sql").is_file()
    # the agent's reading: sum(... then 1 end) for count(case ...), NULL for 0 where nothing matches
    assert c.fixed.count("count(case") == 1, c.fixed
    variant = tmp_path / "variant" / task.name
    shutil.copytree(task, variant)
    path, _, broken, right = c.files()[0]
    (variant / "solutions" / "changes.patch").write_bytes(
        unified_diff(broken, right.replace(b"count(case", b"sum(case"), path))
    work = tmp_path / "w"
    none = run_harness(task, app, db, "none", workdir=work, mode="inprocess")
    sage = run_harness(task, app, db, "sage", workdir=work, mode="inprocess")
    agent = run_harness(variant, app, db, "sage", workdir=work, mode="inprocess", keep=True)
    assert not none.resolved, none.summary()
    assert sage.resolved, sage.summary()
    assert agent.resolved, agent.summary()
    assert len(agent.tests) == len(sage.tests) == 3, agent.summary()  # AUTO equality, existence, the stand-in
    con = duckdb.connect(str(agent.app / "shop.duckdb"))
    try:  # the variant did hold NULL where the solution holds 0; now one of its counts is off by one
        assert con.execute(f"select count(*) from order_summary where {c.ask.name} is null").fetchone()[0] > 0
        con.execute(f"update order_summary set {c.ask.name} = {c.ask.name} + 1 where {c.ask.name} = 1")
    finally:
        con.close()
    # the AUTO equality test leaves the count out; the stand-in still compares its non-zero values
    dbt = Path(sys.executable).resolve().parent / "dbt"
    out = subprocess.run([str(dbt), "test", "--select", "AUTO_order_summary_equality", "order_summary_zero_or_null",
                          "--project-dir", ".", "--profiles-dir", "."],
                         capture_output=True, text=True, timeout=300, cwd=agent.app).stdout
    assert "PASS AUTO_order_summary_equality" in out and "FAIL 1 order_summary_zero_or_null" in out, out[-3000:]
