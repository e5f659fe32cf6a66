"""`--verify-slow`: re-prove a written task the plain way and say where that disagrees with its proof.

The plain way is ade-bench's procedure without any of the proof's in-process shortcuts (issue 30,
proof fidelity): the harness emulation in script mode (harness.emulate, `mode="script"`) runs the
task as written - setup.sh and solution.sh through bash, every dbt call its own process, a fresh
copy of the database the task names, `dbt seed` loading the seed CSVs with `_no-op.txt`'s types,
the AUTO tests and the parser's pass rule - for agent none and agent sage. No prepared database, no
screen reused, no seed cache, no partial parse. The proof's verdict (broken fails, solved passes)
must be the one these two trials give.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from adegen.core.errors import AdegenError

TRIAL_TIMEOUT = 900.0   # seconds per script or dbt call of one plain trial


@dataclass(frozen=True)
class Verdict:
    """What a proof decides: does the broken state fail the tests, does the solved state pass them."""

    broken_fails: bool
    solved_passes: bool

    @property
    def proven(self) -> bool:
        return self.broken_fails and self.solved_passes

    def words(self) -> str:
        return (f"broken {'fails' if self.broken_fails else 'passes'}, "
                f"solved {'passes' if self.solved_passes else 'fails'}")


@dataclass(frozen=True)
class PlainCheck:
    """One task re-proven the plain way, beside the verdict its proof reached."""

    task_id: str
    proof: Verdict
    plain: Verdict | None            # None: the plain trials could not run (`error` says why)
    seconds: float = 0.0
    trials: tuple[str, ...] = ()     # the two trials' one-line summaries
    error: str | None = None

    @property
    def disagreement(self) -> str | None:
        """Why the plain way disagrees with the proof (None: it agrees)."""
        if self.plain is None:
            return f"the plain trials could not run: {self.error}"
        if self.plain == self.proof:
            return None
        return f"the proof says {self.proof.words()}; ade-bench's plain procedure: {self.plain.words()}"

    def line(self) -> str:
        why = self.disagreement
        head = "agrees" if why is None else "DISAGREES"
        return f"{self.task_id}: {head} ({why or self.proof.words()}) [{self.seconds:.0f}s]"

    def to_json(self) -> dict:
        return {"task_id": self.task_id, "agrees": self.disagreement is None, "disagreement": self.disagreement,
                "proof": vars(self.proof), "plain": vars(self.plain) if self.plain else None,
                "seconds": round(self.seconds, 1), "trials": list(self.trials), "error": self.error}


@dataclass(frozen=True)
class WrittenTask:
    """A task as ade-bench would run it: its directory, the project and database it names, and the
    project whose installed packages stand in for its `dbt deps` (offline)."""

    task_id: str
    task_dir: Path
    project_dir: Path
    db_file: Path
    packages_from: Path | None = None


def plain_verdict(task: WrittenTask, workdir: Path) -> tuple[Verdict, tuple[str, ...]]:
    """The verdict of agent none and agent sage graded the plain way (script mode). The two trials
    run side by side (each in its own scratch root; their dbt calls are subprocesses)."""
    from adegen.adebench.procedure.emulate import run_harness  # the harness brings duckdb and dbt along

    def trial(agent: str):
        return run_harness(task.task_dir, task.project_dir, task.db_file, agent, workdir=workdir, mode="script",
                           timeout=TRIAL_TIMEOUT, packages_from=task.packages_from)

    with ThreadPoolExecutor(2) as pool:
        res = dict(zip(("none", "sage"), pool.map(trial, ("none", "sage"))))
    return (Verdict(not res["none"].resolved, res["sage"].resolved),
            tuple(r.summary() for r in res.values()))


def check_task(task: WrittenTask, proof: Verdict, workdir: Path) -> PlainCheck:
    """Re-prove one written task the plain way; never raises for a trial that cannot run."""
    t0 = time.monotonic()
    try:
        plain, trials = plain_verdict(task, workdir)
    except (AdegenError, OSError, ValueError) as exc:
        return PlainCheck(task.task_id, proof, None, time.monotonic() - t0, (), f"{type(exc).__name__}: {exc}")
    return PlainCheck(task.task_id, proof, plain, time.monotonic() - t0, trials)
