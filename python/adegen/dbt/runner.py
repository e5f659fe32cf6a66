"""Running dbt: one `DbtRunner` interface, two backends, one result type (`DbtResult`).

* `InProcessRunner` (default when dbt-core imports): `dbtRunner(callbacks=[...]).invoke(args)` in
  this process, warm after the first call. dbt is not safe for concurrent invocations in one
  process, so calls are serialised by a lock. The console text is dbt's stdout captured while it
  runs (`--log-level none` when the caller wants no console). A timeout cannot stop Python code,
  so at the deadline the runner cancels the adapter's open queries (DuckDB `interrupt()`, what
  dbt does on Ctrl-C) until dbt returns; callers that need a hard stop run dbt in a process they
  can kill (the validator's worker pool does).
* `SubprocessRunner`: `python -c "from dbt.cli.main import cli"` with the same interpreter (so the
  same dbt and adapters), in its own process group, killed at the timeout. `console=False` runs
  with `--log-format json` and collects the same messages/errors as the in-process callbacks.

`make_runner(backend)` picks one (`ADEGEN_DBT_RUNNER=subprocess|inprocess` overrides the default);
`run_dbt(args, ...)` and `run_operation(...)` are the short forms.

`project_env=True` runs dbt the way a user in the project directory would (the harness): the
variables that make dbt look elsewhere (DBT_PROFILES_DIR, DBT_TARGET_PATH, ...) are dropped, so the
project directory (cwd) decides.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from adegen.core.errors import DbtError
from adegen.core.settings import get_settings
from adegen.dbt.result import FAILED, OK, TIMEOUT, DbtResult, NodeStatus, strip_ansi

ERROR_EVENTS = {"RunningOperationCaughtError", "RunningOperationUncaughtError", "MainEncounteredError",
                "MainStackTrace", "CompilationError"}
# Always passed: no colours, no file log (payloads would be duplicated there), no network.
COMMON_FLAGS = ["--no-send-anonymous-usage-stats", "--no-version-check", "--no-use-colors",
                "--log-level-file", "none"]
# variables that would make dbt look somewhere other than the project directory (cwd)
PROJECT_ENV_DROP = ("DBT_PROFILES_DIR", "DBT_PROJECT_DIR", "DBT_TARGET_PATH", "DBT_LOG_PATH",
                    "DBT_TARGET", "DBT_PROFILE", "DBT_STATE", "DBT_DEFER", "DBT_FAVOR_STATE")
QUIET_ENV = {"DBT_SEND_ANONYMOUS_USAGE_STATS": "False", "DO_NOT_TRACK": "1",
             "DBT_USE_COLORS": "False", "DBT_VERSION_CHECK": "False"}
# in-process calls whose artifacts nobody reads: no manifest.json / run_results.json (about 40% of
# a small call); partial parsing is unaffected
NO_ARTIFACTS = {"DBT_WRITE_JSON": "False"}
CANCEL_EVERY = 0.5  # seconds between query cancellations after an in-process timeout

_LOCK = threading.Lock()


@dataclass
class DbtCall:
    """One dbt invocation: `args` without the leading `dbt`."""

    args: list[str]
    cwd: Path | None = None            # working directory (in-process: chdir for the call)
    env: dict[str, str] = field(default_factory=dict)   # added to the environment for the call
    timeout: float | None = None       # seconds; see the module docstring for in-process
    console: bool = True               # capture the console text (False: only events)
    project_env: bool = False          # drop PROJECT_ENV_DROP: the project dir (cwd) decides
    merge_stderr: bool = True          # subprocess: stderr into the console, as a terminal shows


def harness_env(extra: dict | None = None) -> dict:
    """Environment for scripts and dbt subprocesses run the way a user in the project would:
    the project dir decides profiles and paths, this interpreter's dbt comes first on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in PROJECT_ENV_DROP}
    env.update(QUIET_ENV)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONUNBUFFERED"] = "1"
    if extra:
        env.update(extra)
    return env


def dbt_command() -> list[str]:
    """dbt through this interpreter, so the same dbt-core and adapters are used."""
    return [sys.executable, "-c", "import sys; from dbt.cli.main import cli; sys.exit(cli())"]


TIMEOUT_MARK = "[adegen] dbt timed out"


def write_dbt_shim(bin_dir: Path, *, deps_store: Path | None = None, timeout_var: str | None = None) -> Path:
    """A `dbt` executable for task scripts, to put first on PATH: this interpreter's dbt. With
    `deps_store`, `dbt deps` stands in offline with that project's installed packages
    (`adegen.dbt.packages.install_offline`); with `timeout_var`, every call runs under coreutils
    `timeout ${timeout_var:-600}` and prints TIMEOUT_MARK when killed."""
    import shlex

    bin_dir = Path(bin_dir)
    bin_dir.mkdir(parents=True, exist_ok=True)
    py = shlex.quote(sys.executable)
    lines = ["#!/bin/bash", "# adegen: dbt for task scripts (see adegen.dbt.runner.write_dbt_shim)"]
    if deps_store is not None:
        pkg_parent = shlex.quote(str(Path(__file__).resolve().parents[2]))
        lines += ['sub=""; for a in "$@"; do case "$a" in -*) ;; *) sub="$a"; break;; esac; done',
                  'if [ "$sub" = "deps" ]; then',
                  f'  PYTHONPATH={pkg_parent}${{PYTHONPATH:+:$PYTHONPATH}} exec {py} -c '
                  '"import sys; from adegen.dbt.packages import _main; sys.exit(_main(sys.argv[1:]))" '
                  + shlex.quote(str(deps_store)), "fi"]
    run = f'{py} -c "import sys; from dbt.cli.main import cli; sys.exit(cli())" "$@"'
    if timeout_var:
        lines += [f'T="${{{timeout_var}:-600}}"', f'timeout -k 10 "$T" {run}', "rc=$?",
                  f'if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then echo "{TIMEOUT_MARK} after ${{T}}s: dbt $*"; fi',
                  "exit $rc"]
    else:
        lines.append(f"exec {run}")
    shim = bin_dir / "dbt"
    shim.write_text("\n".join(lines) + "\n")
    shim.chmod(0o755)
    return shim


def run_process(argv: list[str], cwd: Path, *, env: dict | None = None, timeout: float | None = None
                ) -> tuple[int, str, float]:
    """Any command (bash scripts of a task), stdout+stderr merged as a terminal pane shows them,
    in its own process group killed at the timeout: (exit code, text, seconds); 124 = timeout."""
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, cwd=str(cwd), env=env or harness_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        rc = proc.returncode
        text = out.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, _ = proc.communicate()
        text = (out or b"").decode("utf-8", "replace") + f"\n[adegen] TIMEOUT after {timeout}s\n"
        rc = 124
    except BaseException:
        _kill_group(proc)
        proc.communicate()
        raise
    return rc, strip_ansi(text), time.monotonic() - t0


class DbtRunner:
    """The interface: `run(call) -> DbtResult`."""

    backend = ""

    def run(self, call: DbtCall) -> DbtResult:  # pragma: no cover - interface
        raise NotImplementedError


def _environment(call: DbtCall) -> dict[str, str]:
    base = harness_env() if call.project_env else dict(os.environ)
    base.update(call.env or {})
    base.setdefault("DO_NOT_TRACK", "1")
    return base


# ----------------------------------------------------------------------------- in-process

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


@contextlib.contextmanager
def _process_state(call: DbtCall):
    """os.environ and cwd as the call wants them, restored afterwards."""
    wanted = _environment(call)
    # only the keys that change are touched (other threads keep reading the environment)
    saved = {k: os.environ.get(k) for k in set(wanted) | set(os.environ)
             if os.environ.get(k) != wanted.get(k)}
    old_cwd = os.getcwd()
    try:
        for k in saved:
            if k in wanted:
                os.environ[k] = wanted[k]
            else:
                os.environ.pop(k, None)
        if call.cwd is not None:
            os.chdir(call.cwd)
        yield
    finally:
        os.chdir(old_cwd)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def cancel_open_queries() -> None:
    """What dbt does on Ctrl-C: cancel every adapter's running queries (DuckDB: interrupt())."""
    try:
        from dbt.adapters.factory import FACTORY
    except Exception:  # noqa: BLE001 - dbt not importable
        return
    for adapter in list(getattr(FACTORY, "adapters", {}).values()):
        with contextlib.suppress(Exception):
            adapter.cancel_open_connections()


class _Watchdog:
    """After `timeout` seconds, cancel open queries every CANCEL_EVERY seconds until stopped."""

    def __init__(self, timeout: float | None):
        self.fired = False
        self._stop = threading.Event()
        self._thread = None
        if timeout:
            self._thread = threading.Thread(target=self._run, args=(timeout,), daemon=True)
            self._thread.start()

    def _run(self, timeout: float) -> None:
        if self._stop.wait(timeout):
            return
        self.fired = True
        while not self._stop.is_set():
            cancel_open_queries()
            self._stop.wait(CANCEL_EVERY)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def release_connections() -> None:
    """Close what an in-process invocation left open. dbt-duckdb keeps its database handle in a
    process-wide environment; on a file that would hold DuckDB's file lock after the call and block
    another process (or the next copy of the file) from using it."""
    with contextlib.suppress(Exception):
        from dbt.adapters.factory import cleanup_connections

        cleanup_connections()
    mod = sys.modules.get("dbt.adapters.duckdb.connections")
    mgr = getattr(mod, "DuckDBConnectionManager", None) if mod else None
    if mgr is not None:
        with contextlib.suppress(Exception):
            mgr.close_all_connections()
        env = getattr(mgr, "_ENV", None)
        if env is not None:
            with contextlib.suppress(Exception):
                env.close()
            mgr._ENV = None


def node_statuses(result) -> dict[str, NodeStatus]:
    """{unique_id: NodeStatus} from a dbtRunner result (what run_results.json holds)."""
    out: dict[str, NodeStatus] = {}
    for r in getattr(getattr(result, "result", None), "results", None) or []:
        try:
            st = getattr(r.status, "value", r.status)
            out[r.node.unique_id] = NodeStatus(str(st), r.message, float(r.execution_time or 0.0))
        except AttributeError:
            continue
    return out


class InProcessRunner(DbtRunner):
    backend = "inprocess"

    def run(self, call: DbtCall) -> DbtResult:
        from dbt.cli.main import dbtRunner

        res = DbtResult(args=list(call.args), backend=self.backend)

        def on_event(event) -> None:
            info = event.info
            msg = info.msg or ""
            if info.name == "JinjaLogInfo":
                res.messages.append(msg)
            elif info.level == "error" or info.name in ERROR_EVENTS:
                res.errors.append(msg)
            if info.level in ("info", "warn", "error"):
                res.log_lines.append(msg)

        argv = ([] if call.console else ["--log-level", "none"]) + COMMON_FLAGS + list(call.args)
        buf = io.StringIO()
        t0 = time.monotonic()
        outcome = exc = None
        with _LOCK:
            watchdog = _Watchdog(call.timeout)
            try:
                with _process_state(call), _noting_interrupts() as interrupted, \
                        contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                    try:
                        outcome = dbtRunner(callbacks=[on_event]).invoke(argv)
                    except KeyboardInterrupt:
                        raise
                    except BaseException as e:  # noqa: BLE001 - dbt may raise SystemExit or its own
                        exc = e
            finally:
                watchdog.stop()
                release_connections()
        # dbtRunner swallows Ctrl-C, and one landing deep in dbt can surface as an unrelated error:
        # any interrupt during the call is handed back as one.
        if interrupted or (outcome is not None and isinstance(outcome.exception, KeyboardInterrupt)):
            raise KeyboardInterrupt
        res.seconds = time.monotonic() - t0
        if outcome is not None:
            res.success = bool(outcome.success)
            res.result = outcome.result
            res.nodes = node_statuses(outcome)
            exc = exc or outcome.exception
        if exc is not None:
            res.exception = f"{type(exc).__name__}: {exc}"
            print(res.exception, file=buf)
        res.console = strip_ansi(buf.getvalue())
        res.returncode = 0 if res.success else 1
        res.status = TIMEOUT if watchdog.fired else (OK if res.success else FAILED)
        if watchdog.fired:
            res.success = False
            res.console += f"\n[adegen] TIMEOUT after {call.timeout:.0f}s: the running queries were cancelled\n"
        return res


# ----------------------------------------------------------------------------- subprocess

def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the process group of `proc` (start_new_session=True: pgid == pid)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


def _parse_json_log(stdout: str, res: DbtResult) -> None:
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            if line:
                res.log_lines.append(line)
            continue
        try:
            ev = json.loads(line)
        except ValueError:
            res.log_lines.append(line)
            continue
        info = ev.get("info") or {}
        msg = info.get("msg") or ""
        name = info.get("name")
        if name == "JinjaLogInfo":
            res.messages.append(msg)
        elif info.get("level") == "error" or name in ERROR_EVENTS:
            res.errors.append(msg)
        if info.get("level") in ("info", "warn", "error"):
            res.log_lines.append(msg)
        rr = (ev.get("data") or {}).get("run_result") or {}
        uid = ((ev.get("data") or {}).get("node_info") or {}).get("unique_id")
        if name == "NodeFinished" and uid and rr.get("status"):
            res.nodes[uid] = NodeStatus(str(rr["status"]), rr.get("message"),
                                        float(rr.get("execution_time") or 0.0))


class SubprocessRunner(DbtRunner):
    backend = "subprocess"

    def run(self, call: DbtCall) -> DbtResult:
        res = DbtResult(args=list(call.args), backend=self.backend)
        fmt = [] if call.console else ["--log-format", "json"]
        cmd = [*dbt_command(), *fmt, *COMMON_FLAGS, *call.args]
        t0 = time.monotonic()
        try:
            proc = subprocess.Popen(
                cmd, cwd=str(call.cwd) if call.cwd else None, env=_environment(call),
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT if call.merge_stderr else subprocess.PIPE,
                stdin=subprocess.DEVNULL, text=True, errors="replace", start_new_session=True)
        except OSError as e:
            raise DbtError(f"cannot run dbt: {e}") from None
        try:
            out, err = proc.communicate(timeout=call.timeout)
            res.returncode = proc.returncode
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, err = proc.communicate()
            res.status = TIMEOUT
        except BaseException:
            _kill_group(proc)
            proc.communicate()
            raise
        res.seconds = time.monotonic() - t0
        out, err = out or "", err or ""
        if call.console:
            res.console = strip_ansi(out)
            res.errors.extend(ln for ln in res.console.splitlines() if "Error" in ln and ln.strip())
        else:
            _parse_json_log(out, res)
            res.console = "\n".join(res.log_lines)
        res.stderr = strip_ansi(err)
        if res.status == TIMEOUT:
            res.console += f"\n[adegen] TIMEOUT after {call.timeout}s\n"
            return res
        res.success = proc.returncode == 0
        res.status = OK if res.success else FAILED
        if not res.success and not res.errors and res.stderr.strip():
            res.errors.append(res.stderr.strip()[-4000:])
        return res


# ----------------------------------------------------------------------------- factory

def _dbt_importable() -> bool:
    try:
        import dbt.cli.main  # noqa: F401
    except Exception:  # noqa: BLE001
        return False
    return True


def backend_name(wanted: str | None = None) -> str:
    wanted = (wanted or get_settings().dbt_runner).strip().lower()
    if wanted == "subprocess":
        return "subprocess"
    return "inprocess" if _dbt_importable() else "subprocess"


def make_runner(backend: str | None = None) -> DbtRunner:
    """The runner for `backend` ("inprocess" | "subprocess"; default: in-process when dbt-core
    imports, `ADEGEN_DBT_RUNNER` overrides)."""
    return SubprocessRunner() if backend_name(backend) == "subprocess" else InProcessRunner()


def run_dbt(args: list[str], *, backend: str | None = None, **call) -> DbtResult:
    """One dbt command; keyword arguments are `DbtCall` fields."""
    return make_runner(backend).run(DbtCall(list(args), **call))


@dataclass(frozen=True)
class DbtDirs:
    """Where a dbt command runs: the project, the directory of its profiles.yml, the target (None:
    the profile's default) and the (target, log) directories (None: dbt's, inside the project)."""

    project_dir: Path
    profiles_dir: Path
    target: str | None = None
    paths: tuple[Path, Path] | None = None


def run_operation(macro: str, macro_args: dict, dirs: DbtDirs, *, backend: str | None = None,
                  extra_flags: list[str] = ()) -> DbtResult:
    """`dbt run-operation macro --args ...` without console text, in `dirs`."""
    args = ["run-operation", macro, "--args", json.dumps(macro_args, separators=(",", ":")),
            "--project-dir", str(dirs.project_dir), "--profiles-dir", str(dirs.profiles_dir)]
    env = {}
    if dirs.target:
        args += ["--target", dirs.target]
    if dirs.paths:
        target_path, log_path = dirs.paths
        args += ["--target-path", str(target_path), "--log-path", str(log_path)]
        env = {"DBT_TARGET_PATH": str(target_path), "DBT_LOG_PATH": str(log_path)}
    args += list(extra_flags)
    return run_dbt(args, backend=backend, env=env, console=False)
