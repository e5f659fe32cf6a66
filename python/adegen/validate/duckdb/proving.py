"""Worker side of proofs: the states a proof needs and the graded trials.

Fast path (tasks adegen wrote itself: setup.sh = patch + dbt deps/seed/run, patches touching model
files only, project copy equal to the project, database prepared by the Validator or the user's
database used as is): the solved state after test_setup equals the intact build for every model it
(re)builds, so the baseline is the solved state; the broken state after setup.sh is the baseline
with the mutated models and everything downstream dropped and rebuilt from the mutant
(`broken_state`). Only the grading itself (test_setup, seeds, dbt test) runs as the harness runs it
(`grade_job`, harness.prepared). Full path: `trial_job` runs whole emulated trials.
"""
from __future__ import annotations

import hashlib
import os
import time
import traceback
from pathlib import Path

import duckdb

from adegen.dbt import NO_ARTIFACTS, sync_tree
from adegen.dbt import packages as pk
from adegen.adebench.procedure import dbfiles
from adegen.validate.duckdb import userbase
from adegen.validate.duckdb.intact import dbt_in, user_copy_path, worker_tag
from adegen.validate.duckdb.jobs import Baseline, GradeJob, StateJob, TrialJob, WorkerConfig
from adegen.validate.duckdb.screening import drop_relations
from adegen.validate.rules.proof import TrialSummary


def _tail(text: str, n: int = 3000) -> str:
    return text[-n:]


def _trial_summary(res, steps) -> TrialSummary:
    return TrialSummary(
        agent=res.agent, resolved=res.resolved, reason=res.reason, expected=res.expected_test_count,
        summary=res.summary(), tail=res.output_tail(2500), seconds=dict(res.seconds),
        test_dbt_calls=sum(1 for s in steps if s.name.startswith(("tests:dbt", "test_setup:dbt"))),
        timeouts=[s.name for s in steps if "[adegen] TIMEOUT" in s.output])


# --------------------------------------------------------------------------- full emulation

def solved_state_job(cfg: WorkerConfig, job: TrialJob) -> dict:
    """Run sage up to and including test_setup; leave the scratch root for seed export."""
    from adegen.adebench.procedure.emulate import TrialConfig, TrialRunner

    r = TrialRunner(Path(job.task_dir), Path(job.project_copy), Path(job.db_file), "sage",
                    TrialConfig(workdir=Path(job.workdir), mode=job.mode, packages_from=Path(cfg.project_dir)))
    res = r.run(stop_before_tests=True)
    return {"root": str(r.root), "seconds": res.seconds,
            "steps": [(s.name, s.ok, _tail(s.output, 800)) for s in r.steps]}


def trial_job(cfg: WorkerConfig, job: TrialJob) -> TrialSummary:
    from adegen.adebench.procedure.emulate import TrialConfig, TrialRunner

    runner = TrialRunner(Path(job.task_dir), Path(job.project_copy), Path(job.db_file), job.agent,
                         TrialConfig(workdir=Path(job.workdir), mode=job.mode, packages_from=Path(cfg.project_dir)))
    try:
        res = runner.run()
    finally:
        import shutil

        shutil.rmtree(runner.root, ignore_errors=True)
    return _trial_summary(res, runner.steps)


# --------------------------------------------------------------------------- fast path

def _prove_root(cfg: WorkerConfig, project_copy: str) -> Path:
    key = hashlib.sha1(str(project_copy).encode()).hexdigest()[:10]
    return Path(cfg.root) / "workers" / worker_tag() / f"prove-{key}"


def _prove_app(cfg: WorkerConfig, project_copy: str) -> Path:
    app = _prove_root(cfg, project_copy) / "app"
    sync_tree(Path(project_copy), app)
    # what the task's `dbt deps` installs, offline (hub/git packages from the user's installed ones)
    pk.install_offline(app, Path(cfg.project_dir))
    return app


def _dbt_into(app: Path, dbs: tuple[Path, Path], args: list[str], timeout: float | None) -> tuple[bool, str]:
    """Run dbt on a copy of dbs[0] in `app`; the result database ends up in dbs[1]."""
    start_db, out_db = dbs
    live = app / out_db.name  # <db_name>.duckdb, where the app's profile points
    dbfiles.copy_file(start_db, live)
    r = dbt_in(app, args, env=NO_ARTIFACTS, timeout=timeout)
    out_db.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", ".wal"):
        src, dst = Path(str(live) + suffix), Path(str(out_db) + suffix)
        dst.unlink(missing_ok=True)
        if src.exists():
            os.replace(src, dst)
    return r.success, r.console + ("\n[adegen] over the proof's time budget" if r.timed_out else "")


def _state_app(cfg: WorkerConfig, base: Baseline, job: StateJob) -> Path:
    """The worker's prove app (shared with grading), dbt_project.yml pre-merged like grading
    does it, so dbt keeps partial-parsing across jobs."""
    from adegen.adebench.procedure.prepared import merge_no_op_file

    app = _prove_app(cfg, job.project_copy)
    if job.project_name:
        merge_no_op_file(app, all_solution_seeds_no_op(app.parent, base.baseline_db, job.project_name,
                                                       job.tables_all))
    return app


def state_job(cfg: WorkerConfig, base: Baseline, job: StateJob) -> dict:
    """kind "broken": the database setup.sh leaves (intact build, mutated models + downstream
    dropped and rebuilt from the mutant); kind "solved_again": the compared tables and their
    upstream chain rebuilt from the raw data. Never raises."""
    t0 = time.monotonic()
    try:
        res = _solved_again(cfg, base, job) if job.kind == "solved_again" else _broken_state(cfg, base, job)
    except Exception as exc:  # noqa: BLE001
        res = {"ok": False, "reason": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-2000:]}
    res["seconds"] = time.monotonic() - t0
    return res


def _solved_again(cfg: WorkerConfig, base: Baseline, job: StateJob) -> dict:
    app = _state_app(cfg, base, job)
    models = base.models
    sel, uids = [], set()
    for t in job.tables:
        u = base.uid_of(t)
        if u is None:
            return {"ok": False, "reason": f"no model builds table {t}"}
        sel.append("+" + models[u]["name"])
        uids.update(base.graph.upstream_depth_first(u))
    args = ["run", "--select", *sel]
    if any(models[u]["materialized"] == "incremental" for u in uids):
        args.append("--full-refresh")
    out_db = Path(job.workdir) / "solved-again" / f"{cfg.db_name}.duckdb"
    ok, out = _dbt_into(app, (Path(base.raw_db), out_db), args, job.budget_seconds)
    if not ok:
        return {"ok": False, "reason": "second build of the solved state failed: " + out[-300:]}
    return {"ok": True, "db": str(out_db)}


def _broken_state(cfg: WorkerConfig, base: Baseline, job: StateJob) -> dict:
    app = _state_app(cfg, base, job)
    mutant = dict(job.mutants)   # what setup.sh's patch makes of each file (fastprove.patched_states)
    original = {p: (app / p).read_bytes() for p in mutant}
    for p, data in mutant.items():
        (app / p).write_bytes(data)
    try:
        models = base.models
        by_path = {m["path"]: u for u, m in models.items()}
        roots = [by_path[p] for p in mutant]
        down: set[str] = set()
        for r in roots:
            down |= set(base.graph.downstream(r))
        start = Path(job.workdir) / "broken-start.duckdb"
        if base.from_user:  # setup.sh's `dbt run` on the user's tables (validate.userbase)
            plan = userbase.broken_plan(base.baseline_db, str(user_copy_path(cfg)), base.user_stale,
                                        [models[r]["name"] for r in roots])
            dbfiles.copy_file(Path(plan.start), start)
            args = list(plan.args)
        else:
            dbfiles.copy_file(Path(base.baseline_db), start)
            drop_relations(start, [(models[u]["schema"], models[u]["alias"]) for u in down
                                   if models[u]["materialized"] != "ephemeral"])
            args = ["run", "--select", *[models[r]["name"] + "+" for r in roots]]
        out_db = Path(job.workdir) / "broken" / f"{cfg.db_name}.duckdb"
        ok, out = _dbt_into(app, (start, out_db), args, job.budget_seconds)
        for p in (start, Path(str(start) + ".wal")):
            p.unlink(missing_ok=True)
    finally:
        for p, data in original.items():
            (app / p).write_bytes(data)
    return {"ok": True, "db": str(out_db), "build_ok": ok,
            "build_output": _tail(out, 1500) if not ok else ""}


def grade_job(cfg: WorkerConfig, job: GradeJob) -> dict:
    """Grade `job.agents` (none and sage), one after the other in this worker's persistent grading
    root: {"ok", <agent>: TrialSummary, ...} or {"ok": False, "reason"}."""
    from adegen.adebench.procedure.emulate import HarnessResult
    from adegen.adebench.procedure.parser import parse_dbt_output
    from adegen.adebench.procedure.prepared import PreparedRoot, PreparedTrialRunner, project_seed_names
    from adegen.adebench.procedure.seedcache import SeedCache

    out: dict = {}
    try:
        root = _prove_root(cfg, job.project_copy)
        _prove_app(cfg, job.project_copy)
        loaded = project_seed_names(Path(job.project_copy)) if job.seed_based else set()
        premerge = (all_solution_seeds_no_op(root, job.baseline_db, job.project_name, job.tables_all),)
        # one seed cache per run, shared by the workers (harness.seedcache: keyed on content)
        prepared = PreparedRoot(root, frozenset(loaded), premerge, SeedCache(Path(cfg.root) / "seed-cache"))
        for agent in job.agents:
            r = PreparedTrialRunner(Path(job.task_dir), Path(job.project_copy), Path(job.broken_db), agent, prepared)
            r.config.packages_from = Path(cfg.project_dir)
            t0 = time.monotonic()
            r.prepare()
            r.setup()
            r.run_agent()
            r.setup_test_env()
            text = r.run_tests()
            parsed = parse_dbt_output(text)
            r.seconds["total"] = time.monotonic() - t0
            res = HarnessResult(agent, "inprocess", parsed.resolved, parsed.reason, dict(parsed.tests),
                                parsed.expected_test_count, parsed, r.seconds, text, r.steps, None)
            out[agent] = _trial_summary(res, r.steps)
        out["ok"] = True
    except Exception as exc:  # noqa: BLE001
        out.update(ok=False, reason=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()[-2000:])
    return out


def all_solution_seeds_no_op(root: Path, baseline_db: str, project_name: str, tables_all) -> Path:
    """A _no-op.txt naming solution__<model> with its column types for every model table of the
    intact build (`tables_all`: (model name, Relation) pairs, where dbt built each). Merged into the
    grading app's dbt_project.yml up front, it makes the file the same for every task (the task's
    own _no-op.txt merges to the same text), so dbt never re-parses the whole project for a
    project-config change between tasks."""
    from adegen.adebench.procedure.seeds import no_op_text, table_schema

    out = Path(root) / f"all-no-op-{project_name}.txt"
    if out.is_file():
        return out
    con = duckdb.connect(str(baseline_db), read_only=True)
    try:
        present = {(s.lower(), t.lower()) for s, t in con.execute(
            "select table_schema, table_name from information_schema.tables "
            "where table_catalog = current_database()").fetchall()}
        schemas = {name: table_schema(con, rel) for name, rel in sorted(tables_all) if rel.key in present}
    finally:
        con.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(no_op_text(project_name, schemas))
    return out
