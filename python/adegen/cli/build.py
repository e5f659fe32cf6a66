"""`python -m adegen.build PROJECT_DIR` (console script `adegen`): Phases 1-4 of the spec.

1. ade-bench detection, discovery summary, survey of existing tasks;
2. proposals (novelty, spread, compile check, screening);
3. generation of the selected tasks (atomic, never overwriting);
4. mandatory patch round trip, then execution proof (unless --no-validate).

The user's project is never modified."""
from __future__ import annotations

import sys

from adegen.backends.snowflake import SNOWFLAKE_ENV, snowflake_env_unset  # noqa: F401 - public helpers
from adegen.core.commandline import exit_with, run_command
from adegen.cli.build_args import parse_args
from adegen.pipeline.options import Options
from adegen.pipeline.context import UI, RunReport  # noqa: F401 - the console and report of a run


def run(opts: Options, ui: UI) -> tuple[int, dict]:
    """One build: the stages of `adegen.pipeline` on one RunContext; (exit code, --json document)."""
    from adegen.pipeline.run import run_build  # the stages import the report page's renderer: not for --help or bad input

    return run_build(opts, ui)


# ---------------------------------------------------------------------------------------------
# entry point


def main(argv: list[str] | None = None) -> int:
    return run_command(argv, parse_args, _run_parsed)


def _run_parsed(opts: Options) -> tuple[int, dict]:
    interactive = sys.stdin.isatty() and opts.pick is None
    return run(opts, UI(opts.json, interactive))


def cli() -> None:
    """The `adegen` console script: the same command and exit guarantees as `python -m adegen.build`."""
    exit_with(main())


if __name__ == "__main__":
    cli()
