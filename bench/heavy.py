"""adegen on the heavy practice project (issue 30): one whole build as a user runs it, timed.

    python bench/heavy.py [--workdir /tmp/heavy/bench] [--orders 200000] [--budget 900]
                          [--verify-slow] [--out bench/results/heavy.json]

1. `bench/heavy_project.py` writes the project once into WORKDIR/project (cached: reused when it
   is there with the same --orders): the example project at scale, raw data in heavy.duckdb, built
   with `dbt run` the way a user would (so the file holds the model tables, incremental ones too);
2. the project and its database are copied (the generated ones are never written to);
3. `python -m adegen.build COPY --db-path DBDIR --db-name heavy --pick all --yes --json
   --time-budget 900` runs with a fresh $ADEGEN_CACHE_DIR; a watcher notes the second each task
   folder appears (tasks are renamed into place whole, so that is when it was written) and samples
   the 1-minute load average every 5 s.

Prints the bench/RESULTS.md row: the first proven task's second, proven tasks within 15 minutes, the
build's own phase timings (`timings_sec`), wall/cpu seconds and the load, and writes every number
to --out.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(REPO / "python"))

import heavy_project  # noqa: E402
from run import bench_env, measure  # noqa: E402


def project(workdir: Path, orders: int) -> Path:
    """WORKDIR/project-<orders> (generated once; the generator is deterministic)."""
    dst = workdir / f"project-{orders}"
    if not (dst / "heavy.duckdb").is_file():
        shutil.rmtree(dst, ignore_errors=True)
        heavy_project.generate(dst, orders=orders)
    return dst


def load1() -> float:
    return os.getloadavg()[0]


class Watcher:
    """When each task folder appeared under `tasks` (seconds from `t0`), and the load average."""

    def __init__(self, tasks: Path, t0: float):
        self.tasks, self.t0 = tasks, t0
        self.seen: dict[str, float] = {}
        self.load: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        last_load = -10.0
        while not self._stop.is_set():
            now = time.perf_counter() - self.t0
            if self.tasks.is_dir():
                for d in self.tasks.iterdir():
                    if d.is_dir() and not d.name.startswith(".") and d.name not in self.seen:
                        self.seen[d.name] = round(now, 1)
            if now - last_load >= 5:
                self.load.append((round(now, 1), load1()))
                last_load = now
            self._stop.wait(0.5)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(5)


def run(workdir: Path, orders: int, budget: float, verify_slow: bool) -> dict:
    src = project(workdir, orders)
    run_dir = workdir / f"run-{time.strftime('%Y%m%dT%H%M%S')}"
    proj, dbdir, out = run_dir / "project", run_dir / "db", run_dir / "out"
    shutil.copytree(src, proj, ignore=shutil.ignore_patterns("*.duckdb", "*.duckdb.wal", "target", "logs"))
    dbdir.mkdir(parents=True)
    shutil.copyfile(src / "heavy.duckdb", dbdir / "heavy.duckdb")
    cmd = [sys.executable, "-m", "adegen.build", str(proj), "--db-path", str(dbdir), "--db-name", "heavy",
           "--pick", "all", "--yes", "--json", "--time-budget", str(int(budget)), "--output-dir", str(out)]
    if verify_slow:
        cmd.append("--verify-slow")
    env = bench_env(run_dir / "cache")
    t0 = time.perf_counter()
    with Watcher(out / "tasks", t0) as w:
        m = measure(cmd, REPO, timeout=budget * 3 + 600, env=env)
    doc = build_document(m["stdout"], out)
    proven = {t["task_id"]: bool(t.get("proven")) for t in doc.get("tasks", [])}
    written = dict(sorted(w.seen.items(), key=lambda kv: kv[1]))
    proven_at = sorted(s for t, s in written.items() if proven.get(t))
    loads = [x for _, x in w.load]
    res = {
        "orders": orders, "rows": heavy_project_rows(src), "command": cmd, "rc": m["rc"],
        "wall_s": m["wall_s"], "cpu_s": m["cpu_s"], "peak_rss_mb": m["peak_rss_mb"],
        "timings_sec": doc.get("timings_sec"), "written_s": written, "proven": proven,
        "first_proven_s": proven_at[0] if proven_at else None,
        "proven_within_15min": sum(1 for s in proven_at if s <= 900),
        "load_start": m["load_1m"], "load_min": min(loads, default=None), "load_max": max(loads, default=None),
        "load_mean": round(sum(loads) / len(loads), 2) if loads else None, "load_samples": w.load,
        "verify_slow": (doc.get("verify_slow") if verify_slow else None),
        "db_note": (doc.get("runtime") or {}).get("db_note"),
        "stderr_tail": m["stderr"][-4000:], "run_dir": str(run_dir),
    }
    return res


def build_document(stdout: str, out: Path) -> dict:
    """The build's --json document: from stdout, else from the run record it wrote (which holds it)."""
    try:
        return json.loads(stdout)
    except ValueError:
        records = sorted((out / ".adegen" / "runs").glob("*.json"))
        return json.loads(records[-1].read_text()) if records else {}


def heavy_project_rows(src: Path) -> dict[str, int]:
    import duckdb

    con = duckdb.connect(str(src / "heavy.duckdb"), read_only=True)
    try:
        return dict(con.execute("select table_name, estimated_size from duckdb_tables() "
                                "where schema_name = 'raw' order by 2 desc").fetchall())
    finally:
        con.close()


def row(res: dict) -> str:
    t = res.get("timings_sec") or {}
    phases = ", ".join(f"{t.get(k, 0):.1f}" for k in ("discovery", "baseline_wait", "proposals", "generation"))
    first = f"{res['first_proven_s']:.0f}" if res["first_proven_s"] is not None else "none"
    n = sum(res["proven"].values())
    return (f"| heavy (bench/heavy_project.py, {res['orders']:,} orders) | 33 | {len(res['proven'])} / {n} | "
            f"{first} | {res['proven_within_15min']} | {phases} | {res['wall_s']:.0f} ({res['cpu_s']:.0f}) | "
            f"{res['load_min']}-{res['load_max']} (mean {res['load_mean']}) |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/heavy/bench"))
    ap.add_argument("--orders", type=int, default=heavy_project.DEFAULT_ORDERS)
    ap.add_argument("--budget", type=float, default=900)
    ap.add_argument("--verify-slow", action="store_true")
    ap.add_argument("--out", type=Path, default=BENCH / "results" / "heavy.json")
    a = ap.parse_args(argv)
    a.workdir.mkdir(parents=True, exist_ok=True)
    res = run(a.workdir, a.orders, a.budget, a.verify_slow)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(res, indent=2, default=str))
    print("| project | models | tasks written / proven | first proven s | proven in 15 min | phases s (discovery, "
          "baseline wait, proposals, generation) | build s (cpu s) | load |")
    print("| --- | ---: | ---: | ---: | ---: | --- | ---: | --- |")
    print(row(res))
    print(json.dumps({k: res[k] for k in ("written_s", "proven", "timings_sec", "rc", "db_note")}, indent=1))
    return 0 if res["rc"] in (0, 1) else 1


if __name__ == "__main__":
    sys.exit(main())
