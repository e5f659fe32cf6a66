"""Execution validation without Docker (architecture.md, "Build <-> validation contract")."""
from __future__ import annotations

import math
import re
import multiprocessing as mp
import os
import shutil
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from ..dbt.scratch import tree_stats
from ..errors import InputError
from ..harness import dbfiles
from ..harness.emulate import plan_script
from ..harness.seeds import check_table, export_solution_seeds
from ..harness.testgen import GradingSpec, check_test_names
from . import worker
from .taskyaml import update_task_yaml

DEFAULT_TEST_TIMEOUT = 30.0  # ade-bench's DEFAULT_TEST_TIMEOUT_SEC
DBT_CLI_STARTUP = 3.0        # seconds a dbt subprocess costs over an in-process call


@dataclass
class Observation:
    observable: bool
    reason: str                    # why dropped, or a one-line summary
    build_error: bool
    compared_table: str | None     # the table solution_seeds should name
    rows_differing: int
    rows_total: int
    columns_differ: list[str]
    changed_tables: dict[str, int]  # table -> DAG distance from the mutated model
    example: str | None            # a concrete observed symptom for the prompt (entity + value), no fix
    details: dict = field(default_factory=dict)  # extra evidence (key, observed/expected, timings)


@dataclass
class Proof:
    ok: bool
    broken_fails: bool
    solved_passes: bool
    seeds: list[str]
    expected_tests: int
    detail: str
    exclude_columns: dict[str, list[str]] = field(default_factory=dict)
    max_test_timeout_sec: int | None = None
    seconds: dict[str, float] = field(default_factory=dict)


def _pattern_facts(pattern) -> dict:
    return {"pattern_id": getattr(pattern, "id", None),
            "symptom": getattr(pattern, "symptom", None),
            "difficulty": getattr(pattern, "difficulty", None)}


def ade_bench_database_dirs() -> list[Path]:
    """Where ade-bench looks for `<db_name>.duckdb` when a task has no db_dir."""
    dirs = []
    if os.environ.get("ADE_DATABASES_DIR"):
        dirs.append(Path(os.environ["ADE_DATABASES_DIR"]) / "duckdb")
    try:
        import importlib.util

        spec = importlib.util.find_spec("ade_bench")
        if spec and spec.origin:
            dirs.append(Path(spec.origin).resolve().parent.parent / "shared" / "databases" / "duckdb")
    except (ImportError, ValueError):
        pass
    dirs.append(Path.home() / ".ade-bench" / "shared" / "databases" / "duckdb")
    return dirs



def _check_seed_tables(db: Path, tables: list[str], other_db: Path | None = None
                       ) -> tuple[list[str], dict[str, list[str]]]:
    """Problems that stop the solved-state tables becoming seeds, and the columns to exclude
    (empty strings, out-of-range hugeints, values differing from `other_db`'s build)."""
    problems: list[str] = []
    excludes: dict[str, list[str]] = {}
    present = dbfiles.list_relations(db)
    for t in tables:
        if ("main", t.lower()) not in present:
            problems.append(f"the solved state has no table main.{t}")
            continue
        chk = check_table(db, t, other_db=other_db)
        if chk.rows == 0:
            problems.append(f"{t} is empty in the solved state")
        if chk.rejected:
            problems.extend(chk.problems or [f"{t}: every column would be excluded"])
        elif chk.exclude_columns:
            excludes[t] = chk.exclude_columns
    return problems, excludes

class Validator:
    """One per build run; owns scratch dirs under `workdir`. dbt runs in a pool of `jobs` worker
    processes (in-process dbtRunner there), never in the caller's process."""

    def __init__(self, project, *, db_dir: Path | None = None, workdir: Path, jobs: int = 2,
                 progress: Callable[[str], None] | None = None, prove_mode: str = "inprocess"):
        self.project = project
        self.db_dir = Path(db_dir).resolve() if db_dir else None
        self.root = Path(workdir).resolve() / "adegen-validate"
        self.root.mkdir(parents=True, exist_ok=True)
        self.jobs = max(1, int(jobs))
        self.progress = progress or (lambda msg: None)
        self.prove_mode = prove_mode
        self._pool: ProcessPoolExecutor | None = None
        self._base: dict | None = None
        self._lock = threading.RLock()        # pool creation
        self._base_lock = threading.Lock()    # one baseline build, even from several threads
        self.db_source, self.db_explicit, self._db_reason = self._find_db()
        self._prepared: dict[str, tuple[int, int]] = {}  # prepare_database outputs: (size, mtime_ns)
        self._copy_ok: dict[str, tuple] = {}             # project copies found identical to the project

    # ------------------------------------------------------------------ plumbing
    def _cfg(self) -> dict:
        p = self.project
        return {"root": str(self.root), "project_dir": str(Path(p.project_dir).resolve()),
                "db_name": p.db_name, "profile_name": p.profile_name, "target_name": p.target_name,
                "target_config": dict(getattr(p, "target_config", None) or {}),
                "schema": getattr(p, "schema", None) or "main",
                "db_source": str(self.db_source) if self.db_source else None,
                "db_explicit": self.db_explicit}

    def pool(self) -> ProcessPoolExecutor:
        with self._lock:
            return self._pool_locked()

    def _pool_locked(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # spawn: the caller may run dbt/duckdb in other threads, which a fork would copy in a
            # locked state. A script using the Validator needs the usual
            # `if __name__ == "__main__":` guard. ADEGEN_MP_START=fork|forkserver overrides.
            method = os.environ.get("ADEGEN_MP_START") or "spawn"
            self._pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=mp.get_context(method))
            for _ in range(self.jobs):  # import dbt in every worker while the caller does other work
                self._pool.submit(worker.warm)
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        shutil.rmtree(self.root / "screens", ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _find_db(self) -> tuple[Path | None, bool, str]:
        p = self.project
        name = f"{p.db_name}.duckdb"
        if self.db_dir is not None:
            cand = self.db_dir / name
            if cand.is_file():
                return cand, True, f"database {cand} (db_dir)"
        db_path = getattr(p, "db_path", None)
        if db_path and Path(db_path).is_file():
            return Path(db_path).resolve(), False, f"database {db_path} (profile)"
        for d in ade_bench_database_dirs():
            if (d / name).is_file():
                return (d / name).resolve(), True, f"database {d / name} (ade-bench databases)"
        return None, False, f"no {name} found (db_dir, profile path, ADE_DATABASES_DIR, ade-bench)"

    def _has_seed_files(self) -> bool:
        pdir = Path(self.project.project_dir)
        for sp in getattr(self.project, "seed_paths", None) or ["seeds"]:
            if any((pdir / sp).rglob("*.csv")):
                return True
        return False

    # ------------------------------------------------------------------ contract
    def usable(self) -> tuple[bool, str]:
        if getattr(self.project, "adapter_type", "duckdb") != "duckdb":
            return False, f"execution validation needs DuckDB (adapter {self.project.adapter_type})"
        if self._base is not None and not self._base.get("ok"):
            return False, self._base.get("reason", "baseline failed")
        if self.db_source is not None:
            return True, self._db_reason
        if self._base is not None and self._base.get("seed_based"):
            return True, "seed-based project: a fresh database is seeded"
        if self._has_seed_files():
            return True, "no database file, but the project has seeds: a fresh database is seeded"
        return False, self._db_reason

    def seed_based(self) -> bool:
        return bool(self.baseline_info().get("seed_based"))

    def baseline_info(self) -> dict:
        if self._base is None:
            self.baseline()
        return self._base or {}

    def baseline(self) -> None:
        with self._base_lock:
            self._baseline_locked()

    def _baseline_locked(self) -> None:
        if self._base is not None:
            if not self._base.get("ok"):
                raise InputError(self._base.get("reason", "baseline failed"), file=self.project.project_dir)
            return
        self.progress("validate: building the intact project once (baseline)")
        t0 = time.monotonic()
        base = self.pool().submit(worker.baseline_job, self._cfg()).result()
        base["seconds"]["wall"] = time.monotonic() - t0
        self._base = base
        if not base.get("ok"):
            self.progress(f"validate: baseline failed: {base.get('reason')}")
            raise InputError(base.get("reason", "baseline failed"), file=self.project.project_dir)
        cfg = self._cfg()
        for _ in range(self.jobs):  # each worker parses its screening app before the first screen
            self.pool().submit(worker.warm_app, cfg)
        self.progress(f"validate: baseline ready in {base['seconds']['wall']:.1f}s "
                      f"({len(base['models'])} models, seed-based={base['seed_based']})")

    def _screen_payload(self, model_unique_id, model_path, mutated_text, pattern) -> dict:
        job = {"uid": model_unique_id, "path": str(model_path).replace("\\", "/"),
               "text": mutated_text}
        job.update(_pattern_facts(pattern))
        data = mutated_text.encode("utf-8") if isinstance(mutated_text, str) else bytes(mutated_text)
        job["keep_db"] = str(self.root / "screens" / f"{_mutant_key(job['path'], data)}.duckdb")
        return job

    @staticmethod
    def _to_obs(d: dict) -> Observation:
        return Observation(observable=d["observable"], reason=d["reason"], build_error=d["build_error"],
                           compared_table=d.get("compared_table"),
                           rows_differing=d.get("rows_differing", 0), rows_total=d.get("rows_total", 0),
                           columns_differ=list(d.get("columns_differ") or []),
                           changed_tables=dict(d.get("changed_tables") or {}), example=d.get("example"),
                           details=dict(d.get("details") or {}))

    def screen(self, model_unique_id: str, model_path: str, mutated_text: str, pattern) -> Observation:
        self.baseline()
        job = self._screen_payload(model_unique_id, model_path, mutated_text, pattern)
        return self._to_obs(self.pool().submit(worker.screen_job, self._cfg(), self._base, job).result())

    def screen_many(self, items: Iterable[tuple], progress: Callable[[str], None] | None = None
                    ) -> list[Observation]:
        """items: (model_unique_id, model_path, mutated_text, pattern); results in input order."""
        self.baseline()
        report = progress or self.progress
        items = list(items)
        cfg = self._cfg()
        futs = [self.pool().submit(worker.screen_job, cfg, self._base, self._screen_payload(*it))
                for it in items]
        out = []
        for i, f in enumerate(futs, 1):
            obs = self._to_obs(f.result())
            report(f"validate: screened {i}/{len(items)}: {items[i - 1][0]} "
                   f"{'observable' if obs.observable else 'dropped'} ({obs.reason[:80]})")
            out.append(obs)
        return out

    def prepare_database(self, out_dir: Path) -> Path:
        """<out_dir>/<db_name>.duckdb with the raw data only (seeded raw tables for seed-based
        projects; no model relations), written with STORAGE_VERSION v1.0.0."""
        base = self.baseline_info()
        out = Path(out_dir) / f"{self.project.db_name}.duckdb"
        dbfiles.write_versioned_copy(Path(base["raw_db"]), out)
        st = out.stat()
        self._prepared[str(out.resolve())] = (st.st_size, st.st_mtime_ns)
        return out

    # ------------------------------------------------------------------ proving
    def prove(self, task_dir: Path, project_copy: Path, db_file: Path, *, mode: str | None = None
              ) -> Proof:
        """Seeds + _no-op.txt from the solved state (built twice), exclude_columns /
        max_test_timeout_sec in task.yaml when needed, then none must fail and sage must pass."""
        mode = mode or self.prove_mode
        task_dir = Path(task_dir).resolve()
        t0 = time.monotonic()
        spec = GradingSpec.load(task_dir)
        names = [n for s in spec.solution_seeds for n in s.test_names()]
        check_test_names(names, where=str(task_dir))
        tables = [s.table_name for s in spec.solution_seeds]
        for s in spec.solution_seeds:
            tables += list(s.alternates or [])
        fallback_note = None
        if mode == "inprocess" and os.environ.get("ADEGEN_PROVE_FAST", "1") != "0":
            touched, why = self._fast_eligible(task_dir, spec, Path(project_copy), Path(db_file))
            if touched is not None:
                proof, why = self._prove_fast(task_dir, spec, tables, Path(project_copy).resolve(),
                                              Path(db_file).resolve(), touched, t0)
                if proof is not None:
                    return proof
            fallback_note = f"full emulation ({why})"
            self.progress(f"validate: {task_dir.name}: {fallback_note}")
        work = self.root / "prove" / task_dir.name
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        cfg = self._cfg()
        job = {"task_dir": str(task_dir), "project_copy": str(Path(project_copy).resolve()),
               "db_file": str(Path(db_file).resolve()), "workdir": str(work), "mode": mode}
        seconds: dict[str, float] = {}
        self.progress(f"validate: {task_dir.name}: building the solved state twice")
        futs = [self.pool().submit(worker.solved_state_job, cfg, job) for _ in range(2)]
        solved = [f.result() for f in futs]
        seconds["solved_state"] = time.monotonic() - t0
        dbs = [Path(s["root"]) / "app" / f"{spec.db_name}.duckdb" for s in solved]
        problems, excludes = _check_seed_tables(dbs[0], tables, other_db=dbs[1])
        if problems:
            for s in solved:
                shutil.rmtree(s["root"], ignore_errors=True)
            return Proof(False, False, False, [], 0, "; ".join(problems), excludes, None, seconds)
        export_solution_seeds(dbs[0], tables, spec.project_name, task_dir / "seeds")
        note = "; ".join(x for x in (self._compare_with_baseline(dbs[0], tables),
                                     self._volatile_note(tables)) if x) or None
        for s in solved:
            shutil.rmtree(s["root"], ignore_errors=True)
        seeds = [f"solution__{t}" for t in tables]
        merged = {t: _ordered_union(_existing_excludes(spec, t), cols) for t, cols in excludes.items()}
        if merged:
            update_task_yaml(task_dir / "task.yaml", exclude_columns=merged)
        # grade both states
        self.progress(f"validate: {task_dir.name}: grading none and sage ({mode})")
        t1 = time.monotonic()
        runs = {a: self.pool().submit(worker.harness_job, cfg, dict(job, agent=a))
                for a in ("none", "sage")}
        res = {a: f.result() for a, f in runs.items()}
        seconds["grading"] = time.monotonic() - t1
        extra = 0.0 if mode != "inprocess" else DBT_CLI_STARTUP * res["sage"]["test_dbt_calls"]
        return self._finish(task_dir, spec, res, seeds, merged, note, fallback_note, extra, seconds, t0)

    def _finish(self, task_dir: Path, spec: GradingSpec, res: dict, seeds: list[str], merged: dict,
                note: str | None, extra_note: str | None, extra_test_secs: float,
                seconds: dict, t0: float) -> Proof:
        broken_fails = not res["none"]["resolved"]
        solved_passes = res["sage"]["resolved"]
        # timeout: ~3x the test phase as the harness runs it (dbt as CLI calls, full parse, every
        # seed), min 60, when 30 s is too tight
        test_secs = res["sage"]["seconds"].get("tests", 0.0) + extra_test_secs
        timeout = None
        current = spec.max_test_timeout_sec or DEFAULT_TEST_TIMEOUT
        if 3 * test_secs > current:
            timeout = max(60, int(math.ceil(3 * test_secs)))
            update_task_yaml(task_dir / "task.yaml", max_test_timeout_sec=timeout)
        detail = (f"none: {res['none']['summary']} | sage: {res['sage']['summary']}"
                  + (f" | excluded {merged}" if merged else "")
                  + (f" | max_test_timeout_sec={timeout}" if timeout else "")
                  + (f" | note: {note}" if note else "")
                  + (f" | {extra_note}" if extra_note else ""))
        if not (broken_fails and solved_passes):
            bad = "none" if not broken_fails else "sage"
            detail += f"\n--- {bad} test output (tail) ---\n{res[bad]['tail']}"
        seconds["total"] = time.monotonic() - t0
        return Proof(ok=broken_fails and solved_passes, broken_fails=broken_fails,
                     solved_passes=solved_passes, seeds=seeds,
                     expected_tests=int(res["sage"]["expected"] or 0), detail=detail,
                     exclude_columns=merged, max_test_timeout_sec=timeout, seconds=seconds)

    # ------------------------------------------------------------------ proving, fast path
    def _fast_eligible(self, task_dir: Path, spec: GradingSpec, project_copy: Path, db_file: Path
                       ) -> tuple[list[str] | None, str]:
        """The touched model paths when the fast path's assumptions hold, else (None, why)."""
        base = self._base or {}
        if not base.get("ok"):
            return None, "no baseline"
        try:
            st = db_file.stat()
        except OSError:
            return None, f"no database file {db_file}"
        if self._prepared.get(str(db_file.resolve())) != (st.st_size, st.st_mtime_ns):
            return None, "the database file was not written by prepare_database"
        if spec.db_name != self.project.db_name:
            return None, "the task names another database"
        setup = plan_script(_read(task_dir / "setup.sh"))
        if setup is None or not all(
                (k == "dbt" and v in (["deps"], ["seed"], ["run"])) or
                (k == "bash" and all(_PATCH_LINE["setup"].match(x) for x in _lines(v)))
                for k, v in setup):
            return None, "setup.sh is not the patch + dbt deps/seed/run script adegen writes"
        sol = plan_script(_read(task_dir / "solution.sh"))
        if sol is None or not all(k == "dbt" or all(_PATCH_LINE["solution"].match(x) for x in _lines(v))
                                  for k, v in sol):
            return None, "solution.sh is not a patch + dbt script"
        if plan_script(spec.test_setup or "") is None:
            return None, "test_setup needs a shell"
        model_paths = {m["path"] for m in base["models"].values() if m.get("path")}
        touched = _patched_paths(task_dir / "setup" / "changes.patch")
        if not touched or touched != _patched_paths(task_dir / "solutions" / "changes.patch"):
            return None, "the patches do not touch the same files"
        if not set(touched) <= model_paths:
            return None, "a patch touches files other than models"
        if not self._copy_identical(project_copy):
            return None, "the project copy differs from the validated project"
        return sorted(touched), "ok"

    def _copy_identical(self, copy: Path) -> bool:
        copy = Path(copy).resolve()
        files = _tree(copy)
        sig = tuple(sorted((r, st.st_size, st.st_mtime_ns) for r, st in files.items()))
        if self._copy_ok.get(str(copy)) == sig:
            return True
        orig = Path(self.project.project_dir).resolve()
        ofiles = _tree(orig)
        for rel in files:
            if rel in _PROJECT_LOCAL:
                continue
            if rel not in ofiles or (copy / rel).read_bytes() != (orig / rel).read_bytes():
                return False
        p = self.project
        dirs = [*(getattr(p, a, None) or [] for a in ("model_paths", "macro_paths", "seed_paths",
                                                     "test_paths"))]
        roots = tuple(str(d).rstrip("/") + "/" for ds in dirs for d in ds) + ("snapshots/", "analyses/")
        for rel in ofiles:
            if (rel == "dbt_project.yml" or rel.startswith(roots)) and rel not in files:
                return False
        if not _packages_subset(copy, orig):
            return False
        self._copy_ok[str(copy)] = sig
        return True

    def _prove_fast(self, task_dir: Path, spec: GradingSpec, tables: list[str], project_copy: Path,
                    db_file: Path, touched: list[str], t0: float) -> tuple[Proof | None, str]:
        """Returns (Proof, "") or (None, why) when the caller must use the full emulation.

        The solved state is the intact build (the solution patch is checked to be the exact
        inverse), so seeds are exported from it at once; the broken state is the screen's
        database of the same mutant when there is one, else rebuilt (prove_state_job "broken");
        the second solved build (non-deterministic columns) runs next to the grading, which is
        repeated only when it finds columns to exclude."""
        base = self._base
        cfg = self._cfg()
        work = self.root / "prove" / task_dir.name
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        tables_all = sorted({m["alias"].lower() for m in base["models"].values()
                             if m["materialized"] != "ephemeral"})
        job = {"task_dir": str(task_dir), "project_copy": str(project_copy), "db_file": str(db_file),
               "workdir": str(work), "touched_paths": touched, "tables": tables,
               "project_name": spec.project_name, "tables_all": tables_all}
        seconds: dict[str, float] = {}
        pool = self.pool()
        try:
            mutants, why = _apply_patches(task_dir, project_copy, touched, work / "patched")
            if mutants is None:
                return None, why
            broken_db = None
            if len(touched) == 1:
                cached = self.root / "screens" / f"{_mutant_key(touched[0], mutants[touched[0]])}.duckdb"
                if cached.is_file():
                    broken_db = str(cached)
            f_again = pool.submit(worker.prove_state_job, cfg, base, dict(job, kind="solved_again"))
            f_broken = (None if broken_db else
                        pool.submit(worker.prove_state_job, cfg, base, dict(job, kind="broken")))
            # the solved state = the intact build: checks without the second build, seeds, _no-op
            solved = Path(base["baseline_db"])
            problems, excludes = _check_seed_tables(solved, tables)
            if problems:
                return Proof(False, False, False, [], 0, "; ".join(problems), excludes, None, seconds), ""
            export_solution_seeds(solved, tables, spec.project_name, task_dir / "seeds")
            seeds = [f"solution__{t}" for t in tables]
            merged = {t: _ordered_union(_existing_excludes(spec, t), cols) for t, cols in excludes.items()}
            if merged:
                update_task_yaml(task_dir / "task.yaml", exclude_columns=merged)
            if f_broken is not None:
                broken = f_broken.result()
                if not broken.get("ok"):
                    return None, broken.get("reason", "broken state failed")
                broken_db = broken["db"]
            seconds["solved_state"] = time.monotonic() - t0
            self.progress(f"validate: {task_dir.name}: grading none and sage (inprocess, prepared)")
            t1 = time.monotonic()
            grade_job = {"task_dir": str(task_dir), "project_copy": str(project_copy),
                         "broken_db": broken_db, "seed_based": bool(base.get("seed_based")),
                         "baseline_db": base["baseline_db"], "project_name": spec.project_name,
                         "tables_all": tables_all}
            f_grade = pool.submit(worker.prove_grade_job, cfg, grade_job)
            again = f_again.result()
            if not again.get("ok"):
                f_grade.cancel()
                return None, again.get("reason", "second build failed")
            more: dict[str, list[str]] = {}
            for t in tables:
                chk = check_table(solved, t, other_db=Path(again["db"]))
                if chk.rejected:
                    problems.extend(chk.problems or [f"{t}: every column would be excluded"])
                for c in chk.exclude_columns:
                    if c not in merged.get(t, []):
                        more.setdefault(t, []).append(c)
            res = f_grade.result()
            if problems:
                return Proof(False, False, False, [], 0, "; ".join(problems), merged, None, seconds), ""
            if more:
                # non-deterministic columns: exclude them and grade again
                for t, cols in more.items():
                    merged[t] = _ordered_union(merged.get(t) or _existing_excludes(spec, t), cols)
                update_task_yaml(task_dir / "task.yaml", exclude_columns=merged)
                res = pool.submit(worker.prove_grade_job, cfg, grade_job).result()
            seconds["grading"] = time.monotonic() - t1
            if not res.get("ok"):
                return None, res.get("reason", "grading failed")
            note = self._volatile_note(tables)
            # the harness runs dbt as CLI calls without partial parsing and reloads every seed
            calls = res["sage"]["test_dbt_calls"]
            extra = (DBT_CLI_STARTUP * calls + calls * float(base["seconds"].get("parse", 0.0))
                     + (float(base["seconds"].get("seed", 0.0)) if base.get("seed_based") else 0.0))
            return self._finish(task_dir, spec, res, seeds, merged, note, None, extra, seconds, t0), ""
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _compare_with_baseline(self, solved_db: Path, tables: list[str]) -> str | None:
        """Does the solved state equal the intact build (same oracle)? A note when it does not."""
        if not self._base or not self._base.get("ok"):
            return None
        import duckdb

        from .oracle import compare_relations, q

        notes = []
        con = duckdb.connect(str(solved_db), read_only=True)
        try:
            con.execute(f"ATTACH '{self._base['snapshot_db']}' AS adegen_base (READ_ONLY)")
            for t in tables:
                if f"main.{t}" not in self._base.get("snapshot_tables", []):
                    continue
                d = compare_relations(con, t, f"adegen_base.main.{q(t)}", f"main.{q(t)}")
                if d.visible:
                    notes.append(f"solved {t} differs from the intact build ({d.rows_differing} rows)")
        finally:
            con.close()
        return "; ".join(notes) or None


    def _volatile_note(self, tables: list[str]) -> str | None:
        """Two builds minutes apart cannot reveal date/clock/random dependence: scan the compiled
        SQL of each seeded table and its upstream models for such functions."""
        base = self._base or {}
        models = base.get("models") or {}
        app = self.root / "baseline" / "app"
        by_alias = {m["alias"].lower(): uid for uid, m in models.items()}
        hits = []
        for t in tables:
            uid = by_alias.get(t.lower())
            seen, stack = set(), [uid] if uid else []
            while stack:
                u = stack.pop()
                if u in seen or u not in models:
                    continue
                seen.add(u)
                stack.extend(models[u]["depends_on"])
                path = models[u].get("path")
                compiled = app / "target" / "compiled" / self.project.name / path if path else None
                text = compiled.read_text() if compiled and compiled.exists() else ""
                m = _VOLATILE.search(text)
                if m:
                    hits.append(f"{models[u]['name']} uses {m.group(0)}")
        return ("time/random dependent SQL upstream of the seeded table(s): " + ", ".join(hits)
                + " (exclude the affected columns or pin the value)") if hits else None


_VOLATILE = re.compile(r"\b(current_date|current_timestamp|now\s*\(\)|today\s*\(\)|"
                       r"get_current_time\w*\s*\(|random\s*\(\)|uuid\s*\(\)|gen_random_uuid)",
                       re.I)


_PATCH_LINE = {
    "setup": re.compile(r"""^patch\s+-p1\s*<\s*(['"]?)/app/setup/changes\.patch\1\s*$"""),
    "solution": re.compile(r"""^patch\s+-p1\s*<\s*(['"]?)/sage/solutions/changes\.patch\1\s*$"""),
}
# files a project copy may legitimately have different from the project
_PROJECT_LOCAL = {"profiles.yml", "packages.yml", "package-lock.yml", "dependencies.yml"}


def _read(path: Path) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _lines(text: str) -> list[str]:
    return [x.strip() for x in text.splitlines() if x.strip() and not x.strip().startswith("#")]


def _patched_paths(patch: Path) -> set[str]:
    out = set()
    for ln in _read(patch).splitlines():
        if ln.startswith(("+++ ", "--- ")):
            name = ln[4:].split("\t", 1)[0].strip()
            if name == "/dev/null":
                out.add(name)
                continue
            out.add(name.split("/", 1)[1] if "/" in name else name)
    return out


def _tree(root: Path) -> dict[str, os.stat_result]:
    return tree_stats(root)


def _packages_subset(copy: Path, orig: Path) -> bool:
    import yaml

    def entries(d: Path) -> list:
        out = []
        for f in ("packages.yml", "dependencies.yml"):
            if (d / f).is_file():
                out += (yaml.safe_load((d / f).read_text()) or {}).get("packages") or []
        return out

    mine, theirs = entries(copy), entries(orig)
    return all(e in theirs for e in mine)


def _apply_patches(task_dir: Path, project_copy: Path, touched: list[str], scratch: Path
                   ) -> tuple[dict[str, bytes] | None, str]:
    """Apply setup/changes.patch to copies of the touched files ({path: mutant bytes}), and check
    that solutions/changes.patch restores them byte for byte."""
    import subprocess

    for rel in touched:
        (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(project_copy / rel, scratch / rel)

    def patch(name: str) -> bool:
        with open(task_dir / name, "rb") as fin:
            return subprocess.run(["patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch"],
                                  cwd=scratch, stdin=fin, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL).returncode == 0

    if not patch("setup/changes.patch"):
        return None, "setup/changes.patch does not apply to the project copy"
    mutants = {rel: (scratch / rel).read_bytes() for rel in touched}
    if not patch("solutions/changes.patch") or any(
            (scratch / rel).read_bytes() != (project_copy / rel).read_bytes() for rel in touched):
        return None, "the solution patch is not the exact inverse of the setup patch"
    return mutants, ""


def _mutant_key(rel_path: str, data: bytes) -> str:
    import hashlib

    return hashlib.sha1(rel_path.encode() + b"\0" + data).hexdigest()[:24]


def _existing_excludes(spec: GradingSpec, table: str) -> list[str]:
    for s in spec.solution_seeds:
        if s.table_name == table:
            return list(s.exclude_columns or [])
    return []


def _ordered_union(a: list[str], b: list[str]) -> list[str]:
    out = list(a)
    for x in b:
        if x not in out:
            out.append(x)
    return out
