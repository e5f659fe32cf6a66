"""The calibration loop: every (task, run) in its own sandbox - prepare the broken state, run the
agent, measure its diff, grade, remove the sandbox - then `calibration.jsonl` (one row per run,
appended) and each task's measured difficulty (`measure.py`)."""
from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from adegen.core.errors import AdegenError
from adegen.calibrate.agent import BUILTIN_SEARCH, AgentContext, AgentRun, render, run_agent_command
from adegen.calibrate.diff import DiffStats, diff_stats
from adegen.report.calibration import CALIBRATION_FILE, MeasuredDifficulty, by_task
from adegen.calibrate.sandbox import Sandbox, SandboxConfig
from adegen.calibrate.search import search
from adegen.calibrate.tasks import TaskRef

PROMPT_FILE = "prompt.txt"  # in the sandbox root, next to (not inside) the project


@dataclass(frozen=True)
class CalibrationConfig:
    agent: str  # a command template (agent.PLACEHOLDERS) or builtin:search
    workdir: Path  # sandboxes are made (and removed) under it
    runs: int = 1
    timeout: float = 1800.0  # seconds one agent run may take (then its process group is killed)
    key: str = "base"  # which prompt the agent gets
    jobs: int = 1  # runs side by side (dbt calls in this process still take turns)
    mode: str = "inprocess"  # how the harness emulation runs dbt (see adegen.adebench.procedure)


@dataclass
class RunRecord:
    """One row of calibration.jsonl."""

    calibration_id: str
    task_id: str
    run: int
    agent: str
    key: str
    solved: bool
    reason: str  # the grader's (or why the run could not be graded)
    exit_code: int | None
    seconds: float | None  # the agent's wall time; --grade: what the solver reported (None: unknown)
    timed_out: bool
    diff: dict = field(default_factory=dict)  # DiffStats.to_json()
    tokens: int | None = None
    turns: int | None = None
    cost_usd: float | None = None
    tries: int | None = None
    tests: dict = field(default_factory=dict)
    grade_seconds: float | None = None
    sandbox_removed: bool = False
    graded: bool = False  # False: the sandbox could not be prepared or graded (reason says why)
    notes: list[str] = field(default_factory=list)
    graded_at: str | None = None  # --grade: when it graded (UTC, ISO 8601)
    output_tail: str = ""

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Calibration:
    calibration_id: str
    records: list[RunRecord]
    measured: dict[str, MeasuredDifficulty]


def _run_agent(sb: Sandbox, task: TaskRef, cfg: CalibrationConfig) -> AgentRun:
    if cfg.agent.strip() == BUILTIN_SEARCH:
        return search(sb)
    prompt = task.prompt(cfg.key)
    prompt_file = sb.root / PROMPT_FILE
    prompt_file.write_text(prompt + "\n", encoding="utf-8")
    ctx = AgentContext(prompt, prompt_file, sb.app, task.task_id, cfg.key)
    return run_agent_command(render(cfg.agent, ctx), sb.app, cfg.timeout, sb.env())


def run_once(task: TaskRef, cfg: CalibrationConfig, run: int, calibration_id: str) -> RunRecord:
    """One run of the agent on one task, in a sandbox removed on every way out."""
    rec = RunRecord(calibration_id, task.task_id, run, cfg.agent, cfg.key, False, "", None, 0.0, False)
    sb: Sandbox | None = None
    try:
        sb = Sandbox(task, SandboxConfig(cfg.workdir, cfg.mode))
        sb.prepare()
        before = sb.files()
        agent = _run_agent(sb, task, cfg)
        rec.exit_code, rec.seconds, rec.timed_out = agent.exit_code, agent.seconds, agent.timed_out
        rec.tokens, rec.turns, rec.cost_usd, rec.tries = agent.tokens, agent.turns, agent.cost_usd, agent.tries
        rec.notes, rec.output_tail = list(agent.notes), agent.output_tail
        diff: DiffStats = diff_stats(before, sb.files())
        rec.diff = diff.to_json()
        grade = sb.grade()
        rec.tests, rec.grade_seconds, rec.graded = grade.tests, grade.seconds, True
        rec.solved = grade.solved and not agent.timed_out
        rec.reason = (f"agent killed at the {cfg.timeout:g}s timeout; " if agent.timed_out else "") + grade.reason
    except AdegenError as exc:
        rec.reason = f"not graded: {exc.render()}"
    finally:
        if sb is not None:
            sb.remove()
        rec.sandbox_removed = sb is None or not sb.root.exists()
    return rec


def new_calibration_id() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + f"-{time.monotonic_ns() % 100000:05d}"


def calibrate(tasks: list[TaskRef], cfg: CalibrationConfig,
              say: Callable[[str], None] = lambda _s: None) -> Calibration:
    """Every task `cfg.runs` times; the records in (task, run) order and each task's measure."""
    cid = new_calibration_id()
    jobs = [(t, i) for t in tasks for i in range(1, cfg.runs + 1)]

    def one(job: tuple[TaskRef, int]) -> RunRecord:
        rec = run_once(job[0], cfg, job[1], cid)
        extra = f", {rec.tries} tries" if rec.tries is not None else ""
        say(f"  {rec.task_id} run {rec.run}: {'SOLVED' if rec.solved else 'unsolved'} ({rec.reason}); "
            f"exit {rec.exit_code}, {rec.seconds:.1f}s{extra}" + (" [timed out]" if rec.timed_out else ""))
        return rec

    with ThreadPoolExecutor(max_workers=max(1, cfg.jobs)) as pool:
        records = list(pool.map(one, jobs))
    return Calibration(cid, records, by_task([r.to_json() for r in records]))


def append_records(output_dir: Path, records: list[RunRecord]) -> Path:
    """Appends the runs to `<output_dir>/calibration.jsonl` (earlier calibrations are kept; the
    newest of a task is its measure)."""
    path = output_dir / CALIBRATION_FILE
    with path.open("a", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r.to_json(), sort_keys=True) + "\n")
    return path
