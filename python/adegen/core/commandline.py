"""The plumbing every command line entry point shares (`python -m adegen.build`, `python -m
adegen.bulk`): the one error boundary of a command and its exit. Neither entry point imports the
other; both import this."""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
from typing import Any, Callable

from adegen import __version__
from adegen.core.errors import AdegenError, InputError
from adegen.core.settings import get_settings

INTERRUPTED = "adegen: interrupted; nothing half-written was left behind"


def interrupted() -> int:
    """One line for a Ctrl-C, and its exit code."""
    print(INTERRUPTED, file=sys.stderr)
    return 130


def start(module: str) -> None:
    """`python -m` entry of a command whose `main(argv)` lives in `module`: import it and exit with
    its code. A Ctrl-C while the module loads (a second or more on a busy machine) comes before the
    command's own boundary (run_command) and ends the same way: one line, exit 130, no traceback."""
    try:
        code = __import__(module, fromlist=["main"]).main(None)
    except KeyboardInterrupt:
        code = interrupted()
    exit_with(code)


def run_command(argv: list[str] | None, parse: Callable[[list[str] | None], Any],
                execute: Callable[[Any], tuple[int, dict]]) -> int:
    """The one error boundary of a command (the build, bulk mode): `parse(argv)` gives options
    with a `json` flag, `execute(options)` the (exit code, --json document). A problem the user can
    fix ends with one message (`adegen: error: ...`, exit 2 for bad input), Ctrl-C with exit 130
    (unfinished task dirs are removed on the way out), anything unexpected with one line and exit 1
    (`ADEGEN_DEBUG=1` adds the traceback). No traceback otherwise. SIGTERM is handled as Ctrl-C."""
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
    _term_as_interrupt()
    try:
        opts = parse(argv)
        with json_stdout(json_mode):
            code, doc = execute(opts)
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        return interrupted()
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


@contextlib.contextmanager
def json_stdout(active: bool):
    """With --json, stdout carries the JSON document alone: while the run runs, file descriptor 1
    points at stderr, so what writes there below Python (DuckDB prints its progress bar for a
    query over 2 s from C, in this process and in the workers, which inherit the descriptor) cannot
    corrupt it; the document is printed once the real stdout is back."""
    if not active:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


_final = False  # set by exit_with: the run's outcome is decided, a late SIGTERM changes nothing


def _term_as_interrupt() -> None:
    """SIGTERM (what `timeout`, CI runners, systemd and container stops send) ends a run the way
    Ctrl-C does: it is re-sent as SIGINT, so every path that cleans up after a Ctrl-C (temp task
    dirs, work directories, the lock, a dbt call that notes the interrupt and re-raises it after)
    runs, with the same message and exit code. Main thread only (signal handlers live there)."""
    import os
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    owner = os.getpid()

    def interrupt(signum, frame):
        if os.getpid() != owner:  # a forked worker inherited this: SIGTERM ends it as usual
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        if _final:  # teardown (exit_with): the outcome is final
            return
        if callable(signal.getsignal(signal.SIGINT)):
            signal.raise_signal(signal.SIGINT)
        else:  # SIGINT ignored (a script's background job, a test runner's worker): no Ctrl-C handler
            raise KeyboardInterrupt  # to go through, the interrupt is raised here

    signal.signal(signal.SIGTERM, interrupt)


def exit_with(code: int) -> None:
    """sys.exit(code) once main() has returned: the outcome is final, so a Ctrl-C during interpreter
    teardown is ignored (it would end the process by SIGINT, without a message); after a handled
    Ctrl-C exit 130 at once, so an interrupt dbt or Jinja saw first cannot re-kill the process."""
    import os
    import signal

    global _final
    _final = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if code == 130:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    sys.exit(code)


class ArgParser(argparse.ArgumentParser):
    def error(self, message: str):  # pragma: no cover - exercised via main()
        raise InputError(message, field="command line")


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
