"""A plan's run (`python -m adegen.bulk --plan PLAN.yaml`): each project's bulk run in plan order,
all into one output directory, writing one dataset.

Each project is an ordinary bulk run (`pipeline/bulk.py`: its own ledger under the options that
decide its output, its ids continuing its own sequence), so a plan resumes the way a single run
does: rerun the same command. A project whose ledger already holds its tasks is not started again
(no discovery, no baseline). After every committed task the whole dataset's files are rewritten
(`dataset.write_plan_dataset`): tasks.jsonl and DATASET.md over every project, one experiment set
per project and one named after the plan."""
from __future__ import annotations

import shlex
import time
from dataclasses import dataclass

from adegen.core.errors import InputError
from adegen.validate.workers.executor import ExecutorSpec
from adegen.pipeline import dataset, inputs
from adegen.pipeline.bulk import BulkOptions, run_bulk
from adegen.pipeline.context import UI, RunContext
from adegen.pipeline.ledger import LEDGER_DIR, Ledger
from adegen.pipeline.plan import Plan
from adegen.pipeline.progress import BulkUI


@dataclass
class PlanOptions:
    plan: Plan
    jobs: int
    executor: ExecutorSpec
    json: bool
    argv: list[str]  # the command line, for DATASET.md


def check_projects(popts: PlanOptions) -> list[str]:
    """Each project's name, after the checks a bulk run makes before writing anything (project,
    profile, options): a bad one is an InputError naming the plan and the project's entry."""
    names = []
    for p in popts.plan.projects:
        ctx = RunContext(opts=p.opts, ui=UI(json_mode=True, interactive=False), command="bulk")
        try:
            inputs.load_project(ctx)
        except InputError as exc:
            raise InputError(exc.render(), file=popts.plan.path, field=p.field) from None
        names.append(ctx.project.name)
    return names


def run_plan(popts: PlanOptions) -> tuple[int, dict]:
    plan, t0 = popts.plan, time.monotonic()
    names = check_projects(popts)
    command = "python -m adegen.bulk " + shlex.join(popts.argv)
    meta = {"name": plan.name, "path": str(plan.path), "command": command,
            "projects": [{"project": n, "path": str(p.opts.project_dir), "seed": p.seed, "tasks": p.tasks}
                         for n, p in zip(names, plan.projects)]}
    out = plan.output_dir
    parts: list[tuple[Ledger, dict]] = []
    rows, code = [], 0
    for name, proj in zip(names, plan.projects):
        opts = proj.opts
        opts.jobs, opts.executor, opts.json, opts.yes = popts.jobs, popts.executor, popts.json, False
        bopts = BulkOptions(opts, proj.tasks, proj.seed, popts.argv)
        ledger = Ledger.open(out, bopts.key_fields())
        done = ledger.base_number >= 0 and ledger.pending is None and ledger.facts and len(ledger.tasks) >= proj.tasks
        entry = {"project": name, "path": str(opts.project_dir), "seed": proj.seed, "tasks_wanted": proj.tasks}
        if done:
            entry.update(exit_code=0, skipped="its ledger already holds its tasks", written_this_run=0)
        else:
            before = list(parts)
            bopts.write_dataset = lambda o, led, facts, before=before: dataset.write_plan_dataset(
                o, before + [(led, facts)], meta)
            ui = BulkUI(popts.json, out / LEDGER_DIR / "bulk.log")
            try:
                if not popts.json:
                    ui.say(f"Plan {plan.name}: project {proj.index + 1}/{len(plan.projects)}: {name} "
                           f"({proj.tasks} tasks, seed {proj.seed})")
                pcode, doc = run_bulk(bopts, ui)
            finally:
                ui.close()
            ds = doc.get("dataset") or {}
            entry.update(exit_code=pcode, written_this_run=ds.get("written_this_run", 0),
                         timings_sec=doc.get("timings_sec"), elapsed_sec=doc.get("elapsed_sec"))
            ledger = Ledger.open(out, bopts.key_fields())
        if ledger.facts:
            parts.append((ledger, ledger.facts))
        entry["written"] = sum(1 for r in ledger.tasks if r.get("kept", True))
        code = max(code, 0 if entry["written"] >= proj.tasks else 1)
        rows.append(entry)
    paths = dataset.write_plan_dataset(out, parts, meta)
    total = sum(e["written"] for e in rows)
    if not popts.json:
        print(f"Plan {plan.name}: {total} proven task(s) from {len(rows)} project(s) in {out / 'tasks'} "
              f"({popts.executor.describe()})")
        for e in rows:
            print(f"  {e['project']} (seed {e['seed']}): {e['written']}/{e['tasks_wanted']}"
                  + (f" - {e['skipped']}" if e.get("skipped") else ""))
        for k, v in paths.items():
            print(f"  {k}: {v}")
    doc = {"plan": str(plan.path), "name": plan.name, "output_dir": str(out), "executor": popts.executor.describe(),
           "jobs": popts.jobs, "projects": rows, "exit_code": code, "elapsed_sec": round(time.monotonic() - t0, 1),
           "dataset": {"tasks": total, **{k: str(v) for k, v in paths.items()}}}
    return code, doc
