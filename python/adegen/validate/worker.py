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
from . import oracle

_COPY_IGNORE = shutil.ignore_patterns("target", "logs", ".user.yml", "*.duckdb", "*.duckdb.wal",
                                      "__pycache__", ".git", "dbt_packages")
_STATE: dict = {}


def _tail(text: str, n: int = 3000) -> str:
    return text[-n:]


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
        return _screen(cfg, base, job)
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
    rr_path = app / "target" / "run_results.json"
    if rr_path.exists():
        rr_path.unlink()
    try:
        model_file.write_bytes(job["text"].encode("utf-8") if isinstance(job["text"], str) else job["text"])
        ok, out, secs, _ = dbtrun.run_inprocess(args, app)
    finally:
        model_file.write_bytes(original)
    statuses: dict[str, dict] = {}
    if rr_path.exists():
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
        ev = oracle.evidence(con, d, *rels[target], symptom)
        obs.update(compared_table=models[target]["alias"], rows_differing=d.rows_differing,
                   rows_total=d.rows_base, columns_differ=ev.columns_differ, example=ev.example)
        obs["details"].update(ev.details)
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
