"""Bulk mode (`python -m adegen.bulk`): the build's stages run at scale, without questions, on
the run skeleton the build uses (`pipeline/run.py`); its own stages (`bulk_tasks`):

    [run lock] ledger -> workspace -> every (model, pattern, site) candidate, seeded order
    -> loop: compile check + screen ahead, propose, prove side by side, commit in order
    -> tasks.jsonl, DATASET.md, experiment set

Only proven tasks are written (an unproven candidate is a drop). Resuming: the ledger
(`pipeline/ledger.py`) says which candidates are decided and which tasks are this run's own; those
are left out of the survey so the candidate list is the one the first run saw."""
from __future__ import annotations

import dataclasses
import shlex
import time
from typing import Callable

from adegen.pipeline.options import Options
from adegen.tasks.output import RunLock, highest_task_number
from adegen.tasks.shape import run_figure
from adegen.pipeline import bulk_made, bulk_units, dataset, workspace
from adegen.pipeline.calibration import CalibrateOptions, calibrate_written
from adegen.pipeline.bulk_loop import BulkLoop, LoopSetup
from adegen.pipeline.context import RunContext
from adegen.pipeline.ledger import Ledger, clean_stale
from adegen.pipeline.progress import BulkUI, Progress
from adegen.pipeline.run import run


@dataclasses.dataclass
class BulkOptions:
    opts: Options  # the project/database options, shared with the build
    tasks: int  # proven tasks wanted
    seed: int
    argv: list[str]  # the command line, for DATASET.md
    calibrate: CalibrateOptions | None = None  # --calibrate: measure the written tasks with an agent
    # (output dir, ledger, facts) -> the dataset files' paths; a plan writes the whole dataset's
    write_dataset: Callable[..., dict] = dataset.write_dataset
    kinds: tuple[str, ...] = bulk_made.KINDS  # --kinds: what the candidates are drawn from

    @property
    def json(self) -> bool:
        return self.opts.json

    def key_fields(self) -> dict:
        """What decides the output (the ledger's key): not --tasks, --jobs or --json."""
        o = self.opts
        return {"project_dir": str(o.project_dir), "seed": self.seed, "patterns_dirs": [str(p) for p in o.patterns_dirs],
                "db_type": o.db_type, "db_name": o.db_name, "db_path": str(o.db_path) if o.db_path else None,
                "profiles_dir": str(o.profiles_dir) if o.profiles_dir else None, "target": o.target,
                "emulate_snowflake": o.emulate_snowflake,
                **({} if self.kinds == bulk_made.KINDS else {"kinds": list(self.kinds)})}  # the default keeps old keys


def run_bulk(bopts: BulkOptions, ui: BulkUI) -> tuple[int, dict]:
    """(exit code, --json document): 0 when --tasks tasks are proven, 1 when the candidates ran out
    first (or nothing can be proven); bad input raises InputError before anything is written."""
    ctx = RunContext(opts=bopts.opts, ui=ui, command="bulk")
    ctx.doc.mode, ctx.doc.seed, ctx.doc.tasks_wanted, ctx.doc.jobs = "bulk", bopts.seed, bopts.tasks, bopts.opts.jobs
    return run(ctx, lambda c: bulk_tasks(c, bopts))


def bulk_tasks(ctx: RunContext, bopts: BulkOptions) -> int:
    """Bulk mode's stages, under the run lock; the exit code."""
    if ctx.validator is None:
        ctx.ui.say(f"Bulk mode writes proven tasks only, and execution validation is unavailable: "
                   f"{ctx.unproven_reason()}")
        return 1
    lock = RunLock(bopts.opts.output_dir)
    lock.acquire()
    try:
        return _generate(ctx, bopts)
    finally:
        lock.release()


def _generate(ctx: RunContext, bopts: BulkOptions) -> int:
    out_dir = bopts.opts.output_dir
    clean_stale(out_dir)
    ledger = Ledger.open(out_dir, bopts.key_fields())
    tasks_dir = out_dir / "tasks"
    ledger.recover(tasks_dir)
    _leave_out_own_tasks(ctx, ledger, tasks_dir)
    workspace.prepare(ctx)
    units, excluded = bulk_units.enumerate_units(ctx) if "catalog" in bopts.kinds else ([], [])
    made, repeats = bulk_made.enumerate_made(ctx, bopts.kinds)  # purposeful and data changes, each a candidate too
    units = bulk_units.order_units(units + made, bopts.seed)
    ledger.bind(bulk_units.units_fingerprint(units),
                max(ctx.survey.highest_number, highest_task_number(tasks_dir, ctx.project.name)))
    facts = {"project": ctx.project.name, "project_dir": str(bopts.opts.project_dir), "seed": bopts.seed,
             "candidates": len(units), "whole": len(made), "excluded": len(excluded) + repeats,
             "command": "python -m adegen.bulk " + shlex.join(bopts.argv)}
    ledger.facts = facts
    ctx.ui.say(f"Bulk: {len(units)} candidates ({len(units) - len(made)} model x pattern x site, {len(made)} "
               f"purposeful or data changes), {len(excluded) + repeats} left out as repeats of surveyed tasks; "
               f"{len(ledger.tasks)} task(s) already written, {ledger.cursor} candidate(s) decided.")
    progress = Progress(ctx.ui, bopts.tasks, (len(ledger.tasks), ledger.cursor))
    written_before = len(ledger.tasks)
    t1 = time.monotonic()

    def on_commit() -> None:
        bopts.write_dataset(out_dir, ledger, facts)

    ctx.ui.quiet = True
    progress.update(len(ledger.tasks), ledger.drops_by_label(), f"{len(units) - ledger.cursor} candidate(s) to go")
    try:
        BulkLoop(ctx, ledger, units, LoopSetup(bopts.tasks, bopts.opts.jobs, progress, on_commit)).run()
    finally:
        ctx.ui.quiet = False
        progress.finish()
        ledger.save()
    if bopts.calibrate is not None:
        t2 = time.monotonic()
        calibrate_written(ctx, ledger, bopts.calibrate)
        ctx.timing("calibration", t2)
    paths = bopts.write_dataset(out_dir, ledger, facts)
    ctx.timing("generation", t1)
    return _report(ctx, bopts, ledger, {"paths": paths, "facts": facts, "written_before": written_before})


def _leave_out_own_tasks(ctx: RunContext, ledger: Ledger, tasks_dir) -> None:
    """The survey without this run's own tasks (they are the ledger's, not earlier work to avoid)."""
    own = ledger.task_ids()
    root = tasks_dir.resolve()
    keep = [t for t in ctx.survey.tasks if not (t.task_id in own and t.task_dir.resolve().parent == root)]
    ctx.survey = dataclasses.replace(ctx.survey, tasks=keep)


def _report(ctx: RunContext, bopts: BulkOptions, ledger: Ledger, result: dict) -> int:
    ui, rows = ctx.ui, ledger.tasks
    facts, paths = result["facts"], result["paths"]
    ctx.doc.tasks = ctx.report.tasks  # this process's commits, as the build reports them
    ctx.doc.change_shape = run_figure(ctx.doc.tasks)
    ctx.doc.dataset = {
        "tasks": [dataset.public_row(r) for r in rows if r.get("kept", True)],  # --keep unsolved: kept False
        "written_this_run": len(rows) - result["written_before"],
        "candidates": facts["candidates"], "decided": ledger.cursor, "excluded": facts["excluded"],
        "dropped": dict(sorted(ledger.drops_by_label().items())), "ledger": str(ledger.path),
        **{k: str(v) for k, v in paths.items()},
    }
    ctx.doc.dropped_by_reason = dict(sorted(ledger.drops_by_label().items()))  # what the review page counts
    ctx.doc.dropped_by_code = dict(sorted(ledger.drops.items()))
    ctx.doc.elapsed_sec = round(time.monotonic() - ctx.t0, 1)
    ui.say(f"Bulk: {len(rows)}/{bopts.tasks} proven task(s) in {bopts.opts.output_dir / 'tasks'} "
           f"({len(rows) - result['written_before']} this run); {sum(ledger.drops.values())} candidate(s) dropped.")
    for k, v in paths.items():
        ui.say(f"  {k}: {v}")
    if len(rows) < bopts.tasks:
        ui.say(f"The candidates ran out after {len(rows)} proven task(s) (of {bopts.tasks} asked).")
        return 1
    return 0
