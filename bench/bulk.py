"""Bulk mode throughput: proven tasks per hour with `python -m adegen.bulk --jobs 2`, against the
naive per-task procedure of bench/naive.py, on the example project and one practice project.

    python bench/bulk.py [--tasks 30] [--jobs 2] [--naive-tasks 3] [--corpus-project DIR]
                         [--cluster] [--example-only] [--out bench/results/bulk.json]

For each project (the corpus one is copied to a scratch dir first, never used in place):
  bulk:  one cold `adegen.bulk` run (fresh output dir and discovery cache), wall time from start
         to the last task written; proven tasks per hour = tasks / wall; seconds per task.
         The startup (discovery + baseline + workspace) and the loop are reported apart, from the
         run's --json `timings_sec`.
  naive: bench/naive.py's procedure (fresh copy, seed, run, patch, run, test, patch, run, test)
         on the first `--naive-tasks` tasks bulk wrote, one after another; seconds per task.
  ratio: naive seconds per task / bulk seconds per proven task (how many times cheaper bulk is,
         counting everything bulk spends, dropped candidates and startup included).
  --cluster: the same bulk command again with `--executor dask://...` on a Dask LocalCluster of
         --jobs worker processes (one thread each) started here: the same project, seed and worker
         count. Its row gives proven tasks per hour and the overhead per task against the local
         pool's row ((s/task cluster - s/task local) / s/task local; issue 32's target: within 15%),
         and whether it wrote the same tasks (setup patches and prompts).
Prints markdown tables (bench/RESULTS.md) and writes the JSON to --out."""
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
import threading
import time
from pathlib import Path

import yaml

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

import naive  # noqa: E402
from run import bench_env  # noqa: E402

DEFAULT_CORPUS = Path("/work/shared/corpus/adebench_helixops_saas")


def count_models(project: Path) -> int:
    return sum(1 for p in (project / "models").rglob("*.sql"))


def corpus_copy(src: Path, work: Path) -> tuple[Path, list[str]]:
    """A scratch copy of a practice project and the options naming its database file."""
    dest = work / src.name
    shutil.copytree(src, dest, symlinks=True)
    dbs = sorted(dest.glob("*.duckdb"))
    extra = ["--db-path", str(dest), "--db-name", dbs[0].stem] if dbs else []
    return dest, extra


def load() -> float:
    return os.getloadavg()[0]


def _sample_load(proc: subprocess.Popen, loads: list[float]) -> None:
    """The 1-minute load average every 10 s while `proc` runs (the table shows its min-max)."""
    while proc.poll() is None:
        time.sleep(10)
        loads.append(load())


def children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def workers_cpu(client) -> float:
    """CPU seconds the cluster's worker processes have used so far."""
    if client is None:
        return 0.0
    return sum(client.run(_own_cpu).values())


def _own_cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def run_bulk(project: Path, extra: list[str], args, work: Path, executor: str = "local", client=None) -> dict:
    tag = "" if executor == "local" else "-cluster"
    out = work / f"out-{project.name}{tag}"
    cmd = [sys.executable, "-m", "adegen.bulk", str(project), "--tasks", str(args.tasks), "--seed", str(args.seed),
           "--jobs", str(args.jobs), "--output-dir", str(out), "--json", "--executor", executor, *extra]
    t0, loads, cpu0, wcpu0 = time.monotonic(), [load()], children_cpu(), workers_cpu(client)
    proc = subprocess.Popen(cmd, env=bench_env(work / f"cache-{project.name}{tag}"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    sampler = threading.Thread(target=_sample_load, args=(proc, loads), daemon=True)
    sampler.start()
    stdout, stderr = proc.communicate()
    wall = time.monotonic() - t0
    sampler.join(11)
    r = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    # the bulk process and the children it reaped (the local pool's workers; not the cluster's)
    driver_cpu, worker_cpu = children_cpu() - cpu0, workers_cpu(client) - wcpu0
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        return {"status": f"failed: rc={r.returncode}: {(r.stderr.strip().splitlines() or [''])[-1]}",
                "wall_sec": round(wall, 1)}
    ds = doc.get("dataset") or {}
    tasks = ds.get("tasks") or []
    loop = float((doc.get("timings_sec") or {}).get("generation", 0.0))
    proofs = [t["proof_seconds"] for t in tasks if t.get("proof_seconds") is not None]
    return {"status": "ok" if tasks else f"no task (rc={r.returncode})", "out": str(out), "tasks": len(tasks),
            "decided": ds.get("decided"), "dropped": ds.get("dropped"), "wall_sec": round(wall, 1),
            "startup_sec": round(wall - loop, 1), "loop_sec": round(loop, 1),
            "tasks_per_hour": round(len(tasks) / wall * 3600) if tasks else 0,
            "loop_tasks_per_hour": round(len(tasks) / loop * 3600) if tasks and loop else None,
            "sec_per_task": round(wall / len(tasks), 1) if tasks else None,
            "median_proof_sec": round(statistics.median(proofs), 1) if proofs else None,
            "load": [round(min(loads), 1), round(max(loads), 1)],
            "cpu_sec": round(driver_cpu + worker_cpu, 1), "driver_cpu_sec": round(driver_cpu, 1) if client else None,
            "command": " ".join(cmd[1:])}


def same_tasks(a: dict, b: dict) -> bool | None:
    """Did two bulk runs write the same tasks (ids, setup patches, prompts)?"""
    if not a.get("tasks") or not b.get("tasks"):
        return None

    def texts(out: str) -> dict:
        tasks = Path(out) / "tasks"
        return {d.name: ((d / "setup" / "changes.patch").read_bytes(), yaml.safe_load((d / "task.yaml").read_text())["prompts"])
                for d in sorted(tasks.iterdir()) if not d.name.startswith(".")}

    return texts(a["out"]) == texts(b["out"])


def start_cluster(workers: int):
    """A Dask LocalCluster of `workers` processes of one thread (adegen's layout for a worker)."""
    from distributed import Client, LocalCluster

    env = {k: v for k, v in bench_env().items() if k in ("PYTHONPATH", "DBT_SEND_ANONYMOUS_USAGE_STATS", "DO_NOT_TRACK")}
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, memory_limit=0,
                           dashboard_address=":0", env=env)
    client = Client(cluster)
    client.wait_for_workers(workers, timeout=120)
    return cluster, client, "dask://" + cluster.scheduler_address.split("://", 1)[1]


def _cpu(b: dict) -> str:
    n = b.get("tasks") or 0
    if not n or b.get("cpu_sec") is None:
        return "n/a"
    driver = f" ({b['driver_cpu_sec'] / n:.1f})" if b.get("driver_cpu_sec") is not None else ""
    return f"{b['cpu_sec'] / n:.1f}{driver}"


def cluster_table(results: list[dict], jobs: int) -> str:
    lines = ["| project | executor | proven tasks | wall (startup + loop) | proven tasks/hour (loop only) | s/task "
             "| overhead per task vs local | CPU s/task (driver) | same tasks | load (min-max) |",
             "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in results:
        local = r["bulk"]
        for name, b in (("local pool", local), ("Dask LocalCluster", r.get("cluster"))):
            if not b:
                continue
            over = "-"
            if b is not local and b.get("sec_per_task") and local.get("sec_per_task"):
                over = f"{(b['sec_per_task'] - local['sec_per_task']) / local['sec_per_task'] * 100:+.0f}%"
            same = "-" if b is local else {True: "yes", False: "no", None: "n/a"}[r.get("same_tasks")]
            lines.append(f"| {r['project']} | {name} | {b.get('tasks', 0)} | {b['wall_sec']:.0f} s "
                         f"({b.get('startup_sec', 0):.0f} + {b.get('loop_sec', 0):.0f}) | {b.get('tasks_per_hour', 0)} "
                         f"({b.get('loop_tasks_per_hour')}) | {b.get('sec_per_task')} | {over} | {_cpu(b)} | {same} "
                         f"| {'-'.join(str(x) for x in b.get('load', []))} |")
    return "\n".join(lines) + f"\n\n--jobs {jobs} (local workers = Dask worker processes), {os.cpu_count()} cores"


def run_naive(bulk: dict, project: Path | None, k: int, work: Path) -> dict:
    """The naive procedure for the first k tasks bulk wrote, on `project` (a project whose raw data
    is in its database file) or else on the project copy the tasks point to (seed-based)."""
    if not bulk.get("tasks"):
        return {"status": "unavailable: bulk wrote no task"}
    if k <= 0:
        return {"status": "not run (--naive-tasks 0)"}
    tasks_dir = Path(bulk["out"]) / "tasks"
    runs = [naive.naive_validate(d, project, workdir=work)
            for d in sorted(p for p in tasks_dir.iterdir() if not p.name.startswith("."))[:k]]
    secs = [r["seconds"] for r in runs]
    failed = [f"{r['task_id']}: {r['error'] or [s for s in r['steps'] if s['rc']][-1:]}" for r in runs if not r["ok"]]
    return {"status": "ok" if not failed else f"failed: {failed[0]}"[:400], "tasks": len(runs),
            "ok": len(runs) - len(failed), "sec_per_task": round(statistics.mean(secs), 1),
            "tasks_per_hour": round(3600 / statistics.mean(secs))}


def table(results: list[dict], jobs: int) -> str:
    lines = ["| project | models | proven tasks | wall (startup + loop) | proven tasks/hour (loop only) "
             "| s/task bulk | s/task naive | bulk cheaper by |",
             "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |"]
    for r in results:
        b, n = r["bulk"], r["naive"]
        ratio = (f"{n['sec_per_task'] / b['sec_per_task']:.1f}x"
                 if n.get("sec_per_task") and b.get("sec_per_task") else "n/a")
        lines.append(f"| {r['project']} | {r['models']} | {b.get('tasks', 0)} | {b['wall_sec']:.0f} s "
                     f"({b.get('startup_sec', 0):.0f} + {b.get('loop_sec', 0):.0f}) | {b.get('tasks_per_hour', 0)} "
                     f"({b.get('loop_tasks_per_hour')}) | {b.get('sec_per_task')} | {n.get('sec_per_task', 'n/a')} "
                     f"| {ratio} |")
    return "\n".join(lines) + f"\n\n--jobs {jobs}, {os.cpu_count()} cores, {platform.python_version()}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=30)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--naive-tasks", type=int, default=3)
    ap.add_argument("--corpus-project", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--cluster", action="store_true",
                    help="also run each project on a Dask LocalCluster of --jobs workers (needs dask[distributed])")
    ap.add_argument("--cluster-first", action="store_true",
                    help="with --cluster: run the cluster before the local pool (alternate runs to even out the load)")
    ap.add_argument("--example-only", action="store_true", help="only the example project (no corpus project)")
    ap.add_argument("--out", type=Path, default=BENCH / "results" / "bulk.json")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="adegen-bench-bulk-"))
    cluster = client = None
    try:
        projects = [(REPO / "integration_tests", [])]
        if args.corpus_project.is_dir() and not args.example_only:
            projects.append(corpus_copy(args.corpus_project, work))
        if args.cluster:
            cluster, client, url = start_cluster(args.jobs)
        results = []
        for project, extra in projects:
            row = {"project": project.name, "models": count_models(project)}
            runs = [("bulk", "local")] + ([("cluster", url)] if cluster is not None else [])
            for key, executor in (runs[::-1] if args.cluster_first else runs):
                print(f"bulk on {project.name}, executor {executor} ...", flush=True)
                row[key] = run_bulk(project, extra, args, work, executor=executor,
                                    client=client if key == "cluster" else None)
                print(f"  {row[key]}", flush=True)
            bulk = row["bulk"]
            if cluster is not None:
                row["same_tasks"] = same_tasks(bulk, row["cluster"])
                print(f"  same tasks: {row['same_tasks']}", flush=True)
            row["naive"] = run_naive(bulk, project if extra else None, args.naive_tasks, work)
            print(f"  naive: {row['naive']}", flush=True)
            results.append(row)
        md = table(results, args.jobs)
        if cluster is not None:
            md += "\n\n" + cluster_table(results, args.jobs)
        print(md)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"results": results, "table": md}, indent=2) + "\n")
    finally:
        if cluster is not None:
            client.close()
            cluster.close()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
