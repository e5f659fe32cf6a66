"""Measured difficulty: a task's runs (rows of `calibration.jsonl`) summed up, and its label (pure;
no adegen imports, so the review page reads it too).

The label, from the solve rate over the runs and the median effort of the solved runs (the
search's tries for `builtin:search`, else wall seconds):

    unsolved   no run solved it
    hard       solved in fewer than half the runs, or effort above the medium bound
    medium     solved in half the runs or more (not all), or effort above the easy bound
    easy       solved in every run, effort within the easy bound

Bounds: seconds 120 (easy) / 600 (medium); tries 25 (easy) / 75 (medium)."""
from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

CALIBRATION_FILE = "calibration.jsonl"
SECONDS_BOUNDS = (120.0, 600.0)
TRIES_BOUNDS = (25.0, 75.0)
LABELS = ("easy", "medium", "hard", "unsolved")


@dataclass(frozen=True)
class MeasuredDifficulty:
    label: str
    runs: int
    solved: int
    solve_rate: float
    median_seconds: float | None  # of the solved runs (None: none solved)
    median_tries: float | None  # builtin:search only
    agent: str
    key: str

    def to_json(self) -> dict:
        return asdict(self)

    def line(self) -> str:
        effort = (f", median {self.median_tries:g} tries" if self.median_tries is not None else "") + (
            f", median {self.median_seconds:.0f}s" if self.median_seconds is not None else "")
        return f"{self.label} ({self.solved}/{self.runs} solved{effort}; {self.agent}, {self.key} prompt)"


def label(solve_rate: float, effort: float | None, bounds: tuple[float, float]) -> str:
    if solve_rate <= 0:
        return "unsolved"
    if solve_rate < 0.5 or (effort is not None and effort > bounds[1]):
        return "hard"
    if solve_rate < 1 or (effort is not None and effort > bounds[0]):
        return "medium"
    return "easy"


def _median(values: list) -> float | None:
    values = [float(v) for v in values if isinstance(v, (int, float))]
    return round(statistics.median(values), 2) if values else None


def measured(rows: list[dict]) -> MeasuredDifficulty:
    """The summary of one task's runs (all with the same agent and prompt key)."""
    solved = [r for r in rows if r.get("solved")]
    rate = len(solved) / len(rows) if rows else 0.0
    seconds = _median([r.get("seconds") for r in solved])
    tries = _median([r.get("tries") for r in solved])
    search = tries is not None
    lab = label(rate, tries if search else seconds, TRIES_BOUNDS if search else SECONDS_BOUNDS)
    first = rows[0] if rows else {}
    return MeasuredDifficulty(lab, len(rows), len(solved), round(rate, 3), seconds, tries,
                              str(first.get("agent", "")), str(first.get("key", "")))


def by_task(rows: list[dict]) -> dict[str, MeasuredDifficulty]:
    """Each task's measured difficulty, from its runs of the newest calibration that ran it
    (rows carry `calibration_id`; a later calibration of a task replaces an earlier one)."""
    newest: dict[str, str] = {}
    for r in rows:
        newest[str(r.get("task_id"))] = str(r.get("calibration_id", ""))
    groups: dict[str, list[dict]] = {}
    for r in rows:
        tid = str(r.get("task_id"))
        if str(r.get("calibration_id", "")) == newest[tid]:
            groups.setdefault(tid, []).append(r)
    return {tid: measured(rs) for tid, rs in groups.items()}


def read_rows(output_dir: Path) -> list[dict]:
    """The rows of `<output_dir>/calibration.jsonl` (none when absent; unreadable lines skipped)."""
    path = Path(output_dir) / CALIBRATION_FILE
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and row.get("task_id"):
            rows.append(row)
    return rows
