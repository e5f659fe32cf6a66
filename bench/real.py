"""adegen on real projects: a whole build per project of a corpus, as a user runs it.

    python bench/real.py [--corpus DIR] [--only NAME ...] [--count 5] [--no-script]
                         [--out bench/results/real.json] [--workdir DIR] [--timeout SEC]

For every project folder of the corpus (a dbt project with its `<db>.duckdb`; default: the
`shared/corpus` folder next to the repository, see its README):

1. the project's own `dbt build` on a scratch copy (after `dbt deps` when it has packages.yml; only
   the build is timed): the reference of the target "whole build <= 2x dbt build + 60 s";
2. `python -m adegen.build COPY --db-path DBDIR --db-name DB --pick all --yes --json --count 5`
   on another scratch copy, `DBDIR` holding a copy of the project's database file, with a fresh
   $ADEGEN_CACHE_DIR (a first run); its --json document and run record give the tasks, the
   candidates dropped by reason, the phases, the proof seconds and the runtime facts;
3. the independent script-mode check of every task written: `adegen harness TASK
   --project OUT/projects/NAME --db DB --mode script` (real setup.sh / solution.sh, dbt
   subprocesses; `--packages-from` the project when it lists packages).

Prints one table row per project (markdown, for bench/RESULTS.md) and writes every
measurement to `--out`. The corpus is never modified: everything runs on copies under the work dir.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(REPO / "python"))

from run import _meta, bench_env, measure  # noqa: E402

from adegen.core.drops import DropCode  # noqa: E402

COPY_IGNORE = shutil.ignore_patterns("target", "logs", "dbt_packages", ".user.yml", "*.duckdb.wal")
TARGET_TASKS, TARGET_PROOF_S, TARGET_FACTOR, TARGET_EXTRA_S = 5, 5.0, 2.0, 60.0


def default_corpus() -> Path | None:
    """The first `shared/corpus` folder next to the repository or one of its parents."""
    for parent in [REPO, *REPO.parents]:
        cand = parent / "shared" / "corpus"
        if cand.is_dir():
            return cand
    return None


def projects(corpus: Path, only: list[str]) -> list[Path]:
    found = sorted(p for p in corpus.iterdir() if (p / "dbt_project.yml").is_file())
    return [p for p in found if not only or p.name in only]


def database_file(project: Path) -> Path:
    dbs = sorted(project.glob("*.duckdb"))
    if len(dbs) != 1:
        raise SystemExit(f"{project}: expected one *.duckdb file, found {[d.name for d in dbs]}")
    return dbs[0]


def has_packages(project: Path) -> bool:
    return (project / "packages.yml").is_file() or (project / "dependencies.yml").is_file()


def dbt_build(src: Path, work: Path, timeout: float) -> dict:
    """The project's own `dbt build` on a scratch copy (with its database); deps untimed."""
    copy = work / "dbt" / src.name
    shutil.copytree(src, copy, ignore=COPY_IGNORE)
    env = bench_env(work / "dbt-cache")
    if has_packages(copy):
        deps = measure(["dbt", "deps", "--profiles-dir", "."], copy, timeout=timeout, env=env)
        if deps["rc"] != 0:
            return {"rc": deps["rc"], "wall_s": None, "error": deps["stdout"][-500:]}
    m = measure(["dbt", "build", "--profiles-dir", "."], copy, timeout=timeout, env=env)
    return {"rc": m["rc"], "wall_s": m["wall_s"], "cpu_s": m["cpu_s"], "load_1m": m["load_1m"],
            "peak_rss_mb": m["peak_rss_mb"], "error": None if m["rc"] == 0 else m["stdout"][-500:]}


def adegen_build(src: Path, work: Path, count: int, timeout: float) -> dict:
    copy = work / "project" / src.name
    shutil.copytree(src, copy, ignore=COPY_IGNORE)
    db = database_file(src)
    db_dir = work / "db"
    db_dir.mkdir(parents=True)
    shutil.copy2(db, db_dir / db.name)
    out = work / "out"
    cmd = [sys.executable, "-m", "adegen.build", str(copy), "--db-path", str(db_dir), "--db-name", db.stem,
           "--output-dir", str(out), "--pick", "all", "--yes", "--json", "--count", str(count)]
    m = measure(cmd, work, timeout=timeout, env=bench_env(work / "adegen-cache"))
    try:
        doc = json.loads(m["stdout"])
    except ValueError:
        return {"rc": m["rc"], "wall_s": m["wall_s"], "error": m["stderr"][-2000:], "doc": None}
    record = json.loads(Path(doc["run_record"]).read_text()) if doc.get("run_record") else {}
    return {"rc": m["rc"], "wall_s": m["wall_s"], "cpu_s": m["cpu_s"], "load_1m": m["load_1m"],
            "peak_rss_mb": m["peak_rss_mb"], "peak_tree_rss_mb": m["peak_tree_rss_mb"], "doc": doc,
            "record": record, "project_copy": str(copy), "out": str(out), "summary": m["stderr"]}


def script_checks(build: dict, timeout: float) -> list[dict]:
    """`adegen harness TASK --mode script` for every task written (none fails, sage passes)."""
    doc = build["doc"]
    name = doc["project"]["name"]
    project = Path(build["out"]) / "projects" / name
    db = Path(doc["database"]["db_file"])
    results = []
    for t in doc.get("tasks", []):
        cmd = [sys.executable, "-m", "adegen", "harness", t["path"], "--project", str(project), "--db", str(db),
               "--mode", "script"]
        if has_packages(Path(build["project_copy"])):
            cmd += ["--packages-from", build["project_copy"]]
        m = measure(cmd, REPO, timeout=timeout, env=bench_env())
        results.append({"task_id": t["task_id"], "ok": m["rc"] == 0, "wall_s": m["wall_s"],
                        "output": (m["stdout"] + m["stderr"])[-1500:]})
    return results


def summarise(name: str, dbt: dict, build: dict, checks: list[dict]) -> dict:
    doc, record = build.get("doc") or {}, build.get("record") or {}
    tasks = doc.get("tasks", [])
    drops: dict[str, int] = {}
    for d in doc.get("dropped_candidates", []):  # by the drop's code, shown by its label
        label = DropCode.of(d["code"]).label
        drops[label] = drops.get(label, 0) + 1
    for t in tasks:  # written but unproven: the proof's outcome
        if not t.get("proven"):
            key = "unproven: " + ((t.get("proof") or {}).get("outcome") or "not proven")
            drops[key] = drops.get(key, 0) + 1
    proofs = [float((t.get("proof") or {}).get("seconds", {}).get("total", 0.0)) for t in tasks if t.get("proof")]
    # the record's graph: the project's own models (packages' models are not in it)
    models = [n for n in (record.get("graph") or {}).get("models", []) if str(n.get("unique_id", "")).startswith("model.")]
    rt = doc.get("runtime") or {}
    row = {
        "project": name, "models": len(models), "tasks_written": len(tasks),
        "tasks_proven": sum(1 for t in tasks if t.get("proven")), "dropped": drops,
        "phases_s": doc.get("timings_sec", {}), "build_s": build.get("wall_s"), "build_cpu_s": build.get("cpu_s"),
        "proof_median_s": round(statistics.median(proofs), 2) if proofs else None,
        "proof_s": [round(p, 2) for p in proofs],
        "peak_rss_mb": build.get("peak_rss_mb"), "peak_tree_rss_mb": build.get("peak_tree_rss_mb"),
        "runtime_memory_peak_mb": round(rt.get("memory_peak_bytes", 0) / 2 ** 20, 1) if rt else None,
        "temp_mb": round(rt.get("temp_bytes_peak", 0) / 2 ** 20, 1) if rt else None,
        "storage": (rt.get("storage") or {}).get("version"), "nondeterministic": sorted(rt.get("nondeterministic", {})),
        "runaway": rt.get("runaway", []),
        "dbt_build_s": dbt.get("wall_s"), "load_1m": build.get("load_1m"),
        "script_checks": {c["task_id"]: c["ok"] for c in checks},
        "error": build.get("error") or (None if build.get("rc") == 0 else f"rc={build.get('rc')}"),
    }
    row["targets"] = targets(row)
    return row


def targets(row: dict) -> dict:
    limit = TARGET_FACTOR * row["dbt_build_s"] + TARGET_EXTRA_S if row.get("dbt_build_s") else None
    return {"five_proven": row["tasks_proven"] >= TARGET_TASKS,
            "median_proof": row["proof_median_s"] is not None and row["proof_median_s"] <= TARGET_PROOF_S,
            "build_time": bool(limit and row["build_s"] is not None and row["build_s"] <= limit),
            "build_limit_s": round(limit, 1) if limit else None,
            "script_mode": bool(row["script_checks"]) and all(row["script_checks"].values())}


HEADER = ("| project | models (own) | tasks written / proven | dropped by reason | phases s (discovery, baseline wait, "
          "proposals, generation) | build s (cpu s) | dbt build s (2x + 60) | median proof s | peak MB | temp MB "
          "| script mode | load |\n| --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")


def table_row(r: dict) -> str:
    ph = r["phases_s"]
    phases = ", ".join(str(ph.get(k, "-")) for k in ("discovery", "baseline_wait", "proposals", "generation"))
    drops = ", ".join(f"{k} {v}" for k, v in sorted(r["dropped"].items())) or "none"
    checks = r["script_checks"]
    script = f"{sum(checks.values())}/{len(checks)} pass" if checks else "not run"
    limit = r["targets"]["build_limit_s"]
    return (f"| {r['project']} | {r['models']} | {r['tasks_written']} / {r['tasks_proven']} | {drops} | {phases} "
            f"| {r['build_s']:.0f} ({r['build_cpu_s'] or 0:.0f}) | {r['dbt_build_s'] or 0:.1f} ({limit or '-'}) "
            f"| {r['proof_median_s']} | {r['peak_rss_mb']:.0f} | {r['temp_mb']} | {script} | {r['load_1m']} |")


def render(results: Path) -> int:
    """The table and target lines of an earlier run, from its results file and run records."""
    rows = []
    for p in json.loads(results.read_text())["projects"]:
        build = dict(p["build"])
        path = (build.get("doc") or {}).get("run_record")
        build["record"] = json.loads(Path(path).read_text()) if path and Path(path).is_file() else {}
        rows.append(summarise(p["row"]["project"], p["dbt"], build, p["script_checks"]))
    report(rows)
    return 0 if all(r["targets"]["five_proven"] for r in rows) else 1


def report(rows: list[dict]) -> None:
    print(HEADER)
    for r in rows:
        print(table_row(r))
    print()
    for r in rows:
        t = r["targets"]
        print(f"{r['project']}: 5 proven {'met' if t['five_proven'] else 'NOT met'}; median proof "
              f"{r['proof_median_s']} s {'met' if t['median_proof'] else 'NOT met'}; build {r['build_s']:.0f} s "
              f"<= {t['build_limit_s']} s {'met' if t['build_time'] else 'NOT met'}; script mode "
              f"{'all pass' if t['script_mode'] else 'NOT all pass'}; nondeterministic: "
              f"{', '.join(r['nondeterministic']) or 'none'}; runaway: {len(r['runaway'])}; storage {r['storage']}"
              + (f"; error: {r['error'][:300]}" if r["error"] else ""))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=default_corpus())
    ap.add_argument("--only", action="append", default=[], help="a project folder name (repeatable)")
    ap.add_argument("--count", type=int, default=5)
    ap.add_argument("--no-script", action="store_true", help="skip the script-mode check of each task")
    ap.add_argument("--out", type=Path, default=BENCH / "results" / "real.json")
    ap.add_argument("--workdir", type=Path, default=None, help="keep scratch files here")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per command")
    ap.add_argument("--render", type=Path, default=None, metavar="RESULTS",
                    help="print the table of an earlier --out file again (its run records must still exist)")
    args = ap.parse_args(argv)
    if args.render:
        return render(args.render)
    if args.corpus is None or not args.corpus.is_dir():
        ap.error("no corpus folder: pass --corpus DIR (a folder of dbt projects with their DuckDB files)")
    work_root = args.workdir or Path(tempfile.mkdtemp(prefix="adegen-real-"))
    rows, raw = [], []
    try:
        for src in projects(args.corpus, args.only):
            work = work_root / src.name
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            print(f"{src.name}: dbt build on a scratch copy...", file=sys.stderr, flush=True)
            dbt = dbt_build(src, work, args.timeout)
            print(f"{src.name}: adegen build...", file=sys.stderr, flush=True)
            build = adegen_build(src, work, args.count, args.timeout)
            checks = [] if args.no_script or not build.get("doc") else script_checks(build, args.timeout)
            row = summarise(src.name, dbt, build, checks)
            rows.append(row)
            raw.append({"row": row, "dbt": dbt, "build": {k: v for k, v in build.items() if k != "record"},
                        "script_checks": checks})
            print(table_row(row), file=sys.stderr, flush=True)
    finally:
        if args.workdir is None:
            shutil.rmtree(work_root, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"meta": {**_meta(argparse.Namespace(sizes=None, seed=None, repeat=1)),
                                             "corpus": str(args.corpus)}, "projects": raw}, indent=2, default=str))
    report(rows)
    print(f"\nresults: {args.out}")
    return 0 if all(r["targets"]["five_proven"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
