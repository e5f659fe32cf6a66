"""The build <-> validation contract (docs/architecture.md): the `Validator` protocol every backend
implements (DuckDB `Validator`, Snowflake `EmulatorValidator`, `factory.Unavailable`), the results
it returns (`Observation`, `Proof`) and the run-level facts it reports (`RunFacts`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Protocol, runtime_checkable

from adegen.core.drops import Coded, DropCode


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
    code: DropCode | None = None   # not observable: which kind of drop (`reason` is its message)

    @classmethod
    def dropped(cls, code: DropCode, reason: str, details: dict | None = None) -> "Observation":
        return cls(False, reason, False, None, 0, 0, [], {}, None, dict(details or {}), code)


class ProofOutcome(Coded):
    """How a proof ended: the code (`id`, in --json as proof.outcome) and its label. A new outcome is
    one line."""

    PROVEN = "proven", "proven"
    BROKEN_PASSES = "broken_passes", "the broken state passes the tests"
    SOLVED_FAILS = "solved_fails", "the solved state fails the tests"
    SOLVED_DIFFERS = "solved_differs", "the solved state differs from the intact build the seeds come from"
    TRIAL_FAILED = "trial_failed", "a trial could not run"
    EMULATOR_GAP = "emulator_gap", "the emulator cannot run"
    TIMED_OUT = "timed_out", "dbt timed out"
    SEEDS_REFUSED = "seeds_refused", "the solved state's tables cannot be seeds"
    NO_BASELINE = "no_baseline", "the intact build failed"


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
    outcome: ProofOutcome | None = None     # None: a proof made before it ran (e.g. by a test)
    # the solution rebuilds incremental tables in full (tasks.rebuild): does the same fix without
    # that rebuild fail? (None: no such solution, or that trial was not graded)
    fixed_only_fails: bool | None = None


@dataclass
class StorageChoice:
    """The DuckDB storage version the prepared database is written with, and why."""

    version: str = "v1.0.0"
    reason: str = "the oldest version; ade-bench's image (duckdb 1.3.0) reads it"


@dataclass
class RunFacts:
    """What one validator run reports for the summary (fields the pipeline prints / puts in --json)."""

    temp_bytes_peak: int = 0                 # peak bytes of the run's work directory (DuckDB spill included)
    temp_bytes_limit: int | None = None      # the DuckDB max_temp_directory_size per worker
    memory_limit: str | None = None          # the DuckDB memory_limit per worker
    storage: StorageChoice | None = None     # the DuckDB file adegen writes (None: no such file, or no baseline yet)
    nondeterministic: dict[str, list[str]] = field(default_factory=dict)  # table -> unstable columns ([]: rows)
    packages: list[str] = field(default_factory=list)  # "name version (source)" reused offline
    package_notes: list[str] = field(default_factory=list)
    runaway: list[str] = field(default_factory=list)   # candidates stopped over budget, with the reason
    db_note: str | None = None               # how the user's database was used (copy, fast proof or not)
    clock_dependent: dict[str, str] = field(default_factory=dict)  # model -> why it reads the clock (never graded)
    # model -> {"columns": [...], "why": ...}: reads the clock only in those columns, graded without them
    clock_columns: dict[str, dict] = field(default_factory=dict)
    # model -> {"column", "through", "columns", "why"}: its rows grow with the clock, graded through a date
    clock_windows: dict[str, dict] = field(default_factory=dict)
    clock_check: str | None = None           # the shifted-clock grading of proven tasks: how it ran, or why not


@runtime_checkable
class ValidatorProtocol(Protocol):
    """What the build codes against (architecture.md, "Build <-> validation contract")."""

    def usable(self) -> tuple[bool, str]: ...

    def baseline(self) -> None: ...

    def baseline_info(self) -> dict: ...

    def seed_based(self) -> bool: ...

    def screen(self, model_unique_id: str, model_path: str, mutated_text: str, pattern) -> Observation: ...

    def screen_many(self, items: Iterable[tuple], progress: Callable[[str], None] | None = None
                    ) -> list[Observation]: ...

    def prepare_database(self, out_dir: Path) -> Path | None: ...

    def prove(self, task_dir: Path, project_copy: Path, db_file: Path | None, *, mode: str | None = None
              ) -> Proof: ...

    def facts(self) -> RunFacts: ...

    def close(self) -> None: ...
