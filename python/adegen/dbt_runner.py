"""Run dbt and capture what macros emit: `<<ADEGEN:RESULT:v1>>{json}<</ADEGEN:RESULT:v1>>`.

Two backends return the same `RawRun`:

* in-process (default): `dbtRunner(callbacks=[...]).invoke(args)`, collecting `JinjaLogInfo`
  messages (payloads, summary lines) and error events. stdout logging is switched off
  (`--log-level none`: callbacks still receive every event), so nothing leaks into our stdout.
  dbt is not safe for concurrent invocations in one process: calls are serialised by a lock.
* subprocess: `dbt --log-format json ... ` (no `--quiet`, which would drop JinjaLogInfo), parsing
  stdout line by line. Used when dbt-core cannot be imported or `ADEGEN_DBT_RUNNER=subprocess`.

`capture_payload` applies the strict rule: exactly one marked payload on success, otherwise a
`DbtError` carrying dbt's own error text.
"""
from __future__ import annotations

import json
import contextlib
import os
import re
import signal
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .errors import DbtError

MARKER_RE = re.compile(r"<<ADEGEN:RESULT:v1>>(.*?)<</ADEGEN:RESULT:v1>>", re.DOTALL)
SCHEMA_VERSION = 1
ERROR_EVENTS = {
    "RunningOperationCaughtError",
    "RunningOperationUncaughtError",
    "MainEncounteredError",
    "MainStackTrace",
    "CompilationError",
}
# Always passed: no stdout noise, no file log (the payload would be duplicated there), no network.
COMMON_FLAGS = [
    "--no-send-anonymous-usage-stats",
    "--no-version-check",
    "--no-use-colors",
    "--log-level-file",
    "none",
]

_LOCK = threading.Lock()


@dataclass
class RawRun:
    success: bool
    messages: list[str] = field(default_factory=list)  # JinjaLogInfo texts, in order
    errors: list[str] = field(default_factory=list)  # error-level event texts, in order
    exception: str | None = None  # an exception dbt raised (in-process)
    backend: str = "inprocess"
    tail: list[str] = field(default_factory=list)  # the last event texts, for diagnostics
    result: object = None  # in-process only: dbtRunnerResult.result (e.g. `dbt ls` lines)
    log_lines: list[str] = field(default_factory=list)  # info/warn/error event texts (what dbt prints)

    def error_text(self) -> str:
        # dbt's own Python tracebacks (MainStackTrace) are left out: the message above them says it all
        parts = [e.strip() for e in self.errors
                 if e and e.strip() and not e.lstrip().startswith("Traceback (most recent call last)")]
        # "Encountered an error..." + the same text again as MainEncounteredError: keep unique.
        seen: list[str] = []
        for p in parts:
            if p not in seen:
                seen.append(p)
        if self.exception and not seen:
            seen.append(self.exception)
        if not seen and self.tail:
            seen.append("dbt failed; last output:\n" + "\n".join(self.tail[-15:]))
        return "\n".join(seen) or "dbt failed without an error message"



@contextlib.contextmanager
def _noting_interrupts():
    """Record SIGINTs delivered during the block (main thread only), keeping the usual handler."""
    seen: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return
    previous = signal.getsignal(signal.SIGINT)

    def note(signum, frame):
        seen.append(signum)
        if callable(previous):
            previous(signum, frame)

    signal.signal(signal.SIGINT, note)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGINT, previous)

def backend_name() -> str:
    wanted = os.environ.get("ADEGEN_DBT_RUNNER", "").strip().lower()
    if wanted in ("subprocess", "inprocess"):
        if wanted == "inprocess" and not _dbt_importable():
            return "subprocess"
        return wanted
    return "inprocess" if _dbt_importable() else "subprocess"


def _dbt_importable() -> bool:
    try:
        import dbt.cli.main  # noqa: F401
    except Exception:
        return False
    return True


def run_dbt(args: list[str], *, backend: str | None = None, env: dict[str, str] | None = None,
            timeout: float | None = None) -> RawRun:
    """Run one dbt command (`args` without the leading `dbt`)."""
    backend = backend or backend_name()
    if backend == "subprocess":
        return _run_subprocess(args, env=env, timeout=timeout)
    return _run_inprocess(args, env=env)


def _run_inprocess(args: list[str], *, env: dict[str, str] | None) -> RawRun:
    from dbt.cli.main import dbtRunner

    run = RawRun(success=False, backend="inprocess")

    def callback(event) -> None:
        info = event.info
        msg = info.msg or ""
        if info.name == "JinjaLogInfo":
            run.messages.append(msg)
        elif info.level == "error" or info.name in ERROR_EVENTS:
            run.errors.append(msg)
        if info.level in ("info", "warn", "error"):
            run.log_lines.append(msg)
        run.tail.append(msg)
        if len(run.tail) > 50:
            del run.tail[:25]

    argv = ["--log-level", "none", *COMMON_FLAGS, *args]
    with _LOCK:
        saved = {}
        try:
            for k, v in (env or {}).items():
                saved[k] = os.environ.get(k)
                os.environ[k] = v
            with _noting_interrupts() as interrupted:
                res = dbtRunner(callbacks=[callback]).invoke(argv)
        finally:
            _release_connections()
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    # dbtRunner swallows Ctrl-C, and one landing deep in dbt can surface as an unrelated error:
    # any interrupt during the call is handed back as one.
    if interrupted or isinstance(res.exception, KeyboardInterrupt):
        raise KeyboardInterrupt
    run.success = bool(res.success)
    run.result = res.result
    if res.exception is not None:
        run.exception = f"{type(res.exception).__name__}: {res.exception}"
    return run


def _release_connections() -> None:
    """Close what an in-process invocation left open. dbt-duckdb keeps its database handle in a
    process-wide environment; on a file path (the discovery scratch profile) that would hold
    DuckDB's file lock after the call and block another process using the same scratch copy."""
    try:
        from dbt.adapters.factory import cleanup_connections

        cleanup_connections()
    except Exception:  # noqa: BLE001 - best effort
        pass
    mod = sys.modules.get("dbt.adapters.duckdb.connections")
    mgr = getattr(mod, "DuckDBConnectionManager", None) if mod else None
    if mgr is not None:
        try:
            env = getattr(mgr, "_ENV", None)
            mgr.close_all_connections()
            if env is not None and hasattr(env, "close"):
                env.close()
        except Exception:  # noqa: BLE001
            pass


def dbt_executable() -> list[str]:
    exe = shutil.which("dbt")
    if exe:
        return [exe]
    return [sys.executable, "-c", "from dbt.cli.main import cli; cli()"]


def _run_subprocess(args: list[str], *, env: dict[str, str] | None, timeout: float | None) -> RawRun:
    run = RawRun(success=False, backend="subprocess")
    full_env = dict(os.environ)
    full_env.update(env or {})
    full_env.setdefault("DO_NOT_TRACK", "1")
    cmd = [*dbt_executable(), "--log-format", "json", *COMMON_FLAGS, *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=timeout)
    except FileNotFoundError as e:
        raise DbtError(f"cannot run dbt: {e}") from None
    except subprocess.TimeoutExpired:
        raise DbtError(f"dbt timed out after {timeout}s: {' '.join(args[:2])}") from None
    for line in proc.stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            if line:
                run.tail.append(line)
            continue
        try:
            ev = json.loads(line)
        except ValueError:
            run.tail.append(line)
            continue
        info = ev.get("info") or {}
        msg = info.get("msg") or ""
        name = info.get("name")
        if name == "JinjaLogInfo":
            run.messages.append(msg)
        elif info.get("level") == "error" or name in ERROR_EVENTS:
            run.errors.append(msg)
        if info.get("level") in ("info", "warn", "error"):
            run.log_lines.append(msg)
        run.tail.append(msg)
    if proc.stderr.strip():
        run.tail.extend(proc.stderr.strip().splitlines()[-20:])
        if proc.returncode != 0 and not run.errors:
            run.errors.append(proc.stderr.strip()[-4000:])
    run.success = proc.returncode == 0
    return run


def extract_envelopes(messages: list[str]) -> list[str]:
    """All marked payload strings in the messages (normally exactly one)."""
    out: list[str] = []
    for m in messages:
        out.extend(MARKER_RE.findall(m))
    return out


def capture_payload(run: RawRun, operation: str) -> dict:
    """The payload of the one envelope `operation` emitted; `DbtError` otherwise."""
    if not run.success:
        raise DbtError(f"dbt run-operation {operation} failed:\n{run.error_text()}")
    bodies = extract_envelopes(run.messages)
    if len(bodies) != 1:
        tail = "\n".join(run.tail[-10:])
        raise DbtError(
            f"dbt run-operation {operation}: expected exactly one adegen payload, got {len(bodies)}"
            + (f"; last output:\n{tail}" if tail else "")
        )
    try:
        env = json.loads(bodies[0])
    except ValueError as e:
        raise DbtError(f"dbt run-operation {operation}: payload is not valid JSON: {e}") from None
    if not isinstance(env, dict) or env.get("schema_version") != SCHEMA_VERSION:
        raise DbtError(
            f"dbt run-operation {operation}: unsupported envelope schema_version "
            f"{env.get('schema_version') if isinstance(env, dict) else None!r} (expected {SCHEMA_VERSION}); "
            "the installed adegen dbt package and the Python package differ"
        )
    if env.get("operation") != operation.split(".")[-1]:
        raise DbtError(f"dbt run-operation {operation}: envelope is for {env.get('operation')!r}")
    return env["payload"]


def run_operation(macro: str, macro_args: dict, *, project_dir: Path, profiles_dir: Path,
                  target: str | None = None, target_path: Path | None = None,
                  log_path: Path | None = None, backend: str | None = None,
                  extra_flags: list[str] = ()) -> RawRun:
    args = ["run-operation", macro, "--args", json.dumps(macro_args, separators=(",", ":")),
            "--project-dir", str(project_dir), "--profiles-dir", str(profiles_dir)]
    env = {}
    if target:
        args += ["--target", target]
    if target_path:
        args += ["--target-path", str(target_path)]
        env["DBT_TARGET_PATH"] = str(target_path)
    if log_path:
        args += ["--log-path", str(log_path)]
        env["DBT_LOG_PATH"] = str(log_path)
    args += list(extra_flags)
    return run_dbt(args, backend=backend, env=env)
