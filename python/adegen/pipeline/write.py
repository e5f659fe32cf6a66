"""Stage "write": the chosen proposals become task directories, ids continuing the project's
sequence, under the run lock. Each task is realised on its own (`realise.realise_task`); with
`--time-budget`, none starts once the budget is spent (`pipeline/budget.py`)."""
from __future__ import annotations

import time

from adegen.tasks import output as out
from adegen.pipeline.context import RunContext
from adegen.pipeline.realise import TaskJob, realise_task, render_tests
from adegen.pipeline.workspace import prepare
from adegen.tasks.shape import run_figure


def write_tasks(ctx: RunContext, chosen: list) -> list[str]:
    """The ids of the tasks written (ctx.report.tasks holds their --json entries)."""
    t1 = time.monotonic()
    tests_by_prop = render_tests(ctx, chosen)
    written: list[str] = []
    lock = out.RunLock(ctx.opts.output_dir)
    lock.acquire()
    try:
        plan = ctx.output or prepare(ctx)  # the purposeful tasks, written first, may have prepared it
        number = max(ctx.survey.highest_number, out.highest_task_number(plan.tasks_dir, ctx.project.name))
        budget = ctx.budget
        for k, p in enumerate(chosen):
            if ctx.budget_spent():  # --time-budget: no new task starts; the ones written stay
                budget.stopped_at = "tasks"
                for rest in chosen[k:]:
                    budget.skip(rest, "write")
                ctx.ui.say(f"Time budget reached: {len(chosen) - k} task(s) not started.")
                break
            task_id = out.format_task_id(ctx.project.name, number + 1)
            result = realise_task(ctx, TaskJob(p, task_id, tests_by_prop.get(p.number, [])))
            if budget is not None:
                budget.task_done()
            if result is None:
                continue  # the id was not used
            number += 1
            ctx.report.tasks.append(result)
            written.append(task_id)
    except KeyboardInterrupt:
        ctx.ui.warn("interrupted: unfinished task directories were removed")
        raise
    finally:
        lock.release()
    ctx.doc.tasks = ctx.report.tasks
    ctx.doc.change_shape = run_figure(ctx.doc.tasks)
    ctx.timing("generation", t1)
    return written
