"""Calibration with any solver, people included: `--prepare DIR` lays out one sandbox per task, the
solver works in it with whatever tools it likes, `--grade DIR` grades what it left with ade-bench's
procedure and records each task as one run, as an agent run is recorded (`runner.RunRecord`).

    DIR/<task_id>/PROMPT.md   the task's prompt (--key, default base), nothing else
    DIR/<task_id>/app/        the broken state after setup.sh: ade-bench's /app (project + database)
    DIR/<task_id>/SOLVE_SECONDS  written by the solver, if it counts: the seconds it spent (else the
                              run's seconds are unknown: none is measured from --prepare)
    DIR/.adegen-prepared/     for --grade only: prepared.json (the output directory, the key, the
                              tasks, when the sandboxes were ready) and before/<task_id>/ (the project
                              files right after setup, for the run's diff)

A sandbox holds nothing of the task beyond its broken state and prompt: no solution, tests,
task.yaml or seeds. Grading copies `app` into a scratch sandbox (the solver's is left as it was, so
it can be graded again; a later grade is a new calibration, which replaces the earlier measure)."""
from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from datetime import datetime, timezone
from typing import Callable

from adegen.calibrate.diff import diff_stats
from adegen.calibrate.runner import Calibration, RunRecord, new_calibration_id
from adegen.calibrate.sandbox import Sandbox, SandboxConfig
from adegen.calibrate.tasks import TaskRef
from adegen.core.atomic import write_text_atomic
from adegen.core.errors import AdegenError, InputError
from adegen.dbt import project_files
from adegen.report.calibration import by_task

MARK_DIR = ".adegen-prepared"
MARK_FILE = "prepared.json"
PROMPT_FILE = "PROMPT.md"
SOLVE_SECONDS = "SOLVE_SECONDS"
FORMAT = 1


@dataclass(frozen=True)
class Prepared:
    """What --prepare recorded (DIR/.adegen-prepared/prepared.json), read back by --grade."""

    output_dir: Path  # the build's output the tasks come from
    key: str  # the prompt key PROMPT.md holds
    tasks: tuple[str, ...]
    ready_at: float  # epoch seconds: every sandbox was ready, the solver could start

    def to_json(self) -> dict:
        return {"format": FORMAT, "output_dir": str(self.output_dir), "key": self.key,
                "tasks": list(self.tasks), "ready_at": self.ready_at}


@dataclass(frozen=True)
class HandoffConfig:
    """How --prepare and --grade run: the harness mode, the scratch workdir (grading), the prompt
    key (--prepare), the solver's name (--grade: recorded as the run's agent)."""

    workdir: Path
    mode: str = "inprocess"
    key: str = "base"
    solver: str = "manual"


def check_prepare_dir(dest: Path) -> None:
    """--prepare DIR: new, or an empty directory (nothing there is ever overwritten)."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError("exists and is not an empty directory (sandboxes go into a new or empty one)",
                         file=dest, field="--prepare")


def read_prepared(dest: Path) -> Prepared:
    """DIR's record from --prepare, or bad input naming --grade."""
    mark = dest / MARK_DIR / MARK_FILE
    try:
        raw = json.loads(mark.read_text(encoding="utf-8"))
        return Prepared(Path(raw["output_dir"]), str(raw["key"]), tuple(str(t) for t in raw["tasks"]),
                        float(raw["ready_at"]))
    except (OSError, ValueError, KeyError, TypeError):
        raise InputError(f"was not prepared by --prepare (no readable {MARK_DIR}/{MARK_FILE})",
                         file=dest, field="--grade") from None


def prepare(tasks: list[TaskRef], output_dir: Path, dest: Path, cfg: HandoffConfig,
            say: Callable[[str], None] = lambda _s: None) -> Prepared:
    """One sandbox per task of `output_dir` under `dest` (new or empty), then the record --grade
    reads. On any failure what was made is removed again."""
    check_prepare_dir(dest)
    prompts = {t.task_id: t.prompt(cfg.key) for t in tasks}  # every prompt, before any sandbox is made
    made = not dest.exists()
    dest.mkdir(parents=True, exist_ok=True)
    try:
        for t in tasks:
            root = dest / t.task_id
            sb = Sandbox(t, SandboxConfig(dest, cfg.mode, root=root))
            sb.prepare()
            for extra in root.iterdir():  # the emulation's /sage, /scripts, /tests, ... (empty)
                if extra.name != "app":
                    _remove(extra)
            (root / PROMPT_FILE).write_text(prompts[t.task_id] + "\n", encoding="utf-8")
            _write_files(dest / MARK_DIR / "before" / t.task_id, sb.files())
            say(f"  {t.task_id}: {root / 'app'} (prompt: {root / PROMPT_FILE})")
        prepared = Prepared(output_dir, cfg.key, tuple(t.task_id for t in tasks), time.time())
        write_text_atomic(dest / MARK_DIR / MARK_FILE, json.dumps(prepared.to_json(), indent=2) + "\n")
        return prepared
    except BaseException:
        for p in [dest] if made else list(dest.iterdir()):
            _remove(p)
        raise


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        p.unlink(missing_ok=True)


def _write_files(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


def reported_seconds(box: Path) -> float | None:
    """The seconds the solver reports it spent, from `<sandbox>/SOLVE_SECONDS` (one number, beside
    PROMPT.md), or None: unknown. Never the time from --prepare to --grade (or to the last change
    in the sandbox): a sandbox may wait hours before anyone opens it, and a person may stop half
    way; such a wall time would label an easy task hard. Bad content is bad input naming the file."""
    path = box / SOLVE_SECONDS
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8", errors="replace").strip()
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise InputError(f"expected the solve time in seconds (a number >= 0), got {text[:40]!r}",
                         file=path, field=SOLVE_SECONDS)
    return round(value, 2)


def grade(tasks: list[TaskRef], dest: Path, prepared: Prepared, cfg: HandoffConfig,
          say: Callable[[str], None] = lambda _s: None) -> Calibration:
    """Every task's sandbox under `dest` graded (a scratch copy under cfg.workdir); one run each."""
    cid = new_calibration_id()
    records = []
    for t in tasks:
        rec = grade_one(t, dest, prepared, cfg, cid)
        took = "seconds unknown" if rec.seconds is None else f"{rec.seconds:.0f}s (reported)"
        say(f"  {rec.task_id}: {'SOLVED' if rec.solved else 'unsolved'} ({rec.reason}); "
            f"{len(rec.diff.get('files', []))} file(s) changed, {took}")
        records.append(rec)
    return Calibration(cid, records, by_task([r.to_json() for r in records]))


def grade_one(task: TaskRef, dest: Path, prepared: Prepared, cfg: HandoffConfig, cid: str) -> RunRecord:
    """One task's sandbox graded: the record of one run (graded False when it cannot be)."""
    app = dest / task.task_id / "app"
    rec = RunRecord(cid, task.task_id, 1, cfg.solver, prepared.key, False, "", None, None, False)
    rec.graded_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    rec.notes = [f"graded what was left in {app}"]
    sb: Sandbox | None = None
    try:
        if not (app / "dbt_project.yml").is_file():
            raise InputError("no sandbox here any more (no dbt_project.yml)", file=app)
        rec.seconds = reported_seconds(dest / task.task_id)
        rec.notes.append(f"seconds: the solver's own count ({SOLVE_SECONDS})" if rec.seconds is not None else
                         f"seconds: unknown (none reported in {SOLVE_SECONDS} beside {PROMPT_FILE}; the time "
                         "since --prepare is not solve time)")
        rec.diff = diff_stats(project_files(dest / MARK_DIR / "before" / task.task_id), project_files(app)).to_json()
        sb = Sandbox(task, SandboxConfig(cfg.workdir, cfg.mode))
        sb.adopt(app)
        g = sb.grade()
        rec.tests, rec.grade_seconds, rec.graded = g.tests, g.seconds, True
        rec.solved, rec.reason = g.solved, g.reason
    except AdegenError as exc:
        rec.reason = f"not graded: {exc.render()}"
    finally:
        if sb is not None:
            sb.remove()
        rec.sandbox_removed = sb is None or not sb.root.exists()
    return rec
