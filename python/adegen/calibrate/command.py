"""`python -m adegen.calibrate OUTPUT_DIR (--agent-command CMD | --prepare DIR | --grade DIR [--solver NAME])
[--runs N] [--timeout S] [--key K] [--tasks ID ...] [--jobs J] [--workdir DIR] [--json] [--no-report]`

Runs CMD (or builtin:search) on every task of OUTPUT_DIR in a sandbox, grades it with ade-bench's
test procedure (emulated, as the proof does), appends the runs to OUTPUT_DIR/calibration.jsonl,
writes each task's measured difficulty into OUTPUT_DIR/tasks.jsonl (when there is one) and
redraws the review page. With --prepare DIR the sandboxes are laid out in DIR for any solver
(a person, an agent run elsewhere); --grade DIR later grades and records what it left there
(`handoff`). Exit 0 when every run was graded, 1 when some could not be, 2 on bad input."""
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
from adegen.calibrate import handoff
from adegen.calibrate.apply import update_tasks_jsonl
from adegen.calibrate.runner import Calibration, CalibrationConfig, append_records, calibrate
from adegen.calibrate.tasks import PROMPT_KEYS, load_tasks


@dataclass(frozen=True)
class CalibrateArgs:
    output_dir: Path
    config: CalibrationConfig  # its workdir is set to the run's own work directory when it runs
    parent: Path | None  # --workdir: where that work directory is made (None: the system's temp dir)
    tasks: list[str]
    json: bool
    report: bool
    prepare: Path | None = None  # --prepare DIR
    grade: Path | None = None  # --grade DIR
    solver: str = "manual"  # --grade: the run's agent


def parse_args(argv: list[str] | None = None) -> CalibrateArgs:
    p = ArgParser(prog="python -m adegen.calibrate", description=__doc__.split("\n\n")[1],
                  formatter_class=argparse.RawDescriptionHelpFormatter,
                  epilog="placeholders (each shell-quoted): " + ", ".join("{" + x + "}" for x in PLACEHOLDERS))
    p.add_argument("output_dir", metavar="OUTPUT_DIR", help="a build's or bulk run's output directory (holds tasks/)")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--agent-command", metavar="CMD",
                     help="shell command template run in the sandboxed project, or builtin:search")
    how.add_argument("--prepare", metavar="DIR", help="lay out one sandbox per task in DIR (new or empty) "
                     "for any solver, a person included; nothing is graded")
    how.add_argument("--grade", metavar="DIR", help="grade and record what a solver left in DIR's sandboxes")
    p.add_argument("--solver", default=None, metavar="NAME",
                   help="with --grade: who solved, recorded as the run's agent (default manual)")
    p.add_argument("--runs", default="1", metavar="N", help="runs per task (default 1)")
    p.add_argument("--timeout", default="1800", metavar="S", help="seconds per agent run (default 1800)")
    p.add_argument("--key", default=None, choices=PROMPT_KEYS,
                   help="which prompt the agent gets (default base; --grade: the one --prepare used)")
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
    prepare, grade = (Path(d).expanduser().resolve() if d else None for d in (ns.prepare, ns.grade))
    _check_handoff(ns, prepare, grade)
    cfg = CalibrationConfig(
        agent=check_template(ns.agent_command) if ns.agent_command is not None else "",
        runs=number_arg(ns.runs, "--runs"), timeout=number_arg(ns.timeout, "--timeout", 0.1, float),
        key=ns.key or "base", jobs=number_arg(ns.jobs, "--jobs"), mode=ns.mode, workdir=Path())
    parent = Path(ns.workdir).expanduser().resolve() if ns.workdir else None
    return CalibrateArgs(out, cfg, parent, list(ns.tasks), ns.json, not ns.no_report, prepare, grade,
                         ns.solver or "manual")


def _check_handoff(ns: argparse.Namespace, prepare: Path | None, grade: Path | None) -> None:
    """The options that only make sense with --prepare/--grade, and their DIR (bad input, exit 2)."""
    if ns.solver is not None and grade is None:
        raise InputError("only with --grade", field="--solver")
    if (prepare or grade) and ns.runs != "1":
        raise InputError("--prepare makes one sandbox (one run) per task; prepare another DIR for another run",
                         field="--runs")
    if prepare is not None:
        handoff.check_prepare_dir(prepare)
    if grade is not None:
        prepared = handoff.read_prepared(grade)
        if ns.key is not None and ns.key != prepared.key:
            raise InputError(f"{grade} was prepared with the {prepared.key} prompt", field="--key")


def execute(args: CalibrateArgs) -> tuple[int, dict]:
    say = (lambda s: print(s, file=sys.stderr)) if args.json else print
    if args.prepare is not None:
        return _prepare(args, say)
    if args.grade is not None:
        return _grade(args, say)
    tasks = load_tasks(args.output_dir, args.tasks or None)
    for t in tasks:
        if args.config.agent != "builtin:search":
            t.prompt(args.config.key)  # every task has the prompt, before any sandbox is made
    say(f"Calibrating {len(tasks)} task(s) x {args.config.runs} run(s) with {args.config.agent}")
    if args.parent is not None:
        args.parent.mkdir(parents=True, exist_ok=True)
    with owned_run_dir("adegen-calibrate-", args.parent) as work:
        result = calibrate(tasks, replace(args.config, workdir=work), say=say)
    return _record(args, tasks, result, say)


def _prepare(args: CalibrateArgs, say) -> tuple[int, dict]:
    tasks = load_tasks(args.output_dir, args.tasks or None)
    say(f"Preparing {len(tasks)} sandbox(es) in {args.prepare} ({args.config.key} prompt)")
    cfg = handoff.HandoffConfig(args.prepare, args.config.mode, args.config.key)
    prepared = handoff.prepare(tasks, args.output_dir, args.prepare, cfg, say)
    say(f"Work in each <task>/app (the dbt project after setup) as PROMPT.md asks, then: "
        f"python -m adegen.calibrate {args.output_dir} --grade {args.prepare}")
    return 0, {"prepared": str(args.prepare), **prepared.to_json()}


def _grade(args: CalibrateArgs, say) -> tuple[int, dict]:
    prepared = handoff.read_prepared(args.grade)
    if prepared.output_dir != args.output_dir:
        raise InputError(f"was prepared from {prepared.output_dir}, not {args.output_dir}", file=args.grade,
                         field="--grade")
    unknown = [t for t in args.tasks if t not in prepared.tasks]
    if unknown:
        raise InputError(f"{unknown[0]!r} was not prepared in {args.grade}", field="--tasks")
    tasks = load_tasks(args.output_dir, args.tasks or list(prepared.tasks))
    say(f"Grading {len(tasks)} sandbox(es) in {args.grade} ({args.solver})")
    if args.parent is not None:
        args.parent.mkdir(parents=True, exist_ok=True)
    with owned_run_dir("adegen-calibrate-", args.parent) as work:
        cfg = handoff.HandoffConfig(work, args.config.mode, prepared.key, args.solver)
        result = handoff.grade(tasks, args.grade, prepared, cfg, say)
    return _record(args, tasks, result, say)


def _record(args: CalibrateArgs, tasks: list, result: Calibration, say) -> tuple[int, dict]:
    """The runs into calibration.jsonl, the measures into tasks.jsonl and onto the review page."""
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
