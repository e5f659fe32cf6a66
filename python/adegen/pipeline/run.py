"""The order of a run's stages, in one place: the skeleton the build and bulk mode share, and the
build's own stages.

    run(ctx, generate):
      inputs.load_project -> inputs.locate_ade_bench -> inputs.check_inputs -> inputs.offer_ade_bench
      [the run's work directory; the validator is closed on every way out]
        validation.start (workers, then the baseline in the background)
        -> discovery.discover -> discovery.survey -> validation.wait
        -> generate(ctx): the command's stages, its exit code
           build (`build_tasks`): propose.propose -> propose.show -> propose.pick -> write_tasks
                                  -> summary.finish (--time-budget: checked before each proposal
                                  round and each task, `pipeline/budget.py`)
           bulk mode (`pipeline/bulk.py`): the run lock, the ledger, workspace.prepare, the loop,
                                  the dataset files
        -> runtime.collect
      -> the run record and the review page (`finish_files`), when the run wrote (or tried to
         write) tasks

Nothing is written before `generate` (but the copy of a --db-path database ade-bench cannot open,
`Backend.ship_database`, made once the inputs are checked); bad input raises InputError before the
work directory exists."""
from __future__ import annotations

import dataclasses
from typing import Callable

from adegen.pipeline.options import Options
from adegen.core.paths import owned_run_dir
from adegen.report import write_report
from adegen.pipeline import (datachange, discovery, inputs, propose, purpose, record, runtime, shortfall, summary,
                             validation)
from adegen.pipeline.budget import TimeBudget
from adegen.pipeline.context import UI, RunContext
from adegen.pipeline.write import write_tasks
from adegen.propose import mix

Generate = Callable[[RunContext], int]  # the command's stages after the baseline: the exit code


def run(ctx: RunContext, generate: Generate) -> tuple[int, dict]:
    """(exit code, --json document) of one run of a command on `ctx`."""
    inputs.load_project(ctx)
    inputs.locate_ade_bench(ctx)
    inputs.check_inputs(ctx)
    inputs.offer_ade_bench(ctx)
    # the validator's worker processes start before any in-process dbt run; the baseline builds
    # in a worker while discovery runs here
    with owned_run_dir(f"adegen-{ctx.command}-") as ctx.workroot:  # a killed run's work dir is removed by the next run
        try:
            validation.start(ctx)
            discovery.discover(ctx)
            discovery.survey(ctx)
            validation.wait(ctx)
            ctx.doc.exit_code = generate(ctx)
            if ctx.doc.runtime is None:  # runs that stop before the summary report their facts too
                ctx.doc.runtime = runtime.collect(ctx)
        finally:
            validation.close(ctx.pending.validator if ctx.pending is not None else None)
    if ctx.output is not None:  # tasks were written, or their writing began
        finish_files(ctx)
    return ctx.doc.exit_code, ctx.doc.to_json()


def build_tasks(ctx: RunContext) -> int:
    """The build's stages: proposals, the pick, the tasks, the summary; the exit code."""
    try:
        return _build_stages(ctx)
    finally:
        if ctx.budget is not None:
            ctx.doc.time_budget = ctx.budget.to_json()


def _build_stages(ctx: RunContext) -> int:
    # --data-change / --mix hard: one of the run's --count tasks is an upstream data change, written
    # after the picked proposals (pipeline/datachange.py). Purposeful changes (on by default where they
    # can be proven; pipeline/purpose.py) take up to two more slots, ahead of the plain slips: they are
    # written first, and the picked proposals make room for the ones proven (purpose.make_room)
    upstream = ctx.opts.data_change and datachange.available(ctx)
    if upstream:
        ctx.opts = dataclasses.replace(ctx.opts, count=ctx.opts.count - 1)
    pset = propose.propose(ctx)
    chosen, written, kinds = [], [], []
    if pset.proposals:
        propose.show(ctx, pset)
        chosen = propose.pick(ctx, pset)
        if chosen is None:
            return 0
        if not chosen:
            ctx.ui.say("Nothing selected; nothing was written.")
            return 0
    else:
        ctx.ui.say(_nothing_proposed(ctx))
    hard = ctx.opts.mix == "hard"
    incremental = mix.incremental_models(ctx.discovery.get("models", []))
    slots = purpose.slots(ctx.opts.count)
    if hard:  # purposeful tasks rank with the picks (propose/mix.py): one counts as a hard kind
        slots = mix.purposeful_slots(chosen, ctx.opts.count, slots, incremental)
    made = purpose.purposeful_tasks(ctx, slots)
    written += made
    kinds += ["purposeful"] * len(made)
    proven = sum(1 for t in ctx.report.tasks if t["task_id"] in made and t["proven"])
    chosen, left_out = purpose.make_room(chosen, proven, ctx.opts.count,
                                         (lambda c, n: mix.hardest(c, n, incremental)) if hard else None,
                                         purpose.repeats(ctx, made))
    if left_out:
        ctx.doc.selected = [n for n in ctx.doc.selected or [] if n not in {p.number for p in left_out}]
        ctx.ui.say(f"{len(left_out)} picked proposal(s) left out for the purposeful task(s) (--count "
                   f"{ctx.opts.count}): " + ", ".join(f"[{p.number}] {p.model} {p.pattern_id}" for p in left_out))
    if chosen:
        wrote = write_tasks(ctx, chosen)
        written += wrote
        tasks = {(t["model"], t["pattern_id"]): t for t in ctx.report.tasks if t["task_id"] in wrote}
        kinds += [mix.written_kind(tasks[(p.model, p.pattern_id)], p, incremental) for p in chosen
                  if (p.model, p.pattern_id) in tasks]
    if upstream:
        made = datachange.data_change_tasks(ctx)
        written += made
        kinds += ["data-change"] * len(made)
    if ctx.opts.mix != "default":
        ctx.doc.mix = mix.summary(kinds, ctx.opts.mix)
    if not pset.proposals and not written:
        shortfall.explain(ctx, 0)
        return 1
    return summary.finish(ctx, written)


def _nothing_proposed(ctx: RunContext) -> str:
    if ctx.budget is not None and ctx.budget.stopped_at:
        ctx.ui.say(ctx.budget.line())
        return "No task could be proposed within the time budget."
    return "No task could be proposed: no catalog pattern yields a new, compilable, observable bug."


def run_build(opts: Options, ui: UI) -> tuple[int, dict]:
    """One build: (exit code, --json document); bad input raises InputError before anything is written."""
    ctx = RunContext(opts=opts, ui=ui)
    if opts.time_budget is not None:  # counts from the run's start, without the user's answers
        ctx.budget = TimeBudget(opts.time_budget, ctx.t0, opts.settings.time_budget_task_charge,
                                waited=lambda: ui.waited_sec)
    return run(ctx, build_tasks)


def finish_files(ctx: RunContext) -> None:
    """The run record, then the review page from it (unless --no-report). The tasks are written:
    a failure here is a warning, never a failed run."""
    try:
        record.write_record(ctx, ctx.started)
    except OSError as exc:
        ctx.ui.warn(f"could not write the run record: {exc}")
    if not ctx.opts.report:
        return
    try:
        page = write_report(ctx.opts.output_dir, run_doc=ctx.record)
    except Exception as exc:  # noqa: BLE001 - a page that cannot be drawn must not fail the run
        ctx.ui.warn(f"could not write the review page: {type(exc).__name__}: {exc}")
        return
    ctx.doc.report = str(page)
    ctx.ui.say(f"Review page: {page}")
