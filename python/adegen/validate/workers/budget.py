"""Resource budgets for mutant screens and proofs, and the run's temp-space meter.

Every mutant build (screen) and proof build gets:
- a wall-time budget: max(MIN_SECONDS, FACTOR x the intact build seconds of the models it builds)
  plus the parse time; past it the build's queries are cancelled, and a little later its worker
  process is killed and replaced (validate.pool) - the run goes on;
- an output row guard: a rebuilt table may hold at most max(ROW_FLOOR, ROW_FACTOR x its intact
  row count) rows; the mutated model's SELECT is counted (LIMIT guard + 1) before it is built, and
  every rebuilt table after;
- DuckDB `memory_limit`, `max_temp_directory_size` and `temp_directory` (inside the run's work
  directory) in the scratch profile of every worker.
A candidate over budget is dropped with the reason ("runaway: ...").

The numbers are settings (`adegen.core.settings`: ADEGEN_BUDGET_MIN_SECONDS, ADEGEN_BUDGET_FACTOR,
ADEGEN_BUDGET_ROW_FACTOR, ADEGEN_BUDGET_ROW_FLOOR, ADEGEN_BUDGET_PRECOUNT_MIN_ROWS,
ADEGEN_DUCKDB_MEMORY_LIMIT, ADEGEN_DUCKDB_TEMP_LIMIT), for constrained machines.
"""
from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

from adegen.core.settings import get_settings

GiB = 1024 ** 3
KILL_GRACE = 15.0  # seconds between cancelling the queries and killing the worker


@dataclass(frozen=True)
class Budget:
    seconds: float            # wall time of one build
    rows: dict[str, int]      # table (lower-case alias) -> row guard
    floor: int                # the row guard of a table without an intact row count
    precount: bool = True     # count the mutated model's SELECT (LIMIT guard + 1) before building it
    precount_seconds: float | None = None  # the count's own wall time (None: `seconds`)

    def guard(self, table: str) -> int:
        return self.rows.get(table.lower(), self.floor)

    @property
    def deadline(self) -> float:
        """When the pool kills the worker (the build's own timeout cancels the queries first)."""
        return self.seconds + KILL_GRACE


def needs_precount(largest_table_rows: int | None) -> bool:
    """Is a precount worth its dbt compile? Not when every table of the intact build is small
    (unknown sizes: yes): below `budget_precount_min_rows` rows even a cartesian product of such
    tables stays within what the wall-time budget and DuckDB's memory/temp limits stop."""
    return largest_table_rows is None or largest_table_rows > get_settings().budget_precount_min_rows


def row_guard(intact_rows: int) -> int:
    s = get_settings()
    return max(s.budget_row_floor, int(s.budget_row_factor * max(0, intact_rows)))


def build_budget(model_seconds: dict[str, float], uids, overhead: float, rows: dict[str, int]) -> Budget:
    """The budget of a build of `uids` (intact seconds per model from the baseline), `overhead`
    seconds of dbt start-up/parse on top, row guards from the intact row counts (`rows`)."""
    s = get_settings()
    intact = sum(float(model_seconds.get(u, 0.0)) for u in uids)
    return Budget(max(s.budget_min_seconds, s.budget_factor * intact) + overhead,
                  {t: row_guard(n) for t, n in rows.items()}, s.budget_row_floor)


def precount_seconds(model_seconds: dict[str, float], uid: str) -> float:
    """The precount's wall time: FACTOR x the mutated model's own intact build, at least
    MIN_SECONDS. It runs one DuckDB query, no dbt: neither the parse overhead nor the downstream
    models of the build's budget apply to it (on the heavy project the build's 92 s budget let a
    count of an exploding join hold a worker for 92 s, where 30 s gave the same verdict)."""
    s = get_settings()
    return max(s.budget_min_seconds, s.budget_factor * float(model_seconds.get(uid, 0.0)))


def size_bytes(text: str) -> int | None:
    units = {"kib": 1024, "mib": 1024 ** 2, "gib": GiB, "kb": 1000, "mb": 1000 ** 2, "gb": 1000 ** 3, "b": 1}
    t = text.strip().lower().replace(" ", "")
    for unit, mult in units.items():
        if t.endswith(unit):
            try:
                return int(float(t[: -len(unit)]) * mult)
            except ValueError:
                return None
    return None


def duckdb_settings(workdir: Path, jobs: int) -> dict[str, str]:
    """DuckDB settings for the scratch profile: memory per worker (a share of the machine, at most
    4 GiB), temp space per worker (a share of the free disk, at most 10 GiB) in `workdir`."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 * GiB
    memory = min(4 * GiB, max(GiB, total // (2 * (jobs + 1))))
    Path(workdir).mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(workdir).free
    temp = min(10 * GiB, max(GiB, free // (4 * max(1, jobs))))
    memory = size_bytes(get_settings().duckdb_memory_limit) or memory
    temp = size_bytes(get_settings().duckdb_temp_limit) or temp
    return {"memory_limit": f"{memory // (1024 ** 2)}MiB", "max_temp_directory_size": f"{temp // (1024 ** 2)}MiB",
            "temp_directory": str(Path(workdir) / "duckdb-tmp")}


def dir_bytes(path: Path) -> int:
    """Bytes of the files under `path` (symlinks not followed, races tolerated)."""
    total = 0
    for root, dirs, files in os.walk(path):
        for f in files:
            try:
                st = os.lstat(os.path.join(root, f))
            except OSError:
                continue
            total += st.st_blocks * 512 if hasattr(st, "st_blocks") else st.st_size
    return total


class TempMeter:
    """Samples the bytes under `root` every `every` seconds in a thread; `peak` is the maximum."""

    def __init__(self, root: Path, every: float = 1.0):
        self.root, self.every, self.peak = Path(root), every, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="adegen-temp-meter", daemon=True)
        self._thread.start()

    def sample(self) -> int:
        n = dir_bytes(self.root)
        self.peak = max(self.peak, n)
        return n

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.sample()

    def stop(self) -> int:
        self._stop.set()
        self._thread.join(5)
        self.sample()
        return self.peak
