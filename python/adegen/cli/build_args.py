"""Command line of `adegen build` (`python -m adegen.build`): the parser, and argv -> Options.

Parsing never writes anything; every problem is an `InputError` naming the argument."""
from __future__ import annotations

import argparse

from adegen import backends
from adegen.core.commandline import ArgParser, parse_duration
from adegen.core.errors import InputError
from adegen.pipeline.options import Options, parse_pick, project_options

DESCRIPTION = (
    "Turn a dbt project into ADE-bench bug-fix tasks: discover the project, survey existing tasks, "
    "propose 3-5 realistic single-bug tasks, then generate and validate the selected ones."
)


EPILOG = """exit codes: 0 tasks written or proposals shown, 1 no task could be produced or proven,
2 bad input (the message names the file and field or the argument)."""


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
    p.add_argument("--bug-command", metavar="CMD",
                   help="shell command that offers bugs: reads a JSON document about one model (its SQL, path, "
                        "lineage, columns) on stdin, prints {diff, story, kind: values|build_error}; each diff is "
                        "checked, screened and proven like adegen's own candidates, a bad one dropped with its reason")
    p.add_argument("--compound", choices=("auto", "off"), default="auto",
                   help="auto (default): add at most one task of two independent slips on one lineage, built "
                        "from two screened proposals, when fixing one alone fails the grade; off: never")
    p.add_argument("--history", choices=("auto", "on", "off"), default="auto",
                   help="offer the fixes of the project's git history, undone on today's code: auto (default) "
                        "when the project directory is a git repository of its own, on also inside a larger one")
    p.add_argument("--data-change", action="store_true",
                   help="make one of the --count tasks an upstream data change: setup.sh changes a raw table with "
                        "SQL (/scripts/run_sql.sh: the source re-sends records, or renames its columns), the "
                        "solution adapts the models that read it; proven like every task (DuckDB)")
    p.add_argument("--mix", choices=("default", "hard"), default="default",
                   help="hard: prefer the kinds of task that separate agents - one upstream data change (as "
                        "--data-change), an incremental task where the project has one, the compound task, "
                        "symptoms 2+ models below the slip - and write the hard prompt level (fewest hints) as "
                        "the base prompt; --json `mix` says what the run wrote")
    p.add_argument("--purpose", dest="purpose", action="store_const", const="on", default="auto",
                   help="(the default where it can be proven: DuckDB, with validation) up to two of the --count "
                        "tasks are a purposeful change: a commit that changes a model's output on purpose (a new "
                        "count, a category left out, a column brought in from another model) with a slip inside it; the solution keeps the purpose and "
                        "does it right. Given explicitly, a run that cannot make them says why")
    p.add_argument("--no-purpose", dest="purpose", action="store_const", const="off",
                   help="no purposeful-change tasks: every task is a slip of the catalog (faster: no full "
                        "emulation per purposeful proof)")
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
    if ns.bug_command is not None and not ns.bug_command.strip():
        raise InputError("must not be empty", field="--bug-command")
    opts.bug_command, opts.history = ns.bug_command, ns.history
    opts.compound = ns.compound
    if ns.data_change and ns.no_validate:
        raise InputError("needs validation: the raw tables and their readers come from the validator's intact "
                         "build", field="--data-change")
    if ns.purpose == "on" and ns.no_validate:
        raise InputError("needs validation: the data the change is measured on is the validator's intact build",
                         field="--purpose")
    opts.purpose = "off" if ns.no_validate else ns.purpose  # by default, only where it can be proven
    if ns.mix == "hard" and ns.no_validate:
        raise InputError("needs validation: the hard kinds are chosen from what the screening measured",
                         field="--mix")
    opts.data_change, opts.mix = ns.data_change or ns.mix == "hard", ns.mix
    if ns.verify_slow and ns.no_validate:
        raise InputError("needs validation: the proofs it checks are not run with --no-validate",
                         field="--verify-slow")
    opts.verify_slow = ns.verify_slow
    if ns.time_budget is not None:
        opts.time_budget = parse_duration(ns.time_budget, "--time-budget")
    return opts
