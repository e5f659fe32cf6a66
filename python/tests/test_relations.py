"""Where dbt builds a model (adegen.dbt.relations), and tasks graded there.

A project with custom schemas (`+schema`) builds models in `main_<schema>`, and an `alias` names a
model's relation after something else than the model: ade-bench's tests grade `ref('<model>')`, so
the screening, the proofs, the seed export and the tests adegen writes must all read the relation
dbt really built. fixtures/schemafix has both: its marts live in main_analytics and customer_revenue
is built as main_analytics.revenue_by_customer; its seeds, and so the solution seeds of its tasks in
ade-bench's test phase, load into main_raw (ref() finds them there).
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import duckdb
import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adegen.adebench.procedure.seeds import check_table, export_solution_seeds  # noqa: E402
from adegen.dbt.relations import ModelRelations, Relation  # noqa: E402

MARTS = "main_analytics"   # dbt's generate_schema_name: target schema "main" + "_" + "analytics"


def _node(name: str, schema: str, alias: str | None = None, materialized: str = "table", **extra) -> dict:
    return {"resource_type": "model", "name": name, "database": "shop", "schema": schema,
            "alias": alias or name, "config": {"materialized": materialized}, **extra}


MANIFEST = {"nodes": {
    "model.shop.stg_orders": _node("stg_orders", "main", materialized="view"),
    "model.shop.customer_revenue": _node("customer_revenue", MARTS, "revenue_by_customer"),
    "model.shop.int_orders": _node("int_orders", "main", materialized="ephemeral"),
    "model.shop.dim_customers.v1": _node("dim_customers", MARTS, "dim_customers_v1", version=1, latest_version=2),
    "model.shop.dim_customers.v2": _node("dim_customers", MARTS, "dim_customers_v2", version=2, latest_version=2),
    "seed.shop.raw_orders": {"resource_type": "seed", "name": "raw_orders", "database": "shop", "schema": "main",
                             "alias": "raw_orders"},
}}


def test_the_lookup_reads_schema_and_alias_from_the_manifest():
    rels = ModelRelations.from_manifest(MANIFEST)
    cr = rels.of("customer_revenue")
    assert cr == Relation("shop", MARTS, "revenue_by_customer")
    assert rels.of("Customer_Revenue") == cr and "customer_revenue" in rels
    assert cr.key == (MARTS, "revenue_by_customer") and str(cr) == "main_analytics.revenue_by_customer"
    assert cr.sql() == '"main_analytics"."revenue_by_customer"'
    assert cr.sql("shop") == '"shop"."main_analytics"."revenue_by_customer"'
    assert rels.of("stg_orders") == Relation("shop", "main", "stg_orders")
    # ephemeral models have no relation; seeds are not models; ref('dim_customers') is the latest version
    assert rels.of("int_orders") is None and "int_orders" not in rels
    assert rels.of("raw_orders") is None
    assert rels.of("dim_customers").identifier == "dim_customers_v2"
    # where a name no model has is read (ade-bench's unqualified name), and which relations ade-bench's
    # `--seed` export reads (main.<table_name> only)
    assert rels.graded("customer_revenue") == cr
    assert rels.graded("an_alternate") == Relation(None, "main", "an_alternate")
    assert rels.of("stg_orders").unqualified("stg_orders") and not cr.unqualified("customer_revenue")


def test_the_validators_model_facts_give_the_same_lookup():
    from adegen.validate.duckdb.intact import manifest_facts
    from adegen.validate.duckdb.jobs import Baseline

    facts = manifest_facts(MANIFEST)
    assert ModelRelations.from_models(facts["models"]) == ModelRelations.from_manifest(MANIFEST)
    assert facts["models"]["model.shop.customer_revenue"]["alias"] == "revenue_by_customer"
    base = Baseline(models=facts["models"])
    assert base.uid_of("customer_revenue") == "model.shop.customer_revenue"
    assert base.uid_of("revenue_by_customer") is None   # a task names the model, never its alias
    assert base.uid_of("dim_customers") == "model.shop.dim_customers.v2"
    assert base.uid_at("Main_Analytics.revenue_by_customer") == "model.shop.customer_revenue"


@pytest.fixture()
def solved_db(tmp_path) -> Path:
    """A solved state as the build leaves it: the model's table in main_analytics under its alias,
    and a decoy `main.customer_revenue` (another table of that name, other columns and rows) that
    an unqualified name would read."""
    db = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(db))
    con.execute(f"create schema {MARTS}")
    con.execute(f"create table {MARTS}.revenue_by_customer as select * from (values (1, 'Ada', 42.5, ''), "
                "(2, 'Bob', 20.0, 'x')) v(customer_id, customer_name, total_amount, note)")
    con.execute("create table main.customer_revenue as select 9 as other_id")
    con.close()
    return db


def test_the_seed_is_exported_from_the_relation_dbt_built(solved_db, tmp_path):
    rel = Relation("shop", MARTS, "revenue_by_customer")
    schemas = export_solution_seeds(solved_db, ["customer_revenue"], "shop", tmp_path / "seeds",
                                    {"customer_revenue": rel})
    csv = (tmp_path / "seeds" / "solution__customer_revenue.csv").read_text().splitlines()
    assert csv == ["customer_id,customer_name,total_amount,note", '1,Ada,42.5,""', "2,Bob,20.0,x"]
    types = yaml.safe_load((tmp_path / "seeds" / "_no-op.txt").read_text())["seeds"]["shop"]
    assert list(types) == ["solution__customer_revenue"]   # the seed keeps the model's name
    assert list(types["solution__customer_revenue"]["+column_types"]) == ["customer_id", "customer_name",
                                                                         "total_amount", "note"]
    assert [c for c, _ in schemas["customer_revenue"]] == ["customer_id", "customer_name", "total_amount", "note"]


def test_the_seed_pitfalls_are_checked_on_that_relation(solved_db, tmp_path):
    rel = Relation("shop", MARTS, "revenue_by_customer")
    chk = check_table(solved_db, "customer_revenue", relation=rel)
    assert chk.rows == 2 and chk.empty_string_columns == ["note"]
    other = tmp_path / "other.duckdb"   # the solved state's second build: one value differs
    con = duckdb.connect(str(other))
    con.execute(f"attach '{solved_db}' as src (read_only)")
    con.execute(f"create schema {MARTS}")
    con.execute(f"create table {MARTS}.revenue_by_customer as select * replace "
                "(case when customer_id = 1 then 43.0 else total_amount end as total_amount) "
                f"from src.{MARTS}.revenue_by_customer")
    con.close()
    chk2 = check_table(solved_db, "customer_revenue", other_db=other, relation=rel)
    assert not chk2.row_count_unstable and chk2.nondeterministic_columns == ["total_amount"]


# --------------------------------------------------------------------------- a build of schemafix

def _graded(task: dict) -> list[str]:
    spec = yaml.safe_load((Path(task["path"]) / "task.yaml").read_text())
    return [s["table_name"] for s in spec["solution_seeds"]]


def _task(doc: dict, model: str) -> dict:
    return next(t for t in doc["tasks"] if model in _graded(t))


def test_a_build_proves_a_task_graded_in_the_custom_schema(schemafix_built):
    """fct_orders lives in main_analytics: the proof finds it there (before: "the solved state has no
    table main.fct_orders"), and every task the build writes is proven."""
    out, doc = schemafix_built
    proven = [t for t in doc["tasks"] if t["proven"]]
    assert proven and len(proven) == len(doc["tasks"]), [(t["task_id"], t["proof_detail"]) for t in doc["tasks"]]
    marts = {"fct_orders", "customer_revenue"}   # the models schemafix builds in main_analytics
    graded = [t for t in proven if set(_graded(t)) & marts]
    assert graded, [(t["task_id"], _graded(t)) for t in proven]
    for t in graded:
        assert t["status"] == "ready" and t["proof"]["broken_fails"] and t["proof"]["solved_passes"]


def test_the_aliased_model_is_graded_by_its_name_where_dbt_built_it(schemafix_built):
    """customer_revenue is built as main_analytics.revenue_by_customer: the task names the model
    (ade-bench's tests ref() it, test_setup selects it), and its seed holds that relation's rows."""
    out, doc = schemafix_built
    t = _task(doc, "customer_revenue")
    assert t["proven"], t["proof_detail"]
    spec = yaml.safe_load((Path(t["path"]) / "task.yaml").read_text())
    assert "customer_revenue" in [s["table_name"] for s in spec["solution_seeds"]]
    assert "revenue_by_customer" not in yaml.safe_dump(spec)
    assert "customer_revenue" in spec["test_setup"]
    assert "AUTO_customer_revenue_equality=passed" in t["proof"]["detail"]
    csv = (Path(t["path"]) / "seeds" / "solution__customer_revenue.csv").read_text().splitlines()
    assert csv[0] == "customer_id,customer_name,region,order_count,total_amount"
    assert sorted(csv[1:]) == ["1,Ada,north,2,42.5", "2,Bob,south,1,20.0", "3,Cy,unknown,1,45.25",
                               "4,Dee,north,1,8.75"]


def test_the_full_emulation_grades_the_same_relations(schemafix_built, tmp_path):
    """The proof's other path (whole emulated trials, the solved state built twice) proves the
    aliased model's task too: it reads both builds where dbt built the model."""
    from adegen.backends import ValidatorSetup, make_validator
    from adegen.discover.project import load_project
    from adegen.validate.duckdb.fullprove import FullEmulation
    from adegen.validate.rules import proof

    out, doc = schemafix_built
    task = tmp_path / "task"
    shutil.copytree(_task(doc, "customer_revenue")["path"], task)   # proving rewrites its seeds
    shutil.rmtree(task / "seeds")
    project = out / "projects" / "schemafix"
    db = out / "databases" / "schemafix.duckdb"
    v = make_validator(load_project(project), ValidatorSetup(tmp_path / "work", jobs=1))
    try:
        req = proof.ProveRequest.load(task, project, db, "inprocess")
        res = proof.prove(req, [FullEmulation(v.proof_run(), "inprocess")], lambda msg: None)
    finally:
        v.close()
    assert res.ok and res.broken_fails and res.solved_passes, res.detail
    assert (task / "seeds" / "solution__customer_revenue.csv").is_file()


def test_the_next_steps_keep_such_seeds_from_ade_benchs_seed_export(schemafix_built):
    """ade-bench's `--seed` COPYs each table_name unqualified (main.<table>): for tables dbt builds
    in main_analytics it cannot re-export the seeds, so the next steps say so instead of asking."""
    out, doc = schemafix_built
    steps = "\n".join(doc["next_steps"])
    away = [t["task_id"] for t in doc["tasks"] if set(_graded(t)) & {"fct_orders", "customer_revenue"}]
    assert "Do not run --seed for" in steps and "main_analytics.revenue_by_customer" in steps
    for t in doc["tasks"]:
        seeded = f"ade run {t['task_id']} --db duckdb --project-type dbt --agent sage --seed" in steps
        assert seeded == (t["task_id"] not in away), t["task_id"]


def test_ade_benchs_test_phase_grades_the_relation_dbt_built(schemafix_built, tmp_path):
    """A whole emulated sage trial of the aliased model's task (ade-bench's procedure: setup.sh,
    solution.sh, test_setup, seeds, `dbt test`): it resolves, and its database shows where things
    were: the graded model in main_analytics under its alias, the solution seed where the project's
    seeds go (main_raw), nothing of either in main."""
    from adegen.adebench.procedure import run_harness
    from adegen.adebench.procedure.dbfiles import list_relations

    out, doc = schemafix_built
    task = tmp_path / "task"
    shutil.copytree(_task(doc, "customer_revenue")["path"], task)
    res = run_harness(task, out / "projects" / "schemafix", out / "databases" / "schemafix.duckdb", "sage",
                      keep=True, workdir=tmp_path / "trial", mode="inprocess")
    try:
        assert res.resolved, res.output_tail()
        assert res.tests["AUTO_customer_revenue_equality"] == "passed"
        rels = list_relations(Path(res.root) / "app" / "schemafix.duckdb")
        assert (MARTS, "revenue_by_customer") in rels and ("main_raw", "solution__customer_revenue") in rels
        assert not {("main", "customer_revenue"), ("main", "revenue_by_customer"),
                    ("main", "solution__customer_revenue")} & set(rels)
    finally:
        shutil.rmtree(res.root, ignore_errors=True)
