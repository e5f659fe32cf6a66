"""One proof rule (validate.proof) for every database and speed path: the DuckDB validator's
prepared (fast) path, its full emulation and the Snowflake emulator, given the same recorded trial
outcomes, reach the same verdicts and write the same seeds and task.yaml.

Each strategy runs as it does in a build - its real eligibility checks, patches, seed checks and
export on real DuckDB files - except where it would start dbt: the worker pool (DuckDB) and the
fakesnow trials (emulator) answer with the recorded outcome, in the form that backend reports it."""
from __future__ import annotations

import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest
import yaml

from adegen.core.graph import ModelNode, ProjectGraph
from adegen.validate.duckdb import proving
from adegen.validate.rules.contract import ProofOutcome
from adegen.validate.duckdb.fastprove import PreparedProof, fingerprint
from adegen.validate.duckdb.fullprove import DuckDBRun, FullEmulation, ProofFiles
from adegen.validate.duckdb.jobs import Baseline, WorkerConfig
from adegen.validate.rules.proof import ProveRequest, TrialSummary, prove
from adegen.validate.snowflake.io import EmulatorIO
from adegen.validate.snowflake.prove import EmulatorProof, EmulatorRun

FIX = Path(__file__).resolve().parent / "fixtures"
PROJECT = FIX / "shopfix"
TASK = FIX / "tasks" / "shopfix001"
UID = "model.shopfix.customer_revenue"
COLUMNS = {"customer_id": "integer", "customer_name": "varchar", "region": "varchar",
           "order_count": "bigint", "total_amount": "double"}

FAILS = TrialSummary("none", False, "1 of 2 tests failed", 2, "none: UNRESOLVED", "FAIL 1 AUTO_equality",
                     {"tests": 2.0})
PASSES = TrialSummary("sage", True, "all passed", 2, "sage: RESOLVED", "PASS 2", {"tests": 2.0})
# name -> (none, sage, the verdict every path must reach)
OUTCOMES = {
    "proven": (FAILS, PASSES, ProofOutcome.PROVEN),
    "proven, slow tests": (FAILS, TrialSummary(**dict(asdict(PASSES), seconds={"tests": 25.0})), ProofOutcome.PROVEN),
    "broken passes": (TrialSummary("none", True, "all passed", 2, "none: RESOLVED", "PASS 2"), PASSES,
                      ProofOutcome.BROKEN_PASSES),
    "solved fails": (FAILS, TrialSummary("sage", False, "1 failed", 2, "sage: UNRESOLVED", "FAIL 1"),
                     ProofOutcome.SOLVED_FAILS),
    "trial could not run": (TrialSummary("none", error="RuntimeError: boom"), PASSES, ProofOutcome.TRIAL_FAILED),
    "emulator gap": (FAILS, TrialSummary(**dict(asdict(PASSES), unsupported=["current_session: missing"])),
                     ProofOutcome.EMULATOR_GAP),
    "timed out": (TrialSummary(**dict(asdict(FAILS), timeouts=["tests:dbt test"])), PASSES, ProofOutcome.TIMED_OUT),
}


@pytest.fixture(scope="module")
def solved_db(tmp_path_factory) -> Path:
    """The solved state's table as the intact build holds it (one name is an empty string: every
    path must exclude that column)."""
    db = tmp_path_factory.mktemp("solved") / "shopfix.duckdb"
    con = duckdb.connect(str(db))
    con.execute("create table main.customer_revenue (" + ", ".join(f"{c} {t}" for c, t in COLUMNS.items()) + ")")
    con.execute("insert into main.customer_revenue values (1, 'Ada', 'north', 2, 42.5), (2, '', 'south', 1, 20.0),"
                " (3, 'Cy', 'unknown', 1, 45.25)")
    con.close()
    return db


class RecordedWorkers:
    """The DuckDB validator's worker pool, answering every job with the recorded outcome the way
    the worker reports it (a job that could not run: {"ok": False, "reason"}, as `result` gives it)."""

    def __init__(self, none: TrialSummary, sage: TrialSummary, solved_db: Path):
        self.trials, self.solved_db = {"none": none, "sage": sage}, solved_db

    def submit(self, fn, *args, deadline=None):
        fut: Future = Future()
        fut.set_result(self._answer(fn, args[-1]))
        return fut

    def result(self, fut, what: str):
        return fut.result()

    def _answer(self, fn, job):
        if fn is proving.solved_state_job:  # sage up to test_setup: a trial root holding the database
            root = Path(job.workdir) / f"solved-{len(list(Path(job.workdir).glob('solved-*')))}"
            (root / "app").mkdir(parents=True)
            shutil.copy(self.solved_db, root / "app" / "shopfix.duckdb")
            return {"root": str(root)}
        if fn is proving.state_job:
            return {"ok": True, "db": str(self.solved_db), "build_ok": True}
        agent = job.agent if fn is proving.trial_job else job.agents[0]
        t = self.trials[agent]
        if t.error:
            return {"ok": False, "reason": t.error}
        return t if fn is proving.trial_job else {"ok": True, agent: t}


def duckdb_run(tmp: Path, workers: RecordedWorkers, solved_db: Path) -> DuckDBRun:
    model = {"name": "customer_revenue", "alias": "customer_revenue", "schema": "main", "materialized": "table",
             "path": "models/marts/customer_revenue.sql", "package": "shopfix"}
    graph = ProjectGraph([ModelNode(UID, "customer_revenue", "shopfix", model["path"])])
    base = Baseline(ok=True, models={UID: model}, graph=graph, baseline_db=str(solved_db))
    cfg = WorkerConfig(str(tmp / "root"), str(PROJECT), "shopfix", "shopfix", "dev", {}, "main", None, False)
    project = SimpleNamespace(name="shopfix", db_name="shopfix", project_dir=str(PROJECT), model_paths=["models"],
                              macro_paths=["macros"], seed_paths=["seeds"], test_paths=["tests"])
    # the database the task names was written by this run's prepare_database
    files = ProofFiles(prepared={str(solved_db.resolve()): fingerprint(solved_db)})
    return DuckDBRun(base, cfg, project, workers, files, lambda msg: None)


def emulator_run(tmp: Path, none: TrialSummary, sage: TrialSummary, solved_db: Path) -> EmulatorRun:
    def trial(task_dir, project, data_file, agent, work, shim_dir, export_tables, mode):
        t = {"none": none, "sage": sage}[agent]
        return {"error": t.error} if t.error else {k: v for k, v in asdict(t).items() if k != "agent"}

    model = {"name": "customer_revenue", "alias": "customer_revenue", "schema": "main", "materialized": "table"}
    types = {"main.customer_revenue": {c: {"varchar": "varchar", "double": "number(38,2)"}.get(t, "number(38,0)")
                                       for c, t in COLUMNS.items()}}
    return EmulatorRun({"models": {UID: model}, "types": types, "snapshot_db": str(solved_db)}, tmp / "sfroot",
                       "main", "0.12.1", PROJECT, ThreadPoolExecutor(2), trial, lambda *a, **k: None,
                       EmulatorIO._copy_local)


def task_copy(tmp: Path, name: str, db_type: str) -> Path:
    task = tmp / name / "shopfix001"
    shutil.copytree(TASK, task)
    y = task / "task.yaml"
    y.write_text(y.read_text().replace("db_type: duckdb", f"db_type: {db_type}"))
    return task


def run_path(path: str, outcome: tuple, tmp: Path, solved_db: Path):
    """The Proof of the fixture task on one path, the task dir and the strategy that proved it."""
    none, sage, _ = outcome
    task = task_copy(tmp, path, "snowflake" if path == "emulator" else "duckdb")
    if path == "emulator":
        s = EmulatorProof(emulator_run(tmp / path, none, sage, solved_db), None)
        req = ProveRequest.load(task, PROJECT, None, "inprocess", db_type="snowflake")
        return prove(req, [s], lambda msg: None), task, s
    run = duckdb_run(tmp / path, RecordedWorkers(none, sage, solved_db), solved_db)
    chain = [FullEmulation(run, "inprocess")]
    if path == "fast":
        chain.insert(0, PreparedProof(run))
    req = ProveRequest.load(task, PROJECT, solved_db, "inprocess")
    return prove(req, chain, lambda msg: None), task, chain[-1]


def verdict(proof, strategy) -> tuple:
    """What a proof decided, the strategy's own wording (the emulator's label) taken out."""
    detail = proof.detail
    if strategy.label:
        detail = detail.replace(f"{strategy.label}: ", "", 1)
    if strategy.body_extra:
        detail = detail.replace(f" | {strategy.body_extra}", "")
    return (proof.ok, proof.broken_fails, proof.solved_passes, proof.seeds, proof.expected_tests,
            proof.exclude_columns, proof.max_test_timeout_sec, proof.outcome, detail)


def written(task: Path) -> tuple:
    data = yaml.safe_load((task / "task.yaml").read_text())
    return (data["solution_seeds"], data.get("max_test_timeout_sec"),
            (task / "seeds" / "solution__customer_revenue.csv").read_text())


@pytest.mark.parametrize("name", sorted(OUTCOMES))
def test_same_trial_outcomes_same_verdict_on_every_path(name, tmp_path, solved_db):
    got = {p: run_path(p, OUTCOMES[name], tmp_path, solved_db) for p in ("full", "fast", "emulator")}
    verdicts = {p: verdict(proof, s) for p, (proof, _, s) in got.items()}
    assert verdicts["fast"] == verdicts["full"] == verdicts["emulator"], verdicts
    ok, broken_fails, solved_passes, seeds, expected, excludes, timeout, outcome, detail = verdicts["full"]
    assert outcome is OUTCOMES[name][2] and ok is (outcome is ProofOutcome.PROVEN), detail
    assert seeds == ["solution__customer_revenue"] and excludes == {"customer_revenue": ["customer_name"]}
    assert timeout == (90 if name == "proven, slow tests" else None)  # 3 x 25 s, in 30 s steps
    assert ok or detail.startswith("unproven: "), detail
    # the same seeds, exclude_columns and max_test_timeout_sec in every task
    assert written(got["fast"][1]) == written(got["full"][1]) == written(got["emulator"][1])
    assert "fakesnow 0.12.1" in got["emulator"][0].detail if ok else True


def test_the_fast_path_falls_back_to_the_full_emulation_with_the_reason(tmp_path, solved_db):
    none, sage, _ = OUTCOMES["proven"]
    task = task_copy(tmp_path, "fast", "duckdb")
    (task / "setup.sh").write_text((task / "setup.sh").read_text() + "echo something else\n")
    run = duckdb_run(tmp_path / "fast", RecordedWorkers(none, sage, solved_db), solved_db)
    said = []
    proof = prove(ProveRequest.load(task, PROJECT, solved_db, "inprocess"),
                  [PreparedProof(run), FullEmulation(run, "inprocess")], said.append)
    assert proof.ok and proof.detail.endswith(
        "full emulation (setup.sh is not the patch + dbt deps/seed/run script adegen writes)"), proof.detail
    assert "validate: shopfix001: full emulation (setup.sh is not the patch" in said[0]


def test_a_solved_state_that_cannot_be_seeded_is_unproven_on_every_path(tmp_path, solved_db):
    empty = tmp_path / "empty" / "shopfix.duckdb"
    empty.parent.mkdir()
    shutil.copy(solved_db, empty)
    con = duckdb.connect(str(empty))
    con.execute("delete from main.customer_revenue")
    con.close()
    for path in ("full", "fast", "emulator"):
        proof, task, _ = run_path(path, OUTCOMES["proven"], tmp_path / path, empty)
        assert (proof.ok, proof.outcome) == (False, ProofOutcome.SEEDS_REFUSED), (path, proof.detail)
        assert proof.detail.startswith("unproven: customer_revenue is empty in the "), (path, proof.detail)
        assert not (task / "seeds").exists()


def test_the_test_timeout_does_not_grow_with_the_build_machines_load():
    """The same tests on an idle machine (20 s of wall, 20 of CPU) and beside other work (the wall
    stretched to 60 s, the work the same): one timeout, ~3x the work in 30 s steps, at least 60."""
    from adegen.validate.rules.proof import test_timeout

    def sage(wall, cpu=None):
        return TrialSummary("sage", True, seconds={"tests": wall, **({"tests_cpu": cpu} if cpu is not None else {})})

    idle, loaded = test_timeout(sage(20.0, 20.0), 6.0, None), test_timeout(sage(60.0, 20.0), 18.0, None)
    assert idle == loaded == 90  # 3 x 26 = 78, in 30 s steps
    assert test_timeout(sage(40.0, 80.0), 0.0, None) == 120  # parallel work: the wall time counts
    assert test_timeout(sage(20.0), 0.0, None) == 60  # not measured: the wall time, at least 60
    assert test_timeout(sage(5.0, 5.0), 0.0, None) is None  # ade-bench's default 30 s is enough
    assert test_timeout(sage(30.0, 30.0), 0.0, 120) is None  # the task's own timeout is enough


def test_the_emulation_measures_the_work_of_the_test_phase():
    import subprocess
    import time

    from adegen.core.cputime import cpu_seconds

    t0, cpu0 = time.monotonic(), cpu_seconds()
    time.sleep(0.3)  # waiting is no work
    subprocess.run(["python3", "-c", "sum(i * i for i in range(3_000_000))"], check=True)
    wall, cpu = time.monotonic() - t0, cpu_seconds() - cpu0
    assert 0.05 < cpu < wall - 0.2, (cpu, wall)  # the child's work counts, the sleep does not
