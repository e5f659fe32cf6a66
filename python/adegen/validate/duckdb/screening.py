"""Worker side: screen one mutant on DuckDB within its budget and judge it (validate.verdict).

What a fresh full `dbt run` of the mutant leaves is reproduced on a copy of the intact build: the
mutated model and everything downstream are dropped and rebuilt from the mutant (a failing model
leaves no relation). Before building, the mutated model's SELECT is counted with a LIMIT of its
row guard + 1 (a join that explodes is stopped before it is materialised); the build runs with the
budget's timeout (queries cancelled at the deadline); every rebuilt table is checked against its
row guard before the oracle compares it.

The SELECT counted is the one the candidate's compile check already produced (`ScreenJob.compiled`,
compiled against the compile database: its catalog is mapped onto this database's relations by
views), so the guard costs one bounded count and no dbt call; when there is none, or it does not
run here, the model is compiled in the worker (`dbt compile`) - only for databases with a table
over `budget_precount_min_rows` rows (a setting), as before. A count over the guard is the same "runaway"
verdict the build would reach after its rows were materialised (or after the time budget).
"""
from __future__ import annotations

import os
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import duckdb

from adegen.dbt import NO_ARTIFACTS
from adegen.core.drops import DropCode
from adegen.adebench.procedure import dbfiles
from adegen.facts.measured import RelationKind
from adegen.sql.quote import ident, literal
from adegen.facts import evidence
from adegen.validate.rules import oracle
from adegen.validate.duckdb import secondrun, userbase
from adegen.validate.rules.contract import Observation
from adegen.validate.rules.inspector import RelationInspector
from adegen.validate.duckdb.intact import dbt_in, user_copy_path, worker_app
from adegen.validate.duckdb.jobs import Baseline, ScreenJob, WorkerConfig
from adegen.validate.rules.verdict import ScreenFacts, judge


def screen_job(cfg: WorkerConfig, base: Baseline, job: ScreenJob) -> Observation:
    """Screen one mutant; never raises (a failure is an unobservable result with the reason)."""
    try:
        obs = _screen(cfg, base, job)
        if obs.observable:
            # the broken state setup.sh would leave: Validator.prove reuses it
            live = worker_app(cfg) / f"{cfg.db_name}.duckdb"
            Path(job.keep_db).parent.mkdir(parents=True, exist_ok=True)
            os.replace(live, job.keep_db)
            if Path(str(live) + ".wal").exists():
                os.replace(Path(str(live) + ".wal"), Path(job.keep_db + ".wal"))
        return obs
    except Exception as exc:  # noqa: BLE001
        return Observation.dropped(DropCode.SCREENING_FAILED, f"screening failed: {type(exc).__name__}: {exc}",
                                   {"traceback": traceback.format_exc()[-2000:]})


def drop_relations(db_file: Path, rels: list[tuple[str, str]]) -> None:
    con = duckdb.connect(str(db_file))
    try:
        kinds = {(s.lower(), n.lower()): t for s, n, t in con.execute(
            "select table_schema, table_name, table_type from information_schema.tables "
            "where table_catalog = current_database()").fetchall()}
        for schema, name in rels:
            kind = kinds.get((schema.lower(), name.lower()))
            if kind:
                what = "VIEW" if kind == "VIEW" else "TABLE"
                con.execute(f"DROP {what} IF EXISTS {ident(schema)}.{ident(name)}")
        con.execute("CHECKPOINT")
    finally:
        con.close()


@dataclass(frozen=True)
class RowCount:
    """A bounded count: rows up to `limit` + 1, interrupted after `seconds`, under the DuckDB
    limits in `settings`."""

    limit: int
    seconds: float
    settings: dict


def count_limited(db_file: Path, sql: str, bound: RowCount, catalog: str | None = None) -> tuple[int | None, bool]:
    """(rows of `sql` up to bound.limit + 1, timed out?) on a read-only attach of `db_file`.
    `catalog`: the catalog `sql` was compiled against, when not this database's; its relations
    become views over this one's."""
    name = Path(db_file).stem
    con = duckdb.connect()
    timer = threading.Timer(bound.seconds, con.interrupt)
    try:
        for key in ("memory_limit", "max_temp_directory_size", "temp_directory"):
            if bound.settings.get(key):
                con.execute(f"SET {key} = '{bound.settings[key]}'")
        con.execute(f"ATTACH {literal(str(db_file))} AS {ident(name)} (READ_ONLY)")
        if catalog and catalog.lower() != name.lower():
            dbfiles.mirror_catalog(con, name, catalog, sql)
        con.execute(f"USE {ident(name)}")
        timer.start()
        n = con.execute(f"select count(*) from (select 1 from ({sql}) limit {int(bound.limit) + 1})").fetchone()[0]
        return n, False
    except duckdb.InterruptException:
        return None, True
    finally:
        timer.cancel()
        con.close()


def _compiled(app: Path, name: str, seconds: float) -> str | None:
    r = dbt_in(app, ["compile", "--select", name], env=NO_ARTIFACTS, timeout=seconds)
    for res in getattr(r.result, "results", None) or []:
        code = getattr(getattr(res, "node", None), "compiled_code", None)
        if code:
            return code
    return None


def _count(app: Path, live: Path, job: ScreenJob, model: dict, bound: RowCount) -> tuple[int | None, bool] | None:
    """The bounded count of the mutated model's SELECT: from the compile check's SQL, else (large
    databases only) from a `dbt compile` here; None when neither runs."""
    if job.compiled:
        try:
            return count_limited(live, job.compiled, bound, job.compiled_catalog)
        except duckdb.Error:
            pass  # e.g. a relation in another database: compile it here instead
    if not job.budget.precount:
        return None
    sql = _compiled(app, model["name"], job.budget.seconds)
    if not sql:
        return None  # dbt reports the problem when it builds the model
    try:
        return count_limited(live, sql, bound)
    except duckdb.Error:
        return None  # the build reports it


def _precount(cfg: WorkerConfig, app: Path, live: Path, job: ScreenJob, model: dict) -> str | None:
    """"runaway: ..." when the mutated model's SELECT already exceeds its row guard."""
    alias = model["alias"]
    guard = job.budget.guard(alias)
    t0 = time.monotonic()
    seconds = job.budget.precount_seconds or job.budget.seconds
    counted = _count(app, live, job, model, RowCount(guard, seconds, cfg.duckdb_settings))
    if counted is None:
        return None
    n, timed_out = counted
    if timed_out:
        return (f"runaway: counting {alias}'s rows took more than {seconds:.0f} s "
                "(budget: 10x the intact build of the model, at least 30 s)")
    if n is not None and n > guard:
        return (f"runaway: {alias} would hold more than {guard:.2g} rows, over 20x its intact rows "
                f"(counted in {time.monotonic() - t0:.1f} s)")
    return None


def _budget_words(job: ScreenJob) -> str:
    return f"{job.budget.seconds:.0f} s, 10x the intact build of the rebuilt models, at least 30 s"


def _screen(cfg: WorkerConfig, base: Baseline, job: ScreenJob) -> Observation:
    t0 = time.monotonic()
    app = worker_app(cfg)
    live = app / f"{cfg.db_name}.duckdb"
    models = base.models
    if job.uid not in models:
        return Observation.dropped(DropCode.UNKNOWN_MODEL, f"unknown model {job.uid}")
    m = models[job.uid]
    # an extra file with no unique_id is a model the change adds (a CTE moved into a model of its
    # own: adegen.rewrite.stories.extract_cte): built first, never compared (the intact build has none)
    roots = [job.uid] + [u for u, _, _ in job.extra if u]
    added = [PurePosixPath(p).stem for u, p, _ in job.extra if not u]
    if any(u not in models for u in roots):
        return Observation.dropped(DropCode.UNKNOWN_MODEL, f"unknown model among {', '.join(roots)}")
    dist = base.graph.downstream_of(roots)
    sel = {u: models[u] for u in dist}
    facts = ScreenFacts(job.uid, models, dist, job.symptom, job.difficulty,
                        # a table whose rows differ between two intact builds is never evidence; one
                        # with only some unstable columns is, without them (as its solution seed is graded)
                        unstable={u for u in sel if models[u]["name"] in base.nondeterministic
                                  and not base.nondeterministic[models[u]["name"]]},
                        clock={u: base.clock[u] for u in sel if u in base.clock},
                        details={"selected": len(sel), "budget_seconds": round(job.budget.seconds, 1)})
    names = [models[u]["name"] for u in roots] + added
    reference = base.snapshot_db
    if job.second_run and not base.from_user:  # an is_incremental() slip: a run over late rows
        second = secondrun.start(base, job, app, live, sel)
        if isinstance(second, Observation):
            return second
        args, reference = list(second.args), second.reference
        facts.details["late_rows"], facts.second_run = second.late.to_json(), True
    elif base.from_user:  # the shipped DB is the user's: incremental models run incrementally (userbase)
        plan = userbase.broken_plan(base.baseline_db, str(user_copy_path(cfg)), base.user_stale, names)
        args = list(plan.args)
        dbfiles.copy_file(Path(plan.start), live)
    else:
        args = ["run", "--select", *(f"{n}+" for n in names)]
        if any(x["materialized"] == "incremental" for x in sel.values()):
            args.append("--full-refresh")  # the shipped DB has no model tables: a fresh build
        dbfiles.copy_file(Path(base.baseline_db), live)
        drop_relations(live, [(x["schema"], x["alias"]) for x in sel.values() if x["materialized"] != "ephemeral"])
    files = [(app / job.path, job.text)] + [(app / p, t) for _, p, t in job.extra]
    originals = [(f, f.read_bytes() if f.exists() else None) for f, _ in files]
    try:
        for f, text in files:
            f.write_bytes(text.encode("utf-8"))
        over = _precount(cfg, app, live, job, m) if job.budget.precount or job.compiled else None
        if over:
            facts.stopped = DropCode.RUNAWAY, over
            return judge(facts, None)
        run = dbt_in(app, args, env=NO_ARTIFACTS, timeout=job.budget.seconds)
    finally:
        for f, data in originals:
            if data is None:
                f.unlink(missing_ok=True)
            else:
                f.write_bytes(data)
    facts.details["dbt_seconds"] = round(run.seconds, 2)
    if run.timed_out:
        facts.stopped = DropCode.RUNAWAY, (f"runaway: still building after {run.seconds:.0f} s "
                                           f"(budget: {_budget_words(job)})")
        return judge(facts, None)
    facts.build_ok = run.success
    facts.errored = run.errored_nodes()
    status = run.nodes.get(job.uid) or (run.nodes.get(facts.errored[0]) if facts.errored else None)
    facts.error_message = (status.message if status and status.message else None) or run.first_error()
    facts.build_output = run.console
    if not facts.build_ok or facts.errored:
        return judge(facts, None)
    con = duckdb.connect(str(live), read_only=True)
    rels: dict[str, tuple[str, str]] = {}
    try:
        con.execute(f"ATTACH '{reference}' AS adegen_base (READ_ONLY)")
        for u, mm in sel.items():
            if mm["materialized"] == "ephemeral":
                continue
            rel = f"{ident(mm['schema'])}.{ident(mm['alias'])}"
            base_rel, mut_rel = f"adegen_base.{rel}", f"{ident(cfg.db_name)}.{rel}"
            guard = job.budget.guard(mm["alias"])
            try:
                n = con.execute(f"select count(*) from {mut_rel}").fetchone()[0]
            except duckdb.Error:
                n = 0
            if n > guard:
                facts.stopped = DropCode.RUNAWAY, (f"runaway: {mm['alias']} has {n:.2g} rows after "
                                                   f"{run.seconds:.0f} s, over 20x its intact rows")
                return judge(facts, None)
            # named as tasks name it (the model: ref() finds its relation), compared where dbt built it,
            # without the columns computed from the clock (the task excludes them: adegen.dbt.clock_columns)
            # and, for rows that grow with the clock, on the rows through a date (validate.duckdb.clockwindow)
            clocked, window = base.clock_grading(u)
            shaky = list(base.nondeterministic.get(mm["name"]) or [])
            if clocked or window or shaky:
                base_rel = oracle.without(con, base_rel, clocked + shaky, window)
                mut_rel = oracle.without(con, mut_rel, clocked + shaky, window)
            if shaky:
                facts.details.setdefault("nondeterministic_columns", {})[mm["name"]] = shaky
            if clocked:
                facts.details.setdefault("clock_columns_excluded", {})[mm["name"]] = list(clocked)
            if window:
                facts.details.setdefault("clock_window", {})[mm["name"]] = window
            facts.diffs[u] = oracle.compare_relations(con, mm["name"], base_rel, mut_rel)
            rels[u] = (base_rel, mut_rel)
        facts.relation_kind = _relation_kind(con, cfg.db_name, m)
        obs = judge(facts, RelationInspector(con, rels, facts.dist, tuple(roots) if job.extra else job.uid))
    finally:
        con.close()
    obs.details["seconds"] = time.monotonic() - t0
    return obs


def _relation_kind(con, db_name: str, m: dict) -> RelationKind | None:
    """The mutated model's configured object kind and the one the mutant built (None when either
    is unknown, e.g. ephemeral)."""
    intact = evidence.configured_kind(m["materialized"])
    broken = evidence.relation_kind(con, db_name, m["schema"], m["alias"])
    return None if intact is None or broken is None else RelationKind(m["name"], intact, broken)
