"""The shifted-clock check (issue 30): a proven task's solved state graded again with the clock
moved forward, as ade-bench will grade it when the benchmark runs next month.

Lineage (adegen.clock) keeps the tables that read the clock out of grading; this check catches what
lineage cannot see (a hook that creates a database macro reading `current_date`, a source view, a
clock word dbt renders away). The sage trial of the harness emulation (`python -m adegen.harness
... --agent sage`: setup.sh, solution.sh, test_setup, seeds, dbt test against the seeds exported
today) runs in a child process under libfaketime (Debian's `faketime`), which moves the clock for
that process and everything it starts: Python's datetime (dbt's `run_started_at`) and DuckDB's
`current_date` / `now()` alike. A task whose solved state fails then is never written `ready`.

Without `faketime` on PATH the check is skipped, and the run summary says so.
"""
from __future__ import annotations

import os
import shutil
import sys
import threading
from dataclasses import dataclass, replace
from pathlib import Path

from ..dbt import harness_env, run_process
from .contract import Proof, ProofOutcome

SHIFT_DAYS = 40
_PYTHONPATH = str(Path(__file__).resolve().parents[2])  # the directory holding the adegen package


def faketime_path() -> str | None:
    return shutil.which("faketime")


@dataclass(frozen=True)
class ShiftJob:
    """One shifted sage trial (picklable: it runs in a validator worker, which waits on the child)."""

    task_dir: str
    project_copy: str
    db_file: str
    workdir: str
    packages_from: str   # the user's project: its installed packages stand in for `dbt deps`
    faketime: str
    days: int = SHIFT_DAYS
    timeout: float = 600.0


@dataclass(frozen=True)
class ShiftResult:
    passed: bool      # the solved state passed the tests with the clock moved forward
    ran: bool         # False: the trial could not run (output says why)
    output: str
    seconds: float


def shift_argv(job: ShiftJob) -> list[str]:
    return [job.faketime, "-f", f"+{job.days}d", sys.executable, "-m", "adegen.harness", job.task_dir,
            "--project", job.project_copy, "--db", job.db_file, "--agent", "sage", "--mode", "inprocess",
            "--workdir", job.workdir, "--packages-from", job.packages_from]


def shifted_trial_job(job: ShiftJob) -> ShiftResult:
    """The sage trial under faketime (worker side). adegen.harness exits 0 when sage passes, 1 when
    it fails, 2 on bad input; run_process answers 124 at the timeout."""
    work = Path(job.workdir)
    work.mkdir(parents=True, exist_ok=True)
    env = harness_env()  # the child imports this adegen first, whatever PYTHONPATH held
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PYTHONPATH, env.get("PYTHONPATH")) if p)
    try:
        rc, text, secs = run_process(shift_argv(job), work, env=env, timeout=job.timeout)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return ShiftResult(rc == 0, rc in (0, 1), _excerpt(text), secs)


def _excerpt(text: str, tail: int = 2500) -> str:
    """adegen.harness's verdict line (its first: which tests failed) and the end of dbt's output."""
    if len(text) <= tail + 200:
        return text
    return text.splitlines()[0] + "\n...\n" + text[-tail:]


def judged(proof: Proof, shift: ShiftResult, days: int = SHIFT_DAYS) -> Proof:
    """The proof once its solved state was graded `days` later: unchanged when it passed, else
    unproven (outcome CLOCK_SHIFT) with the trial's output."""
    seconds = {**proof.seconds, "clock_check": round(shift.seconds, 2)}
    if shift.passed:
        return replace(proof, seconds=seconds)
    what = (f"{ProofOutcome.CLOCK_SHIFT.label} ({days} days later, faketime): the graded table depends on the "
            "date it is built, so its solution seed goes stale" if shift.ran else
            f"the shifted-clock trial could not run ({days} days later, faketime)")
    detail = f"unproven: {what}\n--- sage test output {days} days later (tail) ---\n{shift.output}"
    return replace(proof, ok=False, detail=detail, seconds=seconds, outcome=ProofOutcome.CLOCK_SHIFT)


class ShiftTally:
    """What the run's shifted-clock checks found, as the summary's line says it (thread-safe: the
    bulk mode proves tasks side by side)."""

    def __init__(self, faketime: str | None, days: int = SHIFT_DAYS):
        self.faketime, self.days = faketime, days
        self.passed = self.failed = 0
        self._lock = threading.Lock()

    def add(self, shift: ShiftResult) -> None:
        with self._lock:
            if shift.passed:
                self.passed += 1
            else:
                self.failed += 1

    def line(self) -> str:
        if self.faketime is None:
            return ("skipped: faketime is not installed (Debian/Ubuntu: apt-get install faketime), so proven "
                    f"tasks were not graded again with the clock moved {self.days} days forward")
        n = self.passed + self.failed
        if n == 0:
            return f"no proven task to grade again {self.days} days later"
        out = f"{n} proven task(s) graded again {self.days} days later (faketime): {self.passed} passed"
        if self.failed:
            out += f", {self.failed} failed (written status: dev)"
        return out
