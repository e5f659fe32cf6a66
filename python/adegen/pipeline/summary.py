"""The end of a run: the summary of written tasks, the optional Phase 5 harness run, the spec's
next steps, the timings and the exit code."""
from __future__ import annotations

import os
import shlex
import time

from .context import RunContext
from .realise import EMULATOR_LABEL

SNOWFLAKE_ENV = ("SNOWFLAKE_ACCOUNT", "SNOWFLAKE_USER", "SNOWFLAKE_PASSWORD", "SNOWFLAKE_ROLE",
                 "SNOWFLAKE_WAREHOUSE")


def snowflake_env_unset(environ=None) -> list[str]:
    """The spec's five SNOWFLAKE_* variables that are unset (or empty) in the environment."""
    env = os.environ if environ is None else environ
    return [v for v in SNOWFLAKE_ENV if not str(env.get(v, "") or "").strip()]


def finish(ctx: RunContext, written: list[str]) -> tuple[int, dict]:
    """Print what was written and what to do next; (exit code, --json document)."""
    ui, doc, report, project = ctx.ui, ctx.doc, ctx.report, ctx.project
    tasks_dir = ctx.opts.output_dir / "tasks"
    if report.tasks:
        ui.say()
        ui.say("Patch validation:")
        for t in report.tasks:
            ui.say(f"  {t['patch_check']['line']}")
    for t in report.dropped_tasks:
        ui.warn(t)
    steps = next_steps(ctx, written, doc.get("database", {}).get("note"))
    doc["next_steps"] = steps
    doc["elapsed_sec"] = round(time.monotonic() - ctx.t0, 1)
    if not written:
        ui.say("No task passed validation; nothing was written.")
        return ctx.finish(1)
    ui.say()
    ui.say(f"Wrote {len(written)} task(s) to {tasks_dir}:")
    for t in report.tasks:
        status = t.get("proof_label", "proven") if t.get("proven") else f"status: dev ({t.get('proof_detail')})"
        ui.say(f"  {t['task_id']}: {t['model']} / {t['pattern_id']} ({t['difficulty']}) - {status}")
    ui.say()
    if project.adapter_type == "snowflake":
        note = snowflake_proof_note(report.tasks, ctx.unproven_reason(), ctx.validator is not None)
        doc["validation"]["snowflake_note"] = note
        ui.say(note)
        ui.say()
    if ctx.opts.run_harness:
        _run_harness(ctx, written, tasks_dir)
    ui.say("Next steps:")
    for s in steps:
        ui.say(f"  {s}")
    ui.say("Timings: " + ", ".join(f"{k} {v:.0f}s" for k, v in doc.get("timings_sec", {}).items())
           + f", total {time.monotonic() - ctx.t0:.0f}s")
    if ctx.validator is not None and not any(t.get("proven") for t in report.tasks):
        ui.say("No task could be proven by execution (all are status: dev).")
        return ctx.finish(1)
    return ctx.finish(0)


def _run_harness(ctx: RunContext, written: list[str], tasks_dir) -> None:
    from .. import ade_run

    ui = ctx.ui
    ui.say("Phase 5 (--run-harness): ade-bench's harness")
    ctx.doc["harness_run"] = ade_run.run_tasks(written, ctx.project.adapter_type, tasks_dir, say=ui.say)
    for r in ctx.doc["harness_run"]["results"]:
        if r["verdict"] != "PASS":
            ctx.report.warnings.append(f"{r['task_id']}: harness {r['line']}")
    ui.say()


def snowflake_proof_note(tasks: list[dict], reason: str, validating: bool) -> str:
    """The summary's word on Snowflake tasks: proven on the emulator (never "on Snowflake"), or
    unproven and why (the validator factory's reason)."""
    proven = [t["task_id"] for t in tasks if t.get("proven")]
    unproven = [t["task_id"] for t in tasks if not t.get("proven")]
    parts = []
    if proven:
        parts.append(f"{len(proven)} Snowflake task(s) {EMULATOR_LABEL} (fakesnow, not a Snowflake account): "
                     f"{', '.join(proven)}; re-check them with `ade run --db snowflake` before relying on them.")
    if unproven:
        why = f"Snowflake tasks are unproven: {reason}" if not validating else "see each task's status line above"
        parts.append(f"{len(unproven)} Snowflake task(s) written with status: dev and UNPROVEN "
                     f"({', '.join(unproven)}): {why}.")
    return " ".join(parts)


def next_steps(ctx: RunContext, task_ids: list[str], db_note: str | None) -> list[str]:
    """The spec's "After Generating Files" list with real paths (one line per command)."""
    project = ctx.project
    tasks_dir = shlex.quote(str(ctx.opts.output_dir / "tasks"))
    db = project.adapter_type
    steps = []
    if db == "duckdb":
        steps.append("1. Verify database access: " + (db_note or ""))
    else:
        unset = snowflake_env_unset()
        state = (f"NOT SET in this environment: {', '.join(unset)}" if unset
                 else "all five are set in this environment")
        steps.append("1. Verify database access: confirm these environment variables are set ("
                     + state + "):")
        steps += [f"   export {v}=...{'   # unset' if v in unset else ''}" for v in SNOWFLAKE_ENV]
        steps.append(f"   The source database {project.db_name} must exist and be accessible with these "
                     "credentials; ade-bench clones it per task.")
    steps.append("2. Review the generated tests/ directories (custom assertions must name real models and "
                 "columns; names never start with AUTO_).")
    if db == "duckdb":
        steps.append("3. Generate seeds (DuckDB only; tasks proven by adegen already carry seeds/ exported from the same database, and --seed re-exports them inside ade-bench):")
        steps += [f"   ade run {t} --db duckdb --project-type dbt --agent sage --seed --tasks-dir {tasks_dir}"
                  for t in task_ids]
    else:
        steps.append("3. --seed export is DuckDB-only: run without --seed and write test SQL by hand, or seed "
                     "from a DuckDB extract:")
        steps += [f"   ade run {t} --db snowflake --project-type dbt --agent sage --tasks-dir {tasks_dir}"
                  for t in task_ids]
    steps.append("4. Validate by running again without --seed:")
    steps += [f"   ade run {t} --db {db} --project-type dbt --agent sage --tasks-dir {tasks_dir}" for t in task_ids]
    steps.append("5. Test with a real agent:")
    steps += [f"   ade run {t} --db {db} --project-type dbt --agent claude --model claude-sonnet-4-5 "
              f"--tasks-dir {tasks_dir}" for t in task_ids]
    if not ctx.ade.found:
        steps.append("Reminder: ade-bench is not installed yet; install it before the tasks can run "
                     "(see the commands printed at the start).")
    return steps
