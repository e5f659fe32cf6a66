"""`python -m adegen.bulk PROJECT_DIR --tasks N [--seed S] [--jobs J] [--executor E]`: many distinct,
proven tasks per project, reproducible (same project, seed and options: same tasks in the same
order, on any executor) and resumable (rerun the same command after any interruption). The stages
are the build's (`adegen.pipeline`); `pipeline/bulk.py` adds the loop.

`python -m adegen.bulk --plan PLAN.yaml [--output-dir DIR] [--executor E] [--jobs J]`: many projects
into one dataset (`pipeline/plan.py`, `pipeline/bulk_plan.py`)."""
from __future__ import annotations

import os
import sys

from adegen.core.commandline import exit_with, run_command
from adegen.cli.build_args import add_project_args
from adegen.core.commandline import ArgParser, number_arg
from adegen.pipeline.options import project_options
from adegen.core.errors import InputError
from adegen.calibrate.agent import check_template
from adegen.pipeline.bulk import BulkOptions, run_bulk
from adegen.pipeline.bulk_made import KINDS
from adegen.pipeline.bulk_plan import PlanOptions, run_plan
from adegen.pipeline.plan import load_plan
from adegen.validate.workers.executor import ExecutorSpec, cluster_size, parse_executor
from adegen.pipeline.calibration import KEEP, CalibrateOptions
from adegen.pipeline.ledger import LEDGER_DIR
from adegen.pipeline.progress import BulkUI

DESCRIPTION = ("Bulk mode: enumerate every (model, pattern, site) bug candidate of a dbt project, order them "
               "from a seed with a spread over models, families, layers and difficulty, and write proven "
               "ADE-bench tasks until --tasks are proven or the candidates run out. Rerun the same command to "
               "resume an interrupted run.")
EPILOG = """outputs: <output>/tasks/<id>/, tasks.jsonl, DATASET.md, experiment_sets/<project>_bulk_seed<S>.yaml
many projects into one dataset: python -m adegen.bulk --plan PLAN.yaml [--output-dir DIR] [--executor E] [--jobs J]
exit codes: 0 --tasks proven tasks written, 1 the candidates ran out first (or nothing can be proven),
2 bad input (the message names the file and field or the argument)."""


def parse_bulk_args(argv: list[str] | None = None) -> BulkOptions:
    p = ArgParser(prog="python -m adegen.bulk", description=DESCRIPTION, epilog=EPILOG)
    add_project_args(p)
    p.add_argument("--tasks", metavar="N", required=True, help="proven tasks to write")
    p.add_argument("--seed", metavar="S", default="0", help="seed of the candidate order (default 0)")
    p.add_argument("--kinds", metavar="LIST", default=",".join(KINDS),
                   help="what the candidates are drawn from, comma-separated: catalog (the pattern catalog's slips), "
                        "purpose (purposeful changes), data-change (upstream data changes); default: all three")
    _add_executor_args(p)
    p.add_argument("--calibrate", metavar="CMD", default=None,
                   help="afterwards run this agent on every written task (a command template with {prompt}, "
                        "{prompt_file}, {workdir}, {task_id}, {key}, or builtin:search) and record its measured "
                        "difficulty in tasks.jsonl, calibration.jsonl and the review page")
    p.add_argument("--keep", choices=KEEP, default="all",
                   help="with --calibrate: all tasks (default), or only those the agent did not solve")
    p.add_argument("--calibrate-timeout", metavar="S", default="1800",
                   help="with --calibrate: seconds one agent run may take (default 1800)")
    args = list(sys.argv[1:] if argv is None else argv)
    ns = p.parse_args(args)
    if ns.keep != "all" and ns.calibrate is None:
        raise InputError("--keep unsolved needs --calibrate CMD", field="--keep")
    tasks = number_arg(ns.tasks, "--tasks", 1)
    seed = number_arg(ns.seed, "--seed", 0)
    opts = project_options(ns)
    executor = parse_executor(ns.executor)
    opts.jobs, opts.executor, opts.yes = _jobs(ns.jobs, executor), executor, False
    calibrate = None
    if ns.calibrate is not None:
        calibrate = CalibrateOptions(check_template(ns.calibrate, "--calibrate"), ns.keep,
                                     float(number_arg(ns.calibrate_timeout, "--calibrate-timeout", 1)))
    return BulkOptions(opts, tasks, seed, args, calibrate, kinds=_kinds(ns.kinds))


def _kinds(value: str) -> tuple[str, ...]:
    """--kinds as a tuple in KINDS' order; an unknown or empty list is bad input naming the flag."""
    asked = {k.strip() for k in value.split(",") if k.strip()}
    unknown = sorted(asked - set(KINDS))
    if unknown or not asked:
        raise InputError(f"expected a comma-separated list of {', '.join(KINDS)}, got {value!r}", field="--kinds")
    return tuple(k for k in KINDS if k in asked)


def _add_executor_args(p: ArgParser) -> None:
    p.add_argument("--jobs", metavar="J", default=None,
                   help="proofs side by side, each in its own worker (default: the number of cores; with a Dask "
                        "executor the number of its workers)")
    p.add_argument("--executor", metavar="E", default="local",
                   help="where proofs and screens run: local (this machine's worker pool, the default) or "
                        "dask://HOST:PORT (a running Dask distributed scheduler; workers with --nthreads 1 that "
                        "see the run's work directory and the project)")


def _jobs(value: str | None, executor: ExecutorSpec) -> int:
    if value is not None:
        return number_arg(value, "--jobs", 1)
    return cluster_size(executor) if executor.remote else max(1, os.cpu_count() or 1)


def _is_plan(argv: list[str] | None) -> bool:
    args = sys.argv[1:] if argv is None else argv
    return any(a == "--plan" or a.startswith("--plan=") for a in args)


def parse_plan_args(argv: list[str] | None = None) -> PlanOptions:
    p = ArgParser(prog="python -m adegen.bulk --plan", description="Bulk mode over a plan: many projects into one "
                  "dataset (one output directory, tasks.jsonl, DATASET.md, an experiment set per project and one "
                  "for the whole dataset). Rerun the same command to resume.", epilog=EPILOG)
    p.add_argument("--plan", metavar="PLAN.yaml", required=True, help="the plan (docs/bulk.md: many projects in one dataset)")
    p.add_argument("--output-dir", metavar="DIR", default=None, help="the dataset's directory (default: the plan's "
                                                                      "output_dir)")
    p.add_argument("--ade-bench-dir", metavar="DIR", help="ade-bench checkout (default: detected)")
    p.add_argument("--json", action="store_true", help="print one JSON document at the end")
    _add_executor_args(p)
    args = list(sys.argv[1:] if argv is None else argv)
    ns = p.parse_args(args)
    executor = parse_executor(ns.executor)
    plan = load_plan(ns.plan, output_dir=ns.output_dir, ade_bench_dir=ns.ade_bench_dir)  # before the cluster is asked
    return PlanOptions(plan, _jobs(ns.jobs, executor), executor, ns.json, args)


def _execute(bopts: BulkOptions) -> tuple[int, dict]:
    ui = BulkUI(bopts.json, bopts.opts.output_dir / LEDGER_DIR / "bulk.log")
    try:
        return run_bulk(bopts, ui)
    finally:
        ui.close()


def main(argv: list[str] | None = None) -> int:
    if _is_plan(argv):
        return run_command(argv, parse_plan_args, run_plan)
    return run_command(argv, parse_bulk_args, _execute)


if __name__ == "__main__":
    exit_with(main())
