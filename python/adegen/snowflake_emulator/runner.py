"""Run dbt (dbt-snowflake) against a fakesnow server: a subprocess of the shared dbt layer with a
hard timeout, its failure classified (real error or a fakesnow gap).

Subprocess rather than in-process: the doc's in-process mode patches `snowflake.connector` globally
(fine in a dedicated process, not inside adegen), and a subprocess can always be killed.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from adegen.dbt import DbtCall, DbtResult, SubprocessRunner
from adegen.dbt.result import FAILED, TIMEOUT
from adegen.core.errors import DbtError
from adegen.snowflake_emulator.classify import classify_failure
from adegen.snowflake_emulator.errors import EmulatorTimeoutError, EmulatorUnsupportedError

DEFAULT_DBT_TIMEOUT = 600.0


def dbt_env(profiles_dir: str | Path, *, port: int | None = None, target_path: str | Path | None = None,
            log_path: str | Path | None = None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables an emulator dbt call adds to the environment."""
    env = {"DBT_PROFILES_DIR": str(profiles_dir), "DBT_FAKESNOW": "1",
           "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DBT_USE_COLORS": "false",
           "DBT_PRINTER_WIDTH": "120", "PYTHONUNBUFFERED": "1"}
    if port is not None:
        env["FAKESNOW_PORT"] = str(port)
    if target_path is not None:
        env["DBT_TARGET_PATH"] = str(target_path)
    if log_path is not None:
        env["DBT_LOG_PATH"] = str(log_path)
    if extra:
        env.update({k: str(v) for k, v in extra.items()})
    return env


def raise_for_status(result: DbtResult) -> DbtResult:
    """The result when ok, else DbtError / EmulatorUnsupportedError / EmulatorTimeoutError."""
    if result.ok:
        return result
    if result.status == TIMEOUT:
        raise EmulatorTimeoutError(f"{result.summary()}: killed after the timeout\n{result.tail()}")
    if result.status == "unsupported":
        raise EmulatorUnsupportedError(f"{result.summary()}\n" + "\n".join(u.render() for u in result.unsupported))
    raise DbtError(f"{result.summary()}\n{result.tail()}")


def run_dbt(args: Sequence[str], project_dir: str | Path, profiles_dir: str | Path, *,
            timeout: float = DEFAULT_DBT_TIMEOUT, port: int | None = None,
            target_path: str | Path | None = None, log_path: str | Path | None = None,
            env: Mapping[str, str] | None = None, check: bool = False) -> DbtResult:
    """Run `dbt <args>` in `project_dir` with `profiles_dir`, killing its process group after `timeout`.

    `target_path` / `log_path` default to dbt's own (inside `project_dir`): pass scratch paths when
    the project dir must stay untouched. A failure is classified: `status` "unsupported" when every
    error is a known fakesnow gap (`unsupported` lists them), else "failed". `check=True` raises
    (DbtError, EmulatorUnsupportedError, EmulatorTimeoutError) instead of returning a non-ok result."""
    args = [str(a) for a in args]
    project_dir = Path(project_dir)
    if "--project-dir" not in args and args and args[0] not in ("--version", "-h", "--help"):
        args += ["--project-dir", str(project_dir)]
    call = DbtCall(args, cwd=project_dir, timeout=timeout, merge_stderr=False,
                   env=dbt_env(profiles_dir, port=port, target_path=target_path, log_path=log_path, extra=env))
    result = SubprocessRunner().run(call)
    if result.status == FAILED:
        result.status, result.unsupported, result.error_blocks = classify_failure(result.output)
    return raise_for_status(result) if check else result


__all__ = ["DEFAULT_DBT_TIMEOUT", "DbtResult", "dbt_env", "raise_for_status", "run_dbt"]
