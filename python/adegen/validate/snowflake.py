"""Execution validation of Snowflake projects on the local fakesnow emulator (`--emulate-snowflake`).

`EmulatorValidator` has the public API of `adegen.validate.Validator` (architecture.md, "Build <->
validation contract") but runs dbt-snowflake against hardened fakesnow servers
(`adegen.emulator.FakesnowServer`, 127.0.0.1 only, pinned fakesnow version):

- baseline: one long-lived server; a scratch copy of the project (+ compat macros) with a scratch
  profile pointed at it; raw data from `dbt seed` or a supplied DuckDB data file; `dbt run`; every
  model relation exported (Snowflake connector -> Arrow) into a local DuckDB snapshot.
- screen: a per-screen database on the baseline server holding table copies of the intact build,
  `dbt run --select <model>+` on the mutant, the rebuilt relations exported and compared with the
  snapshot by the same oracle as on DuckDB (`validate.oracle`).
- prove: ade-bench has no `--seed` export for Snowflake, so the solution seeds are written by us
  from the emulator's intact build (CSV + `_no-op.txt` in ade-bench's format, Snowflake column
  types); then the harness emulation (`adegen.harness`, `--db-type=snowflake`, bash + dbt
  subprocesses) runs agent none and agent sage, each on a fresh server; the sage state is compared
  with the intact build (determinism). Every dbt call runs through a `dbt` shim with a hard
  `timeout`; every server is stopped (finally/close/atexit/parent watchdog).

Results say "proven on emulator", never "proven on Snowflake": fakesnow is more permissive than
Snowflake and a few functions return other types (shared/docs/fakesnow.md). A run that hits a
feature the emulator cannot run (`adegen.emulator.classify`) is reported "unproven: ..." with the
reason; it never raises.
"""
from __future__ import annotations

import json
import math
import re
import shutil
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterable


from ..errors import AdegenError, InputError
from ..harness.seeds import check_table, export_solution_seeds, no_op_text
from ..harness.testgen import TaskSpec, check_test_names
from . import oracle
from .taskyaml import update_task_yaml
from .validator import DEFAULT_TEST_TIMEOUT, Observation, Proof, _existing_excludes, _ordered_union
from .worker import choose_compared, descendants, manifest_facts

EMULATOR_LABEL = "proven on emulator"
DEFAULT_DBT_TIMEOUT = 600.0
_TIMEOUT_MARK = "[adegen] dbt timed out"
_SEMI_STRUCTURED = ("VARIANT", "OBJECT", "ARRAY")


def _sf_ident(name: str) -> str:
    """A Snowflake identifier: unquoted (upper-cased by Snowflake) when plain, else quoted."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$]*", name):
        return name.upper()
    return '"' + name.replace('"', '""') + '"'


def _sf_type(field) -> str:
    """Snowflake column type of a connector Arrow field (for `_no-op.txt`)."""
    import pyarrow as pa

    meta = {k.decode(): v.decode() for k, v in (field.metadata or {}).items()}
    logical = meta.get("logicalType", "").upper()
    t = field.type
    if logical in _SEMI_STRUCTURED:
        return "varchar"      # compared as text; excluded from the equality test (see prove)
    if logical == "FIXED" or pa.types.is_integer(t) or pa.types.is_decimal(t):
        p = int(meta.get("precision") or getattr(t, "precision", 38) or 38)
        s = int(meta.get("scale") or getattr(t, "scale", 0) or 0)
        return f"number({p},{s})"
    if logical == "REAL" or pa.types.is_floating(t):
        return "float"
    if logical == "BOOLEAN" or pa.types.is_boolean(t):
        return "boolean"
    if logical == "DATE" or pa.types.is_date(t):
        return "date"
    if logical.startswith("TIMESTAMP"):
        return logical.lower()
    if pa.types.is_timestamp(t):
        return "timestamp_tz" if t.tz else "timestamp_ntz"
    if logical == "TIME" or pa.types.is_time(t):
        return "time"
    if logical == "BINARY" or pa.types.is_binary(t):
        return "binary"
    return "varchar"


def _dbt_shim(bin_dir: Path) -> Path:
    """A `dbt` executable that runs this python's dbt under a hard `timeout` (ADEGEN_DBT_TIMEOUT)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    shim = bin_dir / "dbt"
    py = sys.executable
    shim.write_text(
        "#!/bin/bash\n"
        "# adegen: dbt with a hard timeout for emulator proofs\n"
        "T=\"${ADEGEN_DBT_TIMEOUT:-600}\"\n"
        f"timeout -k 10 \"$T\" '{py}' -c 'import sys; from dbt.cli.main import cli; sys.exit(cli())' \"$@\"\n"
        "rc=$?\n"
        f"if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then echo \"{_TIMEOUT_MARK} after ${{T}}s: dbt $*\"; fi\n"
        "exit $rc\n")
    shim.chmod(0o755)
    return shim


def _drop_adegen_package(app: Path) -> None:
    """Remove adegen itself (a `local:` package, made absolute by emulator.copy_project) from the
    scratch copy's packages.yml / dependencies.yml, like output.copy_project does for tasks."""
    import yaml

    from ..paths import package_root

    root = Path(package_root()).resolve()
    for fname in ("packages.yml", "dependencies.yml"):
        f = app / fname
        if not f.is_file():
            continue
        data = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
        pkgs = data.get("packages") if isinstance(data, dict) else None
        if not isinstance(pkgs, list):
            continue
        kept = [e for e in pkgs if not (isinstance(e, dict) and isinstance(e.get("local"), str)
                                        and "{{" not in e["local"] and Path(e["local"]).resolve() == root)]
        if len(kept) == len(pkgs):
            continue
        if kept or set(data) - {"packages"}:
            data["packages"] = kept
            f.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        else:
            f.unlink()


class EmulatorValidator:
    """Validator for Snowflake projects on fakesnow; same public API as `Validator`.

    data_file: a DuckDB file holding the raw data (tables of schema `main` are loaded into the
    project's database/schema); without it the raw data must come from the project's seeds."""

    def __init__(self, project, *, workdir: Path, data_file: Path | None = None, jobs: int = 2,
                 progress: Callable[[str], None] | None = None, dbt_timeout: float = DEFAULT_DBT_TIMEOUT,
                 server_factory=None, prove_mode: str = "inprocess", **_ignored):
        from ..emulator import FakesnowServer

        self.project = project
        self.root = Path(workdir).resolve() / "adegen-validate-snowflake"
        self.root.mkdir(parents=True, exist_ok=True)
        self.data_file = Path(data_file).resolve() if data_file else None
        self.jobs = max(1, int(jobs))
        self.progress = progress or (lambda msg: None)
        self.dbt_timeout = float(dbt_timeout)
        self.prove_mode = prove_mode
        self._server_factory = server_factory or FakesnowServer
        self._servers: list = []
        self._servers_lock = threading.Lock()
        self._base: dict | None = None
        self._base_srv = None
        self._base_lock = threading.Lock()
        self._conn_lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._slots: list[int] = list(range(self.jobs))
        self._slot_cv = threading.Condition()
        self._n = 0

    # ------------------------------------------------------------------ plumbing
    @property
    def database(self) -> str:
        return str(self.project.target_config.get("database") or self.project.db_name)

    @property
    def schema(self) -> str:
        return str(self.project.target_config.get("schema") or self.project.schema)

    def pool(self) -> ThreadPoolExecutor:
        """Threads only: every dbt call is a subprocess, so nothing forks this process."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="adegen-sf")
        return self._pool

    def _start_server(self, name: str):
        with self._servers_lock:
            self._n += 1
            srv = self._server_factory(self.root / "servers" / f"{name}-{self._n}")
            self._servers.append(srv)
        srv.start()
        return srv

    def _stop_server(self, srv) -> None:
        try:
            srv.stop()
        finally:
            with self._servers_lock:
                if srv in self._servers:
                    self._servers.remove(srv)

    def close(self) -> None:
        """Stops every server this validator started (idempotent, also after failures)."""
        with self._servers_lock:
            servers = list(self._servers)
        errors = []
        for srv in servers:
            try:
                self._stop_server(srv)
            except Exception as exc:  # noqa: BLE001 - stop the others anyway
                errors.append(exc)
        self._base_srv = None
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if errors:
            raise errors[0]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _has_seed_files(self) -> bool:
        pdir = Path(self.project.project_dir)
        return any(any((pdir / sp).rglob("*.csv")) for sp in (self.project.seed_paths or ["seeds"]))

    def _profiles(self, out_dir: Path, *, port, database: str | None = None) -> Path:
        from ..emulator import emulator_profiles
        from ..emulator.profiles import write_profiles_yml

        content = emulator_profiles(self.project, host="127.0.0.1", port=0, database=database)
        for prof in content.values():
            for out in prof["outputs"].values():
                out["port"] = port
        return write_profiles_yml(content, out_dir)

    def _connect(self, srv, database: str | None = None):
        return srv.connect(database=database)

    # ------------------------------------------------------------------ contract
    def usable(self) -> tuple[bool, str]:
        if getattr(self.project, "adapter_type", None) != "snowflake":
            return False, f"the emulator validates Snowflake projects (adapter {self.project.adapter_type})"
        from ..emulator import fakesnow_available

        ok, info = fakesnow_available()
        if not ok:
            return False, f"Snowflake tasks are unproven: {info}"
        if self._base is not None and not self._base.get("ok"):
            return False, f"Snowflake tasks are unproven: {self._base.get('reason')}"
        if self.data_file is not None:
            if not self.data_file.is_file():
                return False, f"Snowflake tasks are unproven: data file {self.data_file} not found"
            return True, f"fakesnow {info} emulator; raw data from {self.data_file}"
        if self._has_seed_files():
            return True, f"fakesnow {info} emulator; raw data from the project's seeds"
        return False, ("Snowflake tasks are unproven: the emulator needs the raw data, but the project has "
                       "no seeds and no DuckDB data file was supplied")

    def seed_based(self) -> bool:
        return bool(self.baseline_info().get("seed_based"))

    def baseline_info(self) -> dict:
        if self._base is None:
            self.baseline()
        return self._base or {}

    def baseline(self) -> None:
        with self._base_lock:
            if self._base is None:
                self._base = self._build_baseline()
            if not self._base.get("ok"):
                raise InputError(self._base.get("reason", "baseline failed on the emulator"),
                                 file=self.project.project_dir)

    def _run(self, srv, args, app: Path, profiles: Path):
        # explicit target/log paths: in-process dbt elsewhere in this process (discovery, mutant
        # compile) sets DBT_TARGET_PATH/DBT_LOG_PATH in os.environ while it runs
        return srv.run_dbt(args, app, profiles, timeout=self.dbt_timeout, target_path=Path(app) / "target",
                           log_path=Path(app) / "logs")

    @staticmethod
    def _why(r) -> str:
        if r.status == "unsupported":
            return "the emulator cannot run it: " + "; ".join(u.render() for u in r.unsupported)
        if r.status == "timeout":
            return "timed out on the emulator"
        first = next((b for b in r.errors), None)
        msg = f"{first.kind} in {first.resource_type} {first.name}: {first.message}" if first else r.tail(8)
        return " ".join(msg.split())[:400]

    def _build_baseline(self) -> dict:
        from ..emulator import copy_project

        t0 = time.monotonic()
        info: dict = {"ok": False, "reason": "", "seconds": {}}
        ok, why = self.usable()
        if not ok:
            info["reason"] = why
            return info
        self.progress("validate: building the intact Snowflake project on the emulator (baseline)")
        try:
            base = self.root / "baseline"
            shutil.rmtree(base, ignore_errors=True)
            app = copy_project(self.project.project_dir, base / "app")
            _drop_adegen_package(app)      # as the shipped copy does; saves a dbt deps + parse time
            srv = self._base_srv = self._start_server("baseline")
            profiles = self._profiles(base / "profiles", port=srv.port)
            info["app"], info["profiles"] = str(app), str(profiles)
            if (app / "packages.yml").exists() or (app / "dependencies.yml").exists():
                r = self._run(srv, ["deps"], app, profiles)
                if not r.ok:
                    info["reason"] = "dbt deps failed on the emulator: " + self._why(r)
                    return info
            if self.data_file is not None:
                self._load_data(srv, self.database)
            # `dbt seed` writes the manifest too: no separate parse when the project has seeds
            # (a model that refs a seed makes the project seed-based; unreferenced seeds are harmless)
            if self._has_seed_files():
                r = self._run(srv, ["seed"], app, profiles)
                info["seconds"]["seed"] = r.duration
                if not r.ok:
                    info["reason"] = "dbt seed failed on the emulator: " + self._why(r)
                    return info
            else:
                r = self._run(srv, ["parse"], app, profiles)
                if not r.ok:
                    info["reason"] = "dbt parse failed: " + self._why(r)
                    return info
            facts = manifest_facts(json.loads((app / "target" / "manifest.json").read_text()))
            info.update(facts)
            r = self._run(srv, ["run"], app, profiles)
            info["seconds"]["run"] = r.duration
            if not r.ok:
                info["reason"] = "dbt run of the intact project failed on the emulator: " + self._why(r)
                info["unsupported"] = [u.id for u in r.unsupported]
                return info
            rels = [(m["schema"], m["alias"]) for m in facts["models"].values()
                    if m["materialized"] != "ephemeral"]
            snap = base / "snapshot.duckdb"
            info["types"] = self._export(srv, self.database, rels, snap)
            info["snapshot_db"] = str(snap)
            info["snapshot_tables"] = [f"{s}.{a}" for s, a in rels]
            info["ok"], info["reason"] = True, "baseline built on the emulator"
        except AdegenError as exc:
            info["reason"] = f"baseline failed on the emulator: {exc}"
        except Exception as exc:  # noqa: BLE001 - reported through usable()/InputError
            info["reason"] = f"baseline failed on the emulator: {type(exc).__name__}: {exc}"
        finally:
            info["seconds"]["total"] = info["seconds"]["wall"] = time.monotonic() - t0
        if info["ok"]:
            self.progress(f"validate: emulator baseline ready in {info['seconds']['wall']:.1f}s "
                          f"({len(info['models'])} models, seed-based={info['seed_based']})")
        else:
            self.progress(f"validate: emulator baseline failed: {info['reason']}")
        return info

    def _load_data(self, srv, database: str) -> None:
        srv.load_duckdb(self.data_file, database=database, schemas={"main": self.schema})

    def _export(self, srv, database: str, rels: list[tuple[str, str]], out_db: Path,
                local_names: list[str] | None = None) -> dict:
        """Copy server relations DATABASE.schema.alias into a local DuckDB file (as
        "schema"."alias", or main."<local name>"); returns {local name: {column: snowflake type}}."""
        import duckdb

        for p in (out_db, Path(str(out_db) + ".wal")):
            if p.exists():
                p.unlink()
        types: dict[str, dict[str, str]] = {}
        with self._conn_lock:
            conn = self._connect(srv, database)
        try:
            cur = conn.cursor()
            con = duckdb.connect(str(out_db))
            try:
                for i, (schema, alias) in enumerate(rels):
                    local = (f"main.{oracle.q(local_names[i])}" if local_names
                             else f"{oracle.q(schema)}.{oracle.q(alias)}")
                    try:
                        cur.execute(f"select * from {_sf_ident(database)}.{_sf_ident(schema)}.{_sf_ident(alias)}")
                        tbl = cur.fetch_arrow_all(force_return_table=True)
                    except Exception:  # noqa: BLE001 - a missing relation is a difference
                        continue
                    if not local_names:
                        con.execute(f"CREATE SCHEMA IF NOT EXISTS {oracle.q(schema)}")
                    con.register("adegen_arrow", tbl)
                    con.execute(f"CREATE TABLE {local} AS SELECT * FROM adegen_arrow")
                    con.unregister("adegen_arrow")
                    key = local_names[i] if local_names else f"{schema}.{alias}"
                    types[key] = {f.name: _sf_type(f) for f in tbl.schema}
                    types[key + "#logical"] = {f.name: {k.decode(): v.decode() for k, v in
                                                        (f.metadata or {}).items()}.get("logicalType", "")
                                               for f in tbl.schema}
            finally:
                con.close()
        finally:
            conn.close()
        return types

    # ------------------------------------------------------------------ screening
    def _take_slot(self) -> int:
        with self._slot_cv:
            while not self._slots:
                self._slot_cv.wait()
            return self._slots.pop()

    def _give_slot(self, slot: int) -> None:
        with self._slot_cv:
            self._slots.append(slot)
            self._slot_cv.notify()

    def screen(self, model_unique_id: str, model_path: str, mutated_text: str, pattern) -> Observation:
        self.baseline()
        slot = self._take_slot()
        try:
            return self._screen(slot, model_unique_id, model_path, mutated_text, pattern)
        except Exception as exc:  # noqa: BLE001 - a screening failure is an unobservable result
            return Observation(False, f"screening failed on the emulator: {type(exc).__name__}: {exc}",
                               False, None, 0, 0, [], {}, None, {})
        finally:
            self._give_slot(slot)

    def screen_many(self, items: Iterable[tuple], progress: Callable[[str], None] | None = None
                    ) -> list[Observation]:
        self.baseline()
        report = progress or self.progress
        items = list(items)
        futs = [self.pool().submit(self.screen, *it) for it in items]
        out = []
        for i, f in enumerate(futs, 1):
            obs = f.result()
            report(f"validate: screened {i}/{len(items)} on the emulator: {items[i - 1][0]} "
                   f"{'observable' if obs.observable else 'dropped'} ({obs.reason[:80]})")
            out.append(obs)
        return out

    def _screen(self, slot: int, uid: str, path: str, text: str, pattern) -> Observation:
        t0 = time.monotonic()
        base = self._base
        srv = self._base_srv
        models = base["models"]
        symptom = getattr(pattern, "symptom", None)
        empty = dict(observable=False, build_error=False, compared_table=None, rows_differing=0,
                     rows_total=0, columns_differ=[], changed_tables={}, example=None, details={})
        if uid not in models:
            return Observation(reason=f"unknown model {uid}", **empty)
        m = models[uid]
        work = self.root / "screen" / f"s{slot}"
        app = work / "app"
        if not app.exists():
            shutil.copytree(base["app"], app, symlinks=True,
                            ignore=shutil.ignore_patterns("target", "logs"))
        with self._servers_lock:
            self._n += 1
            db = f"{self.database}__ADEGEN_S{self._n}"     # fakesnow has no DROP DATABASE: never reused
        self._clone_intact(srv, db)
        profiles = self._profiles(work / "profiles", port=srv.port, database=db)
        dist = descendants(base["children"], uid)
        sel = {u: models[u] for u in dist}
        args = ["run", "--select", f"{m['name']}+"]
        if any(x["materialized"] == "incremental" for x in sel.values()):
            args.append("--full-refresh")
        model_file = app / path
        original = model_file.read_bytes()
        try:
            model_file.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
            r = self._run(srv, args, app, profiles)
        finally:
            model_file.write_bytes(original)
        details = {"dbt_seconds": r.duration, "selected": len(sel)}
        if r.status in ("unsupported", "timeout"):
            details["unsupported"] = [u.render() for u in r.unsupported]
            return Observation(reason=f"not screenable on the emulator: {self._why(r)}",
                               **{**empty, "details": details})
        if not r.ok:
            msg = self._why(r)
            obs = Observation(reason="", **{**empty, "details": details})
            obs.build_error = True
            obs.example = msg
            obs.compared_table = m["alias"] if m["materialized"] != "ephemeral" else None
            obs.changed_tables = {m["alias"]: 0}
            details["build_output"] = r.tail(30)
            obs.observable = symptom == "build_error"
            obs.reason = (f"build error as intended: {msg[:160]}" if obs.observable else
                          f"build error, but the pattern's symptom is {symptom}: {msg[:160]}")
            return obs
        rels = [(mm["schema"], mm["alias"]) for mm in sel.values() if mm["materialized"] != "ephemeral"]
        mut = work / "mutant.duckdb"
        self._export(srv, db, rels, mut)
        self._drop_database(srv, db)
        import duckdb

        con = duckdb.connect(str(mut), read_only=True)
        obs = Observation(reason="", **{**empty, "details": details})
        try:
            con.execute(f"ATTACH '{base['snapshot_db']}' AS adegen_base (READ_ONLY)")
            diffs, relmap = {}, {}
            for u, mm in sel.items():
                if mm["materialized"] == "ephemeral":
                    continue
                rel = f"{oracle.q(mm['schema'])}.{oracle.q(mm['alias'])}"
                relmap[u] = (f"adegen_base.{rel}", f"{oracle.q(mut.stem)}.{rel}")
                diffs[u] = oracle.compare_relations(con, mm["alias"], *relmap[u])
            visible = {u: d for u, d in diffs.items() if d.visible}
            obs.changed_tables = {models[u]["alias"]: dist[u] for u in visible}
            if symptom == "build_error":
                obs.reason = "the pattern expects a build error, but the mutant builds"
            if not visible:
                dups = {u: d for u, d in diffs.items() if d.duplicates_only}
                obs.reason = ("visible only as duplicate rows, which the set-based equality test ignores"
                              if dups else "equivalent on this data: every rebuilt table equals the intact "
                                           "build (set oracle and row counts)")
                return obs
            target = choose_compared(uid, visible, dist, models, getattr(pattern, "difficulty", None))
            d = visible[target]
            ev = oracle.evidence(con, d, *relmap[target], symptom, distance=dist[target])
            obs.compared_table = models[target]["alias"]
            obs.rows_differing, obs.rows_total = d.rows_differing, d.rows_base
            obs.columns_differ, obs.example = ev.columns_differ, ev.example
            obs.details["tables"] = oracle.tables_evidence(con, visible, relmap, dist, uid, target,
                                                           known={target: ev.details})
            obs.details["rows_broken"] = d.rows_mut
            if symptom != "build_error":
                obs.observable = True
                obs.reason = (f"{d.table}: {d.rows_differing} row(s) differ under the equality oracle"
                              if not d.column_set_differs else f"{d.table}: column set differs")
        finally:
            con.close()
            obs.details["seconds"] = time.monotonic() - t0
        return obs

    def _clone_intact(self, srv, db: str) -> None:
        """DB := table copies of every relation of the intact build (views become tables:
        fakesnow's CREATE DATABASE ... CLONE is silently empty and views are not in
        information_schema.tables)."""
        with self._conn_lock:
            conn = self._connect(srv, None)
        try:
            cur = conn.cursor()
            src = _sf_ident(self.database)
            cur.execute(f"create database if not exists {_sf_ident(db)}")
            cur.execute(f"select table_schema, table_name from {src}.information_schema.tables "
                        "where table_schema <> 'INFORMATION_SCHEMA'")
            rels = {(s.upper(), t.upper()) for s, t in cur.fetchall()}
            rels |= {(m["schema"].upper(), m["alias"].upper()) for m in self._base["models"].values()
                     if m["materialized"] != "ephemeral"}
            for s, t in sorted(rels):
                cur.execute(f"create schema if not exists {_sf_ident(db)}.{_sf_ident(s)}")
                cur.execute(f"create or replace table {_sf_ident(db)}.{_sf_ident(s)}.{_sf_ident(t)} as "
                            f"select * from {src}.{_sf_ident(s)}.{_sf_ident(t)}")
        finally:
            conn.close()

    def _drop_database(self, srv, db: str) -> None:
        """Free the screening copy's memory (fakesnow cannot DROP DATABASE: drop its schemas)."""
        schemas = {m["schema"].upper() for m in self._base["models"].values()} | {self.schema.upper()}
        try:
            with self._conn_lock:
                conn = self._connect(srv, None)
            try:
                cur = conn.cursor()
                for s in sorted(schemas):
                    try:
                        cur.execute(f"drop schema if exists {_sf_ident(db)}.{_sf_ident(s)} cascade")
                    except Exception:  # noqa: BLE001 - best effort
                        pass
            finally:
                conn.close()
        except Exception:  # noqa: BLE001 - best effort
            pass

    def prepare_database(self, out_dir: Path) -> None:
        """Not applicable on Snowflake: the task's database is the Snowflake database `db_name`
        (no db_dir, no file). Returns None; `prove` takes db_file=None (or the data file)."""
        return None

    # ------------------------------------------------------------------ proving
    def prove(self, task_dir: Path, project_copy: Path, db_file: Path | None = None, *,
              mode: str | None = None) -> Proof:
        """Seeds + _no-op.txt from the emulator's intact build, exclude_columns /
        max_test_timeout_sec in task.yaml when needed, then agent none must fail and agent sage
        must pass on fresh fakesnow servers. `db_file`: a DuckDB raw-data file loaded into each
        trial's database before setup (default: the validator's data_file; None for seed-based
        projects, whose setup.sh seeds). `mode`: "inprocess" (default; one child process per trial,
        dbt in-process there, a watchdog per dbt call) or "script" (bash + one dbt process per call
        through a `timeout` shim)."""
        task_dir = Path(task_dir).resolve()
        t0 = time.monotonic()
        seconds: dict[str, float] = {}
        spec = TaskSpec.load(task_dir, db_type="snowflake")
        names = [n for s in spec.solution_seeds for n in s.test_names()]
        check_test_names(names, where=str(task_dir))
        data_file = Path(db_file).resolve() if db_file else self.data_file

        def fail(reason: str, excludes=None, **kw) -> Proof:
            seconds["total"] = time.monotonic() - t0
            return Proof(False, kw.get("broken_fails", False), kw.get("solved_passes", False),
                         kw.get("seeds", []), kw.get("expected", 0), f"unproven: {reason}",
                         excludes or {}, None, seconds)

        try:
            self.baseline()
        except AdegenError as exc:
            return fail(str(exc))
        base = self._base
        tables = [s.table_name for s in spec.solution_seeds]
        for s in spec.solution_seeds:
            tables += list(s.alternates or [])
        by_alias = {m["alias"].lower(): m for m in base["models"].values()
                    if m["materialized"] != "ephemeral"}
        work = self.root / "prove" / task_dir.name
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        # --- solution seeds from the intact build (ade-bench cannot export them on Snowflake)
        problems, excludes, notes = [], {}, []
        rels = []
        for t in tables:
            m = by_alias.get(t.lower())
            if m is None or f"{m['schema']}.{m['alias']}" not in base["types"]:
                problems.append(f"the intact build has no table {t}")
            rels.append((m["schema"], m["alias"]) if m else (self.schema, t))
        if problems:
            return fail("; ".join(problems))
        solved = work / "solved.duckdb"
        self._copy_local(Path(base["snapshot_db"]), rels, tables, solved)
        types: dict[str, dict[str, str]] = {}
        for t, (s, a) in zip(tables, rels):
            types[t] = base["types"][f"{s}.{a}"]
            logical = base["types"].get(f"{s}.{a}#logical", {})
            chk = check_table(solved, t)
            if chk.rows == 0:
                problems.append(f"{t} is empty in the intact build")
            if chk.rejected:
                problems.extend(chk.problems or [f"{t}: every column would be excluded"])
            semi = [c for c, lt in logical.items() if lt.upper() in _SEMI_STRUCTURED]
            cols = _ordered_union(chk.exclude_columns, semi)
            if semi:
                notes.append(f"semi-structured column(s) of {t} excluded ({', '.join(semi)}): their text "
                             "form on fakesnow may differ from Snowflake's")
            if cols:
                excludes[t] = cols
            floats = [c for c, ty in types[t].items() if ty == "float"]
            if floats:
                notes.append(f"{t}: FLOAT column(s) {', '.join(floats)} - fakesnow returns FLOAT for some "
                             "expressions where Snowflake returns NUMBER")
        if problems:
            return fail("; ".join(problems), excludes)
        if tables:
            # CSVs exactly as ade-bench's --seed writes them (DuckDB COPY of the exported rows);
            # _no-op.txt with the Snowflake column types the emulator reported
            schemas = export_solution_seeds(solved, tables, spec.project_name, task_dir / "seeds")
            sf_schemas = {t: [(c, types[t].get(c, "varchar")) for c, _ in cols] for t, cols in schemas.items()}
            (task_dir / "seeds" / "_no-op.txt").write_text(no_op_text(spec.project_name, sf_schemas))
        seeds = [f"solution__{t}" for t in tables]
        merged = {t: _ordered_union(_existing_excludes(spec, t), cols) for t, cols in excludes.items()}
        if merged:
            update_task_yaml(task_dir / "task.yaml", exclude_columns=merged)
        seconds["seeds"] = time.monotonic() - t0
        # --- grade none and sage, each on a fresh server
        self.progress(f"validate: {task_dir.name}: grading none and sage on the emulator")
        from ..emulator import copy_project

        emu_project = copy_project(project_copy, work / "project")
        self._profiles(emu_project, port="{{ env_var('FAKESNOW_PORT') | int }}")
        shim_dir = work / "bin"
        _dbt_shim(shim_dir)
        t1 = time.monotonic()
        futs = {a: self.pool().submit(self._trial, task_dir, emu_project, data_file, a, work, shim_dir,
                                      tables if a == "sage" else [], mode or self.prove_mode)
                for a in ("none", "sage")}
        res = {a: f.result() for a, f in futs.items()}
        seconds["grading"] = time.monotonic() - t1
        for a in ("none", "sage"):
            if res[a].get("error"):
                return fail(f"{a} trial could not run on the emulator: {res[a]['error']}", merged,
                            seeds=seeds)
        broken_fails = not res["none"]["resolved"]
        solved_passes = res["sage"]["resolved"]
        expected = int(res["sage"]["expected"] or 0)
        # --- features the emulator cannot run / timeouts: no evidence either way
        unsupported, timeouts = [], []
        for a in ("none", "sage"):
            for u in res[a]["unsupported"]:
                if u not in unsupported:
                    unsupported.append(u)
            timeouts += [f"{a}: {t}" for t in res[a]["timeouts"]]
        if unsupported or timeouts:
            why = []
            if unsupported:
                why.append("the emulator cannot run: " + "; ".join(unsupported))
            if timeouts:
                why.append("dbt timed out on the emulator (" + "; ".join(timeouts) + ")")
            return fail(" and ".join(why), merged, seeds=seeds, broken_fails=broken_fails,
                        solved_passes=solved_passes, expected=expected)
        # --- the sage state must equal the intact build (else seeds from the intact build are wrong)
        if solved_passes and res["sage"].get("export"):
            for t in tables:
                try:
                    chk = check_table(solved, t, other_db=Path(res["sage"]["export"]))
                except Exception as exc:  # noqa: BLE001 - the table could not be read back
                    notes.append(f"the solved state's {t} could not be compared with the intact build: {exc}")
                    solved_passes = False
                    continue
                diff_cols = [c for c in chk.nondeterministic_columns if c not in merged.get(t, [])]
                if chk.row_count_unstable or diff_cols:
                    what = ("rows/columns" if chk.row_count_unstable else "column(s) " + ", ".join(diff_cols))
                    notes.append(f"the solved state's {t} differs from the intact build in {what} "
                                 "(non-deterministic SQL, or the task's scripts do not rebuild it)")
                    solved_passes = False
        # --- test timeout: ~3x the measured test phase, min 60, when 30 s is too tight
        test_secs = res["sage"]["seconds"].get("tests", 0.0)
        timeout = None
        current = spec.max_test_timeout_sec or DEFAULT_TEST_TIMEOUT
        if 3 * test_secs > current:
            timeout = max(60, int(math.ceil(3 * test_secs)))
            update_task_yaml(task_dir / "task.yaml", max_test_timeout_sec=timeout)
        ok = broken_fails and solved_passes
        version = getattr(self._base_srv, "version", None) or "?"
        body = (f"{res['none']['summary']} | {res['sage']['summary']}"
                f" | seeds exported from the emulator's intact build (ade-bench has no --seed on Snowflake);"
                f" column types as fakesnow reports them"
                + (f" | excluded {merged}" if merged else "")
                + (f" | max_test_timeout_sec={timeout}" if timeout else "")
                + (" | note: " + "; ".join(notes) if notes else ""))
        if ok:
            detail = (f"{EMULATOR_LABEL} (fakesnow {version}, dbt-snowflake; not run on Snowflake: re-check "
                      f"with `ade run --db snowflake` before relying on it): {body}")
        else:
            bad = "none" if not broken_fails else "sage"
            what = ("the broken state passes the tests on the emulator" if not broken_fails
                    else "the solved state fails the tests on the emulator" if not res["sage"]["resolved"]
                    else "the solved state on the emulator differs from the intact build the seeds come from")
            detail = f"unproven: {what}: {body}\n--- {bad} test output (tail) ---\n{res[bad]['tail']}"
        seconds["total"] = time.monotonic() - t0
        return Proof(ok=ok, broken_fails=broken_fails, solved_passes=solved_passes, seeds=seeds,
                     expected_tests=expected, detail=detail, exclude_columns=merged,
                     max_test_timeout_sec=timeout, seconds=seconds)

    @staticmethod
    def _copy_local(snapshot: Path, rels, names, out: Path) -> None:
        import duckdb

        for p in (out, Path(str(out) + ".wal")):
            if p.exists():
                p.unlink()
        con = duckdb.connect(str(out))
        try:
            con.execute(f"ATTACH '{snapshot}' AS adegen_snap (READ_ONLY)")
            for (s, a), n in zip(rels, names):
                con.execute(f"CREATE TABLE main.{oracle.q(n)} AS SELECT * FROM "
                            f"adegen_snap.{oracle.q(s)}.{oracle.q(a)}")
        finally:
            con.close()

    def _trial(self, task_dir: Path, project: Path, data_file: Path | None, agent: str, work: Path,
               shim_dir: Path, export_tables: list[str], mode: str = "inprocess") -> dict:
        """One harness trial on its own fresh server (always stopped). mode "inprocess": the trial
        runs in one child process with dbt in-process (a watchdog bounds every dbt call); "script":
        bash + one dbt process per call through the timeout shim."""
        import os

        out: dict = {"agent": agent, "resolved": False, "unsupported": [], "timeouts": [], "seconds": {},
                     "expected": None, "summary": "", "tail": ""}
        srv = None
        try:
            srv = self._start_server(f"trial-{task_dir.name}-{agent}")
            if data_file is not None:
                srv.load_duckdb(data_file, database=self.database, schemas={"main": self.schema})
            path = os.pathsep.join([str(shim_dir), str(Path(sys.executable).parent), os.environ.get("PATH", "")])
            env = {"FAKESNOW_PORT": str(srv.port), "DBT_FAKESNOW": "1", "PATH": path,
                   "ADEGEN_DBT_TIMEOUT": str(int(self.dbt_timeout)), "DBT_PRINTER_WIDTH": "120"}
            job = {"task_dir": str(task_dir), "project": str(project), "agent": agent,
                   "workdir": str(work / "trials"), "env": env, "dbt_timeout": self.dbt_timeout,
                   "mode": mode}
            if mode == "script":
                out.update(run_trial(job))
            else:
                out.update(self._trial_child(job, work / f"{agent}-trial.json"))
            if export_tables and not out.get("error"):
                by_alias = {m["alias"].lower(): m for m in self._base["models"].values()}
                rels = [(by_alias[t.lower()]["schema"], by_alias[t.lower()]["alias"]) for t in export_tables]
                exp = work / f"{agent}-state.duckdb"
                self._export(srv, self.database, rels, exp, local_names=export_tables)
                out["export"] = str(exp)
        except Exception as exc:  # noqa: BLE001 - reported as unproven, never raised
            out["error"] = f"{type(exc).__name__}: {exc}"
        finally:
            if srv is not None:
                self._stop_server(srv)
        return out

    def _trial_child(self, job: dict, result_file: Path) -> dict:
        import os
        import signal
        import subprocess

        job_file = result_file.with_suffix(".job.json")
        job_file.write_text(json.dumps(job))
        result_file.unlink(missing_ok=True)
        pkg_parent = str(Path(__file__).resolve().parents[2])
        from ..harness.dbtrun import _DROP_ENV

        env = {k: v for k, v in os.environ.items() if k not in _DROP_ENV}   # see _run
        env.update(job["env"])
        env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        cmd = [sys.executable, "-c", "import sys; from adegen.validate.snowflake import _trial_main; "
               "sys.exit(_trial_main(sys.argv[1], sys.argv[2]))", str(job_file), str(result_file)]
        # the whole trial: at most ~10 dbt calls, each bounded by the watchdog; this is the backstop
        limit = self.dbt_timeout * 12
        proc = subprocess.Popen(cmd, env=env, cwd=str(result_file.parent), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            log, _ = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return {"timeouts": [f"the whole trial exceeded {limit:.0f}s"], "error": None}
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if result_file.exists():
            return json.loads(result_file.read_text())
        tail = (log or b"").decode("utf-8", "replace")[-1500:]
        return {"error": f"the trial process exited with code {proc.returncode} without a result: {tail}"}


def run_trial(job: dict) -> dict:
    """Run one trial (harness emulation, --db-type=snowflake) and summarise it (plain data)."""
    from ..emulator import unsupported_matches
    from ..harness.emulate import TrialRunner
    from ..harness.parser import parse_dbt_output

    out: dict = {"resolved": False, "unsupported": [], "timeouts": [], "seconds": {}, "expected": None,
                 "summary": "", "tail": ""}
    agent = job["agent"]
    runner = TrialRunner(Path(job["task_dir"]), Path(job["project"]), None, agent, workdir=Path(job["workdir"]),
                         mode=job["mode"], timeout=job["dbt_timeout"] * 4, db_type="snowflake", env=job["env"])
    try:
        runner.prepare()
        runner.setup()
        runner.run_agent()
        runner.setup_test_env()
        text = runner.run_tests()
    finally:
        shutil.rmtree(runner.root, ignore_errors=True)
    parsed = parse_dbt_output(text)
    out.update(resolved=parsed.resolved, expected=parsed.expected_test_count, seconds=dict(runner.seconds),
               tail=text[-2500:], steps=[(st.name, round(st.seconds, 1), st.ok) for st in runner.steps])
    tests = ", ".join(f"{k}={v}" for k, v in sorted(parsed.tests.items()))
    out["summary"] = (f"{agent}: {'RESOLVED' if parsed.resolved else 'UNRESOLVED'} ({parsed.reason}); "
                      f"expected={parsed.expected_test_count} parsed={len(parsed.tests)} [{tests}]")
    for step in runner.steps:
        for u in unsupported_matches(step.output):
            r = f"{u.id}: {u.reason} ({u.excerpt})"
            if r not in out["unsupported"]:
                out["unsupported"].append(r)
        if _TIMEOUT_MARK in step.output or "[adegen] TIMEOUT after" in step.output:
            out["timeouts"].append(step.name)
    return out


def _trial_main(job_file: str, result_file: str) -> int:
    """Child process of an in-process trial: dbt runs in this process; a watchdog ends the process
    (exit 124, result with the timeout) when one dbt call exceeds the timeout."""
    import os

    from ..harness import dbtrun

    job = json.loads(Path(job_file).read_text())
    os.environ.update(job["env"])
    limit = float(job["dbt_timeout"])
    original = dbtrun.run_inprocess

    def guarded(args, cwd, *, env=None):
        def expire():
            Path(result_file).write_text(json.dumps({
                "resolved": False, "unsupported": [], "seconds": {}, "expected": None,
                "summary": f"{job['agent']}: dbt {' '.join(args)} timed out", "tail": "",
                "timeouts": [f"dbt {' '.join(args)} exceeded {limit:.0f}s"]}))
            os._exit(124)

        timer = threading.Timer(limit, expire)
        timer.daemon = True
        timer.start()
        try:
            return original(args, cwd, env={**job["env"], **(env or {})})
        finally:
            timer.cancel()

    dbtrun.run_inprocess = guarded
    try:
        res = run_trial(job)
    except Exception as exc:  # noqa: BLE001
        res = {"error": f"{type(exc).__name__}: {exc}"}
    Path(result_file).write_text(json.dumps(res))
    return 0
