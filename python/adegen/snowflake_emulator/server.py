"""A hardened fakesnow HTTP server as a subprocess on 127.0.0.1, always stopped.

    with FakesnowServer(scratch / "fakesnow") as srv:
        profiles_dir = srv.write_profiles(load_project(project_dir))
        srv.run_dbt(["seed"], project_dir, profiles_dir, timeout=120)

The server keeps one shared in-memory DuckDB for its lifetime (dbt cannot choose another store),
so use a distinct `database:` per project, or one server per task; restarting (~0.6 s) is the
cheapest "fresh clone".
"""
from __future__ import annotations

import atexit
import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import warnings
from pathlib import Path
from typing import Any, Sequence

from adegen.sql.quote import bare_or_quoted
from adegen.snowflake_emulator.errors import EmulatorError, EmulatorStartError, EmulatorUnavailableError
from adegen.snowflake_emulator.install import FAKESNOW_VERSION, fakesnow_available
from adegen.snowflake_emulator.profiles import emulator_profiles, write_profiles_yml
from adegen.snowflake_emulator.runner import DEFAULT_DBT_TIMEOUT, DbtResult, run_dbt

LAUNCHER = Path(__file__).resolve().parent / "_fakesnow_launcher.py"
HOST = "127.0.0.1"


def free_port(host: str = HOST) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def port_is_free(port: int, host: str = HOST) -> bool:
    """Whether the server could bind the port (SO_REUSEADDR like uvicorn: TIME_WAIT is free,
    a listening socket is not)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
        return True


class FakesnowServer:
    """The hardened fakesnow launcher run with the current python.

    data_dir: scratch directory for the server log and written profiles (created if missing).
    port: fixed port (must be free) or None for a free one. start_timeout bounds start-up; a server
    that exits, cannot bind or never answers raises EmulatorStartError within it."""

    def __init__(self, data_dir: str | Path, *, port: int | None = None, host: str = HOST,
                 start_timeout: float = 30.0, stop_timeout: float = 5.0, python: str | None = None,
                 launcher: Sequence[str] | None = None, log_level: str = "warning"):
        if host not in ("127.0.0.1", "localhost"):
            raise EmulatorStartError(f"refusing to listen on {host!r}: the emulator is loopback only")
        self.data_dir = Path(data_dir)
        self.host = "127.0.0.1"
        self.requested_port = port
        self.port: int | None = None
        self.start_timeout = float(start_timeout)
        self.stop_timeout = float(stop_timeout)
        self.python = python or sys.executable
        # `launcher` replaces [python, LAUNCHER] (tests simulate broken servers with it); it gets
        # "--host H --port P --log-level L" appended.
        self.launcher = list(launcher) if launcher else None
        self.log_level = log_level
        self.proc: subprocess.Popen | None = None
        self.log_path = self.data_dir / "fakesnow-server.log"
        self.version: str | None = None
        self._log_fh = None
        self._profiles_count = 0

    # -- lifecycle ------------------------------------------------------------------------------
    def __enter__(self) -> "FakesnowServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> "FakesnowServer":
        if self.running:
            return self
        if self.launcher is None and self.python == sys.executable:
            ok, info = fakesnow_available()
            if not ok:
                raise EmulatorUnavailableError(info)
            self.version = info
            if info != FAKESNOW_VERSION:
                warnings.warn(f"fakesnow {info} installed, the emulator launcher is written for "
                              f"{FAKESNOW_VERSION}; results may differ", RuntimeWarning, stacklevel=2)
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            probe = self.data_dir / ".adegen-write-test"
            probe.write_text("")
            probe.unlink()
        except OSError as e:
            raise EmulatorStartError(f"emulator data dir is not a writable directory: {e}",
                                     file=self.data_dir) from e
        attempts = 1 if self.requested_port else 3
        last: EmulatorStartError | None = None
        for _ in range(attempts):
            port = self.requested_port or free_port(self.host)
            if not port_is_free(port, self.host):
                last = EmulatorStartError(f"port {port} on {self.host} is already in use")
                if self.requested_port:
                    raise last
                continue
            try:
                self._spawn_and_wait(port)
                return self
            except EmulatorStartError as e:
                last = e
                if "in use" not in str(e) and "address already" not in str(e).lower():
                    raise
        assert last is not None
        raise last

    def _spawn_and_wait(self, port: int) -> None:
        cmd = (self.launcher or [self.python, str(LAUNCHER)]) + [
            "--host", self.host, "--port", str(port), "--log-level", self.log_level]
        if self.launcher is None:
            cmd += ["--parent-pid", str(os.getpid())]      # the server exits if we die without stop()
        self._log_fh = open(self.log_path, "ab")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        try:
            self.proc = subprocess.Popen(cmd, cwd=str(self.data_dir), stdin=subprocess.DEVNULL,
                                         stdout=self._log_fh, stderr=subprocess.STDOUT, env=env,
                                         start_new_session=True)
        except OSError as e:
            self._close_log()
            raise EmulatorStartError(f"cannot run the fakesnow launcher {cmd[0]}: {e}") from e
        self.port = port
        atexit.register(self.stop)
        deadline = time.monotonic() + self.start_timeout
        while True:
            rc = self.proc.poll()
            if rc is not None:
                tail = self.log_tail()
                self._reap()
                in_use = "address already in use" in tail.lower() or f"errno {errno.EADDRINUSE}" in tail.lower()
                raise EmulatorStartError(
                    (f"port {port} on {self.host} is already in use" if in_use else
                     f"fakesnow server exited during start-up (exit code {rc})")
                    + f"; log {self.log_path}:\n{tail}")
            health = self._health(timeout=1.0)
            if health is not None:
                if health.get("pid") not in (None, self.proc.pid) and self.launcher is None:
                    self.stop()
                    raise EmulatorStartError(f"port {port} answered for another process "
                                             f"(pid {health.get('pid')}), not the server started here")
                self.version = health.get("fakesnow") or self.version
                return
            if time.monotonic() > deadline:
                tail = self.log_tail()
                self.stop()
                raise EmulatorStartError(f"fakesnow server did not become ready on {self.host}:{port} "
                                         f"within {self.start_timeout:.0f}s; log {self.log_path}:\n{tail}")
            time.sleep(0.1)

    def _health(self, timeout: float) -> dict | None:
        try:
            with urllib.request.urlopen(f"{self.url}/adegen/health", timeout=timeout) as resp:
                return json.loads(resp.read() or b"{}")
        except urllib.error.HTTPError:
            return {}          # something answers HTTP (a launcher without the health route)
        except (OSError, ValueError):
            return None

    def stop(self) -> None:
        """SIGTERM the server's process group, SIGKILL it after stop_timeout. Idempotent."""
        try:
            atexit.unregister(self.stop)
        except Exception:
            pass
        proc = self.proc
        if proc is not None and proc.poll() is None:
            self._signal(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                self._signal(proc, signal.SIGKILL)
                try:
                    proc.wait(timeout=self.stop_timeout)
                except subprocess.TimeoutExpired:
                    pass
        if proc is not None:
            # the group may still hold children (a launcher script's python): kill whatever is left
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError, OSError):
                pass
        self._reap()

    def _reap(self) -> None:
        if self.proc is not None:
            try:
                self.proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
        self._close_log()

    @staticmethod
    def _signal(proc: subprocess.Popen, sig: int) -> None:
        try:
            os.killpg(proc.pid, sig)     # start_new_session=True: pgid == pid, only our processes
        except (ProcessLookupError, PermissionError, OSError):
            try:
                proc.send_signal(sig)
            except ProcessLookupError:
                pass

    def _close_log(self) -> None:
        if self._log_fh is not None:
            try:
                self._log_fh.close()
            finally:
                self._log_fh = None

    def log_tail(self, n: int = 30) -> str:
        try:
            lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-n:])

    def _require_running(self) -> None:
        if not self.running:
            raise EmulatorError("the fakesnow server is not running"
                                + (f"; log {self.log_path}:\n{self.log_tail()}" if self.proc else ""))

    # -- projects -------------------------------------------------------------------------------
    def write_profiles(self, project: Any, *, out_dir: str | Path | None = None, database: str | None = None,
                       schema: str | None = None, threads: int | None = None) -> Path:
        """Write a profiles.yml with the project's profile/target pointed at this server.

        `project`: a loaded project (ProjectInfo or alike). Database/schema are the project's
        unless overridden. Returns the directory to pass as --profiles-dir / DBT_PROFILES_DIR."""
        self._require_running()
        content = emulator_profiles(project, host=self.host, port=self.port, database=database, schema=schema,
                                    threads=threads)
        if out_dir is None:
            self._profiles_count += 1
            out_dir = self.data_dir / f"profiles-{self._profiles_count}"
        return write_profiles_yml(content, out_dir)

    def run_dbt(self, args: Sequence[str], project_dir: str | Path, profiles_dir: str | Path, *,
                timeout: float = DEFAULT_DBT_TIMEOUT, **kw) -> DbtResult:
        self._require_running()
        return run_dbt(args, project_dir, profiles_dir, timeout=timeout, port=self.port, **kw)

    def seed(self, project_dir: str | Path, profiles_dir: str | Path, *, timeout: float = DEFAULT_DBT_TIMEOUT,
             **kw) -> DbtResult:
        """Load the project's raw data with `dbt seed` (raises on failure)."""
        return self.run_dbt(["seed"], project_dir, profiles_dir, timeout=timeout, check=True, **kw)

    # -- data -----------------------------------------------------------------------------------
    def load_duckdb(self, path: str | Path, *, database: str, schemas: dict[str, str] | None = None,
                    upper: bool = True, timeout: float = 300.0) -> list[dict]:
        """Copy every table of a DuckDB file, table by table, into DATABASE.<schema> on the server.

        `schemas` maps source schemas to target schemas (default {"main": "PUBLIC"}); tables of
        other schemas are skipped. Names are upper-cased (Snowflake unquoted identifiers) unless
        `upper=False`. Returns [{source, table, rows, columns}]."""
        self._require_running()
        path = Path(path).resolve()
        if not path.is_file():
            raise EmulatorError("DuckDB data file not found", file=path)
        body = json.dumps({"path": str(path), "database": database,
                           "schemas": schemas or {"main": "PUBLIC"}, "upper": upper}).encode()
        req = urllib.request.Request(f"{self.url}/adegen/load-duckdb", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                answer = json.loads(resp.read())
        except (OSError, ValueError) as e:
            raise EmulatorError(f"loading {path} into the emulator failed: {e}") from e
        if not answer.get("ok"):
            raise EmulatorError(f"loading into the emulator failed: {answer.get('error')}", file=path)
        return answer["tables"]

    def connect(self, database: str | None = None, schema: str | None = None, **kw):
        """A snowflake.connector connection to this server (dummy credentials)."""
        self._require_running()
        import snowflake.connector

        return snowflake.connector.connect(
            account="fakesnow", user="fakesnow", password="fakesnow", host=self.host, port=self.port,
            protocol="http", database=database, schema=schema, network_timeout=60, login_timeout=30, **kw)

    def clone_database(self, src: str, dst: str) -> list[str]:
        """Table-by-table clone (CREATE DATABASE ... CLONE is silently empty on fakesnow).

        Views are not copied (fakesnow omits them from information_schema.tables): rebuild them
        with dbt. Returns the tables copied, as SCHEMA.TABLE."""
        copied: list[str] = []
        conn = self.connect()
        try:
            cur = conn.cursor()
            name = bare_or_quoted
            cur.execute(f"create database if not exists {name(dst)}")
            cur.execute(f"select table_schema, table_name, table_type from {name(src)}.information_schema.tables "
                        "where table_schema <> 'INFORMATION_SCHEMA' order by 1, 2")
            for schema, table, ttype in cur.fetchall():
                cur.execute(f"create schema if not exists {name(dst)}.{name(schema)}")
                if ttype == "BASE TABLE":
                    cur.execute(f"create or replace table {name(dst)}.{name(schema)}.{name(table)} "
                                f"clone {name(src)}.{name(schema)}.{name(table)}")
                    copied.append(f"{schema}.{table}")
        finally:
            conn.close()
        return copied


