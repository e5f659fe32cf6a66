"""Worker side: the intact build of the project (the baseline), its storage version, and the second
build under another physical plan (and, where faketime is installed, 40 days ahead:
validate.clockcheck) that finds nondeterministic and clock-dependent tables.

Runs inside validate.pool worker processes; dbt runs in-process there (`dbt_in`).
"""
from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import socket
import subprocess
import time
import traceback
from pathlib import Path

import duckdb

from adegen.core.graph import ProjectGraph
from adegen.dbt import NO_ARTIFACTS, DbtCall, DbtResult, InProcessRunner, ScratchProject, duckdb_output
from adegen.dbt.profiles import write_profiles as write_profiles_dir
from adegen.dbt.relations import is_current, node_relation
from adegen.adebench.procedure import dbfiles
from adegen.sql.quote import ident
from adegen.validate.duckdb import clockcheck
from adegen.validate.duckdb.clocklineage import clock_lineage
from adegen.validate.duckdb import userbase
from adegen.validate.rules.contract import StorageChoice
from adegen.validate.duckdb.jobs import Baseline, WorkerConfig
from adegen.validate.workers.pool import die_with_parent, end_with

_RUNNER = InProcessRunner()
_STATE: dict = {}
STORAGE_RE = re.compile(r"storage versions? (v\d+\.\d+\.\d+)", re.I)


def dbt_in(app: Path, args: list[str], *, env: dict | None = None, timeout: float | None = None) -> DbtResult:
    """dbt in this worker, run the way a user in the project directory `app` would."""
    return _RUNNER.run(DbtCall(list(args), cwd=app, env=dict(env or {}), project_env=True, timeout=timeout))


def worker_tag() -> str:
    """This worker process's directory name under <root>/workers: the host too, because a Dask
    cluster's workers on several machines share the run's work directory (pids repeat across hosts)."""
    return f"w{socket.gethostname()}-{os.getpid()}"


def warm() -> None:
    """Import dbt and the DuckDB adapter when the worker starts (the first call otherwise pays)."""
    try:
        import dbt.adapters.duckdb  # noqa: F401
        import dbt.cli.main  # noqa: F401
    except Exception:  # noqa: BLE001
        pass


def write_profiles(app: Path, cfg: WorkerConfig, settings: dict | None = None) -> None:
    """The app's profiles.yml: the project's target on ./<db_name>.duckdb, with the run's DuckDB
    budget settings (and `settings` on top)."""
    facts = _Target(cfg.target_config, cfg.schema)
    out = duckdb_output(facts, f"./{cfg.db_name}.duckdb", full_target=True,
                        settings={**cfg.duckdb_settings, **(settings or {})})
    write_profiles_dir(app, cfg.profile_name, cfg.target_name, out)


class _Target:
    def __init__(self, target_config: dict, schema: str):
        self.target_config, self.schema = target_config, schema


def make_app(cfg: WorkerConfig, app: Path, settings: dict | None = None):
    """A fresh scratch copy of the project with its packages (offline) and profile."""
    plan = ScratchProject(Path(cfg.project_dir), app).copy().install_packages()
    write_profiles(app, cfg, settings)
    return plan


def worker_app(cfg: WorkerConfig) -> Path:
    """This worker's persistent screening app (partial parsing kept across screens)."""
    app = _STATE.get("app")
    if app is None or _STATE.get("root") != cfg.root:
        app = Path(cfg.root) / "workers" / worker_tag() / "app"
        make_app(cfg, app)
        _STATE.update(app=app, root=cfg.root)
    return app


def warm_app(cfg: WorkerConfig) -> int:
    """Create this worker's screening app and let dbt parse it once (partial parsing from then on)."""
    try:
        dbt_in(worker_app(cfg), ["parse"], env=NO_ARTIFACTS)
    except Exception:  # noqa: BLE001 - the first screen reports problems
        pass
    return os.getpid()


def manifest_facts(manifest: dict) -> dict:
    """The models (name, path, package, where dbt builds them, materialization, parents), their
    children, and whether the project's raw data comes from its seeds."""
    nodes = manifest.get("nodes", {})
    models, seeds, seed_files = {}, {}, {}
    for uid, n in nodes.items():
        if n.get("resource_type") == "model":
            rel = node_relation(n)  # where dbt builds it: custom schema, alias (adegen.dbt.relations)
            models[uid] = {"name": n["name"], "path": n.get("original_file_path"),
                           "package": n.get("package_name"), "schema": rel.schema,
                           "alias": rel.identifier, "database": rel.database,
                           "materialized": (n.get("config") or {}).get("materialized", "view"),
                           "current": is_current(n)}  # what ref('<name>') resolves to (versioned models)
        elif n.get("resource_type") == "seed":
            seeds[uid] = node_relation(n).key
            seed_files[".".join(seeds[uid])] = n.get("original_file_path")
    seed_rel = set(seeds.values())
    sources = manifest.get("sources", {})
    seed_sources = [uid for uid, s in sources.items()
                    if ((s.get("schema") or "").lower(), (s.get("identifier") or s["name"]).lower()) in seed_rel]
    graph = ProjectGraph.from_manifest(manifest)
    seed_based = bool(seed_sources) or any(d in seeds for d in graph.inputs())
    return {"models": models, "graph": graph, "seed_based": seed_based,
            "seed_sources": seed_sources, "seeds": sorted(seeds), "seed_files": seed_files}


def model_relations(models: dict) -> list[tuple[str, str]]:
    return [(m["schema"], m["alias"]) for m in models.values() if m["materialized"] != "ephemeral"]


def snapshot(db_file: Path, snap: Path, models: dict) -> dict[str, int]:
    """Copy every model relation (views materialized as tables) into `snap`; {schema.alias: rows}."""
    for p in (snap, Path(str(snap) + ".wal")):
        p.unlink(missing_ok=True)
    con = duckdb.connect(str(snap))
    rows: dict[str, int] = {}
    cat = ident(Path(db_file).stem)  # view definitions name this catalog
    try:
        con.execute(f"ATTACH '{db_file}' AS {cat} (READ_ONLY)")
        for schema, alias in model_relations(models):
            rel = f"{ident(schema)}.{ident(alias)}"
            try:
                con.execute(f"CREATE SCHEMA IF NOT EXISTS {ident(schema)}")
                con.execute(f"CREATE TABLE {rel} AS SELECT * FROM {cat}.{rel}")
                rows[f"{schema}.{alias}"] = con.execute(f"select count(*) from {rel}").fetchone()[0]
            except duckdb.Error:
                pass
        con.execute(f"DETACH {cat}")
    finally:
        con.close()
    return rows


def needed_storage(output: str) -> str | None:
    """The storage version a DuckDB error asks for ("... only supported for storage versions
    v1.4.0 and higher"), else None."""
    m = STORAGE_RE.search(output)
    return m.group(1) if m else None


def _version_key(v: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def storage_for(needed: str, error: str) -> StorageChoice:
    """The lowest storage version the project needs (the one its error names), never the user's
    file's own: DuckDB 2.0 writes new files as v2.0.0, which no older DuckDB opens, while the
    project may need no more than v1.4.0. The reason says whether ade-bench's image can open it."""
    first = error.strip().splitlines()[0][:200] if error.strip() else ""
    return StorageChoice(needed, f"the project needs storage version {needed} or newer ({first}); "
                                 + image_note(needed))


def image_note(version: str) -> str:
    """Whether ade-bench's image (duckdb HARNESS_DUCKDB) opens a database file of this storage
    version, and what to change if not."""
    if _version_key(version) <= _version_key(dbfiles.HARNESS_DUCKDB):
        return f"ade-bench's image (duckdb {dbfiles.HARNESS_DUCKDB}) opens it"
    return (f"ade-bench's image (duckdb {dbfiles.HARNESS_DUCKDB}) cannot open it: run these tasks with duckdb "
            f"{version.lstrip('v').rsplit('.', 1)[0]} or newer in the image (and dbt-duckdb that allows it)")


def shuffle_tables(db_file: Path) -> None:
    """Rewrite every table of `db_file` in another row order (a hash of the row number: unlike a
    reversal, it breaks ties differently whatever the sort algorithm does with them)."""
    con = duckdb.connect(str(db_file))
    try:
        rels = con.execute("select table_schema, table_name from information_schema.tables where "
                           "table_catalog = current_database() and table_type = 'BASE TABLE'").fetchall()
        for s, t in rels:
            rel = f"{ident(s)}.{ident(t)}"
            con.execute(f"CREATE OR REPLACE TABLE {rel} AS SELECT * FROM {rel} ORDER BY hash(rowid + 1)")
        con.execute("CHECKPOINT")
    finally:
        con.close()


def user_copy_path(cfg: WorkerConfig) -> Path:
    """Where the run keeps its one copy of the user's database (never written after the copy)."""
    return Path(cfg.root) / "user" / f"{cfg.db_name}.duckdb"


def _user_copy(cfg: WorkerConfig) -> Path | None:
    """The user's database copied once into the work dir (the user's file is only read)."""
    if not cfg.db_source:
        return None
    dst = user_copy_path(cfg)
    if not dst.is_file():
        # the baseline and the shadow build copy it at the same time: each into its own file,
        # renamed into place whole, so neither reads a half-written copy
        tmp = dst.with_name(f"{dst.stem}.{os.getpid()}.tmp.duckdb")
        dbfiles.copy_file(Path(cfg.db_source), tmp)
        for suffix in (".wal", ""):
            if Path(str(tmp) + suffix).exists():
                os.replace(str(tmp) + suffix, str(dst) + suffix)
    return dst


class _Build:
    """One intact build in `root` (baseline: the reference; shadow: another physical plan)."""

    def __init__(self, cfg: WorkerConfig, root: Path, *, shadow: bool):
        self.cfg, self.root, self.shadow = cfg, root, shadow
        self.app = root / "app"
        self.live = self.app / f"{cfg.db_name}.duckdb"

    def run(self, base: Baseline) -> DbtResult | None:
        cfg = self.cfg
        # another thread count than the baseline's (DuckDB's default: one per core)
        settings = {"threads": 1 if (os.cpu_count() or 1) > 1 else 4} if self.shadow else None
        plan = make_app(cfg, self.app, settings)
        base.packages, base.package_notes = plan.summary(), list(plan.notes)
        r = dbt_in(self.app, ["parse"])
        base.seconds["parse"] = r.seconds
        if not r.success:
            base.reason = "dbt parse failed: " + r.first_error()
            return None
        base.__dict__.update(manifest_facts(json.loads((self.app / "target" / "manifest.json").read_text())))
        user = _user_copy(cfg)
        if user is not None and not self.shadow:
            present = dbfiles.list_relations(user)
            base.user_relations = [rel for rel in model_relations(base.models)
                                   if (rel[0].lower(), rel[1].lower()) in present]
            if userbase.applies(cfg.db_shipped, base.models, base.user_relations):
                r = self._from_user(base, user)
                if r is not None:
                    return r
                # the seeds the user's file holds are not the project's CSVs: the full emulation below
        src = user
        if base.seed_based and not cfg.db_explicit:
            src = None  # a fresh DB: the seeds are the raw data
        for attempt in (1, 2):
            r = self._raw_and_run(base, src)
            needed = needed_storage(r.console) if r is not None and not r.success else None
            if not needed or attempt == 2:
                return r
            base.storage = storage_for(needed, r.first_error())
        return r

    def _from_user(self, base: Baseline, user: Path) -> DbtResult | None:
        """The baseline from the user's tables (validate.userbase): their file after one intact
        `dbt run`, as ade-bench's setup leaves it for the intact project; which model relations
        that run changed (`user_stale`). No raw copy: prepare_database writes one on demand.
        A seed-based project's setup.sh runs `dbt seed` first: the rule holds when that changes
        none of the file's seed tables (it holds these CSVs), else None (the full emulation)."""
        dbfiles.copy_file(user, self.live)
        if base.seed_based:
            r = dbt_in(self.app, ["seed"])
            base.seconds["seed"] = r.seconds
            seeds = [tuple(key.split(".", 1)) for key in base.seed_files]
            if not r.success or userbase.stale(user, self.live, seeds):
                return None
        base.from_user = True
        r = dbt_in(self.app, ["run"])
        base.seconds["run"] = r.seconds
        base.model_seconds = {u: n.seconds for u, n in r.nodes.items()}
        if not r.success:
            base.reason = "dbt run of the intact project on your database failed: " + r.first_error()
            base.output = r.console[-3000:]
            return r
        t0 = time.monotonic()
        base.user_stale = userbase.stale(user, self.live, [tuple(x) for x in base.user_relations])
        base.seconds["stale_check"] = time.monotonic() - t0
        return r

    def _raw_and_run(self, base: Baseline, src: Path | None) -> DbtResult | None:
        raw = self.root / "raw" / f"{self.cfg.db_name}.duckdb"
        made = dbfiles.copy_database(src, raw, drop=model_relations(base.models), storage_version=base.storage.version)
        if made.version != base.storage.version:  # the objects of the user's file need a newer one
            base.storage = StorageChoice(made.version, "; ".join(made.notes[:1]) + "; " + image_note(made.version))
        if src is not None:
            base.db_copy = made.describe()
        base.raw_db = str(raw)
        dbfiles.copy_file(raw, self.live)
        if base.seed_based:
            r = dbt_in(self.app, ["seed"])
            base.seconds["seed"] = r.seconds
            if not r.success:
                base.reason = "dbt seed failed: " + r.first_error()
                return r
            seeded = self.root / "raw_seeded" / f"{self.cfg.db_name}.duckdb"
            dbfiles.copy_file(self.live, seeded)
            base.raw_db = str(seeded)
        if self.shadow:
            shuffle_tables(self.live)
        r = dbt_in(self.app, ["run"])
        base.seconds["run"] = r.seconds
        base.model_seconds = {u: n.seconds for u, n in r.nodes.items()}
        if not r.success:
            base.reason = "dbt run of the intact project failed: " + r.first_error()
            base.output = r.console[-3000:]
        return r


def baseline_job(cfg: WorkerConfig, shadow: bool = False) -> Baseline:
    """The intact build (`build`); the shadow build in a child process 40 days ahead where faketime
    is installed (validate.clockcheck)."""
    faketime = clockcheck.faketime_path() if shadow else None
    return shifted_build(cfg, faketime) if faketime else build(cfg, shadow)


def shifted_build(cfg: WorkerConfig, faketime: str, days: int = clockcheck.SHIFT_DAYS) -> Baseline:
    """The shadow build in a child process under `faketime -f +<days>d` (`shadow_main`). The child
    stays in the worker's process group (a job over its deadline is killed with it) and dies with
    the worker: PR_SET_PDEATHSIG ties it to faketime, and `end_with` to the worker (a worker killed with
    its SIGKILLed run would otherwise leave it building into the removed work directory)."""
    work = Path(cfg.root) / "shadow-io"
    work.mkdir(parents=True, exist_ok=True)
    src, dst = work / "cfg.pickle", work / "baseline.pickle"
    src.write_bytes(pickle.dumps(cfg))
    dst.unlink(missing_ok=True)
    code = "import sys; from adegen.validate.duckdb.intact import shadow_main; sys.exit(shadow_main(sys.argv[1:]))"
    try:
        p = subprocess.run(clockcheck.shift_argv(faketime, code, str(src), str(dst), str(os.getpid()), days=days),
                           cwd=str(work),
                           env=clockcheck.shift_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, check=False)
        if p.returncode == 0 and dst.is_file():
            base = pickle.loads(dst.read_bytes())
            base.shifted_days = days
            return base
        out = p.stdout.decode("utf-8", "replace").strip()
        return Baseline(reason=f"the build {days} days ahead (faketime) exited {p.returncode}: {out[-1500:]}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def shadow_main(argv: list[str]) -> int:
    """The child under faketime: unpickle the WorkerConfig, run the shadow build, pickle the Baseline.
    argv: the config, the result file and the worker's pid."""
    die_with_parent()
    end_with(int(argv[2]))
    cfg = pickle.loads(Path(argv[0]).read_bytes())
    Path(argv[1]).write_bytes(pickle.dumps(build(cfg, shadow=True)))
    return 0


def recheck_job(cfg: WorkerConfig, models: dict) -> str | dict:
    """The shadow build's `models` ({uid: facts}) built again with today's clock, in the same app
    (same input order and thread count): the snapshot of those relations. A table the shifted build
    changed that still differs from the baseline then is nondeterministic, not clock-dependent.
    {"ok": False, "reason": ...} when dbt fails."""
    app = Path(cfg.root) / "shadow" / "app"
    r = dbt_in(app, ["run", "--select", *sorted({m["name"] for m in models.values()})])
    if not r.success:
        return {"ok": False, "reason": "dbt run failed: " + r.first_error()}
    snap = Path(cfg.root) / "shadow" / "recheck.duckdb"
    snapshot(app / f"{cfg.db_name}.duckdb", snap, models)
    return str(snap)


def build(cfg: WorkerConfig, shadow: bool = False) -> Baseline:
    """Scratch copy + profile, packages (offline), parse, raw DB (storage version v1.0.0, or what the
    project needs), dbt seed (seed-based projects), dbt run, snapshot of every model relation.
    `shadow`: the same under another physical plan (input rows reversed, another DuckDB thread
    count), for the determinism check."""
    t0 = time.monotonic()
    base = Baseline()
    root = Path(cfg.root) / ("shadow" if shadow else "baseline")
    try:
        shutil.rmtree(root, ignore_errors=True)
        build = _Build(cfg, root, shadow=shadow)
        r = build.run(base)
        if r is not None and r.success:
            base.baseline_db = str(build.live)
            snap = root / "snapshot.duckdb"
            base.snapshot_db = str(snap)
            base.rows = snapshot(build.live, snap, base.models)
            base.snapshot_tables = sorted(base.rows)
            # the manifest `dbt run` wrote: macro lineage plus every model's compiled code, followed
            # column by column: tables that read the clock only in some columns are graded without them
            if not shadow:  # the validator reads the baseline's
                clock = clock_lineage(json.loads((build.app / "target" / "manifest.json").read_text()), build.live,
                                      base.models)
                base.clock, base.clock_columns, base.clock_windowable = clock.whole, clock.columns, clock.windowable
                base.clock_spines = {u: {c: sd.to_dict() for c, sd in cols.items()} for u, cols in clock.spines.items()}
            base.ok, base.reason = True, "baseline built"
    except Exception as exc:  # noqa: BLE001 - reported through usable()/InputError
        base.reason = f"baseline failed: {type(exc).__name__}: {exc}"
        base.traceback = traceback.format_exc()
    finally:
        base.seconds["total"] = time.monotonic() - t0
    return base
