"""Validation cost benchmark: adegen's Validator vs the naive subprocess procedure.

One run on the example project (default `integration_tests/`, dbt name `acme`):

- adegen: baseline build, screening of a fixed list of hand-picked mutations (`screen_many`
  batch, then each candidate once more through `screen` on warm workers), then tasks generated
  from the observable candidates with adegen's own task writer (`taskgen.build_task_files`,
  `output.copy_project`) and proven with `Validator.prove` (export seeds, none must fail, sage must
  pass).
- naive screen (`naive_screen`, here): fresh scratch copy, [dbt deps], dbt seed, dbt run, write
  the mutant, dbt run --select <model>+, compare every model relation with the set oracle; all
  dbt calls as subprocesses.
- naive task (`bench/naive.py::naive_validate`, owned by the bench owner): fresh scratch copy,
  [dbt deps], dbt seed, dbt run, patch, dbt run, dbt test, patch back, dbt run, dbt test.
- optional `--script-check`: the independent check of one proven task (`run_harness(...,
  mode="script")`, real bash scripts + dbt subprocesses) for none and sage.

Ratios printed: naive seconds / adegen seconds per screened candidate and per fully validated
task (prove only, and end to end = amortized baseline + one screen + prove). CPU seconds (this
process, live pool workers from /proc, reaped children) are recorded next to wall seconds,
because the machine is shared.

    python bench/validate_bench.py [--project DIR] [--out bench/results/validate.json]
                                   [--naive-screens 1] [--naive-tasks 1] [--tasks 3]
                                   [--mode inprocess|script] [--script-check] [--workdir DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, os.environ.get("ADEGEN_BENCH_PYTHONPATH") or str(REPO / "python"))
sys.path.insert(0, str(BENCH))

# (unique_id, path, old, new, symptom, difficulty) - applied with str.replace(old, new, 1)
ACME_CANDIDATES = [
    ("model.acme.rpt_top_products", "models/marts/rpt_top_products.sql",
     "category_revenue_rank <= 3", "category_revenue_rank < 3", "rows_missing", "easy"),
    ("model.acme.rpt_monthly_revenue", "models/marts/rpt_monthly_revenue.sql",
     "sum(net_revenue_cents) as revenue_cents", "max(net_revenue_cents) as revenue_cents",
     "values_too_low", "easy"),
    ("model.acme.int_order_payments", "models/intermediate/int_order_payments.sql",
     "when payment_status = 'refunded' then amount_cents", "when payment_status = 'failed' then amount_cents",
     "values_wrong", "medium"),
    ("model.acme.rpt_monthly_revenue", "models/marts/rpt_monthly_revenue.sql",
     "subscriptions.subscription_status <> 'paused'", "subscriptions.subscription_status = 'paused'",
     "values_wrong", "easy"),
]


# --------------------------------------------------------------------------- measuring

def _proc_cpu(pid: int) -> float:
    """utime+stime+cutime+cstime of a live process (seconds), 0 if gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        tck = os.sysconf("SC_CLK_TCK")
        return sum(int(x) for x in fields[11:15]) / tck
    except (OSError, IndexError, ValueError):
        return 0.0


class Meter:
    """Wall + CPU seconds of this process, its reaped children and the live pool workers."""

    def __init__(self, worker_pids=lambda: []):
        self.worker_pids = worker_pids

    def _cpu(self) -> tuple[float, dict]:
        ch = resource.getrusage(resource.RUSAGE_CHILDREN)
        per = {pid: _proc_cpu(pid) for pid in self.worker_pids()}
        return time.process_time() + ch.ru_utime + ch.ru_stime, per

    def __enter__(self):
        self.t0 = time.monotonic()
        self.c0, self.w0 = self._cpu()
        return self

    def __exit__(self, *exc):
        self.wall = time.monotonic() - self.t0
        c1, w1 = self._cpu()
        workers = sum(max(0.0, w1.get(p, 0.0) - self.w0.get(p, 0.0)) for p in w1)
        self.cpu = (c1 - self.c0) + workers
        return False


def _pool_pids(v) -> list[int]:
    pool = getattr(v, "_pool", None)
    procs = getattr(pool, "_processes", None) or {}
    return list(procs)


# --------------------------------------------------------------------------- naive procedures

def _dbt_env() -> dict:
    env = dict(os.environ)
    env.update(DBT_SEND_ANONYMOUS_USAGE_STATS="false", DO_NOT_TRACK="1", DBT_PARTIAL_PARSE="false")
    for k in ("DBT_PROFILES_DIR", "DBT_PROJECT_DIR", "DBT_TARGET_PATH"):
        env.pop(k, None)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def naive_screen(project_dir: Path, rel_path: str, mutated_text: str, model_name: str,
                 db_name: str, *, workdir: Path) -> dict:
    """Screen one mutant the naive way: everything from scratch, dbt as subprocesses."""
    import duckdb

    from adegen.validate.rules import oracle

    t0 = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="naive-screen-", dir=workdir))
    app = root / project_dir.name
    steps = []
    try:
        shutil.copytree(project_dir, app, symlinks=True, ignore=shutil.ignore_patterns(
            "target", "logs", "dbt_packages", "*.duckdb", "*.duckdb.wal", ".user.yml"))
        try:
            import naive

            naive._absolute_local_packages(app, project_dir)
        except ImportError:
            pass
        env = _dbt_env()

        def dbt(*args):
            s0 = time.monotonic()
            cp = subprocess.run(["dbt", *args, "--profiles-dir", str(app)], cwd=app, env=env,
                                capture_output=True, text=True, stdin=subprocess.DEVNULL)
            steps.append({"cmd": "dbt " + " ".join(args), "rc": cp.returncode,
                          "seconds": round(time.monotonic() - s0, 3)})
            return cp.returncode

        if (app / "packages.yml").exists() and dbt("deps"):
            raise RuntimeError("dbt deps failed")
        if dbt("seed") or dbt("run"):
            raise RuntimeError("baseline build failed")
        db = app / f"{db_name}.duckdb"
        base = root / "intact.duckdb"
        shutil.copyfile(db, base)
        (app / rel_path).write_text(mutated_text)
        build_error = dbt("run", "--select", f"{model_name}+") != 0
        manifest = json.loads((app / "target" / "manifest.json").read_text())
        rels = sorted({(n["schema"], n.get("alias") or n["name"]) for n in manifest["nodes"].values()
                       if n.get("resource_type") == "model"
                       and n.get("config", {}).get("materialized") != "ephemeral"})
        con = duckdb.connect(str(db), read_only=True)
        visible = []
        try:
            con.execute(f"ATTACH '{base}' AS intact (READ_ONLY)")
            for schema, name in rels:
                rel = f"{oracle.q(schema)}.{oracle.q(name)}"
                d = oracle.compare_relations(con, name, f"intact.{rel}", f"{oracle.q(db_name)}.{rel}")
                if d.visible:
                    visible.append(name)
        finally:
            con.close()
        return {"ok": True, "build_error": build_error, "visible": visible, "steps": steps,
                "seconds": round(time.monotonic() - t0, 3)}
    except Exception as exc:  # noqa: BLE001
        return {"ok": False, "error": str(exc), "steps": steps, "seconds": round(time.monotonic() - t0, 3)}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def naive_task(task_dir: Path, project_copy: Path, workdir: Path) -> dict:
    try:
        import naive  # bench/naive.py (the bench owner's naive procedure)

        return naive.naive_validate(task_dir, project_copy, workdir=workdir)
    except ImportError:
        return _naive_task_fallback(task_dir, project_copy, workdir)


def _naive_task_fallback(task_dir: Path, project: Path, workdir: Path) -> dict:
    """copy, [deps], seed, run, patch, run, test, patch back, run, test (subprocesses)."""
    t0 = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="naive-task-", dir=workdir))
    app = root / project.name
    env = _dbt_env()
    res = {"task_id": task_dir.name, "steps": []}
    try:
        shutil.copytree(project, app, symlinks=True, ignore=shutil.ignore_patterns(
            "target", "logs", "dbt_packages", "*.duckdb", "*.duckdb.wal"))

        def run(name, argv, stdin=None):
            s0 = time.monotonic()
            with open(stdin or os.devnull, "rb") as fin:
                cp = subprocess.run(argv, cwd=app, env=env, stdin=fin, capture_output=True)
            res["steps"].append({"name": name, "rc": cp.returncode, "seconds": time.monotonic() - s0})
            return cp.returncode

        if (app / "packages.yml").exists():
            run("dbt deps", ["dbt", "deps"])
        run("dbt seed", ["dbt", "seed"])
        run("dbt run", ["dbt", "run"])
        run("patch setup", ["patch", "-p1"], task_dir / "setup" / "changes.patch")
        run("dbt run (broken)", ["dbt", "run"])
        res["broken_fails"] = run("dbt test (broken)", ["dbt", "test"]) != 0
        run("patch solution", ["patch", "-p1"], task_dir / "solutions" / "changes.patch")
        rr = run("dbt run (solved)", ["dbt", "run"])
        res["solved_passes"] = run("dbt test (solved)", ["dbt", "test"]) == 0 and rr == 0
        res["ok"] = res["solved_passes"]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    res["seconds"] = time.monotonic() - t0
    return res


# --------------------------------------------------------------------------- tasks

def make_task(tasks_dir: Path, task_id: str, project, project_dir_field: str, uid: str, rel_path: str,
              original: str, mutant: str, obs, seed_based: bool, pattern) -> Path:
    from adegen.tasks.task_yaml import PromptEntry, SeedEntry, Variant
    from adegen.tasks.taskgen import TaskPlan, build_task_files, unified_diff

    model = uid.split(".")[-1]
    compared = obs.compared_table or model
    setup_models = [model] if compared == model else [model, compared]
    spec = TaskPlan(task_id=task_id, description=f"bench task on {model} ({pattern.id})",
                    prompts=[PromptEntry("base", f"Something is off in {compared}: {obs.example}. Can you fix it?")],
                    difficulty=pattern.difficulty, tags=["dbt", "debugging", project.name],
                    test_setup_models=setup_models, solution_seeds=[SeedEntry(compared)],
                    variant=Variant(db_type="duckdb", db_name=project.db_name, project_name=project.name,
                                    project_dir=project_dir_field),
                    seed_based=seed_based, status="ready", solution_rebuild=[model],
                    max_test_timeout_sec=120 if seed_based else None)
    files = build_task_files(spec, unified_diff(original.encode(), mutant.encode(), rel_path),
                             unified_diff(mutant.encode(), original.encode(), rel_path), [],
                             build_may_fail=obs.build_error)
    task = tasks_dir / task_id
    for rel, data in files.files.items():
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_bytes(data)
    return task


# --------------------------------------------------------------------------- main

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--project", type=Path, default=REPO / "integration_tests")
    ap.add_argument("--out", type=Path, default=BENCH / "results" / "validate.json")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--tasks", type=int, default=3, help="tasks to prove (from observable candidates)")
    ap.add_argument("--naive-screens", type=int, default=1)
    ap.add_argument("--naive-tasks", type=int, default=1)
    ap.add_argument("--mode", choices=["inprocess", "script"], default="inprocess")
    ap.add_argument("--script-check", action="store_true",
                    help="also run the independent check (real scripts) on the first proven task")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)

    from adegen import backends
    from adegen.tasks.output import copy_project
    from adegen.discover.project import load_project

    project_dir = args.project.resolve()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="adegen-vbench-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    project = load_project(project_dir)
    if project.name != "acme":
        print("only the acme candidate list is built in; --project must be the example project",
              file=sys.stderr)
        return 2
    doc: dict = {"meta": {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                          "python": platform.python_version(), "cpus": os.cpu_count(),
                          "load_avg_start": list(os.getloadavg()), "argv": sys.argv[1:],
                          "project": str(project_dir), "mode": args.mode}}
    try:
        import dbt.version

        doc["meta"]["dbt"] = dbt.version.__version__
    except Exception:  # noqa: BLE001
        pass
    try:
        doc["meta"]["git_commit"] = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, text=True,
                                                   capture_output=True).stdout.strip()
    except OSError:
        pass

    cands = []
    for uid, path, old, new, symptom, diff in ACME_CANDIDATES:
        text = (project_dir / path).read_text()
        assert old in text, (path, old)
        cands.append((uid, path, text, text.replace(old, new, 1),
                      SimpleNamespace(id=f"bench_{len(cands)}", symptom=symptom, difficulty=diff)))

    v = backends.make_validator(project, backends.ValidatorSetup(work / "v", jobs=args.jobs, prove_mode=args.mode))
    meter = lambda: Meter(lambda: _pool_pids(v))  # noqa: E731
    try:
        with meter() as m:
            for f in [v.pool().submit(int) for _ in range(args.jobs)]:
                f.result()
        doc["pool_start"] = {"wall_s": round(m.wall, 3), "cpu_s": round(m.cpu, 3)}
        with meter() as m:
            v.baseline()
        doc["baseline"] = {"wall_s": round(m.wall, 3), "cpu_s": round(m.cpu, 3),
                           "models": len(v.baseline_info().get("models", {}))}
        print(f"baseline: {m.wall:.1f}s wall, {m.cpu:.1f}s cpu", flush=True)

        # --- screening: one batch (includes the first, cold call per worker), then warm singles
        items = [(uid, path, mut, pat) for uid, path, _orig, mut, pat in cands]
        with meter() as m:
            obs = v.screen_many(items)
        batch = {"n": len(items), "wall_s": round(m.wall, 3), "cpu_s": round(m.cpu, 3),
                 "wall_per_candidate_s": round(m.wall / len(items), 3),
                 "cpu_per_candidate_s": round(m.cpu / len(items), 3)}
        singles = []
        for it in items:
            with meter() as m:
                v.screen(*it)
            singles.append((m.wall, m.cpu))
        doc["screen"] = {"batch": batch,
                         "warm_single": {"n": len(singles),
                                         "wall_median_s": round(statistics.median(s[0] for s in singles), 3),
                                         "cpu_median_s": round(statistics.median(s[1] for s in singles), 3),
                                         "wall_s": [round(s[0], 3) for s in singles]},
                         "observations": [{"model": it[0], "observable": o.observable,
                                           "compared_table": o.compared_table, "reason": o.reason[:160],
                                           "seconds": o.details.get("seconds")}
                                          for it, o in zip(items, obs)]}
        print(f"screen: batch {batch['wall_per_candidate_s']:.2f}s/candidate, warm single median "
              f"{doc['screen']['warm_single']['wall_median_s']:.2f}s", flush=True)

        # --- tasks
        out = work / "out"
        db_file = v.prepare_database(out / "databases")
        projects = out / "projects"
        profiles = backends.for_project(project).copy_profile(project)
        copy_project(project_dir, projects / project.name, profiles_yml=profiles, adegen_root=REPO)
        project_copy = projects / project.name
        tasks_dir = out / "tasks"
        proofs = []
        n = 0
        seen_models = set()
        for (uid, path, orig, mut, pat), o in zip(cands, obs):
            if not o.observable or n >= args.tasks or uid in seen_models:
                continue
            seen_models.add(uid)
            n += 1
            task = make_task(tasks_dir, f"{project.name}{800 + n:03d}", project, str(projects), uid, path,
                             orig, mut, o, v.seed_based(), pat)
            with meter() as m:
                proof = v.prove(task, project_copy, db_file)
            proofs.append({"task": task.name, "ok": proof.ok, "broken_fails": proof.broken_fails,
                           "solved_passes": proof.solved_passes, "wall_s": round(m.wall, 3),
                           "cpu_s": round(m.cpu, 3), "seconds": {k: round(x, 3) for k, x in proof.seconds.items()},
                           "detail": proof.detail[:600]})
            print(f"prove {task.name}: ok={proof.ok} {m.wall:.1f}s wall {m.cpu:.1f}s cpu "
                  f"{proof.detail.splitlines()[0][:200]}", flush=True)
        walls = [p["wall_s"] for p in proofs]
        doc["prove"] = {"tasks": proofs, "n": len(proofs), "all_ok": all(p["ok"] for p in proofs),
                        "wall_mean_s": round(statistics.mean(walls), 3) if walls else None,
                        "wall_median_s": round(statistics.median(walls), 3) if walls else None,
                        "cpu_mean_s": round(statistics.mean(p["cpu_s"] for p in proofs), 3) if proofs else None}

        if args.script_check and proofs:
            from adegen.adebench.procedure import run_harness

            task = tasks_dir / proofs[0]["task"]
            chk = {}
            for agent in ("none", "sage"):
                with meter() as m:
                    r = run_harness(task, project_copy, db_file, agent, workdir=work / "script", mode="script")
                chk[agent] = {"resolved": r.resolved, "summary": r.summary(), "wall_s": round(m.wall, 3)}
            chk["agrees"] = (not chk["none"]["resolved"]) and chk["sage"]["resolved"]
            doc["script_check"] = chk
            print(f"independent check (script mode) {task.name}: agrees={chk['agrees']} "
                  f"none {chk['none']['wall_s']:.1f}s sage {chk['sage']['wall_s']:.1f}s", flush=True)
    finally:
        v.close()

    # --- naive
    ns = []
    for uid, path, _orig, mut, _pat in cands[:args.naive_screens]:
        with Meter() as m:
            r = naive_screen(project_dir, path, mut, uid.split(".")[-1], project.db_name, workdir=work)
        r.update(wall_s=round(m.wall, 3), cpu_s=round(m.cpu, 3))
        ns.append(r)
        print(f"naive screen {uid}: {m.wall:.1f}s wall {m.cpu:.1f}s cpu visible={r.get('visible')}", flush=True)
    nt = []
    for p in proofs[:args.naive_tasks]:
        with Meter() as m:
            r = naive_task(tasks_dir / p["task"], project_copy, work)
        r.update(wall_s=round(m.wall, 3), cpu_s=round(m.cpu, 3))
        nt.append(r)
        print(f"naive task {p['task']}: {m.wall:.1f}s wall {m.cpu:.1f}s cpu", flush=True)
    doc["naive"] = {"screens": ns, "tasks": nt}

    # --- ratios
    def ratio(a, b):
        return round(a / b, 2) if a and b else None

    screen_ad = doc["screen"]["warm_single"]["wall_median_s"]
    screen_batch = doc["screen"]["batch"]["wall_per_candidate_s"]
    ns_wall = statistics.mean(r["wall_s"] for r in ns) if ns else None
    ns_cpu = statistics.mean(r["cpu_s"] for r in ns) if ns else None
    nt_wall = statistics.mean(r["wall_s"] for r in nt) if nt else None
    nt_cpu = statistics.mean(r["cpu_s"] for r in nt) if nt else None
    prove_wall = doc["prove"]["wall_mean_s"]
    prove_cpu = doc["prove"]["cpu_mean_s"]
    n_tasks = max(1, doc["prove"]["n"])
    e2e = (doc["baseline"]["wall_s"] / n_tasks + screen_batch + prove_wall) if prove_wall else None
    e2e_one = (doc["baseline"]["wall_s"] + screen_batch + prove_wall) if prove_wall else None
    doc["ratios"] = {
        "screen_naive_over_adegen_warm": ratio(ns_wall, screen_ad),
        "screen_naive_over_adegen_batch": ratio(ns_wall, screen_batch),
        "screen_cpu_naive_over_adegen_batch": ratio(ns_cpu, doc["screen"]["batch"]["cpu_per_candidate_s"]),
        "task_naive_over_adegen_prove": ratio(nt_wall, prove_wall),
        "task_cpu_naive_over_adegen_prove": ratio(nt_cpu, prove_cpu),
        "task_naive_over_adegen_end_to_end": ratio(nt_wall, e2e),
        "task_naive_over_adegen_end_to_end_single_task": ratio(nt_wall, e2e_one),
        "adegen_end_to_end_per_task_s": round(e2e, 3) if e2e else None,
        "adegen_end_to_end_single_task_s": round(e2e_one, 3) if e2e_one else None,
        "targets": {"screen": 20, "task": 5},
    }
    doc["meta"]["load_avg_end"] = list(os.getloadavg())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2, default=str) + "\n")

    r = doc["ratios"]
    print()
    print(f"== validation cost on {project.name} ({doc['baseline']['models']} models), mode {args.mode} ==")
    print(f"baseline (once)                 {doc['baseline']['wall_s']:8.2f}s")
    print(f"screen per candidate  adegen    {screen_ad:8.2f}s warm, {screen_batch:.2f}s in the batch"
          f" | naive {ns_wall or float('nan'):8.2f}s | ratio {r['screen_naive_over_adegen_warm']}x warm,"
          f" {r['screen_naive_over_adegen_batch']}x batch (target 20x)")
    print(f"validated task        adegen    {prove_wall or float('nan'):8.2f}s prove,"
          f" {r['adegen_end_to_end_per_task_s']}s end to end"
          f" | naive {nt_wall or float('nan'):8.2f}s | ratio {r['task_naive_over_adegen_prove']}x prove,"
          f" {r['task_naive_over_adegen_end_to_end']}x end to end"
          f" ({r['task_naive_over_adegen_end_to_end_single_task']}x with the whole baseline on one task;"
          f" target 5x)")
    print(f"proofs ok: {doc['prove']['all_ok']} ({doc['prove']['n']} tasks)"
          + (f"; independent script check agrees: {doc['script_check']['agrees']}"
             if "script_check" in doc else ""))
    print(f"written {args.out}")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if doc["prove"]["all_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
