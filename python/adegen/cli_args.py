"""Command line of `python -m adegen.build` (the `adegen` console script).

Parsing never writes anything; every problem is an `InputError` naming the argument."""
from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import backends
from .errors import InputError
from .settings import Settings, get_settings

DESCRIPTION = (
    "Turn a dbt project into ADE-bench bug-fix tasks: discover the project, survey existing tasks, "
    "propose 3-5 realistic single-bug tasks, then generate and validate the selected ones."
)

EPILOG = """exit codes: 0 tasks written or proposals shown, 1 no task could be produced or proven,
2 bad input (the message names the file and field or the argument)."""


@dataclass
class Options:
    project_dir: Path
    output_dir: Path
    no_copy: bool = False
    db_type: str | None = None
    db_name: str | None = None
    db_path: Path | None = None
    ade_bench_dir: Path | None = None
    patterns_dirs: list[Path] = field(default_factory=list)
    count: int = 5
    pick: str | None = None  # "all" or "1,3"
    yes: bool = False
    json: bool = False
    validate: bool = True
    profiles_dir: Path | None = None
    target: str | None = None
    emulate_snowflake: bool = False
    run_harness: bool = False
    verify_slow: bool = False  # re-prove each written task the plain way (pipeline/verify_slow.py)
    prompt_command: str | None = None  # shell command that writes the prompts (adegen.prompts.command)
    report: bool = True  # write <output-dir>/report.html at the end (--no-report: don't)
    jobs: int = 2  # validator worker processes (the build: ADEGEN_BUILD_JOBS, 2; bulk mode: --jobs)
    executor: object = None  # bulk mode's --executor (validate.executor.ExecutorSpec; None: local pool)
    time_budget: float | None = None  # --time-budget: seconds of wall clock for the whole build
    settings: Settings = field(default_factory=get_settings)  # the ADEGEN_* environment, read once


class ArgParser(argparse.ArgumentParser):
    def error(self, message: str):  # pragma: no cover - exercised via main()
        raise InputError(message, field="command line")


def make_parser() -> argparse.ArgumentParser:
    p = ArgParser(prog="adegen", description=DESCRIPTION, epilog=EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_project_args(p)
    p.add_argument("--no-copy", action="store_true",
                   help="reference the original project in place instead of copying it (output not self-contained)")
    p.add_argument("--count", metavar="N", type=str, default="5", help="number of proposals, 3-5 (default 5)")
    p.add_argument("--pick", metavar="all|1,3,...", help="select proposals without asking")
    p.add_argument("--yes", action="store_true", help="answer yes to every question")
    p.add_argument("--no-validate", action="store_true",
                   help="skip execution validation (patch round-trip validation still runs)")
    p.add_argument("--run-harness", action="store_true",
                   help="after generating, run the spec's Phase 5 `ade run ... --agent sage` commands and triage "
                        "the results (needs a working `ade` and a running Docker daemon; otherwise says why not)")
    p.add_argument("--verify-slow", action="store_true",
                   help="after writing, re-prove each task the plain way (ade-bench's procedure in script mode: "
                        "bash, one dbt process per call, no in-process shortcuts) and report any disagreement "
                        "with its proof (about 10x a proof's time per task)")
    p.add_argument("--prompt-command", metavar="CMD",
                   help="shell command that writes each task's prompts: reads a JSON document (measured diff, "
                        "forbidden words, hint levels) on stdin, prints a JSON object {base, medium, hard} or the "
                        "base prompt; texts failing adegen's checks, a failure or a 60 s timeout keep adegen's own")
    p.add_argument("--time-budget", metavar="SECONDS",
                   help="limit the whole build's wall clock (900, 900s, 15m, 1h): no new proposal round or "
                        "task proof starts once it is spent; what was proven is written, the summary lists "
                        "what was skipped (time waiting for your answers does not count)")
    return p


def add_project_args(p: argparse.ArgumentParser) -> None:
    """The project, database and output options the build and bulk mode share (`project_options`
    checks them)."""
    p.add_argument("project_dir", metavar="PROJECT_DIR", help="the dbt project (directory holding dbt_project.yml)")
    p.add_argument("--output-dir", metavar="DIR",
                   help="where tasks are written (default: ade-bench-tasks next to the project directory)")
    p.add_argument("--db-type", choices=list(backends.NAMES), help="database type (default: from profiles.yml)")
    p.add_argument("--db-name", metavar="NAME", help="database name (default: from profiles.yml)")
    p.add_argument("--db-path", metavar="DIR",
                   help="DuckDB only: directory holding <db_name>.duckdb, written as db_dir in task.yaml")
    p.add_argument("--ade-bench-dir", metavar="DIR",
                   help="ade-bench checkout (default: detected via `ade --help`, then ~/.ade-bench)")
    p.add_argument("--patterns-dir", metavar="DIR", action="append", default=[],
                   help="extra directory of pattern YAML files (repeatable)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON document (proposals, tasks, validation) instead of text")
    p.add_argument("--emulate-snowflake", action="store_true",
                   help="Snowflake projects: prove the tasks on the local fakesnow emulator (needs the "
                        "snowflake-emulator extra); results are labelled 'proven on emulator'")
    p.add_argument("--no-report", action="store_true",
                   help="do not write the review page <output-dir>/report.html (rebuild it any time with "
                        "`python -m adegen.report OUTPUT_DIR`)")
    p.add_argument("--profiles-dir", metavar="DIR", help="directory holding profiles.yml (default: dbt's lookup)")
    p.add_argument("--target", metavar="NAME", help="profile target (default: the profile's target)")


def parse_pick(pick: str, n: int, *, at_most: bool = False) -> list[int]:
    """`all` or a comma list of 1-based numbers -> 0-based indexes (validated against n; `at_most`:
    n is only the upper bound --count sets, checked before the proposals exist)."""
    text = pick.strip().lower()
    if text in ("all", "a", "*"):
        return list(range(n))
    out: list[int] = []
    for part in text.replace(" ", ",").split(","):
        if not part:
            continue
        if "-" in part:
            lo, _, hi = part.partition("-")
            if not (lo.isdigit() and hi.isdigit()):
                raise InputError(f"expected 'all' or numbers like 1,3 - got {pick!r}", field="--pick")
            rng = range(int(lo), int(hi) + 1)
        elif part.isdigit():
            rng = range(int(part), int(part) + 1)
        else:
            raise InputError(f"expected 'all' or numbers like 1,3 - got {pick!r}", field="--pick")
        for k in rng:
            if not 1 <= k <= n:
                there = f"--count {n} proposes at most {n}" if at_most else f"there are {n}"
                raise InputError(f"proposal {k} does not exist ({there})", field="--pick")
            if k - 1 not in out:
                out.append(k - 1)
    if not out:
        raise InputError(f"expected 'all' or numbers like 1,3 - got {pick!r}", field="--pick")
    return out


def _check_writable(output_dir: Path) -> None:
    """The output directory, or the nearest existing directory it would be created in, must be
    writable (checked before any work; nothing is created here)."""
    probe = output_dir
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe != output_dir and not probe.is_dir():
        raise InputError(f"cannot be created: {probe} is not a directory", file=output_dir, field="--output-dir")
    if not os.access(probe, os.W_OK | os.X_OK):
        what = "is not writable" if probe == output_dir else f"cannot be created: {probe} is not writable"
        raise InputError(what, file=output_dir, field="--output-dir")


def parse_args(argv: list[str] | None = None) -> Options:
    ns = make_parser().parse_args(argv)
    opts = project_options(ns)
    try:
        count = int(ns.count)
    except ValueError:
        raise InputError(f"expected a number from 3 to 5, got {ns.count!r}", field="--count") from None
    if not 3 <= count <= 5:
        raise InputError(f"expected a number from 3 to 5, got {count}", field="--count")
    if ns.pick is not None:
        parse_pick(ns.pick, count, at_most=True)  # syntax and --count now; the exact range once proposals exist
    opts.no_copy, opts.count, opts.pick, opts.yes = ns.no_copy, count, ns.pick, ns.yes
    if ns.prompt_command is not None and not ns.prompt_command.strip():
        raise InputError("must not be empty", field="--prompt-command")
    opts.validate, opts.run_harness, opts.prompt_command = not ns.no_validate, ns.run_harness, ns.prompt_command
    if ns.verify_slow and ns.no_validate:
        raise InputError("needs validation: the proofs it checks are not run with --no-validate",
                         field="--verify-slow")
    opts.verify_slow = ns.verify_slow
    if ns.time_budget is not None:
        opts.time_budget = parse_duration(ns.time_budget, "--time-budget")
    return opts


def project_options(ns: argparse.Namespace) -> Options:
    """Options from the arguments `add_project_args` defined, each checked (InputError naming it)."""
    project_dir = Path(ns.project_dir).expanduser()
    if not project_dir.exists():
        raise InputError("does not exist", file=project_dir, field="PROJECT_DIR")
    if not project_dir.is_dir():
        raise InputError("not a directory", file=project_dir, field="PROJECT_DIR")
    if not (project_dir / "dbt_project.yml").is_file():
        raise InputError("no dbt_project.yml in this directory", file=project_dir, field="PROJECT_DIR")
    project_dir = project_dir.resolve()
    output_dir = (Path(ns.output_dir).expanduser() if ns.output_dir
                  else project_dir.parent / "ade-bench-tasks")
    output_dir = output_dir.resolve()
    try:
        output_dir.relative_to(project_dir)
        raise InputError("must not be inside the dbt project (the project is never modified)",
                         file=output_dir, field="--output-dir")
    except ValueError:
        pass
    if output_dir.exists() and not output_dir.is_dir():
        raise InputError("exists and is not a directory", file=output_dir, field="--output-dir")
    _check_writable(output_dir)
    db_path = None
    if ns.db_path:
        backend = backends.get(ns.db_type) if ns.db_type else None
        if backend is not None and not backend.file_based:
            raise InputError(f"--db-path is for DuckDB only: {backend.title()} variants have no db_dir "
                             f"({backend.reached_how} {backend.reached_with}); drop --db-path", field="--db-path")
        db_path = Path(ns.db_path).expanduser()
        if not db_path.is_dir():
            raise InputError("directory does not exist", file=db_path, field="--db-path")
        db_path = db_path.resolve()
    ade_dir = None
    if ns.ade_bench_dir:
        ade_dir = Path(ns.ade_bench_dir).expanduser()
        if not ade_dir.is_dir():
            raise InputError("directory does not exist", file=ade_dir, field="--ade-bench-dir")
        ade_dir = ade_dir.resolve()
    patterns_dirs = []
    for d in ns.patterns_dir:
        pd = Path(d).expanduser()
        if not pd.is_dir():
            raise InputError("directory does not exist", file=pd, field="--patterns-dir")
        patterns_dirs.append(pd.resolve())
    if ns.db_name is not None and not ns.db_name.strip():
        raise InputError("must not be empty", field="--db-name")
    profiles_dir = None
    if ns.profiles_dir:
        profiles_dir = Path(ns.profiles_dir).expanduser().resolve()
        if not profiles_dir.is_dir():
            raise InputError("directory does not exist", file=profiles_dir, field="--profiles-dir")
    return Options(
        project_dir=project_dir, output_dir=output_dir, db_type=ns.db_type, db_name=ns.db_name, db_path=db_path,
        ade_bench_dir=ade_dir, patterns_dirs=patterns_dirs, json=ns.json, profiles_dir=profiles_dir,
        target=ns.target, emulate_snowflake=ns.emulate_snowflake, report=not ns.no_report,
        jobs=get_settings().build_jobs,
    )


def number_arg(value: str, flag: str, minimum: float = 1, kind: type = int):
    """A command-line number of at least `minimum` (`kind` int: a whole number), else bad input
    naming the flag."""
    try:
        n = kind(value)
    except ValueError:
        raise InputError(f"expected {'a whole number' if kind is int else 'a number'}, got {value!r}",
                         field=flag) from None
    if n < minimum:
        raise InputError(f"expected a number of at least {minimum:g}, got {n}", field=flag)
    return n


_UNITS = {"": 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$")


def parse_duration(text: str, flag: str = "--time-budget") -> float:
    """Seconds of `900`, `900s`, `15m`, `1.5h` (more than 0), else bad input naming the flag."""
    m = _DURATION.match(str(text).lower())
    if m is None or m.group(2) not in _UNITS:
        raise InputError(f"expected seconds or a duration like 900, 900s, 15m or 1h, got {text!r}", field=flag)
    seconds = float(m.group(1)) * _UNITS[m.group(2)]
    if seconds <= 0:
        raise InputError(f"expected more than 0 seconds, got {text!r}", field=flag)
    return seconds
