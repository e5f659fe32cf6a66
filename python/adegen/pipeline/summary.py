"""The end of a run: the summary of written tasks, the optional Phase 5 harness run, the spec's
next steps, the timings and the exit code."""
from __future__ import annotations

import shlex
import time

from adegen.core.errors import AdegenError
from adegen.dbt.relations import ModelRelations
from adegen.pipeline import harness_run as ade_run
from adegen.pipeline import runtime, shortfall, verify_slow
from adegen.pipeline.context import RunContext

def finish(ctx: RunContext, written: list[str]) -> int:
    """Print what was written and what to do next; the exit code."""
    ui, doc, report = ctx.ui, ctx.doc, ctx.report
    tasks_dir = ctx.opts.output_dir / "tasks"
    if report.tasks:
        ui.say()
        ui.say("Patch validation:")
        for t in report.tasks:
            ui.say(f"  {t['patch_check']['line']}")
        fig = doc.change_shape or {}
        if fig.get("tasks"):
            ui.say(f"  {fig['commits']} of {fig['tasks']} task(s) change 3+ lines or 2+ files "
                   f"({fig['multi_file']} change 2+ files)")
    for t in report.dropped_tasks:
        ui.warn(t)
    doc.runtime = runtime.collect(ctx)
    ui.say()
    for line in runtime.lines(doc.runtime):
        ui.say(line)
    shortfall.explain(ctx, len(written))
    steps = next_steps(ctx, written, (doc.database or {}).get("note"))
    doc.next_steps = steps
    doc.elapsed_sec = round(time.monotonic() - ctx.t0, 1)
    budget_line = ctx.budget.line() if ctx.budget is not None else None
    if not written:
        if budget_line and ctx.budget.skipped and not ctx.budget.started:
            ui.say(budget_line)
            ui.say("Nothing was written: the time budget was spent before the first task could start.")
        else:
            ui.say("No task passed validation; nothing was written.")
            if budget_line:
                ui.say(budget_line)
        return 1
    ui.say()
    ui.say(f"Wrote {len(written)} task(s) to {tasks_dir}:")
    for t in report.tasks:
        status = t.get("proof_label", "proven") if t.get("proven") else f"status: dev ({t.get('proof_detail')})"
        ui.say(f"  {t['task_id']}: {t['model']} / {t['pattern_id']} ({t['difficulty']}) - {status}")
    ui.say()
    if budget_line:
        ui.say(budget_line)
        ui.say()
    note = ctx.backend.summary_note(report.tasks, ctx.unproven_reason(), ctx.validator is not None)
    if note is not None:
        doc.validation.notes[f"{ctx.backend.name}_note"] = note
        ui.say(note)
        ui.say()
    if ctx.opts.verify_slow:
        verify_slow.verify(ctx)
    if ctx.opts.run_harness:
        _run_harness(ctx, written, tasks_dir)
    ui.say("Next steps:")
    for s in steps:
        ui.say(f"  {s}")
    ui.say("Timings: " + ", ".join(f"{k} {v:.0f}s" for k, v in (doc.timings_sec or {}).items())
           + f", total {time.monotonic() - ctx.t0:.0f}s")
    if ctx.validator is not None and not any(t.get("proven") for t in report.tasks):
        ui.say("No task could be proven by execution (all are status: dev).")
        return 1
    return 0


def _run_harness(ctx: RunContext, written: list[str], tasks_dir) -> None:
    ui = ctx.ui
    ui.say("Phase 5 (--run-harness): ade-bench's harness")
    call = ade_run.HarnessCall(no_seed=frozenset(seed_unreachable(ctx, written)))
    ctx.doc.harness_run = ade_run.run_tasks(written, ctx.project.adapter_type, tasks_dir, say=ui.say, call=call)
    for r in ctx.doc.harness_run["results"]:
        if r["verdict"] != "PASS":
            ctx.report.warnings.append(f"{r['task_id']}: harness {r['line']}")
    ui.say()


def next_steps(ctx: RunContext, task_ids: list[str], db_note: str | None) -> list[str]:
    """The spec's "After Generating Files" list with real paths (one line per command)."""
    backend, db = ctx.backend, ctx.backend.name
    tasks_dir = ctx.opts.output_dir / "tasks"
    quoted = shlex.quote(str(tasks_dir))
    steps = backend.access_steps(ctx.project, db_note)
    steps.append("2. Review the generated tests/ directories (custom assertions must name real models and "
                 "columns; names never start with AUTO_).")
    steps += backend.seed_steps(task_ids, tasks_dir, seed_unreachable(ctx, task_ids))
    steps.append("4. Validate by running again without --seed:")
    steps += [f"   ade run {t} --db {db} --project-type dbt --agent sage --tasks-dir {quoted}" for t in task_ids]
    steps.append("5. Test with a real agent:")
    steps += [f"   ade run {t} --db {db} --project-type dbt --agent claude --model claude-sonnet-4-5 "
              f"--tasks-dir {quoted}" for t in task_ids]
    if not ctx.ade.found:
        steps.append("Reminder: ade-bench is not installed yet; install it before the tasks can run "
                     "(see the commands printed at the start).")
    return steps


def seed_unreachable(ctx: RunContext, task_ids: list[str]) -> dict[str, list[str]]:
    """task -> the relations it grades that ade-bench's `--seed` export cannot read: it COPYs each
    `table_name` unqualified (main.<table>), while the tests grade ref('<table>'), wherever dbt
    builds the model (a custom schema, an alias). Known only from a validator's intact build."""
    if ctx.validator is None or not ctx.backend.seed_export or not task_ids:
        return {}
    try:
        rels = ModelRelations.from_models(ctx.validator.baseline_info().get("models") or {})
    except AdegenError:
        return {}
    out: dict[str, list[str]] = {}
    for tid in task_ids:
        graded = (ctx.report.task_details.get(tid) or {}).get("graded_tables") or []
        away = [str(r) for t in graded if (r := rels.of(t)) is not None and not r.unqualified(t)]
        if away:
            out[tid] = away
    return out
