"""Execution validation of DuckDB projects without Docker (architecture.md, "Build <-> validation
contract"): the backend builds, exports and loads; the verdicts are validate.verdict's.

dbt runs only in the worker processes of a validate.pool.WorkerPool (in-process dbtRunner there),
or of a Dask cluster with `--executor dask://HOST:PORT` (validate.executor), never in the caller's
process. Every screen and proof build has a budget (validate.budget); a job
over it is stopped and its worker replaced, and the run goes on.
"""
from __future__ import annotations

import shutil
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterable

from adegen.dbt.database_file import FROM_DB_DIR, DatabaseFile
from adegen.core.drops import DropCode
from adegen.core.errors import InputError
from adegen.adebench.procedure import dbfiles
from adegen.core.settings import get_settings
from adegen.validate.duckdb import clockcheck, clockwindow
from adegen.validate.duckdb import fastprove
from adegen.validate.duckdb import intact
from adegen.validate.rules import proof
from adegen.validate.duckdb import screening
from adegen.validate.duckdb import userbase
from adegen.validate.workers.budget import TempMeter, build_budget, duckdb_settings, needs_precount, precount_seconds, size_bytes
from adegen.validate.rules.contract import Observation, Proof, RunFacts
from adegen.validate.duckdb.determinism import unstable_tables
from adegen.validate.duckdb.fullprove import DuckDBRun, FullEmulation, ProofFiles
from adegen.validate.duckdb.jobs import Baseline, ScreenJob, WorkerConfig
from adegen.validate.workers.executor import LOCAL, ExecutorSpec, make_pool
from adegen.validate.workers.pool import BudgetExceeded, WorkerLost, WorkerPool


# patterns of this family change an is_incremental() filter: screened on a second run over late rows
SECOND_RUN_FAMILY = "incremental"


class Validator:
    """One per build run; owns scratch dirs under `workdir` (removed by close())."""

    def __init__(self, project, *, database: DatabaseFile, workdir: Path, jobs: int = 2,
                 progress: Callable[[str], None] | None = None, prove_mode: str = "inprocess",
                 executor: ExecutorSpec = LOCAL):
        self.project = project
        self.root = Path(workdir).resolve() / "adegen-validate"
        self.root.mkdir(parents=True, exist_ok=True)
        self.jobs = max(1, int(jobs))
        self.progress = progress or (lambda msg: None)
        self.prove_mode = prove_mode
        self.executor = executor
        self._pool: WorkerPool | None = None  # or a DaskPool (same interface)
        self._closed = False                  # close() ran: no pool may start again
        self._base: Baseline | None = None
        self._lock = threading.RLock()        # pool creation
        self._base_lock = threading.Lock()    # one baseline build, even from several threads
        self.db_source, self.db_explicit, self._db_reason = database.path, database.explicit, database.reason
        self.db_fingerprint = fastprove.fingerprint(self.db_source) if self.db_source else None
        self._files = ProofFiles(self.db_source, self.db_fingerprint)  # what the run's proofs know
        self._facts = RunFacts()
        self._meter = TempMeter(self.root)
        settings = duckdb_settings(self.root, self.jobs)
        self._facts.memory_limit = settings["memory_limit"]
        # every worker may spill up to this much; the run's bound is jobs x it
        self._facts.temp_bytes_limit = size_bytes(settings["max_temp_directory_size"])
        self.cfg = WorkerConfig(str(self.root), str(Path(project.project_dir).resolve()), project.db_name,
                                project.profile_name, project.target_name,
                                dict(getattr(project, "target_config", None) or {}),
                                getattr(project, "schema", None) or "main",
                                str(self.db_source) if self.db_source else None, self.db_explicit, settings,
                                db_shipped=database.origin == FROM_DB_DIR)

    # ------------------------------------------------------------------ plumbing
    def pool(self) -> WorkerPool:
        """The worker pool (started on first use; the build starts it before in-process dbt runs)."""
        with self._lock:
            if self._closed:
                # a thread that outlived its run (the background baseline, a screening batch) would
                # start fresh workers that rebuild the removed work directory, with no owner to
                # clean it up
                raise WorkerLost("the validator is closed: its run has ended")
            if self._pool is None:
                pool = make_pool(self.executor, self.jobs, on_start=intact.warm)
                if self.executor.remote:  # the workers read these at this process's paths
                    seen = [self.root, self.cfg.project_dir] + ([self.cfg.db_source] if self.cfg.db_source else [])
                    try:
                        pool.check_paths(seen)
                    except BaseException:
                        pool.shutdown()
                        raise
                self._pool = pool
            return self._pool

    def submit(self, fn, *args, deadline: float | None = None):
        return self.pool().submit(fn, *args, deadline=deadline)

    def result(self, fut, what: str):
        """A job's result; a job over budget or a lost worker comes back as {"ok": False, reason}."""
        try:
            return fut.result()
        except BudgetExceeded as exc:
            return {"ok": False, "reason": f"runaway: {what} {exc} (over the proof's budget)"}
        except WorkerLost as exc:
            return {"ok": False, "reason": f"{what}: {exc}"}

    def close(self) -> None:
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown()
        self._facts.temp_bytes_peak = self._meter.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------------ contract
    def usable(self) -> tuple[bool, str]:
        if getattr(self.project, "adapter_type", "duckdb") != "duckdb":
            return False, f"execution validation needs DuckDB (adapter {self.project.adapter_type})"
        if self._base is not None and not self._base.ok:
            return False, self._base.reason or "baseline failed"
        if self.db_source is not None:
            return True, self._db_reason
        if self._base is not None and self._base.seed_based:
            return True, "seed-based project: a fresh database is seeded"
        if self.project.has_seed_files():
            return True, "no database file, but the project has seeds: a fresh database is seeded"
        return False, self._db_reason

    def seed_based(self) -> bool:
        return bool(self.baseline_info().get("seed_based"))

    def baseline_info(self) -> dict:
        if self._base is None:
            self.baseline()
        return self._base.to_dict() if self._base else {}

    def facts(self) -> RunFacts:
        """Run-level facts for the summary (temp bytes, storage version, nondeterministic tables,
        packages reused, runaway candidates)."""
        self._meter.sample()
        self._facts.temp_bytes_peak = max(self._facts.temp_bytes_peak, self._meter.peak)
        return self._facts

    @property
    def temp_bytes_peak(self) -> int:
        return self.facts().temp_bytes_peak

    def baseline(self) -> None:
        with self._base_lock:
            if self._base is None:
                self._build_baseline()
            if not self._base.ok:
                raise InputError(self._base.reason or "baseline failed", file=self.project.project_dir)

    def _build_baseline(self) -> None:
        self.progress("validate: building the intact project twice (baseline + determinism check)"
                      if not self.cfg.db_shipped else
                      "validate: building the intact project (baseline, from your database's tables where it "
                      "holds incremental ones) and a fresh rebuild (determinism check)")
        t0 = time.monotonic()
        f_base = self.submit(intact.baseline_job, self.cfg)
        f_shadow = self.submit(intact.baseline_job, self.cfg, True)
        base: Baseline = f_base.result()
        shadow: Baseline = f_shadow.result()
        base.seconds["wall"] = time.monotonic() - t0
        if not base.ok:
            self._base = base
            self.progress(f"validate: baseline failed: {base.reason}")
            return
        changed = self._determinism(base, shadow) if shadow.ok else None
        if changed is None:  # no shifted-clock check: nothing that reads the clock is graded
            base.clock, base.clock_columns = clockcheck.unchecked(base.clock, base.clock_columns), {}
        if not shadow.ok:
            base.package_notes.append(f"determinism check not run: {shadow.reason}")
        self._facts.clock_check = clockcheck.line(clockcheck.faketime_path(), changed)
        shutil.rmtree(self.root / "shadow", ignore_errors=True)
        self._base = base
        f = self._facts
        f.storage, f.nondeterministic = base.storage, dict(base.nondeterministic)
        f.clock_dependent = {base.models[u]["name"]: why for u, why in sorted(base.clock.items()) if u in base.models}
        f.clock_columns = {base.models[u]["name"]: dict(c) for u, c in sorted(base.clock_columns.items())
                           if u in base.models}
        f.clock_windows = {base.models[u]["name"]: dict(w) for u, w in sorted(base.clock_windows.items())
                           if u in base.models}
        f.packages, f.package_notes = list(base.packages), list(base.package_notes)
        if base.from_user:
            f.db_note = (f"baseline: {userbase.BASELINE}, on a copy of {self.db_source} (the file is only read); "
                         + (f"that run changed {', '.join(base.user_stale)}, so each task's broken state is "
                            "setup.sh's whole `dbt run` on the file" if base.user_stale else
                            "the file was up to date, so broken states are built from that baseline"))
        elif self.db_source is not None:
            f.db_note = (f"raw data from a copy of {self.db_source} (the file is only read)"
                         + (f"; {base.db_copy}" if base.db_copy else ""))
        self.pool().broadcast(intact.warm_app, self.cfg)  # each worker parses its screening app
        nd = ", ".join(sorted(base.nondeterministic)) or "none"
        self.progress(f"validate: baseline ready in {base.seconds['wall']:.1f}s ({len(base.models)} models, "
                      f"seed-based={base.seed_based}, storage {base.storage.version}, nondeterministic: {nd})")

    def _determinism(self, base: Baseline, shadow: Baseline) -> dict[str, str] | None:
        """Sort the tables the shadow build changed: clock-dependent when lineage names them, or when
        the shadow build ran days ahead and they match the baseline once built again with today's
        clock (found by execution: added to `base.clock`); nondeterministic otherwise. A table graded
        without its clock columns (`base.clock_columns`) may change there only: one that changes
        beyond them the same way becomes whole-table clock-dependent. {table: why} of the
        clock-dependent ones the shifted build changed (None: it ran with today's clock)."""
        clocked = {f"{m['schema']}.{m['alias']}": (base.clock_columns.get(u) or {}).get("columns") or []
                   for u, m in base.models.items() if u in base.clock_columns}
        full = unstable_tables(Path(base.snapshot_db), Path(shadow.snapshot_db), base.snapshot_tables)
        diff, only = clockcheck.beyond_clock(full, clocked)
        # snapshot tables are "schema.alias" (where dbt built each model); reported by model name
        uids = {rel: u for rel in diff if (u := base.uid_at(rel)) is not None}
        name = {rel: base.models[u]["name"] for rel, u in uids.items()}
        changed = None
        if shadow.shifted_days:
            changed = {name[r]: base.clock[u] for r, u in uids.items() if u in base.clock}
            changed.update({base.models[u]["name"]: f"{clockcheck.ONLY} {', '.join(cols)}, excluded"
                            for r, cols in only.items() if (u := base.uid_at(r)) is not None})
            suspects = {u: base.models[u] for u in uids.values() if u not in base.clock}
            if suspects:
                self.progress(f"validate: {len(suspects)} table(s) changed {shadow.shifted_days} days ahead; "
                              "building them again with today's clock")
                snap = self.result(self.submit(intact.recheck_job, self.cfg, suspects), "the determinism recheck")
                if isinstance(snap, str):
                    rels = [f"{m['schema']}.{m['alias']}" for m in suspects.values()]
                    still = clockcheck.beyond_clock(unstable_tables(Path(base.snapshot_db), Path(snap), rels),
                                                    clocked)[0]
                    for r, u in uids.items():
                        if u in suspects and r not in still:
                            beyond = base.clock_columns.pop(u, None)
                            base.clock[u] = changed[name[r]] = clockcheck.FOUND + (
                                f", beyond its clock column(s) {', '.join(beyond['columns'])}"
                                if beyond and beyond.get("columns") else "")
                else:  # they stay nondeterministic: never evidence, unstable columns never seeds
                    base.package_notes.append(f"shifted-clock recheck not run: {snap['reason']}")
        if shadow.shifted_days and base.clock_windowable:  # rows that grow with the clock: graded through a date
            base.clock_windows = clockwindow.windows(base, Path(shadow.snapshot_db))
            for u, w in base.clock_windows.items():
                base.clock.pop(u, None)
                if changed is not None and base.models[u]["name"] in changed:
                    changed[base.models[u]["name"]] = f"{clockcheck.WINDOW} {w['column']} through {w['through']}"
        base.nondeterministic = {name[r]: cols for r, cols in diff.items()
                                 if r in uids and uids[r] not in base.clock and uids[r] not in base.clock_windows}
        return changed

    # ------------------------------------------------------------------ screening
    def _screen_job(self, item: tuple) -> ScreenJob:
        """The job of one `screen_many` item: (uid, path, mutated text, pattern[, compiled[, extra]]).
        `compiled`: the candidate's compile-check result (its SQL bounds the precount); `extra`:
        (uid, path, text) of sibling models the same mistake changes (adegen.propose.siblings)."""
        uid, path, text, pattern = item[:4]
        compiled = item[4] if len(item) > 4 else None
        extra = tuple(item[5]) if len(item) > 5 else ()
        text = text.decode("utf-8") if isinstance(text, bytes) else text
        path = str(path).replace("\\", "/")
        extra = tuple((u, str(p).replace("\\", "/"), t.decode("utf-8") if isinstance(t, bytes) else t)
                      for u, p, t in extra)
        base = self._base
        sel = base.graph.downstream(uid) if uid in base.models else {uid: 0}
        for u, _, _ in extra:
            if u in base.models:
                sel = {**base.graph.downstream(u), **sel}
        if base.from_user and base.user_stale:  # the screen is setup.sh's whole `dbt run` (userbase)
            sel = {**{u: 0 for u in base.models}, **sel}
        rows = {base.models[u]["alias"].lower(): base.rows.get(f"{base.models[u]['schema']}.{base.models[u]['alias']}", 0)
                for u in sel if u in base.models}
        budget = build_budget(base.model_seconds, sel, 2 * float(base.seconds.get("parse", 0.0)) + 5.0, rows)
        budget = replace(budget, precount=needs_precount(self._largest_table_rows()),
                         precount_seconds=min(budget.seconds, precount_seconds(base.model_seconds, uid)))
        key = fastprove.mutant_key(path, text.encode('utf-8'))
        if extra:  # never the key of a one-file mutant: the fast proof reuses those only
            key = fastprove.mutant_key(key, "\0".join(p + "\0" + t for _, p, t in extra).encode("utf-8"))
        keep = self.root / "screens" / f"{key}.duckdb"
        return ScreenJob(uid, path, text, getattr(pattern, "symptom", None), getattr(pattern, "difficulty", None),
                         str(keep), budget, getattr(compiled, "compiled", None), getattr(compiled, "catalog", None),
                         extra, second_run=getattr(pattern, "family", None) == SECOND_RUN_FAMILY)

    def _largest_table_rows(self) -> int | None:
        """Rows of the largest table of the intact build (raw tables included; once per run)."""
        if not hasattr(self, "_largest_rows"):
            self._largest_rows = dbfiles.largest_table_rows(Path(self._base.baseline_db))
        return self._largest_rows

    def _screen_result(self, fut, job: ScreenJob) -> Observation:
        try:
            obs = fut.result()
        except BudgetExceeded as exc:
            obs = Observation.dropped(DropCode.RUNAWAY, (
                f"runaway: stopped after {exc.seconds:.0f} s (budget {job.budget.seconds:.0f} s: "
                "10x the intact build of the rebuilt models, at least 30 s)"))
        except WorkerLost as exc:
            obs = Observation.dropped(DropCode.SCREENING_FAILED, f"screening failed: {exc}")
        if obs.code is DropCode.RUNAWAY:
            self._facts.runaway.append(f"{job.uid}: {obs.reason}")
        return obs

    def screen(self, model_unique_id: str, model_path: str, mutated_text: str, pattern, extra: tuple = ()
               ) -> Observation:
        return self.screen_many([(model_unique_id, model_path, mutated_text, pattern, None, extra)])[0]

    def screen_many(self, items: Iterable[tuple], progress: Callable[[str], None] | None = None
                    ) -> list[Observation]:
        """items: (model_unique_id, model_path, mutated_text, pattern[, compile result[, extra]]);
        results in input order."""
        self.baseline()
        report = progress or (self.progress if progress is None else progress)
        items = list(items)
        jobs = [self._screen_job(it) for it in items]
        futs = [self.submit(screening.screen_job, self.cfg, self._base, j, deadline=j.budget.deadline + 60)
                for j in jobs]
        out = []
        for i, (f, j) in enumerate(zip(futs, jobs), 1):
            obs = self._screen_result(f, j)
            if len(items) > 1:
                report(f"validate: screened {i}/{len(items)}: {j.uid} "
                       f"{'observable' if obs.observable else 'dropped'} ({obs.reason[:80]})")
            out.append(obs)
        return out

    # ------------------------------------------------------------------ databases
    def prepare_database(self, out_dir: Path) -> Path:
        """<out_dir>/<db_name>.duckdb with the raw data only (seeded raw tables for seed-based
        projects; no model relations), written with the storage version the run chose
        (`facts().storage`: v1.0.0 unless the project needs a newer one)."""
        base = Baseline(**self.baseline_info())
        out = Path(out_dir) / f"{self.project.db_name}.duckdb"
        if base.raw_db:
            dbfiles.write_versioned_copy(Path(base.raw_db), out, storage_version=self._base.storage.version)
        else:  # a baseline from the user's tables (validate.userbase) kept no raw copy
            dbfiles.write_versioned_copy(self.db_source, out, drop=intact.model_relations(base.models),
                                         storage_version=self._base.storage.version)
        self._files.prepared[str(out.resolve())] = fastprove.fingerprint(out)
        return out

    # ------------------------------------------------------------------ proving
    def proof_run(self) -> DuckDBRun:
        """The run as the proof strategies see it (after the baseline)."""
        self.baseline()
        return DuckDBRun(self._base, self.cfg, self.project, self, self._files, self.progress)

    def prove(self, task_dir: Path, project_copy: Path, db_file: Path, *, mode: str | None = None) -> Proof:
        """validate.proof's rule: the prepared (fast) path when its assumptions hold, else the full
        emulation, with the reason in the detail."""
        mode = mode or self.prove_mode
        req = proof.ProveRequest.load(Path(task_dir).resolve(), Path(project_copy).resolve(),
                                      Path(db_file).resolve(), mode)
        run = self.proof_run()
        chain = [FullEmulation(run, mode)]
        if mode == "inprocess" and get_settings().prove_fast:
            chain.insert(0, fastprove.PreparedProof(run))
        return proof.prove(req, chain, self.progress)
