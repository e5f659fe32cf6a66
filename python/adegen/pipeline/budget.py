"""`--time-budget`: the build's wall clock, limited. The budget counts from the run's start
(`RunContext.t0`); time spent waiting for the user's answer (the pick, the ade-bench question)
does not count (`UI.waited_sec`). It is checked
at two places only, each before work starts, never in the middle of it:

* before each proposal round after the first (`propose.propose`): a spent budget starts no new
  pool; the proposals already selected stand. The first round always runs, so a spent budget still
  says which tasks it would have written;
* before each task's write and proof (`write.write_tasks`): a spent budget starts no new task; the
  task being proven finishes and is written, the tasks written stay, the rest are skipped.

The summary says what was skipped and the --json document carries it (`time_budget`)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable


def format_duration(seconds: float) -> str:
    """`15m`, `1h`, `90s`, `1h30m`: the budget as a user would have typed it."""
    s = round(seconds)
    if s < 60 or s % 60:
        return f"{seconds:g}s" if s < 60 else f"{s}s"
    h, m = divmod(s // 60, 60)
    return (f"{h}h" if h else "") + (f"{m}m" if m else "")


@dataclass
class TimeBudget:
    """The run's time budget: seconds allowed, the clock it reads and what it skipped.

    `charge_per_task` (settings `time_budget_task_charge`, tests only) adds that many seconds to the
    clock for every task written, so a test can run a budget out after exactly one task."""

    seconds: float
    start: float  # time.monotonic() at the run's start
    charge_per_task: float = 0.0
    waited: Callable[[], float] = lambda: 0.0  # seconds spent waiting for the user (not counted)
    charged_sec: float = 0.0
    stopped_at: str | None = None  # "proposals" | "tasks": where it stopped the run
    proposals_short: int = 0  # proposals --count asked for that the rounds it stopped did not find
    skipped: list[dict] = field(default_factory=list)  # proposals picked but not written
    started: int = 0  # tasks whose write and proof began

    def spent(self) -> float:
        return time.monotonic() - self.start - self.waited() + self.charged_sec

    def exhausted(self) -> bool:
        return self.spent() >= self.seconds

    def task_done(self) -> None:
        """One task's write and proof ended (written or dropped)."""
        self.started += 1
        self.charged_sec += self.charge_per_task

    def skip(self, proposal, stage: str) -> None:
        self.skipped.append({"proposal": proposal.number, "model": proposal.model,
                             "pattern_id": proposal.pattern_id, "stage": stage})

    def line(self) -> str | None:
        """The summary's sentence, or None when the budget stopped nothing."""
        budget = format_duration(self.seconds)
        if self.stopped_at is None:
            return None
        parts = []
        if self.stopped_at == "tasks" or self.skipped:
            total = self.started + len(self.skipped)
            where = (f"after {self.started} of {total} task(s)" if self.started
                     else f"before the first of {total} task(s)")
            names = ", ".join(f"{s['model']} {s['pattern_id']}" for s in self.skipped)
            parts.append(f"Time budget {budget} reached {where}: skipped {len(self.skipped)} "
                         f"proposal(s) ({names})")
        if self.proposals_short:
            parts.append(f"{'the ' if parts else f'Time budget {budget} reached during proposals: '}"
                         f"proposal rounds stopped {self.proposals_short} short of --count")
        return "; ".join(parts) + "."

    def to_json(self) -> dict:
        return {"seconds": round(self.seconds, 1), "spent": round(self.spent(), 1),
                "reached": self.stopped_at is not None, "stopped_at": self.stopped_at,
                "proposals_short": self.proposals_short, "tasks_started": self.started,
                "skipped": list(self.skipped), "waited_sec": round(self.waited(), 1), "line": self.line()}
