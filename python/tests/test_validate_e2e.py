"""adegen.validate on real dbt + DuckDB: baseline, screening with ade-bench's oracle, database
preparation and a hand-made task proven end to end (none fails, sage passes), plus one run of the
independent check mode (bash scripts + dbt subprocesses)."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adegen.adebench.procedure import TestNameTooLong, run_harness, storage_version  # noqa: E402
from adegen.adebench.procedure.dbfiles import list_relations  # noqa: E402
from adegen.discover.project import load_project  # noqa: E402
from adegen.backends import ValidatorSetup, make_validator  # noqa: E402

FIX = Path(__file__).resolve().parent / "fixtures"
PROJECT = FIX / "shopfix"
TASK = FIX / "tasks" / "shopfix001"


def pat(symptom, difficulty="easy"):
    return SimpleNamespace(id=f"p_{symptom}", symptom=symptom, difficulty=difficulty)


def model_text(path):
    return (PROJECT / path).read_text()


@pytest.fixture(scope="session")
def validator(tmp_path_factory):
    work = tmp_path_factory.mktemp("validate")
    v = make_validator(load_project(PROJECT), ValidatorSetup(work, jobs=1))
    v.baseline()
    yield v
    v.close()


@pytest.fixture(scope="session")
def screened(validator):
    cr = "models/marts/customer_revenue.sql"
    items = {
        "observable": ("model.shopfix.customer_revenue", cr,
                       model_text(cr).replace("sum(amount)", "max(amount)"), pat("values_too_low")),
        "equivalent": ("model.shopfix.fct_orders", "models/marts/fct_orders.sql",
                       model_text("models/marts/fct_orders.sql").replace("left join", "join"),
                       pat("rows_missing")),
        "duplicates": ("model.shopfix.order_statuses", "models/marts/order_statuses.sql",
                       model_text("models/marts/order_statuses.sql").replace("select distinct", "select"),
                       pat("extra_rows")),
        "hard": ("model.shopfix.stg_orders", "models/staging/stg_orders.sql",
                 model_text("models/staging/stg_orders.sql").replace("amount,", "amount * 2 as amount,"),
                 pat("values_too_high", "hard")),
        "build_error": ("model.shopfix.stg_orders", "models/staging/stg_orders.sql",
                        model_text("models/staging/stg_orders.sql").replace("amount,", "amout,"),
                        pat("build_error")),
        "incremental": ("model.shopfix.fct_order_events", "models/marts/fct_order_events.sql",
                        model_text("models/marts/fct_order_events.sql").replace(
                            "    status,", "    upper(status) as status,"), pat("values_wrong")),
        "missing_rows": ("model.shopfix.customer_revenue", cr,
                         model_text(cr).replace("where status != 'cancelled'",
                                                "where status = 'complete'"), pat("rows_missing")),
    }
    obs = validator.screen_many(list(items.values()))
    return dict(zip(items, obs))


def test_baseline_and_usable(validator):
    assert validator.usable()[0]
    assert validator.seed_based()
    info = validator.baseline_info()
    assert "main.customer_revenue" in info["snapshot_tables"]
    assert info["graph"].children("model.shopfix.stg_orders")


def test_observable_mutant_has_fix_free_example(screened):
    o = screened["observable"]
    assert o.observable and not o.build_error and o.compared_table == "customer_revenue"
    assert o.rows_total == 4 and o.rows_differing == 2 and o.columns_differ == ["total_amount"]
    assert o.changed_tables == {"customer_revenue": 0}
    assert o.example == "customer_revenue: customer_id = 1 has total_amount = 30.5 (expected 42.5)"
    assert "max" not in o.example and "sum" not in o.example


def test_equivalent_mutant_is_dropped(screened):
    o = screened["equivalent"]
    assert not o.observable and "equivalent on this data" in o.reason and o.compared_table is None


def test_duplicates_only_mutant_is_graded_by_a_grain_test(screened):
    """Duplicate rows are all a removed DISTINCT shows: ade-bench's set-based equality test passes
    on them, so the verdict asks for a test that the intact table's key is unique."""
    o = screened["duplicates"]
    assert o.observable and o.code is None and o.compared_table == "order_statuses", o.reason
    assert o.details["duplicates_only"] == {"order_statuses": [2, 5]}
    assert o.details["grain_test"] == {"model": "order_statuses", "columns": ["status"]}
    assert o.rows_differing == 3 and o.rows_total == 2
    assert o.details["tables"][0]["duplicates"]["max_copies"] == 4  # what the prompt reports


def test_hard_pattern_compares_downstream_mart(screened):
    o = screened["hard"]
    assert o.observable and o.compared_table == "customer_revenue"
    assert o.changed_tables == {"stg_orders": 0, "fct_orders": 1, "customer_revenue": 2}


def test_build_error_only_when_intended(screened, validator):
    o = screened["build_error"]
    assert o.build_error and o.observable and "amout" in o.example
    src = model_text("models/staging/stg_orders.sql").replace("amount,", "amout,")
    o2 = validator.screen("model.shopfix.stg_orders", "models/staging/stg_orders.sql", src,
                          pat("values_wrong"))
    assert o2.build_error and not o2.observable and "symptom is values_wrong" in o2.reason


def test_incremental_rebuilt_from_scratch(screened):
    o = screened["incremental"]
    assert o.observable and o.compared_table == "fct_order_events"
    assert o.rows_differing == 12 and o.columns_differ == ["status"]  # every row, not only new ones


def test_missing_rows_example(screened):
    o = screened["missing_rows"]
    assert o.observable and o.example.startswith("customer_revenue is missing 1 of 4 rows")


@pytest.fixture(scope="session")
def prepared_db(validator, tmp_path_factory):
    return validator.prepare_database(tmp_path_factory.mktemp("db"))


def test_prepare_database_raw_only_v1(prepared_db):
    assert prepared_db.name == "shopfix.duckdb"
    assert storage_version(prepared_db).startswith("v1.0.0")
    rels = list_relations(prepared_db)
    assert ("main", "raw_orders") in rels and ("main", "customer_revenue") not in rels


@pytest.fixture(scope="session")
def proven(validator, prepared_db, tmp_path_factory):
    task = tmp_path_factory.mktemp("tasks") / "shopfix001"
    shutil.copytree(TASK, task)
    return task, validator.prove(task, PROJECT, prepared_db)


def test_prove_none_fails_sage_passes(proven):
    task, proof = proven
    assert proof.ok, proof.detail
    assert proof.broken_fails and proof.solved_passes and proof.expected_tests == 2
    assert "full emulation" not in proof.detail  # the prepared (fast) path was taken
    assert proof.seeds == ["solution__customer_revenue"]
    csv = (task / "seeds" / "solution__customer_revenue.csv").read_text().splitlines()
    assert csv[0] == "customer_id,customer_name,region,order_count,total_amount"
    assert sorted(csv[1:]) == ["1,Ada,north,2,42.5", "2,Bob,south,1,20.0", "3,Cy,unknown,1,45.25",
                               "4,Dee,north,1,8.75"]
    assert (task / "seeds" / "_no-op.txt").read_text().startswith("\n\nseeds:\n  shopfix:\n")
    assert not list((task / "tests").glob("AUTO_*")) if (task / "tests").exists() else True
    assert (TASK / "seeds").exists() is False  # the fixture itself is never written


def test_second_proof_of_the_same_seeds_uses_the_seed_cache(proven, validator, prepared_db, tmp_path):
    """The first proof's trials loaded solution__customer_revenue with dbt seed and kept it; a task
    grading the same table with the same seed bytes gets it from the cache and is proven alike
    (the none trial still fails, the sage trial still passes)."""
    import duckdb

    cached = sorted((validator.root / "seed-cache").glob("*.duckdb"))
    assert len(cached) == 1, "the first proof kept its one seed table"
    task = tmp_path / "shopfix003"
    shutil.copytree(TASK, task)
    proof = validator.prove(task, PROJECT, prepared_db)
    assert proof.ok and proof.broken_fails and proof.solved_passes and proof.expected_tests == 2, proof.detail
    assert sorted((validator.root / "seed-cache").glob("*.duckdb")) == cached  # a hit: nothing new stored
    # the graded seed table really is the cached one: a cache entry altered behind the key's back
    # makes the solved state fail (never happens in a run: entries are written once, by dbt seed)
    con = duckdb.connect(str(cached[0]))
    con.execute("update main.seed set customer_name = 'Zed'")
    con.close()
    again = tmp_path / "shopfix004"
    shutil.copytree(TASK, again)
    try:
        assert not validator.prove(again, PROJECT, prepared_db).solved_passes
    finally:
        cached[0].unlink()


def test_script_mode_agrees(proven, prepared_db, tmp_path):
    task, _ = proven
    res = run_harness(task, PROJECT, prepared_db, "sage", workdir=tmp_path, mode="script")
    assert res.resolved, res.output_tail()
    assert res.tests == {"AUTO_customer_revenue_equality": "passed",
                         "AUTO_customer_revenue_existence": "passed"}


def _duplicates_task(tmp_path, task_id: str, tests: list) -> Path:
    """The task adegen writes for the removed DISTINCT of order_statuses, with the given tests."""
    from adegen.tasks.task_yaml import PromptEntry, SeedEntry, Variant
    from adegen.tasks.taskgen import TaskPlan, build_task_files, unified_diff

    rel = "models/marts/order_statuses.sql"
    intact = model_text(rel)
    mutant = intact.replace("select distinct", "select")
    plan = TaskPlan(task_id, "distinct removed", [PromptEntry("base", "order_statuses has duplicate statuses.")],
                    "easy", ["dbt"], ["order_statuses"], [SeedEntry("order_statuses")],
                    Variant("duckdb", "shopfix", "shopfix", "../projects"), solution_rebuild=["order_statuses"])
    files = build_task_files(plan, unified_diff(intact.encode(), mutant.encode(), rel),
                             unified_diff(mutant.encode(), intact.encode(), rel), tests)
    for name, data in files.files.items():
        (tmp_path / task_id / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / task_id / name).write_bytes(data)
    return tmp_path / task_id


def test_the_grain_test_proves_a_duplicates_only_task(screened, validator, prepared_db, tmp_path):
    """With the verdict's grain test (rendered by the package's macro) the fast proof fails the
    broken state and passes the solved one; without it ade-bench's tests pass the broken state."""
    from adegen.tasks.assertions import render_assertions
    from adegen.validate.rules.contract import ProofOutcome

    grain = screened["duplicates"].details["grain_test"]
    tests = render_assertions(PROJECT, "shopfix", [{"type": "columns_must_be_unique", "args": grain}])
    proof = validator.prove(_duplicates_task(tmp_path, "shopfix005", tests), PROJECT, prepared_db)
    assert proof.ok and proof.outcome is ProofOutcome.PROVEN and proof.expected_tests == 3, proof.detail
    assert (tmp_path / "shopfix005" / "tests" / "shopfix005_unique.sql").exists()
    bare = validator.prove(_duplicates_task(tmp_path, "shopfix006", []), PROJECT, prepared_db)
    assert not bare.ok and bare.outcome is ProofOutcome.BROKEN_PASSES, bare.detail


def test_prove_refuses_long_test_names(validator, prepared_db, tmp_path):
    task = tmp_path / "shopfix002"
    shutil.copytree(TASK, task)
    y = task / "task.yaml"
    y.write_text(y.read_text().replace("- table_name: customer_revenue",
                                       "- table_name: customer_revenue_by_region_and_signup_cohort_x"))
    with pytest.raises(TestNameTooLong):
        validator.prove(task, PROJECT, prepared_db)


def test_a_closed_validator_starts_no_workers(tmp_path):
    """A thread that outlives its run (the background baseline, a screening batch) gets an error
    from a closed validator instead of a fresh pool whose workers rebuild the removed work directory."""
    from adegen.validate.workers.pool import WorkerLost

    v = make_validator(load_project(PROJECT), ValidatorSetup(tmp_path / "work", jobs=1))
    v.close()
    assert not (tmp_path / "work" / "adegen-validate").exists()
    with pytest.raises(WorkerLost, match="closed"):
        v.baseline()
    assert not (tmp_path / "work" / "adegen-validate").exists()
