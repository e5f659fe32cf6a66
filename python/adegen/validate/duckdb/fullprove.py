"""The DuckDB validator's proofs: what its strategies share (`DuckDBRun`: the intact build, the
worker pool, the run's files) and the full emulation (`FullEmulation`), the strategy that takes
every task: the solved state is built twice by whole harness trials (sage up to test_setup), the
seeds come from the first build, and none and sage run as emulated trials (validate.proving).
The rule they follow is validate.proof's."""
from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from adegen.adebench.procedure import dbfiles
from adegen.adebench.procedure.seeds import check_table, export_solution_seeds
from adegen.dbt.relations import Relation
from adegen.tasks.stand_in_tests import needs_stand_ins
from adegen.validate.duckdb import proving
from adegen.validate.duckdb.jobs import Baseline, TrialJob, WorkerConfig
from adegen.validate.rules.proof import GradedTrials, ProveRequest, SolvedState, TrialSummary, ordered_union

DBT_CLI_STARTUP = 3.0        # seconds a dbt subprocess costs over an in-process call
# random values upstream of a seed (the clock is adegen.dbt.clock's: such tables are never seeds, such
# columns never compared)
_VOLATILE = re.compile(r"\b(random\s*\(\)|uuid\s*\(\)|gen_random_uuid)", re.I)


class Workers(Protocol):
    """The validator's worker pool: a job over its deadline or a lost worker comes back as
    {"ok": False, "reason"} from `result`."""

    def submit(self, fn, *args, deadline: float | None = None): ...

    def result(self, fut, what: str): ...


@dataclass
class ProofFiles:
    """The files a run's proofs know: the user's database as the run found it, the databases
    `prepare_database` wrote and the project copies found identical to the project (both by
    resolved path, with the fingerprint they had)."""

    source: Path | None = None
    source_fingerprint: tuple[int, int] | None = None
    prepared: dict[str, tuple[int, int]] = field(default_factory=dict)
    identical: dict[str, tuple] = field(default_factory=dict)


@dataclass
class DuckDBRun:
    """The DuckDB validator's run as its proof strategies see it."""

    base: Baseline
    cfg: WorkerConfig
    project: Any            # project.ProjectInfo
    workers: Workers
    files: ProofFiles
    progress: Callable[[str], None]

    @property
    def root(self) -> Path:
        return Path(self.cfg.root)

    @property
    def budget(self) -> float:
        """Seconds one proof build may take: 10x the intact build, at least 60 s."""
        s = self.base.seconds
        return max(60.0, 10 * float(s.get("run", 0.0)) + 2 * float(s.get("parse", 0.0)))

    @property
    def deadline(self) -> float:
        return 3 * self.budget + 60

    def workdir(self, req: ProveRequest) -> Path:
        return self.root / "prove" / req.task_dir.name

    def graded(self, tables: list[str]) -> dict[str, Relation]:
        """Where each graded table is: the relation ade-bench's `ref('<table>')` resolves to, where
        dbt builds the model (custom schema, alias; adegen.dbt.relations)."""
        rels = self.base.relations()
        return {t: rels.graded(t) for t in tables}

    def write_seeds(self, req: ProveRequest, solved: SolvedState) -> None:
        """The CSVs and _no-op.txt as `ade run --seed` writes them, read where the tests grade."""
        export_solution_seeds(solved.db, req.tables, req.spec.project_name, req.task_dir / "seeds",
                              self.graded(req.tables))

    def seed_tables(self, db: Path, tables: list[str], other_db: Path | None = None
                    ) -> tuple[list[str], dict[str, list[str]]]:
        """Problems that stop the solved-state tables becoming seeds, and the columns to exclude
        (empty strings, out-of-range hugeints, columns the determinism guard found unstable,
        values differing from `other_db`'s build, columns computed from the clock)."""
        problems: list[str] = []
        excludes: dict[str, list[str]] = {}
        present = dbfiles.list_relations(db)
        unstable = self.base.nondeterministic
        graded = self.graded(tables)
        for t in tables:
            rel = graded[t]
            if rel.key not in present:
                problems.append(f"the solved state has no table {rel} (where dbt builds {t})")
                continue
            clock = self.base.clock.get(self.base.uid_of(t) or "")
            if self.base.clock_windows.get(self.base.uid_of(t) or "") and needs_stand_ins(t):
                clock = "its rows grow with the clock, and its name is too long for a windowed equality test"
            if clock:
                problems.append(f"{t} depends on the clock ({clock}): a solution seed exported today fails "
                                "when the task runs later")
                continue
            chk = check_table(db, t, other_db=other_db, relation=rel)
            if t in unstable and not unstable[t]:
                problems.append(f"{t} is nondeterministic: two builds of the intact project (another input "
                                "order and thread count) differ in its rows; it cannot be a solution seed")
                continue
            # columns computed from the clock: graded without them (adegen.dbt.clock_columns)
            clocked = self.base.clock_grading(self.base.uid_of(t) or "")[0]
            cols = ordered_union(ordered_union(chk.exclude_columns, unstable.get(t, [])), clocked)
            if chk.rows == 0:
                problems.append(f"{t} is empty in the solved state")
            if chk.rejected or (chk.columns and len(cols) >= len(chk.columns)):
                problems.extend(chk.problems or [f"{t}: every column would be excluded"])
            elif cols:
                excludes[t] = cols
        return problems, excludes

    def windows(self, tables: list[str]) -> dict[str, dict]:
        """The tables whose rows grow with the clock, graded through a date (validate.duckdb.clockwindow)."""
        wins = {t: self.base.clock_windows.get(self.base.uid_of(t) or "") for t in tables}
        return {t: {"column": w["column"], "through": w["through"], "why": w.get("why", "")}
                for t, w in wins.items() if w}

    def volatile_notes(self, tables: list[str]) -> list[str]:
        """Two builds minutes apart may not reveal random values: scan the compiled SQL of each
        seeded table and its upstream models for such functions."""
        base = self.base
        app = self.root / "baseline" / "app"
        hits = []
        for t in tables:
            uid = base.uid_of(t)
            for u in base.graph.upstream_depth_first(uid) if uid else []:
                m = base.models[u]
                compiled = app / "target" / "compiled" / (m.get("package") or self.project.name) / (m.get("path") or "")
                hit = _VOLATILE.search(compiled.read_text()) if compiled.is_file() else None
                if hit:
                    hits.append(f"{m['name']} uses {hit.group(0)}")
        return [("random values in SQL upstream of the seeded table(s): " + ", ".join(hits)
                 + " (exclude the affected columns or pin the value)")] if hits else []


class FullEmulation:
    """Whole emulated trials (validate.proof's `ProofStrategy`; takes every task)."""

    name = "full emulation"
    label = body_extra = None

    def __init__(self, run: DuckDBRun, mode: str):
        self.run, self.mode = run, mode
        self.grading = f"({mode})"
        self._builds: list[Path] = []   # the solved state's two builds (trial roots)

    def workdir(self, req: ProveRequest) -> Path:
        return self.run.workdir(req)

    def _job(self, req: ProveRequest, work: Path, agent: str = "sage", task_dir: Path | None = None) -> TrialJob:
        return TrialJob(str(task_dir or req.task_dir), str(req.project_copy), str(req.db_file), str(work), self.mode,
                        agent)

    def solved_state(self, req: ProveRequest, work: Path) -> SolvedState:
        """The solved state built twice: the seeds come from the first (`solved.db`), columns that
        differ between the two are excluded."""
        run = self.run
        run.progress(f"validate: {req.task_dir.name}: building the solved state twice")
        futs = [run.workers.submit(proving.solved_state_job, run.cfg, self._job(req, work), deadline=run.deadline)
                for _ in range(2)]
        solved = [run.workers.result(f, "the solved state") for f in futs]
        self._builds = [Path(s["root"]) for s in solved if s.get("root")]
        failed = next((s["reason"] for s in solved if s.get("ok") is False), None)
        if failed:
            return SolvedState(None, [failed])
        dbs = [Path(s["root"]) / "app" / f"{req.spec.db_name}.duckdb" for s in solved]
        problems, excludes = run.seed_tables(dbs[0], req.tables, other_db=dbs[1])
        return SolvedState(dbs[0], problems, excludes, run.volatile_notes(req.tables), run.windows(req.tables))

    def write_seeds(self, req: ProveRequest, solved: SolvedState) -> None:
        self.run.write_seeds(req, solved)
        for root in self._builds:  # project copies and databases the trials do not need
            shutil.rmtree(root, ignore_errors=True)

    def grade(self, req: ProveRequest, solved: SolvedState, excludes: dict) -> GradedTrials:
        run = self.run
        work = self.workdir(req)
        futs = {a: run.workers.submit(proving.trial_job, run.cfg, self._job(req, work, a), deadline=run.deadline)
                for a in ("none", "sage")}
        if req.fixed_only is not None:  # the fix without its full refresh (tasks.rebuild): sage on the copy
            futs["fixed_only"] = run.workers.submit(proving.trial_job, run.cfg,
                                                    self._job(req, work, "sage", req.fixed_only), deadline=run.deadline)
        res = {}
        for a, f in futs.items():
            r = run.workers.result(f, f"the {a} trial")
            res[a] = r if not isinstance(r, dict) else TrialSummary(a, error=r["reason"])
        extra = 0.0 if self.mode != "inprocess" else DBT_CLI_STARTUP * res["sage"].test_dbt_calls
        return GradedTrials(res["none"], res["sage"], extra, fixed_only=res.get("fixed_only"))
