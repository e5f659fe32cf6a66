"""The run's --json document (schema: `schemas/build.schema.json`; the run record adds its own
fields, `pipeline/record.py`): one typed builder, `RunDoc`, that the stages fill field by field
(`ctx.doc`), and one writer, `RunDoc.to_json`, that puts its keys in the order declared here and
leaves out what the run did not reach. A new key is a new field here first."""
from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from typing import Any

from adegen import __version__


@dataclass
class ValidationDoc:
    """`validation`: whether execution validation was asked for, usable, and why not."""

    requested: bool = True
    emulate_snowflake: bool | None = None
    usable: bool | None = None
    reason: str | None = None
    notes: dict[str, str] = field(default_factory=dict)  # "<database>_note": the backend's closing word

    def to_json(self) -> dict:
        out = {k: v for k, v in (("requested", self.requested), ("emulate_snowflake", self.emulate_snowflake),
                                 ("usable", self.usable), ("reason", self.reason)) if v is not None}
        return {**out, **self.notes}


@dataclass
class RunDoc:
    adegen_version: str = __version__
    # bulk mode's run (pipeline/bulk.py)
    mode: str | None = None
    seed: int | None = None
    tasks_wanted: int | None = None
    jobs: int | None = None
    # inputs (pipeline/inputs.py)
    project_dir: str | None = None
    output_dir: str | None = None
    validation: ValidationDoc = field(default_factory=ValidationDoc)
    project: dict | None = None  # name, db_type, db_name, profile, target
    backend_fields: dict[str, Any] = field(default_factory=dict)  # the database's own top-level keys
    ade_bench: dict | None = None  # found, path, how
    timings_sec: dict[str, float] | None = None  # stage -> seconds, in the order the stages ran
    survey: dict | None = None  # locations, tasks (pipeline/discovery.py)
    # the build's proposals and pick (pipeline/propose.py)
    proposals: list[dict] | None = None
    excluded: dict | None = None
    dropped_candidates: list[dict] | None = None
    diff_candidates: list[dict] | None = None  # each diff offered and its fate (pipeline/diffs.py)
    compound: list[dict] | None = None  # each compound tried and its fate (pipeline/compound.py)
    mix: dict | None = None  # --mix hard: its name and the kinds of the tasks written (propose/mix.py)
    tasks: list[dict] | None = None  # the tasks written (pipeline/write.py, bulk's commits)
    change_shape: dict | None = None  # how many of them read as a commit (tasks/shape.py: run_figure)
    selected: list[int] | None = None
    database: dict | None = None  # db_file, note (pipeline/workspace.py)
    dataset: dict | None = None  # bulk mode's tasks.jsonl rows and files
    dropped_by_reason: dict[str, int] | None = None  # bulk mode, by the drop codes' labels
    dropped_by_code: dict[str, int] | None = None  # bulk mode, by code id (adegen.core.drops)
    runtime: dict | None = None  # pipeline/runtime.py
    shortfall: dict[str, str] | None = None  # fewer than 5 tasks: model -> why (pipeline/shortfall.py)
    time_budget: dict | None = None  # --time-budget: seconds, spent, what it skipped (pipeline/budget.py)
    next_steps: list[str] | None = None  # pipeline/summary.py
    elapsed_sec: float | None = None
    harness_run: dict | None = None  # --run-harness
    verify_slow: dict | None = None  # --verify-slow (pipeline/verify_slow.py)
    exit_code: int | None = None
    run_record: str | None = None  # pipeline/record.py
    report: str | None = None  # the review page

    def timing(self, name: str, since: float) -> None:
        """Seconds a stage took (time.monotonic() at its start)."""
        if self.timings_sec is None:
            self.timings_sec = {}
        self.timings_sec[name] = round(time.monotonic() - since, 1)

    def to_json(self) -> dict:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "backend_fields":
                out.update(value)
            elif f.name == "validation":
                out["validation"] = value.to_json()
            elif value is not None:
                out[f.name] = value
        return out
