"""`python -m adegen.calibrate OUTPUT_DIR --agent-command CMD [--runs N] [--timeout S] [--key K]
[--tasks ID ...] [--jobs J] [--workdir DIR] [--json] [--no-report]`

Runs CMD (or builtin:search) on every task of OUTPUT_DIR in a sandbox, grades it with ade-bench's
test procedure (emulated, as the proof does), appends the runs to OUTPUT_DIR/calibration.jsonl,
writes each task's measured difficulty into OUTPUT_DIR/tasks.jsonl (when there is one) and
redraws the review page. Exit 0 when every run was graded, 1 when some could not be, 2 on bad input."""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from adegen.core.commandline import run_command
from adegen.core.commandline import ArgParser, number_arg
from adegen.core.errors import InputError
from adegen.core.paths import owned_run_dir
from adegen.calibrate.agent import PLACEHOLDERS, check_template
from adegen.calibrate.apply import update_tasks_jsonl
from adegen.calibrate.runner import CalibrationConfig, append_records, calibrate
from adegen.calibrate.tasks import PROMPT_KEYS, load_tasks


@dataclass(frozen=True)
class CalibrateArgs:
    output_dir: Path
    config: CalibrationConfig  # its workdir is set to the run's own work directory when it runs
    parent: Path | None  # --workdir: where that work directory is made (None: the system's temp dir)
    tasks: list[str]
    json: bool
    report: bool


def parse_args(argv: list[str] | None = None) -> CalibrateArgs:
    p = ArgParser(prog="python -m adegen.calibrate", description=__doc__.split("\n\n")[1],
                  formatter_class=argparse.RawDescriptionHelpFormatter,
                  epilog="placeholders (each shell-quoted): " + ", ".join("{" + x + "}" for x in PLACEHOLDERS))
    p.add_argument("output_dir", metavar="OUTPUT_DIR", help="a build's or bulk run's output directory (holds tasks/)")
    p.add_argument("--agent-command", metavar="CMD", required=True,
                   help="shell command template run in the sandboxed project, or builtin:search")
    p.add_argument("--runs", default="1", metavar="N", help="runs per task (default 1)")
    p.add_argument("--timeout", default="1800", metavar="S", help="seconds per agent run (default 1800)")
    p.add_argument("--key", default="base", choices=PROMPT_KEYS, help="which prompt the agent gets (default base)")
    p.add_argument("--tasks", nargs="+", default=[], metavar="ID", help="only these task ids")
    p.add_argument("--jobs", default="1", metavar="J", help="runs side by side (default 1)")
    p.add_argument("--workdir", default=None, metavar="DIR", help="where sandboxes are made (default: a temp dir)")
    p.add_argument("--mode", default="inprocess", choices=("inprocess", "script"),
                   help="how grading runs dbt: in this process (default) or as subprocesses, bash scripts whole")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--no-report", action="store_true", help="do not redraw OUTPUT_DIR/report.html")
    ns = p.parse_args(argv)
    out = Path(ns.output_dir).expanduser().resolve()
    if not (out / "tasks").is_dir():
        raise InputError("no tasks/ directory here", file=out, field="OUTPUT_DIR")
    cfg = CalibrationConfig(
        agent=check_template(ns.agent_command), runs=number_arg(ns.runs, "--runs"),
        timeout=number_arg(ns.timeout, "--timeout", 0.1, float), key=ns.key, jobs=number_arg(ns.jobs, "--jobs"),
        mode=ns.mode, workdir=Path())
    parent = Path(ns.workdir).expanduser().resolve() if ns.workdir else None
    return CalibrateArgs(out, cfg, parent, list(ns.tasks), ns.json, not ns.no_report)


def execute(args: CalibrateArgs) -> tuple[int, dict]:
    say = (lambda s: print(s, file=sys.stderr)) if args.json else print
    tasks = load_tasks(args.output_dir, args.tasks or None)
    for t in tasks:
        if args.config.agent != "builtin:search":
            t.prompt(args.config.key)  # every task has the prompt, before any sandbox is made
    say(f"Calibrating {len(tasks)} task(s) x {args.config.runs} run(s) with {args.config.agent}")
    if args.parent is not None:
        args.parent.mkdir(parents=True, exist_ok=True)
    with owned_run_dir("adegen-calibrate-", args.parent) as work:
        result = calibrate(tasks, replace(args.config, workdir=work), say=say)
    path = append_records(args.output_dir, result.records)
    tasks_jsonl = update_tasks_jsonl(args.output_dir, result.measured)
    say("Measured difficulty (the build's guess in brackets):")
    for t in tasks:
        say(f"  {t.task_id} [{t.difficulty}]: {result.measured[t.task_id].line()}")
    say(f"Runs: {path}" + (f"; tasks.jsonl updated: {tasks_jsonl}" if tasks_jsonl else ""))
    page = None
    if args.report:
        from adegen.report import write_report

        page = write_report(args.output_dir)
        say(f"Review page: {page}")
    ungraded = [r for r in result.records if not r.graded]
    doc = {"calibration_id": result.calibration_id, "calibration_jsonl": str(path),
           "runs": [r.to_json() for r in result.records],
           "measured": {k: v.to_json() for k, v in result.measured.items()},
           "tasks_jsonl": str(tasks_jsonl) if tasks_jsonl else None, "report": str(page) if page else None}
    return (1 if ungraded else 0), doc


def main(argv: list[str] | None = None) -> int:
    return run_command(argv, parse_args, execute)
