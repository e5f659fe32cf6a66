"""Work done inside pool processes: dbt runs in-process (one invocation at a time per process).

Every function takes and returns plain picklable data.
"""
from __future__ import annotations

import json
import os
import shutil
import time
import traceback
from pathlib import Path

import duckdb
import yaml

from ..harness import dbfiles, dbtrun
from . import evidence, oracle

_COPY_IGNORE = shutil.ignore_patterns("target", "logs", ".user.yml", "*.duckdb", "*.duckdb.wal",
                                      "__pycache__", ".git", "dbt_packages")
_STATE: dict = {}


def _tail(text: str, n: int = 3000) -> str:
    return text[-n:]


# in-process calls whose artifacts nobody reads: dbt skips writing manifest.json and
# run_results.json (about 40% of a small call); partial parsing is unaffected
NO_ARTIFACTS = {"DBT_WRITE_JSON": "False"}


def _statuses(result) -> dict[str, dict]:
    """{unique_id: {status, message}} from a dbtRunner result (what run_results.json holds)."""
    out: dict[str, dict] = {}
    for r in getattr(getattr(result, "result", None), "results", None) or []:
        try:
            st = getattr(r.status, "value", r.status)
            out[r.node.unique_id] = {"status": str(st), "message": r.message}
        except AttributeError:
            continue
    return out


def warm(seconds: float = 0.3) -> int:
    """Import dbt and the DuckDB adapter in this worker (the first in-process call otherwise pays
    for it); lingers a moment so that each worker of the pool takes one warm-up job."""
    t0 = time.monotonic()
    try:
        import dbt.adapters.duckdb  # noqa: F401
        from dbt.cli.main import dbtRunner  # noqa: F401
    except Exception:  # noqa: BLE001
        pass
    time.sleep(max(0.0, seconds - (time.monotonic() - t0)))
    return os.getpid()


def warm_app(cfg: dict, seconds: float = 0.5) -> int:
    """Create this worker's screening app and let dbt parse it once (partial parsing from then
    on); lingers so that each worker takes one of these jobs."""
    t0 = time.monotonic()
    try:
        dbtrun.run_inprocess(["parse"], _worker_app(cfg), env=NO_ARTIFACTS)
    except Exception:  # noqa: BLE001 - the first screen will report problems
        pass
    time.sleep(max(0.0, seconds - (time.monotonic() - t0)))
    return os.getpid()


def _first_error(output: str) -> str:
    lines = [ln.split("  ", 1)[-1].strip() for ln in output.splitlines()]
    for i, ln in enumerate(lines):
        if ("Error" in ln and ("Compilation" in ln or "Database" in ln or "Runtime" in ln
                               or "Parsing" in ln)) or ln.startswith("Failure in"):
            rest = [x for x in lines[i:i + 4] if x]
            return " ".join(rest)[:400]
    return next((ln for ln in lines if "ERROR" in ln), "dbt failed")[:400]


# --------------------------------------------------------------------------- baseline

def baseline_job(cfg: dict) -> dict:
    """Scratch copy + profiles.yml, dbt deps/parse, raw DB, dbt seed (if seed-based), dbt run,
    snapshot of every model relation. Returns the facts the Validator keeps."""
    t0 = time.monotonic()
    root = Path(cfg["root"])
    app = root / "baseline" / "app"
    db_name = cfg["db_name"]
    info: dict = {"ok": False, "reason": "", "seconds": {}}
    try:
        if app.exists():
            shutil.rmtree(app)
        shutil.copytree(cfg["project_dir"], app, ignore=_COPY_IGNORE, symlinks=True)
        write_profiles(app, cfg)
        outputs = []
        if prepare_packages(Path(cfg["project_dir"]), app):
            ok, out, _, _ = dbtrun.run_inprocess(["deps"], app)
            outputs.append(out)
            if not ok:
                info["reason"] = "dbt deps failed (packages cannot be installed offline?): " + _first_error(out)
                return info
        ok, out, secs, _ = dbtrun.run_inprocess(["parse"], app)
        info["seconds"]["parse"] = secs
        if not ok:
            info["reason"] = "dbt parse failed: " + _first_error(out)
            return info
        manifest = json.loads((app / "target" / "manifest.json").read_text())
        facts = manifest_facts(manifest)
        info.update(facts)
        drop = [(m["schema"], m["alias"]) for m in facts["models"].values()
                if m["materialized"] != "ephemeral"]
        raw = root / "raw" / f"{db_name}.duckdb"
        src = cfg.get("db_source")
        if facts["seed_based"] and not cfg.get("db_explicit"):
            src = None  # a fresh DB: the seeds are the raw data
        dbfiles.write_versioned_copy(Path(src) if src else None, raw, drop=drop,
                                     storage_version=cfg.get("work_storage_version", "v1.0.0"))
        info["raw_db"] = str(raw)
        dbfiles.copy_file(raw, app / f"{db_name}.duckdb")
        if facts["seed_based"]:
            ok, out, secs, _ = dbtrun.run_inprocess(["seed"], app)
            info["seconds"]["seed"] = secs
            outputs.append(out)
            if not ok:
                info["reason"] = "dbt seed failed: " + _first_error(out)
                return info
            seeded = root / "raw_seeded" / f"{db_name}.duckdb"
            dbfiles.copy_file(app / f"{db_name}.duckdb", seeded)
            info["raw_db"] = str(seeded)
        ok, out, secs, _ = dbtrun.run_inprocess(["run"], app)
        info["seconds"]["run"] = secs
        outputs.append(out)
        if not ok:
            info["reason"] = "dbt run of the intact project failed: " + _first_error(out)
            info["output"] = _tail(out)
            return info
        info["baseline_db"] = str(app / f"{db_name}.duckdb")
        snap = root / "baseline" / "snapshot.duckdb"
        info["snapshot_db"] = str(snap)
        info["snapshot_tables"] = snapshot(app / f"{db_name}.duckdb", snap, facts["models"])
        info["ok"] = True
        info["reason"] = "baseline built"
    except Exception as exc:
        info["reason"] = f"baseline failed: {type(exc).__name__}: {exc}"
        info["traceback"] = traceback.format_exc()
    finally:
        info["seconds"]["total"] = time.monotonic() - t0
    return info


def prepare_packages(project_dir: Path, app: Path) -> bool:
    """Make the scratch copy's packages installable: relative `local:` paths are made absolute
    (they pointed next to the original project); installed hub packages are copied over.
    Returns True when `dbt deps` must run."""
    has_local = has_remote = False
    for fname in ("packages.yml", "dependencies.yml"):
        f = app / fname
        if not f.exists():
            continue
        data = yaml.safe_load(f.read_text()) or {}
        pkgs = data.get("packages") or []
        changed = False
        for p in pkgs:
            if isinstance(p, dict) and "local" in p:
                has_local = True
                if not Path(str(p["local"])).is_absolute():
                    p["local"] = str((project_dir / str(p["local"])).resolve())
                    changed = True
            else:
                has_remote = True
        if changed:
            f.write_text(yaml.safe_dump(data, sort_keys=False))
    installed = project_dir / "dbt_packages"
    if has_remote and installed.is_dir():
        # hub/git packages cannot be fetched offline: reuse the installed ones
        shutil.copytree(installed, app / "dbt_packages", symlinks=True)
        return False
    return has_local or has_remote


def write_profiles(app: Path, cfg: dict) -> None:
    target = dict(cfg.get("target_config") or {})
    target.pop("database", None)
    target["type"] = "duckdb"
    target["path"] = f"./{cfg['db_name']}.duckdb"
    target.setdefault("schema", cfg.get("schema") or "main")
    target.setdefault("threads", 1)
    prof = {cfg["profile_name"]: {"target": cfg["target_name"],
                                  "outputs": {cfg["target_name"]: target}}}
    (app / "profiles.yml").write_text(yaml.safe_dump(prof, sort_keys=False))


def manifest_facts(manifest: dict) -> dict:
    nodes = manifest.get("nodes", {})
    models = {}
    seeds = {}
    for uid, n in nodes.items():
        if n.get("resource_type") == "model":
            models[uid] = {"name": n["name"], "path": n.get("original_file_path"),
                           "schema": n.get("schema"), "alias": n.get("alias") or n["name"],
                           "database": n.get("database"),
                           "materialized": (n.get("config") or {}).get("materialized", "view"),
                           "depends_on": (n.get("depends_on") or {}).get("nodes", [])}
        elif n.get("resource_type") == "seed":
            seeds[uid] = ((n.get("schema") or "").lower(), (n.get("alias") or n["name"]).lower())
    seed_rel = set(seeds.values())
    sources = manifest.get("sources", {})
    seed_sources = [uid for uid, s in sources.items()
                    if ((s.get("schema") or "").lower(), (s.get("identifier") or s["name"]).lower())
                    in seed_rel]
    seed_based = bool(seed_sources) or any(
        d in seeds for m in models.values() for d in m["depends_on"])
    children: dict[str, list[str]] = {uid: [] for uid in models}
    for uid, m in models.items():
        for d in m["depends_on"]:
            if d in children:
                children[d].append(uid)
    return {"models": models, "children": children, "seed_based": seed_based,
            "seed_sources": seed_sources, "seeds": sorted(seeds)}


def snapshot(db_file: Path, snap: Path, models: dict) -> list[str]:
    """Copy every model relation (views materialized as tables) into `snap`."""
    for p in (snap, Path(str(snap) + ".wal")):
        if p.exists():
            p.unlink()
    con = duckdb.connect(str(snap))
    done = []
    cat = oracle.q(Path(db_file).stem)  # view definitions name this catalog
    try:
        con.execute(f"ATTACH '{db_file}' AS {cat} (READ_ONLY)")
        for m in models.values():
            if m["materialized"] == "ephemeral":
                continue
            rel = f"{oracle.q(m['schema'])}.{oracle.q(m['alias'])}"
            try:
                con.execute(f"CREATE SCHEMA IF NOT EXISTS {oracle.q(m['schema'])}")
                con.execute(f"CREATE TABLE {rel} AS SELECT * FROM {cat}.{rel}")
                done.append(f"{m['schema']}.{m['alias']}")
            except duckdb.Error:
                pass
        con.execute(f"DETACH {cat}")
    finally:
        con.close()
    return done


# --------------------------------------------------------------------------- screening

def _worker_app(cfg: dict) -> Path:
    app = _STATE.get("app")
    if app is None or _STATE.get("root") != cfg["root"]:
        app = Path(cfg["root"]) / "workers" / f"w{os.getpid()}" / "app"
        if app.exists():
            shutil.rmtree(app)
        # the baseline copy already has its packages installed (dbt_packages kept, links as links)
        shutil.copytree(Path(cfg["root"]) / "baseline" / "app", app, symlinks=True,
                        ignore=shutil.ignore_patterns("target", "logs", "*.duckdb", "*.duckdb.wal"))
        _STATE.update(app=app, root=cfg["root"])
    return app


def descendants(children: dict, uid: str) -> dict[str, int]:
    dist = {uid: 0}
    frontier = [uid]
    while frontier:
        nxt = []
        for u in frontier:
            for c in children.get(u, []):
                if c not in dist:
                    dist[c] = dist[u] + 1
                    nxt.append(c)
        frontier = nxt
    return dist


def screen_job(cfg: dict, base: dict, job: dict) -> dict:
    """Screen one mutant; never raises (a failure is an unobservable result with the reason)."""
    try:
        obs = _screen(cfg, base, job)
        keep = job.get("keep_db")
        if keep and obs.get("observable"):
            # the broken state setup.sh would leave: Validator.prove reuses it
            live = _worker_app(cfg) / f"{cfg['db_name']}.duckdb"
            Path(keep).parent.mkdir(parents=True, exist_ok=True)
            os.replace(live, keep)
            if Path(str(live) + ".wal").exists():
                os.replace(Path(str(live) + ".wal"), Path(str(keep) + ".wal"))
        return obs
    except Exception as exc:  # noqa: BLE001
        return {"observable": False, "build_error": False,
                "reason": f"screening failed: {type(exc).__name__}: {exc}",
                "details": {"traceback": traceback.format_exc()[-2000:]}}


def _screen(cfg: dict, base: dict, job: dict) -> dict:
    t0 = time.monotonic()
    app = _worker_app(cfg)
    db_name = cfg["db_name"]
    uid = job["uid"]
    models = base["models"]
    if uid not in models:
        return {"observable": False, "reason": f"unknown model {uid}", "build_error": False}
    m = models[uid]
    model_file = app / job["path"]
    original = model_file.read_bytes()
    dist = descendants(base["children"], uid)
    sel_models = {u: models[u] for u in dist}
    args = ["run", "--select", f"{m['name']}+"]
    if any(x["materialized"] == "incremental" for x in sel_models.values()):
        args.append("--full-refresh")  # the shipped DB has no model tables: a fresh build
    dbfiles.copy_file(Path(base["baseline_db"]), app / f"{db_name}.duckdb")
    # what a fresh full `dbt run` of the mutant leaves: the mutated model and everything
    # downstream rebuilt from nothing (a failing model leaves no relation), the rest intact
    _drop_relations(app / f"{db_name}.duckdb", [(x["schema"], x["alias"]) for x in sel_models.values()
                                                 if x["materialized"] != "ephemeral"])
    rr_path = app / "target" / "run_results.json"
    if rr_path.exists():
        rr_path.unlink()
    try:
        model_file.write_bytes(job["text"].encode("utf-8") if isinstance(job["text"], str) else job["text"])
        ok, out, secs, result = dbtrun.run_inprocess(args, app, env=NO_ARTIFACTS)
    finally:
        model_file.write_bytes(original)
    statuses: dict[str, dict] = _statuses(result)
    if not statuses and rr_path.exists():
        for r in json.loads(rr_path.read_text()).get("results", []):
            statuses[r["unique_id"]] = {"status": r.get("status"), "message": r.get("message")}
    errored = [u for u, s in statuses.items() if s["status"] in ("error", "fail")]
    obs = {"observable": False, "reason": "", "build_error": False, "compared_table": None,
           "rows_differing": 0, "rows_total": 0, "columns_differ": [], "changed_tables": {},
           "example": None, "details": {"dbt_seconds": secs, "selected": len(sel_models)}}
    symptom = job.get("symptom")
    if not ok or errored:
        obs["build_error"] = True
        msg = (statuses.get(uid) or {}).get("message") or (
            statuses[errored[0]]["message"] if errored else None) or _first_error(out)
        msg = " ".join(str(msg).split())[:400]
        obs["example"] = msg
        obs["compared_table"] = m["alias"] if m["materialized"] != "ephemeral" else None
        obs["changed_tables"] = {models[u]["alias"]: dist[u] for u in (errored or [uid]) if u in dist}
        obs["details"]["build_output"] = _tail(out, 1500)
        if symptom == "build_error":
            obs["observable"] = True
            obs["reason"] = f"build error as intended: {msg[:160]}"
        else:
            obs["reason"] = f"build error, but the pattern's symptom is {symptom}: {msg[:160]}"
        obs["details"]["seconds"] = time.monotonic() - t0
        return obs
    if symptom == "build_error":
        obs["reason"] = "the pattern expects a build error, but the mutant builds"
    # compare every rebuilt relation with the baseline snapshot
    con = duckdb.connect(str(app / f"{db_name}.duckdb"), read_only=True)
    diffs: dict[str, oracle.TableDiff] = {}
    rels: dict[str, tuple[str, str]] = {}
    try:
        con.execute(f"ATTACH '{base['snapshot_db']}' AS adegen_base (READ_ONLY)")
        for u, mm in sel_models.items():
            if mm["materialized"] == "ephemeral":
                continue
            rel = f"{oracle.q(mm['schema'])}.{oracle.q(mm['alias'])}"
            base_rel, mut_rel = f"adegen_base.{rel}", f"{oracle.q(db_name)}.{rel}"
            diffs[u] = oracle.compare_relations(con, mm["alias"], base_rel, mut_rel)
            rels[u] = (base_rel, mut_rel)
        visible = {u: d for u, d in diffs.items() if d.visible}
        dups = {u: d for u, d in diffs.items() if d.duplicates_only}
        obs["changed_tables"] = {models[u]["alias"]: dist[u] for u in visible}
        kind = {"intact": evidence.configured_kind(m["materialized"]),
                "broken": evidence.relation_kind(con, db_name, m["schema"], m["alias"])}
        if None not in kind.values() and kind["intact"] != kind["broken"]:
            obs["details"]["relation_kind"] = {"table": m["alias"], **kind}
            if not visible and symptom == "structure_wrong":
                # same data, another warehouse object: the pattern's own assertion test sees it
                obs.update(observable=True, compared_table=m["alias"], changed_tables={m["alias"]: 0},
                           reason=f"{m['alias']}: built as a {kind['broken']} instead of a {kind['intact']}")
                obs["details"]["tables"] = [{"table": m["alias"], "distance": 0, "relation_kind": kind,
                                             "rows_intact": diffs[uid].rows_base,
                                             "rows_broken": diffs[uid].rows_mut, "rows_differing": 0}]
                obs["details"]["seconds"] = time.monotonic() - t0
                return obs
        if not visible:
            if dups:
                u, d = next(iter(sorted(dups.items(), key=lambda kv: dist[kv[0]])))
                obs["reason"] = (f"visible only as duplicate rows, which the set-based equality test "
                                 f"ignores: {d.table} has {d.rows_mut} rows vs {d.rows_base}")
                obs["details"]["duplicates_only"] = {models[x]["alias"]: [dd.rows_base, dd.rows_mut]
                                                     for x, dd in dups.items()}
            else:
                obs["reason"] = ("equivalent on this data: every rebuilt table equals the intact "
                                 "build (set oracle and row counts)")
            obs["observable"] = False
            obs["details"]["seconds"] = time.monotonic() - t0
            return obs
        target = choose_compared(uid, visible, dist, models, job.get("difficulty"))
        d = visible[target]
        ev = oracle.evidence(con, d, *rels[target], symptom, distance=dist[target])
        obs.update(compared_table=models[target]["alias"], rows_differing=d.rows_differing,
                   rows_total=d.rows_base, columns_differ=ev.columns_differ, example=ev.example)
        obs["details"]["tables"] = oracle.tables_evidence(con, visible, rels, dist, uid, target,
                                                          known={target: ev.details})
        obs["details"]["rows_broken"] = d.rows_mut
        if symptom != "build_error":
            obs["observable"] = True
            obs["reason"] = (f"{d.table}: {d.rows_differing} row(s) differ under the equality oracle"
                             if not d.column_set_differs else f"{d.table}: column set differs")
    finally:
        con.close()
    obs["details"]["seconds"] = time.monotonic() - t0
    return obs


def choose_compared(uid: str, visible: dict, dist: dict, models: dict, difficulty: str | None) -> str:
    """The mutated model when it shows the change; for hard patterns the farthest changed
    downstream table (a mart), else the nearest changed table."""
    downstream = [u for u in visible if dist[u] > 0]
    if difficulty == "hard" and downstream:
        return max(downstream, key=lambda u: (dist[u], models[u]["alias"]))
    if uid in visible:
        return uid
    return min(visible, key=lambda u: (dist[u], models[u]["alias"]))


# --------------------------------------------------------------------------- proving

def solved_state_job(cfg: dict, job: dict) -> dict:
    """Run sage up to and including test_setup; leave the scratch root for seed export."""
    from ..harness.emulate import TrialRunner

    r = TrialRunner(Path(job["task_dir"]), Path(job["project_copy"]), Path(job["db_file"]), "sage",
                    workdir=Path(job["workdir"]), mode=job["mode"])
    res = r.run(stop_before_tests=True)
    return {"root": str(r.root), "seconds": res.seconds,
            "steps": [(s.name, s.ok, _tail(s.output, 800)) for s in r.steps]}


def harness_job(cfg: dict, job: dict) -> dict:
    from ..harness.emulate import run_harness

    res = run_harness(Path(job["task_dir"]), Path(job["project_copy"]), Path(job["db_file"]),
                      job["agent"], workdir=Path(job["workdir"]), mode=job["mode"])
    n_dbt_tests = sum(1 for s in res.steps if s.name.startswith(("tests", "test_setup")))
    return {"agent": res.agent, "resolved": res.resolved, "reason": res.reason, "tests": res.tests,
            "expected": res.expected_test_count, "seconds": res.seconds,
            "tail": res.output_tail(2500), "summary": res.summary(), "test_steps": n_dbt_tests,
            "test_dbt_calls": sum(1 for s in res.steps
                                  if s.name.startswith(("tests:dbt", "test_setup:dbt")))}


# --------------------------------------------------------------------------- proving, fast path
#
# For tasks adegen wrote itself (setup.sh = patch + dbt deps/seed/run, patches touching model
# files only, project copy byte-identical to the project, database prepared by the Validator)
# the solved state after test_setup equals the intact build for every model it (re)builds, so
# the baseline is the solved state; the broken state after setup.sh is the baseline with the
# mutated models and everything downstream dropped and rebuilt from the mutant. Only the
# grading itself (test_setup, seeds, dbt test) runs as the harness runs it.

def _prove_root(cfg: dict, project_copy: str, flavor: str) -> Path:
    import hashlib

    key = hashlib.sha1(str(project_copy).encode()).hexdigest()[:10]
    return Path(cfg["root"]) / "workers" / f"w{os.getpid()}" / f"prove-{flavor}-{key}"


def _prove_app(cfg: dict, project_copy: str, flavor: str) -> Path:
    from ..harness.prepared import sync_tree

    app = _prove_root(cfg, project_copy, flavor) / "app"
    sync_tree(Path(project_copy), app)
    _ensure_packages(Path(project_copy), app)
    return app


def _ensure_packages(project_copy: Path, app: Path) -> None:
    """`dbt deps` once per persistent app (and again only when packages.yml changes)."""
    texts = [(project_copy / f).read_text() for f in ("packages.yml", "dependencies.yml")
             if (project_copy / f).is_file()]
    if not texts:
        return
    import hashlib

    key = hashlib.sha1("\0".join(texts).encode()).hexdigest()
    marker = app / "dbt_packages" / ".adegen-deps"
    if marker.is_file() and marker.read_text() == key:
        return
    if prepare_packages(project_copy, app):
        ok, out, _, _ = dbtrun.run_inprocess(["deps"], app)
        if not ok:
            raise RuntimeError("dbt deps failed: " + _first_error(out))
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(key)


def _patch(app: Path, patch_file: Path) -> tuple[bool, str]:
    import subprocess

    with open(patch_file, "rb") as fin:
        p = subprocess.run(["patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch"],
                           cwd=app, stdin=fin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return p.returncode == 0, p.stdout.decode("utf-8", "replace")


def _drop_relations(db_file: Path, rels: list[tuple[str, str]]) -> None:
    con = duckdb.connect(str(db_file))
    try:
        kinds = {(s.lower(), n.lower()): t for s, n, t in con.execute(
            "select table_schema, table_name, table_type from information_schema.tables "
            "where table_catalog = current_database()").fetchall()}
        for schema, name in rels:
            kind = kinds.get((schema.lower(), name.lower()))
            if kind:
                what = "VIEW" if kind == "VIEW" else "TABLE"
                con.execute(f"DROP {what} IF EXISTS {oracle.q(schema)}.{oracle.q(name)}")
        con.execute("CHECKPOINT")
    finally:
        con.close()


def prove_state_job(cfg: dict, base: dict, job: dict) -> dict:
    """kind "solved_again": the compared tables and their upstream chain rebuilt from the raw
    data (the second build that reveals non-deterministic columns); kind "broken": the database
    setup.sh leaves (intact build, mutated models + downstream dropped and rebuilt from the
    mutant). Never raises."""
    t0 = time.monotonic()
    try:
        if job["kind"] == "solved_again":
            res = _solved_again(cfg, base, job)
        else:
            res = _broken_state(cfg, base, job)
    except Exception as exc:  # noqa: BLE001
        res = {"ok": False, "reason": f"{type(exc).__name__}: {exc}",
               "traceback": traceback.format_exc()[-2000:]}
    res["seconds"] = time.monotonic() - t0
    return res


def _dbt_into(app: Path, db_name: str, start_db: Path, out_db: Path, args: list[str]) -> tuple[bool, str]:
    live = app / f"{db_name}.duckdb"
    dbfiles.copy_file(start_db, live)
    ok, out, _, _ = dbtrun.run_inprocess(args, app, env=NO_ARTIFACTS)
    out_db.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", ".wal"):
        src = Path(str(live) + suffix)
        dst = Path(str(out_db) + suffix)
        if dst.exists():
            dst.unlink()
        if src.exists():
            os.replace(src, dst)
    return ok, out


def _state_app(cfg: dict, base: dict, job: dict) -> Path:
    """The worker's prove app (shared with grading), dbt_project.yml pre-merged like grading
    does it, so dbt keeps partial-parsing across jobs."""
    from ..harness.prepared import _merge_from

    app = _prove_app(cfg, job["project_copy"], "grade")
    if job.get("project_name"):
        _merge_from(app, _all_solution_seeds_no_op(app.parent, {
            "baseline_db": base["baseline_db"], "project_name": job["project_name"],
            "tables_all": job["tables_all"]}))
    return app


def _solved_again(cfg: dict, base: dict, job: dict) -> dict:
    app = _state_app(cfg, base, job)
    models = base["models"]
    by_alias = {m["alias"].lower(): u for u, m in models.items()}
    sel, uids = [], set()
    for t in job["tables"]:
        u = by_alias.get(t.lower())
        if u is None:
            return {"ok": False, "reason": f"no model builds table {t}"}
        sel.append("+" + models[u]["name"])
        stack = [u]
        while stack:
            x = stack.pop()
            if x in uids or x not in models:
                continue
            uids.add(x)
            stack.extend(models[x]["depends_on"])
    args = ["run", "--select", *sel]
    if any(models[u]["materialized"] == "incremental" for u in uids):
        args.append("--full-refresh")
    out_db = Path(job["workdir"]) / "solved-again" / f"{cfg['db_name']}.duckdb"
    ok, out = _dbt_into(app, cfg["db_name"], Path(base["raw_db"]), out_db, args)
    if not ok:
        return {"ok": False, "reason": "second build of the solved state failed: " + _first_error(out),
                "output": _tail(out, 1500)}
    return {"ok": True, "db": str(out_db)}


def _broken_state(cfg: dict, base: dict, job: dict) -> dict:
    app = _state_app(cfg, base, job)
    task = Path(job["task_dir"])
    touched = job["touched_paths"]
    original = {p: (app / p).read_bytes() for p in touched}
    ok, out = _patch(app, task / "setup" / "changes.patch")
    if not ok:
        return {"ok": False, "reason": "setup/changes.patch does not apply: " + out[-300:]}
    mutant = {p: (app / p).read_bytes() for p in touched}
    ok, out = _patch(app, task / "solutions" / "changes.patch")
    inverse = ok and all((app / p).read_bytes() == original[p] for p in touched)
    if not inverse:
        return {"ok": False, "inverse": False,
                "reason": "the solution patch is not the exact inverse of the setup patch"}
    for p, data in mutant.items():
        (app / p).write_bytes(data)
    try:
        models = base["models"]
        by_path = {m["path"]: u for u, m in models.items()}
        roots = [by_path[p] for p in touched]
        down: set[str] = set()
        for r in roots:
            down |= set(descendants(base["children"], r))
        drop = [(models[u]["schema"], models[u]["alias"]) for u in down
                if models[u]["materialized"] != "ephemeral"]
        start = Path(job["workdir"]) / "broken-start.duckdb"
        dbfiles.copy_file(Path(base["baseline_db"]), start)
        _drop_relations(start, drop)
        out_db = Path(job["workdir"]) / "broken" / f"{cfg['db_name']}.duckdb"
        args = ["run", "--select", *[models[r]["name"] + "+" for r in roots]]
        ok, out = _dbt_into(app, cfg["db_name"], start, out_db, args)
        for p in (start, Path(str(start) + ".wal")):
            if p.exists():
                p.unlink()
    finally:
        for p, data in original.items():
            (app / p).write_bytes(data)
    return {"ok": True, "inverse": True, "db": str(out_db), "build_ok": ok,
            "build_output": _tail(out, 1500) if not ok else ""}


def prove_grade_job(cfg: dict, job: dict) -> dict:
    """Grade none and sage, one after the other in this worker's persistent grading root."""
    from ..harness.parser import parse_dbt_output
    from ..harness.prepared import PreparedTrialRunner, project_seed_names

    out: dict = {}
    try:
        root = _prove_root(cfg, job["project_copy"], "grade")
        _prove_app(cfg, job["project_copy"], "grade")
        loaded = project_seed_names(Path(job["project_copy"])) if job.get("seed_based") else set()
        premerge = [_all_solution_seeds_no_op(root, job)] if job.get("baseline_db") else []
        for agent in ("none", "sage"):
            r = PreparedTrialRunner(Path(job["task_dir"]), Path(job["project_copy"]), Path(job["broken_db"]),
                                    agent, root=root, loaded_seeds=loaded, premerge=premerge)
            t0 = time.monotonic()
            r.prepare()
            r.setup()
            r.run_agent()
            r.setup_test_env()
            text = r.run_tests()
            parsed = parse_dbt_output(text)
            r.seconds["total"] = time.monotonic() - t0
            from ..harness.emulate import HarnessResult

            res = HarnessResult(agent, "inprocess", parsed.resolved, parsed.reason, dict(parsed.tests),
                                parsed.expected_test_count, parsed, r.seconds, text, r.steps, None)
            out[agent] = {"agent": agent, "resolved": res.resolved, "reason": res.reason,
                          "tests": res.tests, "expected": res.expected_test_count,
                          "seconds": res.seconds, "tail": res.output_tail(2500), "summary": res.summary(),
                          "test_dbt_calls": sum(1 for s in r.steps
                                                if s.name.startswith(("tests:dbt", "test_setup:dbt"))),
                          "steps": [(s.name, round(s.seconds, 3)) for s in r.steps]}
        out["ok"] = True
    except Exception as exc:  # noqa: BLE001
        out.update(ok=False, reason=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()[-2000:])
    return out


def _all_solution_seeds_no_op(root: Path, job: dict) -> Path:
    """A _no-op.txt naming solution__<t> with its column types for every table of the intact
    build. Merged into the grading app's dbt_project.yml up front, it makes the file the same for
    every task (the task's own _no-op.txt merges to the same text), so dbt never re-parses the
    whole project for a project-config change between tasks."""
    from ..harness.seeds import no_op_text, table_schema

    out = root / f"all-no-op-{job['project_name']}.txt"
    if out.is_file():
        return out
    con = duckdb.connect(str(job["baseline_db"]), read_only=True)
    try:
        names = [r[0] for r in con.execute(
            "select distinct table_name from information_schema.tables "
            "where table_catalog = current_database() order by 1").fetchall()]
        schemas = {t: table_schema(con, t) for t in names if t.lower() in job["tables_all"]}
    finally:
        con.close()
    out.write_text(no_op_text(job["project_name"], schemas))
    return out
