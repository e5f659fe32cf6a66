"""The proof rule, written once for every database and every speed path (architecture.md, "Build <->
validation contract"): the solved state's tables become the task's solution seeds (columns they
cannot hold exactly go to exclude_columns), agent none and agent sage are graded, and the proof
holds when the broken state fails the tests and the solved state passes them.

How the states are built and the trials run differs, and only that: the DuckDB validator's prepared
path (`fastprove.PreparedProof`: the intact build is the solved state, the screen's database the
broken one, grading in a warm worker), its full emulation (`fullprove.FullEmulation`: whole
harness trials) and the Snowflake emulator (`snowflake_prove.EmulatorProof`: fresh fakesnow
servers). Each is a `ProofStrategy` that builds and reads states and runs trials; `prove` decides.
A strategy whose assumptions do not hold for a task raises `Fallback`, and the next one of the
chain takes the task, the reason noted in `Proof.detail`.
"""
from __future__ import annotations

import math
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Protocol, Sequence

from adegen.adebench.procedure.testgen import GradingSpec, check_test_names
from adegen.validate.rules.contract import Proof, ProofOutcome
from adegen.tasks.rebuild import without_full_refresh
from adegen.tasks.stand_in_tests import render_windowed
from adegen.tasks.task_yaml import read_task_yaml, update_task_yaml

DEFAULT_TEST_TIMEOUT = 30.0  # ade-bench's DEFAULT_TEST_TIMEOUT_SEC
STEP = 30  # a test timeout is a whole number of these: small differences between builds do not show


@dataclass(frozen=True)
class ProveRequest:
    """One `prove` call: the task, its grading spec, the project copy and database it names."""

    task_dir: Path
    spec: GradingSpec
    project_copy: Path
    db_file: Path | None
    mode: str = "inprocess"     # "script": bash + one dbt process per call (the independent check)
    # a copy of the task whose solution.sh fixes the code but rebuilds no incremental table in full
    # (tasks.rebuild): graded as a third trial, which must fail for the full refresh to be needed
    fixed_only: Path | None = None

    @classmethod
    def load(cls, task_dir: Path, project_copy: Path, db_file: Path | None, mode: str,
             db_type: str = "duckdb") -> "ProveRequest":
        """The request for `task_dir`; raises TestNameTooLong when ade-bench could not count a test."""
        spec = GradingSpec.load(task_dir, db_type=db_type)
        check_test_names([n for s in spec.solution_seeds for n in s.test_names()], where=str(task_dir))
        return cls(Path(task_dir), spec, Path(project_copy), db_file, mode)

    @property
    def tables(self) -> list[str]:
        """The tables the solution seeds are exported from (alternates after the seeds)."""
        seeds = self.spec.solution_seeds
        return [s.table_name for s in seeds] + [a for s in seeds for a in s.alternates or []]


@dataclass
class TrialSummary:
    """One graded trial (agent none or sage) as the harness emulation reports it."""

    agent: str
    resolved: bool = False
    reason: str = ""
    expected: int | None = None
    summary: str = ""
    tail: str = ""
    seconds: dict = field(default_factory=dict)
    test_dbt_calls: int = 0
    unsupported: list[str] = field(default_factory=list)   # emulator gaps met
    timeouts: list[str] = field(default_factory=list)      # steps that timed out
    error: str | None = None                               # the trial could not run


@dataclass
class SolvedState:
    """What a strategy read from the solved state: the database the seeds come from, and what stops
    the tables becoming seeds or changes them."""

    db: Path | None
    problems: list[str] = field(default_factory=list)             # any: the proof fails with them
    excludes: dict[str, list[str]] = field(default_factory=dict)  # table -> columns not compared
    notes: list[str] = field(default_factory=list)                # remarks for Proof.detail
    # table -> {"column", "through", "why"}: rows that grow with the clock, graded through a date
    windows: dict[str, dict] = field(default_factory=dict)


@dataclass
class GradedTrials:
    """Both graded trials, and what the strategy knows about them besides."""

    none: TrialSummary
    sage: TrialSummary
    extra_test_seconds: float = 0.0     # what the harness's CLI calls cost on top of the trial's
    solved_differs: str | None = None   # the solved state differs from the seeds' source
    fixed_only: TrialSummary | None = None  # sage on `ProveRequest.fixed_only` (None: not graded)


class Fallback(Exception):
    """The strategy cannot prove this task (its assumptions do not hold); the message says why."""


class ProofStrategy(Protocol):
    """How one database and speed path builds, reads and grades the states of a proof."""

    name: str                 # how a fallback to it is noted ("full emulation")
    grading: str              # its grading in the progress line ("(inprocess, prepared)")
    label: str | None         # the detail of a proven task starts with it (None: no label)
    body_extra: str | None    # a fixed remark in the detail (where the seeds came from)

    def workdir(self, req: ProveRequest) -> Path: ...

    def solved_state(self, req: ProveRequest, work: Path) -> SolvedState: ...

    def write_seeds(self, req: ProveRequest, solved: SolvedState) -> None: ...

    def grade(self, req: ProveRequest, solved: SolvedState, excludes: dict[str, list[str]]) -> GradedTrials: ...


def prove(req: ProveRequest, chain: Sequence[ProofStrategy], progress: Callable[[str], None]) -> Proof:
    """The Proof of one task by the first strategy of `chain` that takes it (the last one must)."""
    fallback = None
    for strategy, following in zip(chain, [*chain[1:], None]):
        try:
            return _prove(strategy, req, fallback, progress)
        except Fallback as exc:
            if following is None:
                raise
            fallback = f"{following.name} ({exc})"
            progress(f"validate: {req.task_dir.name}: {fallback}")
    raise ValueError("no proof strategy")


def _prove(s: ProofStrategy, req: ProveRequest, fallback: str | None, progress: Callable[[str], None]) -> Proof:
    """Seeds + _no-op.txt from the solved state, exclude_columns / max_test_timeout_sec in
    task.yaml when needed, then none must fail and sage must pass."""
    t0 = time.monotonic()
    seconds: dict[str, float] = {}
    work = s.workdir(req)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        solved = s.solved_state(req, work)
        if solved.problems:
            seconds["total"] = time.monotonic() - t0
            return Proof(False, False, False, [], 0, "unproven: " + "; ".join(solved.problems), solved.excludes,
                         None, seconds, ProofOutcome.SEEDS_REFUSED)
        s.write_seeds(req, solved)
        seeds = [f"solution__{t}" for t in req.tables]
        merged = {t: ordered_union(existing_excludes(req.spec, t), c) for t, c in solved.excludes.items()}
        if merged:
            update_task_yaml(req.task_dir / "task.yaml", exclude_columns=merged)
        if solved.windows:
            write_windows(req.task_dir, solved.windows)
            solved.notes.extend(f"{t} graded on its rows with {w['column']} through {w['through']} (its later rows "
                                "grow with the clock)" for t, w in solved.windows.items())
        seconds["solved_state"] = time.monotonic() - t0
        req = with_fixed_only(req, work)
        third = " (and the fix without its full refresh)" if req.fixed_only else ""
        progress(f"validate: {req.task_dir.name}: grading none and sage{third} {s.grading}")
        t1 = time.monotonic()
        trials = s.grade(req, solved, merged)
        seconds["grading"] = time.monotonic() - t1
        seconds["total"] = time.monotonic() - t0
        proof = finish_proof(ProofInput(
            trials.none, trials.sage, seeds, merged, req.spec.max_test_timeout_sec, trials.extra_test_seconds,
            solved.notes, s.label, s.body_extra, trials.solved_differs, fallback,
            req.fixed_only is not None, trials.fixed_only), seconds)
        if proof.max_test_timeout_sec:
            update_task_yaml(req.task_dir / "task.yaml", max_test_timeout_sec=proof.max_test_timeout_sec)
        return proof
    finally:
        shutil.rmtree(work, ignore_errors=True)


def with_fixed_only(req: ProveRequest, work: Path) -> ProveRequest:
    """`req` with a copy of its task (seeds and task.yaml as the trials grade them) whose solution
    fixes the code but leaves out the full refresh of the incremental tables, when solution.sh has
    one (tasks.rebuild); else `req` itself."""
    try:
        text = without_full_refresh((req.task_dir / "solution.sh").read_text())
    except OSError:
        text = None
    if text is None:
        return req
    copy = work / "fixed-only" / req.task_dir.name
    shutil.copytree(req.task_dir, copy)
    (copy / "solution.sh").write_text(text)
    return replace(req, fixed_only=copy)


def write_windows(task_dir: Path, windows: dict[str, dict]) -> None:
    """Tables whose rows grow with the clock: their AUTO equality test excluded, a windowed
    stand-in in the task's tests/ (tasks.stand_in_tests.render_windowed, after exclude_columns)."""
    doc = update_task_yaml(task_dir / "task.yaml", exclude_tests={
        s.table_name: ordered_union(list(s.exclude_tests), ["equality_test"])
        for s in read_task_yaml(task_dir / "task.yaml").solution_seeds if s.table_name in windows})
    for seed in doc.solution_seeds:
        w = windows.get(seed.table_name)
        if w:
            rel, text = render_windowed(seed, w["column"], w["through"], w.get("why", ""))
            (task_dir / rel).parent.mkdir(parents=True, exist_ok=True)
            (task_dir / rel).write_text(text)


def ordered_union(a: list[str], b: list[str]) -> list[str]:
    return list(dict.fromkeys([*a, *b]))


def existing_excludes(spec: GradingSpec, table: str) -> list[str]:
    return next((list(s.exclude_columns or []) for s in spec.solution_seeds if s.table_name == table), [])


# --------------------------------------------------------------------------- the verdict

@dataclass
class ProofInput:
    none: TrialSummary
    sage: TrialSummary
    seeds: list[str]
    excludes: dict[str, list[str]]
    current_timeout: float | None = None     # the task's max_test_timeout_sec
    extra_test_seconds: float = 0.0          # what the harness's CLI calls cost on top of ours
    notes: list[str] = field(default_factory=list)
    label: str | None = None                 # backend wording for a proven task (None: "proven")
    body_extra: str | None = None            # a backend's fixed remark (e.g. where seeds came from)
    solved_differs: str | None = None        # the solved state differs from the seeds' source
    fallback_note: str | None = None         # why an earlier strategy did not take the task
    fixed_only_asked: bool = False           # the solution rebuilds incremental tables in full
    fixed_only: TrialSummary | None = None   # the trial of the fix without that rebuild


def test_timeout(sage: TrialSummary, extra: float, current: float | None) -> int | None:
    """~3x the test phase as the harness runs it (`extra`: what its CLI calls add), in steps of
    STEP seconds, min 60, when the current timeout is too tight. Normalised for load: where the
    test phase's CPU seconds (`tests_cpu`, measured by the emulation) are fewer than its wall
    seconds, the process had that share of a core (a build beside other work), and the whole
    measurement is scaled by it: the timeout must not grow with the build machine's load."""
    wall = float(sage.seconds.get("tests", 0.0))
    cpu = sage.seconds.get("tests_cpu")
    share = 1.0 if cpu is None or wall <= 0 else min(1.0, float(cpu) / wall)
    secs = (wall + extra) * share
    if 3 * secs > (current or DEFAULT_TEST_TIMEOUT):
        return max(60, STEP * int(math.ceil(3 * secs / STEP)))
    return None


test_timeout.__test__ = False  # not a pytest test


def finish_proof(inp: ProofInput, seconds: dict) -> Proof:
    """The Proof of one task from its two graded trials. The caller writes
    `proof.max_test_timeout_sec` into task.yaml when it is set."""
    trials = (inp.none, inp.sage)
    broken_fails, solved_passes = not inp.none.resolved, inp.sage.resolved
    expected = int(inp.sage.expected or 0)
    for t in trials:
        if t.error:
            return Proof(False, False, False, inp.seeds, 0, f"unproven: {t.agent} trial could not run: {t.error}",
                         inp.excludes, None, seconds, ProofOutcome.TRIAL_FAILED)
    blockers = []
    unsupported = list(dict.fromkeys(u for t in trials for u in t.unsupported))
    timeouts = [f"{t.agent}: {x}" for t in trials for x in t.timeouts]
    if unsupported:
        blockers.append("the emulator cannot run: " + "; ".join(unsupported))
    if timeouts:
        blockers.append("dbt timed out (" + "; ".join(timeouts) + ")")
    if blockers:
        outcome = ProofOutcome.EMULATOR_GAP if unsupported else ProofOutcome.TIMED_OUT
        return Proof(False, broken_fails, solved_passes, inp.seeds, expected, "unproven: " + " and ".join(blockers),
                     inp.excludes, None, seconds, outcome)
    notes = list(inp.notes)
    fixed_only_fails, fixed_line = _fixed_only(inp)
    if inp.solved_differs:
        notes.append(inp.solved_differs)
        solved_passes = False
    timeout = test_timeout(inp.sage, inp.extra_test_seconds, inp.current_timeout)
    body = " | ".join(x for x in (
        inp.none.summary, inp.sage.summary, fixed_line, inp.body_extra,
        f"excluded {inp.excludes}" if inp.excludes else None,
        f"max_test_timeout_sec={timeout}" if timeout else None,
        ("note: " + "; ".join(notes)) if notes else None, inp.fallback_note) if x)
    ok = broken_fails and solved_passes
    if ok:
        detail, outcome = (f"{inp.label}: {body}" if inp.label else body), ProofOutcome.PROVEN
    else:
        bad = inp.none if not broken_fails else inp.sage
        outcome = (ProofOutcome.BROKEN_PASSES if not broken_fails else ProofOutcome.SOLVED_FAILS
                   if not inp.sage.resolved else ProofOutcome.SOLVED_DIFFERS)
        detail = f"unproven: {outcome.label}: {body}\n--- {bad.agent} test output (tail) ---\n{bad.tail}"
    seconds["total"] = seconds.get("total", 0.0)
    return Proof(ok, broken_fails, solved_passes, inp.seeds, expected, detail, inp.excludes, timeout, seconds, outcome,
                 fixed_only_fails)


def _fixed_only(inp: ProofInput) -> tuple[bool | None, str | None]:
    """Whether the fix without the full refresh fails (None: not asked, or not graded) and its line
    in the detail. It decides only the kind of the task (the caller keeps the refresh when it
    fails), not whether the task is proven."""
    if not inp.fixed_only_asked:
        return None, None
    t = inp.fixed_only
    if t is None or t.error:
        return None, "fix without the full refresh: not graded" + (f" ({t.error})" if t is not None else "")
    return not t.resolved, "fix without the full refresh: " + t.summary.replace("sage: ", "", 1)
