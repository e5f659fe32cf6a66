"""Run dbt (dbt-snowflake) against a fakesnow server as a subprocess with a hard timeout.

Subprocess rather than in-process: the doc's in-process mode patches `snowflake.connector` globally
(fine in a dedicated process, not inside adegen), and a subprocess can always be killed.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from ..errors import DbtError
from .classify import ErrorBlock, UnsupportedMatch, classify_failure
from .errors import EmulatorTimeoutError, EmulatorUnsupportedError

DEFAULT_DBT_TIMEOUT = 600.0


@dataclass
class DbtResult:
    args: list[str]
    returncode: int | None       # None when killed on timeout
    stdout: str
    stderr: str
    duration: float
    timed_out: bool = False
    status: str = "ok"           # "ok" | "failed" | "unsupported" | "timeout"
    unsupported: list[UnsupportedMatch] = field(default_factory=list)
    errors: list[ErrorBlock] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def output(self) -> str:
        return self.stdout + ("\n" + self.stderr if self.stderr else "")

    def summary(self) -> str:
        head = f"dbt {' '.join(self.args)}: {self.status} (rc={self.returncode}, {self.duration:.1f}s)"
        if self.unsupported:
            head += "; unsupported on emulator: " + "; ".join(u.id for u in self.unsupported)
        return head

    def tail(self, n: int = 40) -> str:
        return "\n".join(self.output.rstrip().splitlines()[-n:])

    def raise_for_status(self) -> "DbtResult":
        if self.status == "ok":
            return self
        if self.status == "timeout":
            raise EmulatorTimeoutError(f"{self.summary()}: killed after the timeout\n{self.tail()}")
        if self.status == "unsupported":
            raise EmulatorUnsupportedError(
                f"{self.summary()}\n" + "\n".join(u.render() for u in self.unsupported))
        raise DbtError(f"{self.summary()}\n{self.tail()}")


def dbt_command(python: str | None = None) -> list[str]:
    """dbt through the given (default: current) python, so the same dbt-core/dbt-snowflake are used."""
    return [python or sys.executable, "-c", "import sys; from dbt.cli.main import cli; sys.exit(cli())"]


def dbt_env(profiles_dir: str | Path, *, port: int | None = None, target_path: str | Path | None = None,
            log_path: str | Path | None = None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "DBT_PROFILES_DIR": str(profiles_dir),
        "DBT_FAKESNOW": "1",
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "DBT_USE_COLORS": "false",
        "DBT_PRINTER_WIDTH": "120",
        "PYTHONUNBUFFERED": "1",
    })
    if port is not None:
        env["FAKESNOW_PORT"] = str(port)
    if target_path is not None:
        env["DBT_TARGET_PATH"] = str(target_path)
    if log_path is not None:
        env["DBT_LOG_PATH"] = str(log_path)
    if extra:
        env.update({k: str(v) for k, v in extra.items()})
    return env


def run_dbt(args: Sequence[str], project_dir: str | Path, profiles_dir: str | Path, *,
            timeout: float = DEFAULT_DBT_TIMEOUT, port: int | None = None,
            target_path: str | Path | None = None, log_path: str | Path | None = None,
            env: Mapping[str, str] | None = None, python: str | None = None, check: bool = False) -> DbtResult:
    """Run `dbt <args>` in `project_dir` with `profiles_dir`, killing its process group after `timeout`.

    `target_path` / `log_path` default to dbt's own (inside `project_dir`): pass scratch paths when
    the project dir must stay untouched. `check=True` raises (DbtError, EmulatorUnsupportedError,
    EmulatorTimeoutError) instead of returning a non-ok result."""
    args = [str(a) for a in args]
    project_dir = Path(project_dir)
    cmd = dbt_command(python) + args
    if "--project-dir" not in args and args and args[0] not in ("--version", "-h", "--help"):
        cmd += ["--project-dir", str(project_dir)]
    full_env = dbt_env(profiles_dir, port=port, target_path=target_path, log_path=log_path, extra=env)
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=str(project_dir), env=full_env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        out, err = proc.communicate()
    except BaseException:
        _kill_group(proc)
        proc.communicate()
        raise
    result = DbtResult(args=args, returncode=None if timed_out else proc.returncode, stdout=out or "",
                       stderr=err or "", duration=time.monotonic() - t0, timed_out=timed_out)
    if timed_out:
        result.status = "timeout"
    elif proc.returncode != 0:
        result.status, result.unsupported, result.errors = classify_failure(result.output)
    return result.raise_for_status() if check else result


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the process group we created for this dbt call (start_new_session=True: pgid == pid)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass
