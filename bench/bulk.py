"""Bulk mode throughput: proven tasks per hour with `python -m adegen.bulk --jobs 2`, against the
naive per-task procedure of bench/naive.py, on the example project and one practice project.

    python bench/bulk.py [--tasks 30] [--jobs 2] [--naive-tasks 3] [--corpus-project DIR]
                         [--out bench/results/bulk.json]

For each project (the corpus one is copied to a scratch dir first, never used in place):
  bulk:  one cold `adegen.bulk` run (fresh output dir and discovery cache), wall time from start
         to the last task written; proven tasks per hour = tasks / wall; seconds per task.
         The startup (discovery + baseline + workspace) and the loop are reported apart, from the
         run's --json `timings_sec`.
  naive: bench/naive.py's procedure (fresh copy, seed, run, patch, run, test, patch, run, test)
         on the first `--naive-tasks` tasks bulk wrote, one after another; seconds per task.
  ratio: naive seconds per task / bulk seconds per proven task (how many times cheaper bulk is,
         counting everything bulk spends, dropped candidates and startup included).
Prints a markdown table (README's Performance section) and writes the JSON to --out."""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def run_bulk(project: Path, extra: list[str], args, work: Path) -> dict:
    out = work / f"out-{project.name}"
    cmd = [sys.executable, "-m", "adegen.bulk", str(project), "--tasks", str(args.tasks), "--seed", str(args.seed),
           "--jobs", str(args.jobs), "--output-dir", str(out), "--json", *extra]
    t0 = time.monotonic()
    r = subprocess.run(cmd, env=bench_env(work / f"cache-{project.name}"), capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    wall = time.monotonic() - t0
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
            "command": " ".join(cmd[1:])}


def run_naive(bulk: dict, project: Path | None, k: int, work: Path) -> dict:
    """The naive procedure for the first k tasks bulk wrote, on `project` (a project whose raw data
    is in its database file) or else on the project copy the tasks point to (seed-based)."""
    if not bulk.get("tasks"):
        return {"status": "unavailable: bulk wrote no task"}
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
    ap.add_argument("--out", type=Path, default=BENCH / "results" / "bulk.json")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="adegen-bench-bulk-"))
    try:
        projects = [(REPO / "integration_tests", [])]
        if args.corpus_project.is_dir():
            projects.append(corpus_copy(args.corpus_project, work))
        results = []
        for project, extra in projects:
            print(f"bulk on {project.name} ...", flush=True)
            bulk = run_bulk(project, extra, args, work)
            print(f"  {bulk}", flush=True)
            nv = run_naive(bulk, project if extra else None, args.naive_tasks, work)
            print(f"  naive: {nv}", flush=True)
            results.append({"project": project.name, "models": count_models(project), "bulk": bulk, "naive": nv})
        md = table(results, args.jobs)
        print(md)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"results": results, "table": md}, indent=2) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
