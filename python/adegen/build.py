"""`python -m adegen.build PROJECT_DIR` (console script `adegen`): Phases 1-4 of the spec.

1. ade-bench detection, discovery summary, survey of existing tasks;
2. proposals (novelty, spread, compile check, screening);
3. generation of the selected tasks (atomic, never overwriting);
4. mandatory patch round trip, then execution proof (unless --no-validate).

The user's project is never modified."""
from __future__ import annotations

import json
import sys
from typing import Any, Callable

from . import __version__
from .cli_args import Options, parse_args
from .errors import AdegenError
from .settings import get_settings
from .pipeline.context import UI, RunReport  # noqa: F401 - the console and report of a run
from .backends.snowflake import SNOWFLAKE_ENV, snowflake_env_unset  # noqa: F401 - public helpers


def run(opts: Options, ui: UI) -> tuple[int, dict]:
    """One build: the stages of `adegen.pipeline` on one RunContext; (exit code, --json document)."""
    from .pipeline.run import run_build

    return run_build(opts, ui)


# ---------------------------------------------------------------------------------------------
# entry point


def main(argv: list[str] | None = None) -> int:
    return run_command(argv, parse_args, _run_parsed)


def _run_parsed(opts: Options) -> tuple[int, dict]:
    interactive = sys.stdin.isatty() and opts.pick is None
    return run(opts, UI(opts.json, interactive))


def run_command(argv: list[str] | None, parse: Callable[[list[str] | None], Any],
                execute: Callable[[Any], tuple[int, dict]]) -> int:
    """The one error boundary of a command (the build, bulk mode): `parse(argv)` gives options
    with a `json` flag, `execute(options)` the (exit code, --json document). A problem the user can
    fix ends with one message (`adegen: error: ...`, exit 2 for bad input), Ctrl-C with exit 130
    (unfinished task dirs are removed on the way out), anything unexpected with one line and exit 1
    (`ADEGEN_DEBUG=1` adds the traceback). No traceback otherwise."""
    json_mode = "--json" in (argv if argv is not None else sys.argv[1:])
    previous_hook = sys.unraisablehook

    def unraisable(args):  # a Ctrl-C that landed in a finalizer: no "Exception ignored" traceback,
        if isinstance(args.exc_value, KeyboardInterrupt):  # and not lost either: re-delivered to the
            import _thread  # main thread once this hook has returned
            import threading

            threading.Timer(0.05, _thread.interrupt_main).start()
            return
        previous_hook(args)

    sys.unraisablehook = unraisable
    try:
        opts = parse(argv)
        code, doc = execute(opts)
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        print("adegen: interrupted; nothing half-written was left behind", file=sys.stderr)
        return 130
    except AdegenError as exc:
        error, code = exc.render(), exc.exit_code
    except OSError as exc:  # e.g. a disk that fills up or a directory that turns read-only mid-run
        where = f"{exc.filename}: " if exc.filename else ""
        error, code = f"{where}{exc.strerror or exc}", 1
    except Exception as exc:  # noqa: BLE001 - a bug: one line, the traceback on request
        if get_settings().debug:
            import traceback

            traceback.print_exc()
        error, code = (f"internal error: {type(exc).__name__}: {exc} (re-run with ADEGEN_DEBUG=1 for the "
                       "traceback)"), 1
    else:
        if opts.json:
            print(json.dumps(doc, indent=2, default=str))
        return code
    print(f"adegen: error: {error}", file=sys.stderr)
    if json_mode:
        print(json.dumps({"adegen_version": __version__, "error": error, "exit_code": code}))
    return code


def exit_with(code: int) -> None:
    """sys.exit(code) once main() has returned: the outcome is final, so a Ctrl-C during interpreter
    teardown is ignored (it would end the process by SIGINT, without a message); after a handled
    Ctrl-C exit 130 at once, so an interrupt dbt or Jinja saw first cannot re-kill the process."""
    import os
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if code == 130:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    sys.exit(code)


def cli() -> None:
    """The `adegen` console script: the same command and exit guarantees as `python -m adegen.build`."""
    exit_with(main())


if __name__ == "__main__":
    cli()
