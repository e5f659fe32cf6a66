"""`adegen`: the one command line, a subcommand per job.

    adegen build PROJECT_DIR ...      tasks for a project (also `adegen PROJECT_DIR ...`, `python -m adegen.build`)
    adegen bulk PROJECT_DIR --tasks N many proven tasks into a dataset (`python -m adegen.bulk`)
    adegen calibrate OUTPUT_DIR ...   measured difficulty with an agent (`python -m adegen.calibrate`)
    adegen report OUTPUT_DIR          the review page (`python -m adegen.report`)
    adegen discover PROJECT_DIR       the discovery payload (`python -m adegen.discover`)
    adegen harness TASK_DIR ...       ade-bench's test procedure, emulated without Docker
    adegen emulator PROJECT_DIR ...   dbt on the local Snowflake emulator (fakesnow)
    adegen catalog-macros             regenerate the dbt macros that carry the pattern catalog

Each subcommand's parser lives with its job (adegen.cli.build_args, adegen.cli.bulk, the calibrate and
report packages' `command` modules, ...); this module only dispatches, importing the chosen one alone
so `adegen build` never pays for the others' imports."""
from __future__ import annotations

import sys
from typing import Callable

Main = Callable[[list[str] | None], int]


def _build(argv):
    from adegen.cli.build import main
    return main(argv)


def _bulk(argv):
    from adegen.cli.bulk import main
    return main(argv)


def _calibrate(argv):
    from adegen.calibrate.command import main
    return main(argv)


def _report(argv):
    from adegen.report.command import main
    return main(argv)


def _discover(argv):
    from adegen.discover.payload import main
    return main(argv)


def _harness(argv):
    from adegen.adebench.procedure.command import main
    return main(argv)


def _emulator(argv):
    from adegen.cli.emulator import main
    return main(argv)


def _catalog_macros(argv):
    from adegen.cli.catalog_macros import main
    return main(argv)


SUBCOMMANDS: dict[str, Main] = {
    "build": _build, "bulk": _bulk, "calibrate": _calibrate, "report": _report, "discover": _discover,
    "harness": _harness, "emulator": _emulator, "catalog-macros": _catalog_macros,
}


def usage() -> str:
    return __doc__.split("\n\n")[1].replace("    adegen", "  adegen")


def main(argv: list[str] | None = None) -> int:
    """Dispatch on the first argument; anything else (a project directory, a flag) is the build's, as
    `adegen PROJECT_DIR` always was."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in SUBCOMMANDS:
        return SUBCOMMANDS[args[0]](args[1:])
    if args in (["-h"], ["--help"]):
        print("usage: adegen {" + ",".join(SUBCOMMANDS) + "} ...\n\n" + usage()
              + "\n\n`adegen SUBCOMMAND --help` for a subcommand's options; without a subcommand, `build`.")
        return 0
    return _build(args)


def cli(subcommand: str | None = None) -> None:
    """The `adegen` console script; `python -m adegen.build` and `python -m adegen.bulk` call it with
    their subcommand. A Ctrl-C while the chosen command's modules load lands before that command's
    own boundary (core.commandline.run_command) and ends here the same way: one line, exit 130."""
    from adegen.core.commandline import exit_with, interrupted

    try:
        code = main(None if subcommand is None else [subcommand, *sys.argv[1:]])
    except KeyboardInterrupt:
        code = interrupted()
    exit_with(code)
