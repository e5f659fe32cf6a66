"""Running dbt: as a subprocess (independent check) or in-process through `dbtRunner` (fast).

In-process calls change the working directory and environment for their duration and are not
thread-safe (dbt-core is not safe for concurrent invocations in one process): use them from one
thread, ideally in a worker process.
"""
from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import time
from pathlib import Path

from .parser import strip_ansi

# variables that would make dbt look somewhere other than the project directory (cwd)
_DROP_ENV = ("DBT_PROFILES_DIR", "DBT_PROJECT_DIR", "DBT_TARGET_PATH", "DBT_LOG_PATH",
             "DBT_TARGET", "DBT_PROFILE", "DBT_STATE", "DBT_DEFER", "DBT_FAVOR_STATE")
QUIET_ENV = {"DBT_SEND_ANONYMOUS_USAGE_STATS": "False", "DO_NOT_TRACK": "1",
             "DBT_USE_COLORS": "False", "DBT_VERSION_CHECK": "False"}


def harness_env(extra: dict | None = None) -> dict:
    """Environment for scripts and dbt subprocesses: the project dir decides profiles and paths."""
    env = {k: v for k, v in os.environ.items() if k not in _DROP_ENV}
    env.update(QUIET_ENV)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env["PYTHONUNBUFFERED"] = "1"
    if extra:
        env.update(extra)
    return env


def run_subprocess(argv: list[str], cwd: Path, *, env: dict | None = None,
                   timeout: float | None = None) -> tuple[int, str, float]:
    """Run a command, stdout+stderr merged (as a terminal pane shows them)."""
    t0 = time.monotonic()
    try:
        proc = subprocess.run(argv, cwd=str(cwd), env=env or harness_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout, stdin=subprocess.DEVNULL)
        out = proc.stdout.decode("utf-8", "replace")
        rc = proc.returncode
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode("utf-8", "replace") + f"\n[adegen] TIMEOUT after {timeout}s\n"
        rc = 124
    return rc, strip_ansi(out), time.monotonic() - t0


def _close_duckdb_env() -> None:
    try:
        from dbt.adapters.duckdb.connections import DuckDBConnectionManager
    except Exception:  # pragma: no cover - adapter missing
        return
    env = DuckDBConnectionManager._ENV
    if env is not None:
        try:
            env.close()
        except Exception:
            pass
    DuckDBConnectionManager._ENV = None


def run_inprocess(args: list[str], cwd: Path, *, env: dict | None = None) -> tuple[bool, str, float, object]:
    """Invoke dbt in this process with cwd = `cwd`; returns (success, console text, seconds, result).

    The console text is dbt's stdout as a terminal shows it (ANSI stripped)."""
    from dbt.cli.main import dbtRunner

    t0 = time.monotonic()
    old_cwd = os.getcwd()
    saved = {k: os.environ.get(k) for k in set(_DROP_ENV) | set(QUIET_ENV) | set(env or {})}
    buf = io.StringIO()
    ok, result = False, None
    try:
        for k in _DROP_ENV:
            os.environ.pop(k, None)
        os.environ.update(QUIET_ENV)
        if env:
            os.environ.update(env)
        os.chdir(cwd)
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            try:
                result = dbtRunner().invoke(list(args))
                ok = bool(result.success)
                if result.exception is not None:
                    print(f"{type(result.exception).__name__}: {result.exception}")
            except BaseException as exc:  # dbt may raise SystemExit or its own errors
                print(f"{type(exc).__name__}: {exc}")
    finally:
        _close_duckdb_env()
        os.chdir(old_cwd)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return ok, strip_ansi(buf.getvalue()), time.monotonic() - t0, result
