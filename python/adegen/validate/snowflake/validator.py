"""Execution validation of Snowflake projects on the local fakesnow emulator (`--emulate-snowflake`).

`EmulatorValidator` has the public API of `adegen.validate.Validator` (architecture.md, "Build <->
validation contract") but runs dbt-snowflake against hardened fakesnow servers
(`adegen.snowflake_emulator.FakesnowServer`, 127.0.0.1 only, pinned fakesnow version):

- baseline: one long-lived server; a scratch copy of the project (+ compat macros) with a scratch
  profile pointed at it; raw data from `dbt seed` or a supplied DuckDB data file; `dbt run`; every
  model relation exported (Snowflake connector -> Arrow) into a local DuckDB snapshot.
- screen: a per-screen database on the baseline server holding table copies of the intact build,
  `dbt run --select <model>+` on the mutant, the rebuilt relations exported and compared with the
  snapshot by the same oracle as on DuckDB (`validate.oracle`).
- prove: ade-bench has no `--seed` export for Snowflake, so the solution seeds are written by us
  from the emulator's intact build (CSV + `_no-op.txt` in ade-bench's format, Snowflake column
  types); then the harness emulation (`adegen.adebench.procedure`, `--db-type=snowflake`, bash + dbt
  subprocesses) runs agent none and agent sage, each on a fresh server; the sage state is compared
  with the intact build (determinism). Every dbt call runs through a `dbt` shim with a hard
  `timeout`; every server is stopped (finally/close/atexit/parent watchdog).

Results say "proven on emulator", never "proven on Snowflake": fakesnow is more permissive than
Snowflake and a few functions return other types (shared/docs/fakesnow.md). A run that hits a
feature the emulator cannot run (`adegen.snowflake_emulator.classify`) is reported "unproven: ..." with the
reason; it never raises.
"""
from __future__ import annotations

import json
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterable


from adegen.dbt.clock import clock_reasons
from adegen.core.drops import DropCode
from adegen.core.errors import AdegenError, InputError
from adegen.validate.rules import oracle
from adegen.validate.rules.contract import Observation, Proof, ProofOutcome, RunFacts
from adegen.validate.rules.inspector import RelationInspector
from adegen.validate.duckdb.intact import manifest_facts
from adegen.validate.rules.proof import ProveRequest, prove
from adegen.validate.snowflake.io import EmulatorIO
from adegen.validate.snowflake.prove import EmulatorProof, EmulatorRun
from adegen.validate.snowflake.trial import EmulatorTrials
from adegen.validate.rules.verdict import ScreenFacts, judge

DEFAULT_DBT_TIMEOUT = 600.0


class EmulatorValidator(EmulatorIO, EmulatorTrials):
    """Validator for Snowflake projects on fakesnow; same public API as `Validator`.

    data_file: a DuckDB file holding the raw data (tables of schema `main` are loaded into the
    project's database/schema); without it the raw data must come from the project's seeds."""

    def __init__(self, project, *, workdir: Path, data_file: Path | None = None, jobs: int = 2,
                 progress: Callable[[str], None] | None = None, dbt_timeout: float = DEFAULT_DBT_TIMEOUT,
                 server_factory=None, prove_mode: str = "inprocess", **_ignored):
        from adegen.snowflake_emulator import FakesnowServer

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
        self._facts = RunFacts(clock_check="not run: the shifted-clock check is part of the DuckDB determinism build")

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

    def _connect(self, srv, database: str | None = None):
        return srv.connect(database=database)

    # ------------------------------------------------------------------ contract
    def usable(self) -> tuple[bool, str]:
        if getattr(self.project, "adapter_type", None) != "snowflake":
            return False, f"the emulator validates Snowflake projects (adapter {self.project.adapter_type})"
        from adegen.snowflake_emulator import fakesnow_available

        ok, info = fakesnow_available()
        if not ok:
            return False, f"Snowflake tasks are unproven: {info}"
        if self._base is not None and not self._base.get("ok"):
            return False, f"Snowflake tasks are unproven: {self._base.get('reason')}"
        if self.data_file is not None:
            if not self.data_file.is_file():
                return False, f"Snowflake tasks are unproven: data file {self.data_file} not found"
            return True, f"fakesnow {info} emulator; raw data from {self.data_file}"
        if self.project.has_seed_files():
            return True, f"fakesnow {info} emulator; raw data from the project's seeds"
        return False, ("Snowflake tasks are unproven: the emulator needs the raw data, but the project has "
                       "no seeds and no DuckDB data file was supplied")

    def facts(self) -> RunFacts:
        return self._facts

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

    def _build_baseline(self) -> dict:

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
            app = self._app(base / "app")
            srv = self._base_srv = self._start_server("baseline")
            profiles = self._profiles(base / "profiles", port=srv.port)
            info["app"], info["profiles"] = str(app), str(profiles)
            if self.data_file is not None:
                self._load_data(srv, self.database)
            # `dbt seed` writes the manifest too: no separate parse when the project has seeds
            # (a model that refs a seed makes the project seed-based; unreferenced seeds are harmless)
            if self.project.has_seed_files():
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
            # the manifest `dbt run` wrote: macro lineage plus every model's compiled code
            info["clock"] = clock_reasons(json.loads((app / "target" / "manifest.json").read_text()))
            self._facts.clock_dependent = {facts["models"][u]["name"]: why for u, why in sorted(info["clock"].items())
                                           if u in facts["models"]}
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

    def _take_slot(self) -> int:
        with self._slot_cv:
            while not self._slots:
                self._slot_cv.wait()
            return self._slots.pop()

    def _give_slot(self, slot: int) -> None:
        with self._slot_cv:
            self._slots.append(slot)
            self._slot_cv.notify()

    def screen(self, model_unique_id: str, model_path: str, mutated_text: str, pattern, extra: tuple = ()
               ) -> Observation:
        if extra:  # the emulator's per-screen app holds one changed model file
            return Observation.dropped(DropCode.SCREENING_FAILED, "one mistake in several models is screened "
                                       "on DuckDB only, not on the emulator")
        self.baseline()
        slot = self._take_slot()
        try:
            return self._screen(slot, model_unique_id, model_path, mutated_text, pattern)
        except Exception as exc:  # noqa: BLE001 - a screening failure is an unobservable result
            return Observation.dropped(DropCode.SCREENING_FAILED,
                                       f"screening failed on the emulator: {type(exc).__name__}: {exc}")
        finally:
            self._give_slot(slot)

    def screen_many(self, items: Iterable[tuple], progress: Callable[[str], None] | None = None
                    ) -> list[Observation]:
        self.baseline()
        report = progress or self.progress
        items = list(items)
        # a compile result (5th) is DuckDB's; sibling files (6th) are refused by screen()
        futs = [self.pool().submit(self.screen, *it[:4], *(it[5:6])) for it in items]
        out = []
        for i, f in enumerate(futs, 1):
            obs = f.result()
            report(f"validate: screened {i}/{len(items)} on the emulator: {items[i - 1][0]} "
                   f"{'observable' if obs.observable else 'dropped'} ({obs.reason[:80]})")
            out.append(obs)
        return out

    def _screen(self, slot: int, uid: str, path: str, text: str, pattern) -> Observation:
        """Build the mutant on a per-screen database of the baseline server, export the rebuilt
        relations, and let validate.verdict judge them against the intact snapshot."""
        import duckdb

        t0 = time.monotonic()
        base, srv = self._base, self._base_srv
        models = base["models"]
        if uid not in models:
            return Observation.dropped(DropCode.UNKNOWN_MODEL, f"unknown model {uid}")
        m = models[uid]
        work = self.root / "screen" / f"s{slot}"
        app = work / "app"
        if not app.exists():
            self._app(app)
        with self._servers_lock:
            self._n += 1
            db = f"{self.database}__ADEGEN_S{self._n}"     # fakesnow has no DROP DATABASE: never reused
        self._clone_intact(srv, db)
        profiles = self._profiles(work / "profiles", port=srv.port, database=db)
        dist = base["graph"].downstream(uid)
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
        facts = ScreenFacts(uid, models, dist, getattr(pattern, "symptom", None), getattr(pattern, "difficulty", None),
                            clock={u: why for u, why in (base.get("clock") or {}).items() if u in sel},
                            details={"dbt_seconds": r.duration, "selected": len(sel)})
        if r.status in ("unsupported", "timeout"):
            facts.details["unsupported"] = [u.render() for u in r.unsupported]
            facts.stopped = DropCode.NOT_SCREENABLE, f"not screenable on the emulator: {self._why(r)}"
            return judge(facts, None)
        if not r.ok:
            facts.build_ok, facts.error_message, facts.build_output = False, self._why(r), r.tail(30)
            return judge(facts, None)
        rels = [(mm["schema"], mm["alias"]) for mm in sel.values() if mm["materialized"] != "ephemeral"]
        mut = work / "mutant.duckdb"
        self._export(srv, db, rels, mut)
        self._drop_database(srv, db)
        con = duckdb.connect(str(mut), read_only=True)
        try:
            con.execute(f"ATTACH '{base['snapshot_db']}' AS adegen_base (READ_ONLY)")
            relmap = {}
            for u, mm in sel.items():
                if mm["materialized"] == "ephemeral":
                    continue
                rel = f"{oracle.q(mm['schema'])}.{oracle.q(mm['alias'])}"
                relmap[u] = (f"adegen_base.{rel}", f"{oracle.q(mut.stem)}.{rel}")
                facts.diffs[u] = oracle.compare_relations(con, mm["name"], *relmap[u])
            obs = judge(facts, RelationInspector(con, relmap, facts.dist, uid))
        finally:
            con.close()
        obs.details["seconds"] = time.monotonic() - t0
        return obs

    def prepare_database(self, out_dir: Path) -> None:
        """Not applicable on Snowflake: the task's database is the Snowflake database `db_name`
        (no db_dir, no file). Returns None; `prove` takes db_file=None (or the data file)."""
        return None

    # ------------------------------------------------------------------ proving
    def prove(self, task_dir: Path, project_copy: Path, db_file: Path | None = None, *,
              mode: str | None = None) -> Proof:
        """validate.proof's rule with the emulator's strategy (validate.snowflake_prove). `db_file`:
        a DuckDB raw-data file loaded into each trial's database before setup (default: the
        validator's data_file; None for seed-based projects, whose setup.sh seeds). `mode`:
        "inprocess" (default; one child process per trial, dbt in-process there, a watchdog per dbt
        call) or "script" (bash + one dbt process per call through a `timeout` shim)."""
        t0 = time.monotonic()
        req = ProveRequest.load(Path(task_dir).resolve(), Path(project_copy), None, mode or self.prove_mode,
                                db_type="snowflake")
        try:
            self.baseline()
        except AdegenError as exc:
            return Proof(False, False, False, [], 0, f"unproven: {exc}", {}, None,
                         {"total": time.monotonic() - t0}, ProofOutcome.NO_BASELINE)
        emu = EmulatorRun(self._base, self.root, self.schema, getattr(self._base_srv, "version", None) or "?",
                          Path(self.project.project_dir), self.pool(), self._trial, self._profiles, self._copy_local)
        data_file = Path(db_file).resolve() if db_file else self.data_file
        return prove(req, [EmulatorProof(emu, data_file)], self.progress)
