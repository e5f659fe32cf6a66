"""The build's flow: the stages in order, on one RunContext.

    load project -> ade-bench -> validator (background baseline) -> discover -> survey
    -> enumerate + screen (proposals) -> pick -> write (realise each task) -> summary

Nothing is written before the pick; every stage below `load project` runs inside the try that
closes the validator and removes the run's scratch directory."""
from __future__ import annotations

from .. import __version__
from ..cli_args import Options
from ..paths import owned_run_dir
from . import discovery, inputs, propose, record, runtime, summary, validation
from .context import UI, RunContext
from .write import write_tasks


def run_build(opts: Options, ui: UI) -> tuple[int, dict]:
    """(exit code, --json document); bad input raises InputError before anything is written."""
    ctx = RunContext(opts=opts, ui=ui)
    ctx.doc["adegen_version"] = __version__
    inputs.load_project(ctx)
    inputs.locate_ade_bench(ctx)
    inputs.check_inputs(ctx)
    inputs.offer_ade_bench(ctx)
    # the validator's worker processes start before any in-process dbt run; the baseline builds
    # in a worker while discovery runs here
    with owned_run_dir("adegen-build-") as ctx.workroot:  # a killed run's work dir is removed by the next run
        try:
            validation.start(ctx)
            code, doc = _after_validator_start(ctx)
            if "runtime" not in doc:  # runs that stop before the summary report their facts too
                doc["runtime"] = runtime.collect(ctx)
            return code, doc
        finally:
            validation.close(ctx.pending.validator if ctx.pending is not None else None)


def _after_validator_start(ctx: RunContext) -> tuple[int, dict]:
    discovery.discover(ctx)
    discovery.survey(ctx)
    validation.wait(ctx)
    pset = propose.propose(ctx)
    if not pset.proposals:
        ctx.ui.say("No task could be proposed: no catalog pattern yields a new, compilable, observable bug.")
        return ctx.finish(1)
    propose.show(ctx, pset)
    chosen = propose.pick(ctx, pset)
    if chosen is None:
        return ctx.finish(0)
    if not chosen:
        ctx.ui.say("Nothing selected; nothing was written.")
        return ctx.finish(0)
    written = write_tasks(ctx, chosen)
    code, doc = summary.finish(ctx, written)
    finish_files(ctx)
    return code, doc


def finish_files(ctx: RunContext) -> None:
    """The run record, then the review page from it (unless --no-report). The tasks are written:
    a failure here is a warning, never a failed run."""
    try:
        record.write_record(ctx, ctx.started)
    except OSError as exc:
        ctx.ui.warn(f"could not write the run record: {exc}")
    if not ctx.opts.report:
        return
    from ..report import write_report

    try:
        page = write_report(ctx.opts.output_dir, run_doc=ctx.record)
    except Exception as exc:  # noqa: BLE001 - a page that cannot be drawn must not fail the run
        ctx.ui.warn(f"could not write the review page: {type(exc).__name__}: {exc}")
        return
    ctx.doc["report"] = str(page)
    ctx.ui.say(f"Review page: {page}")
