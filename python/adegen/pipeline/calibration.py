"""Bulk mode's `--calibrate CMD --keep unsolved|all` stage: after the loop, every written task
without a measured difficulty is run by the reference agent (`adegen.calibrate`); its measure goes
into the task's ledger row (so tasks.jsonl carries it and a resumed run does not measure it
again) and its runs into `calibration.jsonl` (the review page reads them). `--keep unsolved` then
moves the tasks the agent solved out of tasks/ into `<output>/solved_by_reference/` and leaves them
out of tasks.jsonl and the experiment set: the validated-by-failure filter."""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from adegen.calibrate.runner import CalibrationConfig, append_records, calibrate
from adegen.calibrate.tasks import load_tasks
from adegen.pipeline.context import RunContext
from adegen.pipeline.ledger import Ledger

KEEP = ("all", "unsolved")
SOLVED_DIR = "solved_by_reference"


@dataclass(frozen=True)
class CalibrateOptions:
    agent: str  # a command template or builtin:search (checked by calibrate.agent.check_template)
    keep: str = "all"  # "all" | "unsolved"
    timeout: float = 1800.0
    key: str = "base"


def calibrate_written(ctx: RunContext, ledger: Ledger, copts: CalibrateOptions) -> None:
    out_dir: Path = ctx.opts.output_dir
    todo = [r["id"] for r in ledger.tasks if not r.get("measured_difficulty") and r.get("kept", True)]
    if todo:
        ctx.ui.say(f"Calibrating {len(todo)} task(s) with {copts.agent} ({copts.key} prompt, "
                   f"timeout {copts.timeout:g}s)...")
        cfg = CalibrationConfig(agent=copts.agent, workdir=ctx.workroot / "calibrate", timeout=copts.timeout,
                                key=copts.key)
        result = calibrate(load_tasks(out_dir, todo), cfg, say=ctx.ui.say)
        append_records(out_dir, result.records)
        for row in ledger.tasks:
            m = result.measured.get(row["id"])
            if m is not None:
                row["measured_difficulty"] = m.to_json()
        ledger.save()
    if copts.keep == "unsolved":
        _keep_unsolved(ctx, ledger, out_dir)


def _keep_unsolved(ctx: RunContext, ledger: Ledger, out_dir: Path) -> None:
    moved = []
    for row in ledger.tasks:
        m = row.get("measured_difficulty") or {}
        if m.get("label") not in (None, "unsolved") and row.get("kept", True):
            src, dst = out_dir / "tasks" / row["id"], out_dir / SOLVED_DIR / row["id"]
            if src.is_dir():
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.rmtree(dst, ignore_errors=True)
                shutil.move(str(src), str(dst))
            row["kept"] = False
            moved.append(row["id"])
    ledger.save()
    if moved:
        ctx.ui.say(f"--keep unsolved: {len(moved)} task(s) the reference agent solved moved to "
                   f"{out_dir / SOLVED_DIR}: {', '.join(moved)}")
