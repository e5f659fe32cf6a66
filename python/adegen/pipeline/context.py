"""The one object every stage of a run receives: options, console, project, validator, results.

Stages are plain functions `stage(ctx, ...)` that read what earlier stages left in the context and
add their own result; nothing is threaded through positional arguments. The build and bulk mode
run the same stages (`pipeline/run.py` holds their order); bulk mode calls some in a loop."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from adegen.adebench.install import AdeBench
from adegen.backends import Backend
from adegen.pipeline.options import Options
from adegen.catalog.patterns import Catalog
from adegen.discover.project import ProjectInfo
from adegen.discover.survey import Survey
from adegen.pipeline.budget import TimeBudget
from adegen.pipeline.document import RunDoc
from adegen.pipeline.pending import PendingValidator

if TYPE_CHECKING:  # both import seconds' worth of modules (duckdb, dbt, inflect): not at the command's start
    from adegen.propose.proposals import Scope
    from adegen.realism import MeasureRun
    from adegen.validate.rules.contract import ValidatorProtocol


class UI:
    """Text to stdout (or stderr in --json mode so stdout stays one JSON document)."""

    def __init__(self, json_mode: bool, interactive: bool):
        self.json_mode = json_mode
        self.interactive = interactive
        self.out = sys.stderr if json_mode else sys.stdout
        self.waited_sec = 0.0  # seconds spent waiting for the user's answers (--time-budget skips them)

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def warn(self, text: str) -> None:
        print(f"warning: {text}", file=sys.stderr, flush=True)

    def ask(self, question: str, default: str = "") -> str:
        """Only called when interactive (stdin is a terminal)."""
        print(question, end=" ", file=self.out, flush=True)
        t = time.monotonic()
        try:
            line = sys.stdin.readline()
        finally:
            self.waited_sec += time.monotonic() - t
        if not line:
            return default
        return line.strip() or default

    def progress(self, text: str) -> None:
        """An indented progress line (validator and screening messages)."""
        self.say(f"  {text}")


@dataclass
class RunReport:
    warnings: list[str] = field(default_factory=list)
    tasks: list[dict] = field(default_factory=list)
    dropped_tasks: list[dict] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    task_details: dict[str, dict] = field(default_factory=dict)  # task id -> run record extras


@dataclass
class OutputPlan:
    """Where and against what the tasks of this run are written (set by `workspace.prepare`)."""

    tasks_dir: Path
    project_root: Path  # the project the patches apply to: the standalone copy, or the original
    project_dir_field: str  # task.yaml variants[].project_dir
    seed_based: bool  # raw data comes from `dbt seed`
    known_models: set[str]
    db_file: Path | None = None  # the database file proofs run against (DuckDB)
    db_note: str | None = None  # what the user must do so ade-bench finds the database


@dataclass
class RunContext:
    opts: Options
    ui: UI
    t0: float = field(default_factory=time.monotonic)
    started: float = field(default_factory=time.time)  # wall clock, names the run record
    report: RunReport = field(default_factory=RunReport)
    doc: RunDoc = field(default_factory=RunDoc)  # the --json document, filled by the stages
    project: ProjectInfo | None = None
    backend: Backend | None = None  # of the project's database
    ade: AdeBench | None = None  # where ade-bench is (located once)
    workroot: Path | None = None  # scratch directory of the run (removed at the end)
    pending: PendingValidator | None = None  # the validator while the baseline builds
    validator: ValidatorProtocol | None = None  # a usable validator once the baseline is built, else None
    measure: MeasureRun | None = None  # where the patterns' data preconditions are measured (propose.measure_run)
    db_conversion: str | None = None  # the --db-path file was converted for ade-bench (Backend.ship_database)
    discovery: dict | None = None
    catalog: Catalog | None = None
    survey: Survey | None = None  # existing tasks (bulk mode leaves its own out)
    output: OutputPlan | None = None
    command: str = "build"  # "build" | "bulk": names the run in its record and the review page
    record: dict | None = None  # the run record once written (record.write_record)
    budget: TimeBudget | None = None  # --time-budget (set by run_build)

    def scope(self) -> Scope:
        """The run's proposal scope (after discovery and survey): what enumeration, ranking and
        selection read of the project."""
        from adegen.propose.proposals import Scope  # the prompt writer's word forms (inflect) take seconds to import

        return Scope(self.opts.project_dir, self.project.name, self.project.adapter_type, self.discovery, self.survey,
                     prefer_db_specific=self.backend.prefer_db_specific,
                     siblings=(self.validator is not None or self.pending is not None)
                     and self.backend.screens_pairs)

    def timing(self, name: str, since: float) -> None:
        self.doc.timing(name, since)

    def budget_spent(self) -> bool:
        """Whether --time-budget is given and spent (no new round or task may start)."""
        return self.budget is not None and self.budget.exhausted()

    def disable_validation(self, reason: str) -> None:
        """Execution validation is off from here on; tasks are written status: dev."""
        self.validator = None
        self.doc.validation.usable, self.doc.validation.reason = False, reason

    def unproven_reason(self) -> str:
        """Why tasks of this run cannot be proven (the backend's reason), for status: dev."""
        if not self.opts.validate:
            return "--no-validate"
        return self.backend.unproven_reason(str(self.doc.validation.reason or "execution validation unavailable"))
