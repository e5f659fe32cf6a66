"""Issue 52, item 1: upstream data change tasks, on real dbt + DuckDB. A small shop project (raw
tables in the database, as ade-bench's projects have them): the task's setup.sh renames the raw
`orders` table's columns with SQL through `/scripts/run_sql.sh`, the solution adapts `stg_orders`,
and the validator's proof (ade-bench's procedure, emulated) shows the broken state fails and the
adapted project passes, with the solution seeds exported from the adapted state.

The pure parts (the rename, the models' fix, the SQL, setup.sh) are checked on their own first."""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from adegen.propose.datachange import ModelFile, RawRelation, camel, fix_reader, plan_change
from adegen.tasks.datachange import render_setup_sh

sys.path.insert(0, str(Path(__file__).resolve().parent))
from realfix import shop_project  # noqa: E402

NAME = "datachg"
RENAMES = [("order_id", "orderId"), ("customer_id", "customerId")]
CALLS = ["source('raw', 'orders')", "ref('orders')"]


def test_camel_case_names():
    assert [camel(n) for n in ("customer_id", "signup_at", "amount", "Customer_ID", "_synced_at", "a_b_c")] == \
        ["customerId", "signupAt", "amount", "Customer_ID", "_synced_at", "aBC"]


@pytest.mark.parametrize("sql, adapted", [
    # the import CTE of a staging model: the star renames
    ("with source as (\n    select * from {{ source('raw', 'orders') }}\n)\nselect order_id from source",
     "with source as (\n    select * rename (\"orderId\" as order_id, \"customerId\" as customer_id) from "
     "{{ source('raw', 'orders') }}\n)\nselect order_id from source"),
    # a read with an alias: the subquery takes it
    ("select o.order_id from {{ source( \"raw\" ,'orders') }} as o where o.customer_id > 1",
     "select o.order_id from (select * rename (\"orderId\" as order_id, \"customerId\" as customer_id) from "
     "{{ source( \"raw\" ,'orders') }}) as o where o.customer_id > 1"),
    # a read without one: named after the table, so `orders.order_id` still binds
    ("-- depends_on: {{ ref('orders') }}\nselect orders.order_id from {{ ref('orders') }}\nwhere true",
     "-- depends_on: {{ ref('orders') }}\nselect orders.order_id from (select * rename (\"orderId\" as "
     "order_id, \"customerId\" as customer_id) from {{ ref('orders') }}) as orders\nwhere true"),
])
def test_the_fix_adapts_every_read_of_the_table_and_nothing_else(sql, adapted):
    assert fix_reader(sql, CALLS, RENAMES, "orders") == adapted


def test_a_model_that_does_not_read_the_table_has_no_fix():
    assert fix_reader("-- depends_on: {{ ref('orders') }}\nselect 1", CALLS, RENAMES, "orders") is None


def test_the_change_the_sql_and_setup():
    rel = RawRelation("main", "orders", ("source('raw', 'orders')",), ("order_id", "customer_id", "amount"),
                      ("model.x.stg_orders",))
    models = {"model.x.stg_orders": ModelFile("model.x.stg_orders", "stg_orders", "models/stg_orders.sql",
                                              "select * from {{ source('raw', 'orders') }}"),
              "model.x.totals": ModelFile("model.x.totals", "totals", "models/totals.sql", "", "table", "marts"),
              "model.x.other": ModelFile("model.x.other", "other", "models/other.sql", "", "table", "staging")}
    change = plan_change(rel, models, {"model.x.stg_orders": 0, "model.x.other": 1, "model.x.totals": 2},
                         lambda end: ["model.x.stg_orders", end])
    assert change.graded == "totals" and change.rebuild == ("stg_orders", "totals")  # a marts table first
    assert dict(change.facts)["renames"] == [["order_id", "orderId"], ["customer_id", "customerId"]]
    sql = replace(change, drop=(("main", "totals"),)).setup_sql()
    assert sql == ('alter table "main"."orders" rename column "order_id" to "orderId";\n'
                   'alter table "main"."orders" rename column "customer_id" to "customerId";\n'
                   'drop table if exists "main"."totals";\n')
    setup = render_setup_sh(sql, seed_based=True)
    assert "dbt seed\n\n# The upstream data changes\n/scripts/run_sql.sh \"$@\" << 'SQL'\n" + sql + "SQL\n" in setup
    assert setup.index("dbt seed") < setup.index("run_sql.sh") < setup.index("dbt run || true")
    # a table already holding a camelCase name of the rename: no change
    taken = RawRelation("main", "orders", rel.calls, ("order_id", "orderId"), rel.readers)
    assert plan_change(taken, models, {"model.x.totals": 1}, lambda end: [end]) is None


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    """The shop project, its validator's intact build, and the build's data-change stage on it
    (pipeline/datachange.py: the candidates, then one task written, checked and proven), with a
    run context of only what the stage reads."""
    from adegen.backends import BACKENDS, ValidatorSetup, make_validator
    from adegen.discover.project import load_project
    from adegen.pipeline.context import OutputPlan
    from adegen.pipeline.datachange import _realise, candidates, raw_relations

    root = shop_project(tmp_path_factory.mktemp("dc") / NAME, NAME)
    project_text = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and p.suffix in (".sql", ".yml")}
    v = make_validator(load_project(root), ValidatorSetup(tmp_path_factory.mktemp("work"), jobs=1))
    v.baseline()
    info = v.baseline_info()
    sources = [{"unique_id": f"source.{NAME}.raw.{t}", "source": "raw", "table": t, "identifier": t}
               for t in ("orders", "customers")]
    said: list[str] = []
    ui = SimpleNamespace(say=lambda *a: said.append(" ".join(map(str, a))), warn=lambda m: said.append(m))
    db = v.prepare_database(tmp_path_factory.mktemp("db"))
    out = OutputPlan(tmp_path_factory.mktemp("out") / "tasks", root, ".", False,
                     {m["name"] for m in info["models"].values()}, db)
    ctx = SimpleNamespace(validator=v, discovery={"sources": sources, "models": []}, opts=SimpleNamespace(
        project_dir=root, db_path=None), project=SimpleNamespace(name=NAME, adapter_type="duckdb", db_name=NAME),
        backend=BACKENDS["duckdb"], ui=ui, workroot=tmp_path_factory.mktemp("workroot"), output=out,
        report=SimpleNamespace(task_details={}))
    rels = {r.identifier: r for r in raw_relations(info["raw_db"], info["graph"], {"sources": sources})}
    changes = candidates(ctx)
    renamed = next(c for c in changes if c.kind == "renamed_columns")
    entry = _realise(ctx, renamed, f"{NAME}001", "staging")
    resent = _realise(ctx, changes[0], f"{NAME}002", "staging")  # the resent_rows kind comes first
    yield SimpleNamespace(root=root, rels=rels, changes=changes, entry=entry, task=Path(entry["path"]),
                          details=ctx.report.task_details[entry["task_id"]], resent=resent,
                          said=said, project_text=project_text)
    v.close()


def test_the_raw_tables_and_their_readers_come_from_the_intact_build(proven):
    orders = proven.rels["orders"]
    assert (orders.schema, orders.columns) == ("main", ("order_id", "customer_id", "amount", "status"))
    assert orders.calls == ("source('raw', 'orders')",) and orders.readers == (f"model.{NAME}.stg_orders",)
    assert orders.types[:2] == ("INTEGER", "INTEGER") or orders.types[:2] == ("BIGINT", "BIGINT")
    assert orders.keys == ("order_id",)  # customer_id repeats: no key
    # both raw tables have a change of each kind; the resent rows first, then orders before customers
    # (one table downstream each, but two models)
    assert [(c.kind, c.relation.identifier) for c in proven.changes] == [
        ("resent_rows", "orders"), ("resent_rows", "customers"),
        ("renamed_columns", "orders"), ("renamed_columns", "customers")]
    change = proven.changes[2]
    assert change.readers == ("stg_orders",) and change.graded == "customer_totals"
    assert change.drop == (("main", "customer_totals"),)


def test_the_data_change_task_is_proven_under_ade_benchs_procedure(proven):
    entry = proven.entry
    assert entry["proven"] and entry["status"] == "ready", entry["proof_detail"]
    assert entry["proof"] == {"ok": True, "broken_fails": True, "solved_passes": True}
    assert entry["patch_check"]["solution"] and entry["pattern_id"] == "renamed_columns"
    task = proven.task
    assert "status: ready" in (task / "task.yaml").read_text()
    assert not (task / "setup").exists()  # nothing is patched: the data changed
    assert "dbt seed" not in (task / "task.yaml").read_text()
    seed = (task / "seeds" / "solution__customer_totals.csv").read_text().splitlines()
    assert seed[0] == "customer_id,name,order_count,total_amount" and len(seed) == 41  # the adapted state's


def test_the_run_record_gets_what_it_needs_of_the_task(proven):
    import json

    schema = json.loads((Path(__file__).resolve().parents[1] / "adegen" / "schemas" / "run_record.schema.json")
                        .read_text())["$defs"]["task"]
    import jsonschema

    jsonschema.validate({**proven.entry, **proven.details}, schema)
    assert proven.details["graded_tables"] == ["customer_totals"] and proven.details["layer"] == "staging"
    assert proven.details["data_change"]["renames"] == [["order_id", "orderId"], ["customer_id", "customerId"]]


def test_the_project_is_not_written(proven):
    assert {p: p.read_bytes() for p in proven.project_text} == proven.project_text


def test_the_data_change_option(tmp_path):
    from adegen.cli.build_args import parse_args
    from adegen.core.errors import InputError

    project, out = str(Path(__file__).resolve().parent / "fixtures" / "shopfix"), str(tmp_path / "out")
    assert parse_args([project, "--output-dir", out, "--data-change"]).data_change
    assert not parse_args([project, "--output-dir", out]).data_change
    with pytest.raises(InputError, match="needs validation") as err:
        parse_args([project, "--output-dir", out, "--data-change", "--no-validate"])
    assert err.value.field == "--data-change"


def test_resent_rows_the_change_and_the_fix():
    from adegen.propose.resent import plan_resent

    rel = RawRelation("main", "orders", ("source('raw', 'orders')",), ("order_id", "amount", "updated_at"),
                      ("model.x.stg_orders",), ("INTEGER", "DOUBLE", "TIMESTAMP"), ("order_id",))
    models = {"model.x.stg_orders": ModelFile("model.x.stg_orders", "stg_orders", "models/stg_orders.sql",
                                              "select o.amount from {{ source('raw', 'orders') }} o"),
              "model.x.totals": ModelFile("model.x.totals", "totals", "models/totals.sql", "", "table", "marts")}
    down = {"model.x.stg_orders": 0, "model.x.totals": 1}
    change = plan_resent(rel, models, down, lambda end: ["model.x.stg_orders", end])
    assert change.statements == (
        'insert into "main"."orders" select * replace (cast("updated_at" + interval 1 day as TIMESTAMP) as '
        '"updated_at") from "main"."orders" qualify row_number() over (order by "order_id") % 5 = 1',)
    assert change.fixes[0][2].decode() == (
        "select o.amount from (select * from {{ source('raw', 'orders') }} qualify row_number() over "
        "(partition by \"order_id\" order by \"updated_at\" desc) = 1) o")
    base = dict(change.prompts())["base"]
    assert "`orders` now re-sends" in base and "latest `updated_at`" in base and "row_number" not in base
    # no stamp: identical copies, and distinct keeps one of each
    plain = replace(rel, columns=("order_id", "amount"), types=("INTEGER", "DOUBLE"))
    change = plan_resent(plain, models, down, lambda end: [end])
    assert "select * from" in change.statements[0] and "interval" not in change.statements[0]
    assert "(select distinct * from {{ source('raw', 'orders') }}) o" in change.fixes[0][2].decode()
    # no key measured unique, or a seed's table (a `dbt seed` would undo the change): none
    assert plan_resent(replace(rel, keys=()), models, down, lambda end: [end]) is None
    assert plan_resent(replace(rel, calls=("ref('orders')",)), models, down, lambda end: [end]) is None


def test_the_resent_rows_task_is_proven(proven):
    entry = proven.resent
    assert entry["pattern_id"] == "resent_rows" and entry["proven"], entry["proof_detail"]
    assert entry["proof"] == {"ok": True, "broken_fails": True, "solved_passes": True}
    task = Path(entry["path"])
    setup = (task / "setup.sh").read_text()
    assert "insert into \"main\".\"orders\" select * from \"main\".\"orders\" qualify" in setup
    assert "select distinct * from" in (task / "solutions" / "changes.patch").read_text()
    # the adapted state is the intact one: one row per key again (40 customers, 400 orders less the cancelled)
    seed = (task / "seeds" / "solution__customer_totals.csv").read_text().splitlines()
    assert len(seed) == 41
