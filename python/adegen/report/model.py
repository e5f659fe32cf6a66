"""What the page shows, as plain dataclasses (built by `assemble`, drawn by the template)."""
from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup

from adegen.report.dag import DagPicture
from adegen.report.folders import SeedFile

NOT_RECORDED = "not recorded"


@dataclass
class CodeView:
    name: str
    html: Markup  # highlighted


@dataclass
class TableImpact:
    table: str
    graded: bool
    distance: int | None  # DAG distance from the changed model
    rows_changed: int | None
    rows_total: int | None


@dataclass
class ExampleRow:
    """One row of a graded table, broken vs intact: the intact row from the solution seed when the
    key is found there, else only the key and the changed column."""

    table: str
    key: str
    key_value: str
    columns: list[str]
    broken: list[str]
    intact: list[str]
    changed: list[bool]


@dataclass
class Impact:
    recorded: bool
    summary: str | None = None  # the observation's one-line example / reason
    tables: list[TableImpact] = field(default_factory=list)
    more_tables: int = 0  # changed tables not listed
    columns_differ: list[str] = field(default_factory=list)
    example: ExampleRow | None = None
    missing_rows: int | None = None
    extra_rows: int | None = None


@dataclass
class ProofView:
    state: str  # proven | failed | unproven | unrecorded
    label: str
    detail: str
    seconds: dict[str, float] = field(default_factory=dict)
    total_seconds: float | None = None


@dataclass
class TaskView:
    task_id: str
    status: str  # task.yaml's status (ready | dev | ...)
    status_why: str  # why dev / how proven
    model: str
    model_path: str
    layer: str
    pattern_id: str
    pattern_name: str
    family: str
    family_inferred: bool  # read from the setup patch, not a record
    difficulty: str
    description: str
    prompts: list[dict]  # [{key, prompt}]
    setup_diff: Markup | None
    solution_diff: Markup | None
    tests: list[CodeView]
    auto_tests: list[str]  # the AUTO tests ade-bench generates from the solution seeds
    seeds: list[SeedFile]
    task_yaml: Markup | None
    impact: Impact
    proof: ProofView
    dag: DagPicture | None
    dag_note: str
    problems: list[str]
    measured: str = ""  # the measured difficulty's line (calibration.jsonl), "" when not measured
    measured_label: str = "not measured"


@dataclass
class RunRow:
    run_id: str
    command: str
    started_at: str
    tasks: int
    exit_code: int | None
    elapsed_sec: float | None
    timings: dict[str, float]


@dataclass
class Overview:
    project: str
    database: str
    tasks: int
    by_status: dict[str, int]
    by_family: dict[str, int]
    by_layer: dict[str, int]
    by_difficulty: dict[str, int]
    dropped_by_reason: dict[str, int]
    runs: list[RunRow]
    phases: list[str]  # the timing columns, in first-seen order
    warnings: list[str]
    by_measured: dict[str, int] = field(default_factory=dict)  # measured difficulty labels (calibrated tasks)
    clock_dependent: dict[str, str] = field(default_factory=dict)  # model -> why it reads the clock (never graded)
    clock_columns: dict[str, dict] = field(default_factory=dict)  # model -> {columns, why}: graded without them
    clock_windows: dict[str, dict] = field(default_factory=dict)  # model -> {column, through, why}: rows graded through a date
    clock_check: str | None = None  # the newest run's shifted-clock check, or why it was skipped


@dataclass
class Page:
    title: str
    generated_at: str
    output_dir: str
    overview: Overview
    tasks: list[TaskView]
