"""The user's built tables as the baseline (validate.userbase) on real dbt + DuckDB: the heavy
practice project (bench/heavy_project.py) at a small scale, its database built by `dbt run` and
shipped with the tasks (--db-path), seven incremental models.

- the baseline is the user's file after one intact `dbt run`, and the file is found up to date;
- a mutant that ade-bench's incremental `dbt run` hides is screened out, while a table mutant gets
  the same screening verdict as with a baseline rebuilt from the raw data;
- the fast proof (no full emulation) and ade-bench's whole procedure (a fresh copy of the user's
  file) agree on hand-made tasks, hidden and visible, also when the user's file is not up to date
  (an incremental table missing its latest rows). The stale case, which holds every part of it (a
  hidden mutant, setup's whole run on the file), runs the procedure in script mode (bash, dbt
  subprocesses: the independent check); the visible and downstream cases run the same steps
  in-process (dbtRunner), about a third of the CPU of script mode.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import duckdb
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import heavy_project  # noqa: E402

from adegen.backends import ValidatorSetup, make_validator  # noqa: E402
from adegen.dbt.database_file import FROM_PROFILE, DatabaseFile  # noqa: E402
from adegen.adebench.procedure import run_harness  # noqa: E402
from adegen.discover.project import load_project  # noqa: E402
from adegen.tasks.taskgen import unified_diff  # noqa: E402
from adegen.validate.duckdb.validator import Validator  # noqa: E402

ORDERS = 200


def pat(symptom, difficulty="medium"):
    from types import SimpleNamespace

    return SimpleNamespace(id=f"p_{symptom}", symptom=symptom, difficulty=difficulty)


@pytest.fixture(scope="module")
def heavy(tmp_path_factory):
    """(project dir, db dir): the project without its database file, which is in the db dir."""
    root = tmp_path_factory.mktemp("heavy")
    hp = heavy_project.generate(root / "project", orders=ORDERS)
    dbdir = root / "db"
    dbdir.mkdir()
    shutil.move(str(hp.db_file), dbdir / "heavy.duckdb")
    return hp.project_dir, dbdir


@pytest.fixture(scope="module")
def user_validator(heavy, tmp_path_factory):
    project, dbdir = heavy
    v = make_validator(load_project(project), ValidatorSetup(tmp_path_factory.mktemp("v-user"), jobs=1,
                                                             db_dir=dbdir))
    v.baseline()
    yield v
    v.close()


MUTANTS = {
    # incremental fct_orders: the high-water mark keeps every existing row, so ade-bench's
    # `dbt run` on the shipped file leaves the table as it was
    "hidden": ("models/marts/fct_orders.sql", "when orders.order_total_cents >= 50000 then 'large'",
               "when orders.order_total_cents >= 5000 then 'large'", "fct_orders", "values_wrong"),
    # a table model: rebuilt whatever the file holds
    "visible": ("models/intermediate/int_order_financials.sql", "coalesce(payments.paid_cents, 0) as paid_cents",
                "payments.paid_cents as paid_cents", "int_order_financials", "values_missing"),
    # the same table mutant graded on the incremental fct_orders downstream: hidden again
    "downstream": ("models/intermediate/int_order_financials.sql", "coalesce(payments.paid_cents, 0) as paid_cents",
                   "payments.paid_cents as paid_cents", "fct_orders", "values_missing"),
}


def mutant_text(project: Path, key: str) -> str:
    path, old, new, _, _ = MUTANTS[key]
    text = (project / path).read_text()
    assert text.count(old) == 1, (path, old)
    return text.replace(old, new)


def uid(path: str) -> str:
    return f"model.heavy.{Path(path).stem}"


def make_task(project: Path, dbdir: Path, key: str, dest: Path) -> Path:
    """A task as adegen writes one: setup patch + `dbt deps` + `dbt run`, the inverse patch +
    `dbt run --select` as solution, test_setup rebuilding the graded model, db_dir = the user's."""
    path, _, _, graded, _ = MUTANTS[key]
    task = dest / f"heavy_{key}"
    (task / "setup").mkdir(parents=True)
    (task / "solutions").mkdir()
    old = (project / path).read_bytes()
    new = mutant_text(project, key).encode()
    (task / "setup" / "changes.patch").write_bytes(unified_diff(old, new, path))
    (task / "solutions" / "changes.patch").write_bytes(unified_diff(new, old, path))
    model = Path(path).stem
    select = " ".join(dict.fromkeys([model, graded]))
    (task / "setup.sh").write_text("#!/bin/bash\npatch -p1 < '/app/setup/changes.patch'\n\n"
                                   "# Run dbt to materialize the broken state\ndbt deps\ndbt run\n")
    (task / "solution.sh").write_text(f"#!/bin/bash\npatch -p1 < '/sage/solutions/changes.patch'\n\n"
                                      f"dbt run --select {select}\n")
    (task / "task.yaml").write_text(f"""task_id: heavy_{key}
status: dev
description: "{key}"
prompts:
  - key: base
    prompt: |-
      Something is off in {graded}.
author_name: adegen-tests
author_email: ""
difficulty: medium
tags:
  - dbt
  - heavy

test_setup: |-
  dbt run --select {select}

solution_seeds:
  - table_name: {graded}

variants:
- db_type: duckdb
  db_name: heavy
  project_type: dbt
  project_name: heavy
  project_dir: "{project.parent}"
  db_dir: "{dbdir}"
""")
    return task


def test_baseline_is_the_users_file_after_one_run(user_validator):
    info = user_validator.baseline_info()
    assert info["from_user"] and info["user_stale"] == []
    assert info["raw_db"] is None  # no raw copy rebuilt from: the user's tables are the start
    assert "after one `dbt run`" in user_validator.facts().db_note


def test_hidden_incremental_mutant_is_screened_out(user_validator, heavy):
    project, _ = heavy
    path, _, _, _, symptom = MUTANTS["hidden"]
    o = user_validator.screen(uid(path), path, mutant_text(project, "hidden"), pat(symptom))
    assert not o.observable and "equivalent on this data" in o.reason


def test_table_mutant_screens_as_with_a_rebuilt_baseline(user_validator, heavy, tmp_path):
    """The same verdict and the same changed rows as a baseline rebuilt from the raw data (the
    database found through the profile, tasks shipping a raw-only copy): for a table model the
    incremental tables downstream do not matter to the model itself."""
    project, dbdir = heavy
    path, _, _, _, symptom = MUTANTS["visible"]
    text = mutant_text(project, "visible")
    mine = user_validator.screen(uid(path), path, text, pat(symptom))
    rebuilt = Validator(load_project(project), database=DatabaseFile((dbdir / "heavy.duckdb").resolve(), FROM_PROFILE,
                                                                     "profile"), workdir=tmp_path, jobs=1)
    try:
        assert not rebuilt.baseline_info()["from_user"]
        theirs = rebuilt.screen(uid(path), path, text, pat(symptom))
    finally:
        rebuilt.close()
    assert mine.observable and theirs.observable
    assert mine.changed_tables["int_order_financials"] == theirs.changed_tables["int_order_financials"] == 0
    assert mine.rows_differing == theirs.rows_differing and mine.columns_differ == theirs.columns_differ
    # the incremental fct_orders downstream changes only in the rebuild, where it is built afresh
    assert "fct_orders" not in mine.changed_tables and "fct_orders" in theirs.changed_tables


def plain_verdict(task: Path, project: Path, db: Path, work: Path, mode: str = "script") -> tuple[bool, bool]:
    """(broken fails, solved passes) by ade-bench's procedure (a fresh copy of the database), in
    script mode (bash, dbt subprocesses) or in-process; the two trials side by side."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        none, sage = pool.map(lambda a: run_harness(task, project, db, a, workdir=work / a, mode=mode),
                              ("none", "sage"))
    return not none.resolved, sage.resolved


@pytest.mark.parametrize("key,expect", [("visible", True), ("downstream", False)])
def test_fast_proof_agrees_with_the_full_emulation(user_validator, heavy, tmp_path, key, expect):
    project, dbdir = heavy
    db = dbdir / "heavy.duckdb"
    task = make_task(project, dbdir, key, tmp_path)
    proof = user_validator.prove(task, project, db)
    assert "full emulation" not in proof.detail, proof.detail
    assert proof.ok is expect, proof.detail
    fast = (proof.broken_fails, proof.solved_passes)
    assert plain_verdict(task, project, db, tmp_path, mode="inprocess") == fast


def test_stale_user_file_agrees_with_the_plain_procedure(heavy, tmp_path):
    """The user's fct_orders lacks its latest rows (the file was not refreshed after the last
    load): the intact `dbt run` adds them, so the file is stale and each broken state is setup.sh's
    whole run on it. The mutant's case expression then writes the re-added rows, which the
    solution's incremental run keeps: the fast proof must reach the plain procedure's verdict."""
    project, dbdir = heavy
    stale_dir = tmp_path / "db"
    stale_dir.mkdir()
    db = stale_dir / "heavy.duckdb"
    shutil.copyfile(dbdir / "heavy.duckdb", db)
    con = duckdb.connect(str(db))
    con.execute("delete from main.fct_orders where ordered_at >= (select max(ordered_at) - interval 20 day "
                "from main.fct_orders)")
    con.close()
    v = make_validator(load_project(project), ValidatorSetup(tmp_path / "v", jobs=1, db_dir=stale_dir))
    try:
        v.baseline()
        assert v.baseline_info()["user_stale"] == ["main.fct_orders"]
        task = make_task(project, stale_dir, "hidden", tmp_path)
        proof = v.prove(task, project, db)
    finally:
        v.close()
    assert "full emulation" not in proof.detail, proof.detail
    assert plain_verdict(task, project, db, tmp_path) == (proof.broken_fails, proof.solved_passes)
