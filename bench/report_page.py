"""Benchmark of the review page (adegen.report) for a bulk run: a synthetic output directory of N
tasks (copies of real task folders, renumbered, with three prompt levels each) and a run record with
a synthetic discovery graph of M models, rendered with `write_report` and loaded from the file
system in headless Chromium (Debian's /usr/bin/chromium, driven by playwright's Python package).

    python bench/report_page.py [--tasks 500] [--models 500] [--source OUTPUT_DIR] [--runs 5]

--source: an output directory holding real tasks (default: builds the example project once into
bench/results/report-source with `python -m adegen.build integration_tests --pick all --yes`).
Prints one JSON document (render seconds, file size, load times) and writes it to
bench/results/report_page.json. Used by python/tests/test_report_browser.py too."""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("ADEGEN_CHROMIUM", "/usr/bin/chromium")
# Flags that keep Chromium off the network on a closed machine (no background fetches at all).
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LAYERS = (("staging", 0.3), ("intermediate", 0.4), ("marts", 0.3))
FAMILIES = ("aggregation", "join", "filter", "null-handling", "arithmetic", "comparison", "case-logic")


def synthetic_graph(models: int, seed: int) -> dict:
    """A layered DAG like a dbt project's: staging reads sources, later layers read 1-3 earlier models."""
    rnd = random.Random(seed)
    nodes, edges = [], []
    names: list[str] = []
    for layer, share in LAYERS:
        prefix = {"staging": "stg", "intermediate": "int", "marts": "fct"}[layer]
        for i in range(round(models * share)):
            name = f"{prefix}_model_{len(names):04d}"
            nodes.append({"name": name, "layer": layer})
            if layer == "staging":
                src = f"raw.table_{i % 40:02d}"
                if not any(n["name"] == src for n in nodes):
                    nodes.append({"name": src, "layer": "source"})
                edges.append([src, name])
            else:
                for parent in rnd.sample(names, k=min(len(names), rnd.randint(1, 3))):
                    edges.append([parent, name])
            names.append(name)
    return {"models": nodes, "edges": edges}


def _descendants(edges: list, start: str, depth: int) -> dict[str, int]:
    children: dict[str, list[str]] = {}
    for a, b in edges:
        children.setdefault(a, []).append(b)
    seen, frontier = {start: 0}, [start]
    for d in range(1, depth + 1):
        frontier = [c for n in frontier for c in children.get(n, []) if c not in seen]
        for c in frontier:
            seen.setdefault(c, d)
    return seen


def make_synthetic_output(source: Path, dest: Path, *, tasks: int = 500, models: int = 500,
                          seed: int = 0) -> Path:
    """`dest` with `tasks` task folders (copies of source/tasks/*, renumbered bulk000001...) and one
    run record naming each with a model of the synthetic graph, observation, proof and prompts."""
    rnd = random.Random(seed)
    originals = sorted(d for d in (source / "tasks").iterdir() if (d / "task.yaml").is_file())
    if not originals:
        raise SystemExit(f"{source}/tasks holds no task")
    graph = synthetic_graph(models, seed)
    modelled = [n["name"] for n in graph["models"] if n["layer"] != "source"]
    layer_of = {n["name"]: n["layer"] for n in graph["models"]}
    entries = []
    (dest / "tasks").mkdir(parents=True)
    for i in range(tasks):
        tid = f"bulk{i + 1:06d}"
        src = originals[i % len(originals)]
        shutil.copytree(src, dest / "tasks" / tid)
        data = yaml.safe_load((src / "task.yaml").read_text())
        base = data["prompts"][0]["prompt"]
        data["task_id"] = tid
        data["status"] = "ready" if i % 7 else "dev"
        data["prompts"] = [{"key": "base", "prompt": base},
                           {"key": "medium", "prompt": base.split(".")[0] + "."},
                           {"key": "hard", "prompt": "Something is off in the reports. Can you fix it?"}]
        (dest / "tasks" / tid / "task.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
        model = rnd.choice(modelled)
        changed = _descendants(graph["edges"], model, 3)
        graded = max(changed, key=lambda n: (changed[n], n))
        seed_table = data["solution_seeds"][0]["table_name"]
        entries.append({
            "task_id": tid, "model": model, "layer": layer_of[model], "pattern_id": f"pattern_{i % 23}",
            "family": FAMILIES[i % len(FAMILIES)], "difficulty": data["difficulty"],
            "status": data["status"], "proven": data["status"] == "ready",
            "proof_detail": "proven" if data["status"] == "ready" else "unproven: the sage run did not pass",
            "proof": {"ok": data["status"] == "ready", "broken_fails": True,
                      "solved_passes": data["status"] == "ready", "detail": "synthetic",
                      "seconds": {"solved_state": 1.2, "grading": 3.4, "total": 4.9}},
            "prompts": data["prompts"],
            "observation": {"compared_table": seed_table, "rows_differing": rnd.randint(1, 900),
                            "rows_total": 1000, "columns_differ": ["amount"],
                            "changed_tables": {graded: changed[graded], model: 0},
                            "example": f"{seed_table}: id = 1 has amount = 0 (expected 12)"},
        })
    record = {"run_id": "20260101T000000Z-1", "command": "bulk", "started_at": "2026-01-01T00:00:00Z",
              "project": {"name": "synth", "db_type": "duckdb", "db_name": "synth"},
              "timings_sec": {"discovery": 30.0, "screen": 600.0, "prove": 1800.0},
              "elapsed_sec": 2500.0, "exit_code": 0, "tasks": entries, "graph": graph,
              "dropped_by_reason": {"equivalent on this data": 311, "mutant does not compile/parse": 12}}
    runs = dest / ".adegen" / "runs"
    runs.mkdir(parents=True)
    (runs / f"{record['run_id']}.json").write_text(json.dumps(record))
    return dest


@contextmanager
def chromium_browser():
    """A headless Chromium driven by playwright (no browser download: Debian's binary)."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="adegen-chromium-") as profile:
        with sync_playwright() as p:
            ctx = p.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1400, "height": 1000})
            try:
                yield ctx
            finally:
                ctx.close()


def load_seconds(ctx, url: str) -> dict:
    """Open `url` in a fresh page; the page's own navigation timing (load event end) and the wall
    time playwright waited, plus the console messages and requests seen."""
    page = ctx.new_page()
    seen = {"console": [], "requests": []}
    page.on("console", lambda m: seen["console"].append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: seen["console"].append(f"pageerror: {e}"))
    page.on("request", lambda r: seen["requests"].append(r.url))
    t0 = time.monotonic()
    page.goto(url, wait_until="load")
    wall = time.monotonic() - t0
    nav = page.evaluate("JSON.stringify(performance.getEntriesByType('navigation')[0])")
    nav = json.loads(nav)
    return {"page": page, "wall": wall, "load_event_end": nav["loadEventEnd"] / 1000.0,
            "dom_content_loaded": nav["domContentLoadedEventEnd"] / 1000.0, **seen}


def measure(html: Path, runs: int = 5) -> dict:
    out = {"file_bytes": html.stat().st_size, "runs": []}
    with chromium_browser() as ctx:
        for _ in range(runs):
            r = load_seconds(ctx, html.resolve().as_uri())
            page = r.pop("page")
            t0 = time.monotonic()
            page.select_option("#f-status", "dev")
            shown = page.inner_text("#f-shown")
            filt = time.monotonic() - t0
            t0 = time.monotonic()
            page.locator("details.task:visible > summary").first.click()
            page.wait_for_selector("details.task[open] svg.dag")
            open_s = time.monotonic() - t0
            page.close()
            out["runs"].append({"load_event_end": r["load_event_end"], "wall": r["wall"],
                                "filter_s": filt, "open_task_s": open_s, "shown": shown,
                                "console": r["console"], "requests": len(r["requests"])})
    loads = [x["load_event_end"] for x in out["runs"]]
    out["load_event_end_median"] = statistics.median(loads)
    out["load_event_end_max"] = max(loads)
    return out


def _source() -> Path:
    src = REPO / "bench" / "results" / "report-source"
    if not (src / "tasks").is_dir():
        subprocess.run([sys.executable, "-m", "adegen.build", str(REPO / "integration_tests"), "--pick", "all",
                        "--yes", "--output-dir", str(src)], check=True)
    return src


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=500)
    ap.add_argument("--models", type=int, default=500)
    ap.add_argument("--source", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    sys.path.insert(0, str(REPO / "python"))
    from adegen.report import write_report

    with tempfile.TemporaryDirectory(prefix="adegen-report-bench-") as tmp:
        out = make_synthetic_output(args.source or _source(), Path(tmp) / "out", tasks=args.tasks,
                                    models=args.models)
        t0 = time.monotonic()
        html = write_report(out)
        render_s = time.monotonic() - t0
        result = {"tasks": args.tasks, "models": args.models, "render_s": render_s, **measure(html, args.runs)}
    res_dir = REPO / "bench" / "results"
    res_dir.mkdir(parents=True, exist_ok=True)
    (res_dir / "report_page.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
