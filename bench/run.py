"""adegen benchmarks: discovery scaling, generation without execution, validation throughput.

    python bench/run.py [--sizes 100,1000,5000] [--only discover|generate|validate]
                        [--out bench/results/latest.json] [--seed 0] [--repeat 1] [--profile]

Synthetic projects come from bench/synth.py (cached under bench/projects/, gitignored); every
measured command runs on a fresh copy. Commands that are not implemented yet, or fail, become
"unavailable: <reason>" / "failed: <reason>" rows instead of crashing the run. See bench/README.md.
"""
from __future__ import annotations

import argparse
import cProfile
import datetime as _dt
import hashlib
import io
import json
import math
import os
import platform
import re
import pstats
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
PYDIR = REPO / "python"
sys.path.insert(0, str(BENCH))

import naive  # noqa: E402
import synth  # noqa: E402

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
COPY_IGNORE = shutil.ignore_patterns("target", "logs", "*.duckdb", "*.duckdb.wal", ".user.yml")


# --------------------------------------------------------------------------------------------
# measuring one command


def bench_env(cache_dir: Path | None = None) -> dict[str, str]:
    """Environment of measured commands; `cache_dir` becomes $ADEGEN_CACHE_DIR (discovery keeps
    its scratch project copy and dbt's partial-parse state there: a new dir = a cold run)."""
    env = dict(os.environ)
    if cache_dir is not None:
        env["ADEGEN_CACHE_DIR"] = str(cache_dir)
    env.pop("DBT_PROFILES_DIR", None)  # projects carry their own profiles.yml
    env.update(DBT_SEND_ANONYMOUS_USAGE_STATS="false", DO_NOT_TRACK="1")
    env["PYTHONPATH"] = os.pathsep.join([str(PYDIR)] + [p for p in
                                                       env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def _tree_rss(root: int) -> int:
    """Sum of RSS (bytes) of `root` and all its live descendants, from /proc."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for e in entries:
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/stat", "rb") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(e))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/statm", "rb") as f:
                total += int(f.read().split()[1]) * PAGE
        except (OSError, ValueError, IndexError):
            pass
        todo.extend(children.get(pid, ()))
    return total


def measure(cmd: list[str], cwd: Path, *, timeout: float = 3600, env: dict | None = None,
            sample_every: float = 0.05) -> dict:
    """Run `cmd`; wall time, peak RSS (largest single process of the tree, from wait4 rusage),
    peak tree RSS (sum over live descendants, sampled from /proc), and every output line with the
    second it appeared at (`lines`: [(t, "out"|"err", text)], for progress milestones)."""
    load = _load1()
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=env or bench_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True)
    peak_tree = 0
    done = threading.Event()
    lines: list[tuple[float, str, str]] = []
    chunks: dict[str, list[str]] = {"out": [], "err": []}

    def reader(stream, tag: str) -> None:
        for raw in iter(stream.readline, b""):
            text = raw.decode("utf-8", "replace")
            chunks[tag].append(text)
            lines.append((round(time.perf_counter() - t0, 3), tag, text.rstrip("\n")))
        stream.close()

    def sampler() -> None:
        nonlocal peak_tree
        while not done.is_set():
            peak_tree = max(peak_tree, _tree_rss(p.pid))
            done.wait(sample_every)

    def killer() -> None:
        if not done.wait(timeout):
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass

    readers = [threading.Thread(target=reader, args=(p.stdout, "out"), daemon=True),
               threading.Thread(target=reader, args=(p.stderr, "err"), daemon=True)]
    helpers = [threading.Thread(target=sampler, daemon=True),
               threading.Thread(target=killer, daemon=True)]
    for t in readers + helpers:
        t.start()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    done.set()
    p.returncode = os.waitstatus_to_exitcode(status)
    for t in readers:
        t.join(30)  # a grandchild still holding the pipe would block forever otherwise
    for t in helpers:
        t.join(1)
    # a line the command wrote before it exited may be read (and stamped) after wait4 returned
    # when the machine is loaded: it appeared by the exit at the latest
    lines = [(min(t, round(wall, 3)), tag, text) for t, tag, text in lines]
    return {"rc": p.returncode, "wall_s": round(wall, 3),
            # CPU seconds (user+sys) of the command and every descendant it waited for: less
            # sensitive than wall time to other jobs on a shared machine
            "cpu_s": round(ru.ru_utime + ru.ru_stime, 3), "load_1m": load,
            "peak_rss_mb": round(ru.ru_maxrss / 1024, 1),  # Linux: KiB
            "peak_tree_rss_mb": round(peak_tree / 2**20, 1),
            "stdout": "".join(chunks["out"]), "stderr": "".join(chunks["err"]),
            "lines": lines, "timed_out": p.returncode == -signal.SIGKILL}


def _load1() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        return None


def _reason(m: dict) -> str:
    text = (m["stderr"] or m["stdout"]).strip().splitlines()
    tail = next((ln.strip() for ln in reversed(text) if ln.strip()), "")
    if m.get("timed_out"):
        return "timeout"
    return f"rc={m['rc']}: {tail[:160]}"


def _module_missing(module: str) -> str | None:
    """Why `python -m adegen.<module>` cannot run, or None when it can be tried."""
    rel = module.split(".")
    f = PYDIR.joinpath(*rel[:-1], rel[-1] + ".py")
    pkg = PYDIR.joinpath(*rel, "__main__.py")
    if not f.is_file() and not pkg.is_file():
        return f"{module} not implemented yet ({f.relative_to(REPO)} missing)"
    return None


def _classify(m: dict, module: str) -> str:
    if m["rc"] == 0:
        return "ok"
    err = m["stderr"] + m["stdout"]
    if f"No module named {module}" in err or f"No module named '{module}'" in err:
        return f"unavailable: {module} not importable"
    if "unrecognized arguments" in err or "invalid choice" in err:
        return "unavailable: CLI does not accept these arguments: " + _reason(m)
    return "failed: " + _reason(m)


def _strip(m: dict) -> dict:
    return {k: v for k, v in m.items() if k not in ("stdout", "stderr", "lines")}


# Progress lines adegen.build prints (stderr in --json mode) -> milestone names.
BUILD_MILESTONES = {
    "discovery_started": re.compile(r"^Running discovery"),
    "proposals": re.compile(r"^(Proposed tasks \(|No task could be proposed)"),
    "tasks_written": re.compile(r"^(Wrote \d+ task|No task passed validation)"),
}


def milestones(lines, patterns=BUILD_MILESTONES) -> dict[str, float]:
    """Seconds from start to the first output line matching each milestone pattern."""
    found: dict[str, float] = {}
    for t, _, text in lines:
        for name, rx in patterns.items():
            if name not in found and rx.search(text.strip()):
                found[name] = t
    return found


# --------------------------------------------------------------------------------------------
# projects


def template(n: int, seed: int, with_adegen: bool) -> Path:
    """The generated project for (n, seed), cached under bench/projects/."""
    d = BENCH / "projects" / f"synth_n{n}_s{seed}{'_adegen' if with_adegen else ''}"
    stamp = d / ".synth-ok"
    version = hashlib.sha256(Path(synth.__file__).read_bytes()).hexdigest()[:16]
    if not stamp.is_file() or stamp.read_text().strip() != version:
        if d.exists():
            shutil.rmtree(d)
        synth.generate(n, seed, d, with_adegen=with_adegen)
        if with_adegen:
            subprocess.run(["dbt", "deps", "--profiles-dir", str(d)], cwd=d, env=bench_env(),
                           capture_output=True, check=False)
        stamp.write_text(version + "\n")
    return d


def fresh_copy(src: Path, root: Path, tag: str) -> Path:
    dst = Path(tempfile.mkdtemp(prefix=f"{tag}-", dir=root)) / src.name.split("_n")[0]
    shutil.copytree(src, dst, ignore=COPY_IGNORE, symlinks=True)
    (dst / ".synth-ok").unlink(missing_ok=True)
    return dst


def fit_exponent(ns: list[float], ts: list[float]) -> float | None:
    """Least-squares slope of log(t) against log(n): t ~ n^k."""
    pts = [(math.log(n), math.log(t)) for n, t in zip(ns, ts) if n > 0 and t and t > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    var = sum((x - mx) ** 2 for x, _ in pts)
    if var == 0:
        return None
    return round(sum((x - mx) * (y - my) for x, y in pts) / var, 3)


# --------------------------------------------------------------------------------------------
# sections


def _combine(runs: list[dict]) -> dict:
    """Median wall time and max memory over the successful runs (the last failure if none)."""
    ok = [r for r in runs if r.get("status") == "ok"]
    if not ok:
        return runs[-1]
    best = dict(ok[0])
    best["wall_s"] = round(statistics.median(r["wall_s"] for r in ok), 3)
    if all(r.get("cpu_s") is not None for r in ok):
        best["cpu_s"] = round(statistics.median(r["cpu_s"] for r in ok), 3)
    best["all_wall_s"] = [r["wall_s"] for r in ok]
    best["all_cpu_s"] = [r.get("cpu_s") for r in ok]
    best["load_1m"] = [r.get("load_1m") for r in ok]
    best["peak_rss_mb"] = max(r["peak_rss_mb"] for r in ok)
    best["peak_tree_rss_mb"] = max(r["peak_tree_rss_mb"] for r in ok)
    best["runs"] = len(ok)
    return best


def bench_discover(sizes, seed, work, *, repeat=1, with_adegen=False, timeout=3600) -> dict:
    rows = []
    missing = _module_missing("adegen.discover")
    for n in sizes:
        tpl = template(n, seed, with_adegen)
        row: dict = {"n": n}

        def parse() -> dict:
            proj = fresh_copy(tpl, work, f"parse{n}")
            m = measure(["dbt", "parse", "--no-partial-parse", "--profiles-dir", str(proj),
                         "--project-dir", str(proj)], proj, timeout=timeout)
            r = _strip(m)
            r["status"] = "ok" if m["rc"] == 0 else "failed: " + _reason(m)
            shutil.rmtree(proj.parent, ignore_errors=True)
            return r

        def discover_pair() -> tuple[dict, dict]:
            proj = fresh_copy(tpl, work, f"disc{n}")
            cache = Path(tempfile.mkdtemp(prefix=f"cache{n}-", dir=work))
            cmd = [sys.executable, "-m", "adegen.discover", str(proj), "--json"]
            out = []
            for _ in ("cold", "warm"):
                m = measure(cmd, proj, timeout=timeout, env=bench_env(cache))
                r = _strip(m)
                r["status"] = _classify(m, "adegen.discover")
                if r["status"] == "ok":
                    try:
                        payload = json.loads(m["stdout"])
                        ms = payload.get("models", [])
                        r["models_seen"] = sum(1 for x in ms if x.get("package_name", "synth") == "synth")
                        r["candidates"] = len(payload.get("candidates", []))
                    except (ValueError, AttributeError) as e:
                        r["status"] = f"failed: stdout is not the JSON payload ({e})"
                out.append(r)
                if r["status"] != "ok":
                    break
            shutil.rmtree(proj.parent, ignore_errors=True)
            shutil.rmtree(cache, ignore_errors=True)
            return out[0], (out[1] if len(out) > 1 else {"status": out[0]["status"]})

        # parse and discovery alternate, so a change in the machine's load hits both alike
        parses, pairs = [], []
        for _ in range(max(1, repeat)):
            parses.append(parse())
            if not missing:
                pairs.append(discover_pair())
        row["parse_cold"] = _combine(parses)
        if missing:
            row["discover_cold"] = row["discover_warm"] = {"status": f"unavailable: {missing}"}
        else:
            row["discover_cold"] = _combine([p[0] for p in pairs])
            row["discover_warm"] = _combine([p[1] for p in pairs])
        pc = row["parse_cold"]
        for k in ("cold", "warm"):
            d = row[f"discover_{k}"]
            if d.get("status") == "ok" and pc.get("status") == "ok" and pc["wall_s"] > 0:
                row[f"ratio_{k}"] = round(d["wall_s"] / pc["wall_s"], 2)
                if d.get("cpu_s") and pc.get("cpu_s"):
                    row[f"ratio_{k}_cpu"] = round(d["cpu_s"] / pc["cpu_s"], 2)
                if pc.get("peak_rss_mb"):
                    row[f"mem_ratio_{k}"] = round(d["peak_rss_mb"] / pc["peak_rss_mb"], 2)
        rows.append(row)
        _print_discover([row], header=len(rows) == 1)
    exps = {}
    for key in ("parse_cold", "discover_cold", "discover_warm"):
        for metric, suffix in (("wall_s", ""), ("cpu_s", "_cpu")):
            pts = [(r["n"], r[key].get(metric)) for r in rows if r[key].get("status") == "ok"]
            exps[key + suffix] = fit_exponent([p[0] for p in pts], [p[1] for p in pts])
    print("time ~ N^k  (log-log least squares; wall / cpu):  "
          + "  ".join(f"{k}: {'n/a' if exps[k] is None else exps[k]} / "
                      f"{'n/a' if exps[k + '_cpu'] is None else exps[k + '_cpu']}"
                      for k in ("parse_cold", "discover_cold", "discover_warm")))
    return {"rows": rows, "exponents": exps}


def _find_timings(obj, prefix="", inside=False) -> dict[str, float]:
    """Numeric fields of the CLI JSON whose key (or parent key, e.g. `timings_sec.proposals`)
    looks like a timing."""
    found: dict[str, float] = {}
    words = ("time", "seconds", "duration", "elapsed", "timing", "_s")
    if isinstance(obj, dict):
        for k, v in obj.items():
            key = f"{prefix}{k}"
            timing_key = inside or any(w in str(k).lower() for w in words)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and timing_key:
                found[key] = float(v)
            elif isinstance(v, dict):
                found.update(_find_timings(v, f"{key}.", timing_key))
    return found


def _count_json(payload, *keys) -> int | None:
    if not isinstance(payload, dict):
        return None
    for k in keys:
        v = payload.get(k)
        if isinstance(v, list):
            return len(v)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def _tasks_in(out_dir: Path) -> list[Path]:
    tasks = out_dir / "tasks"
    return sorted(p for p in tasks.iterdir() if (p / "task.yaml").is_file()) if tasks.is_dir() else []


def _run_build(proj: Path, out_dir: Path, extra: list[str], timeout: float, work: Path) -> dict:
    cmd = [sys.executable, "-m", "adegen.build", str(proj), *extra, "--pick", "all", "--yes",
           "--output-dir", str(out_dir), "--json"]
    cache = Path(tempfile.mkdtemp(prefix="cache-build-", dir=work))
    m = measure(cmd, proj, timeout=timeout, env=bench_env(cache))
    shutil.rmtree(cache, ignore_errors=True)
    r = _strip(m)
    r["status"] = _classify(m, "adegen.build")
    payload = None
    try:
        payload = json.loads(m["stdout"]) if m["stdout"].strip() else None
    except ValueError:
        # tolerate a trailing JSON document after human text
        s = m["stdout"]
        i = s.find("{")
        try:
            payload = json.loads(s[i:]) if i >= 0 else None
        except ValueError:
            payload = None
    r["cli_timings"] = _find_timings(payload) if isinstance(payload, dict) else {}
    r["proposals"] = _count_json(payload, "proposals", "n_proposals", "proposal_count")
    r["tasks_written"] = len(_tasks_in(out_dir))
    r["milestones"] = milestones(m["lines"])
    # Prefer timings the CLI reports; else the moment its progress line appeared; else wall time.
    # Time to proposals counts from process start (interpreter start-up and discovery included):
    # the moment the `Proposed tasks (N):` line appeared; else the CLI's own phase timings summed
    # up to and including the proposals phase.
    prop_t = [v for k, v in r["cli_timings"].items() if "propos" in k.lower()]
    r["proposals_phase_s"] = round(prop_t[0], 3) if prop_t else None
    before = [v for k, v in r["cli_timings"].items()
              if k.lower().split(".")[-1] in ("discovery", "baseline_wait")]
    r["time_to_proposals_s"] = (r["milestones"].get("proposals")
                                or (round(prop_t[0] + sum(before), 3) if prop_t else None))
    tot_t = [v for k, v in r["cli_timings"].items()
             if re.fullmatch(r"(total|elapsed|wall)(_s|_sec|_seconds)?", k.lower().split(".")[-1])]
    r["time_to_tasks_s"] = (round(tot_t[0], 3) if tot_t
                            else r["milestones"].get("tasks_written", r["wall_s"]))
    r["cmd"] = " ".join(cmd[1:])
    return r


def bench_generate(sizes, seed, work, *, with_adegen=False, timeout=3600) -> dict:
    rows = []
    missing = _module_missing("adegen.build")
    for n in sizes:
        row: dict = {"n": n}
        if missing:
            row.update(status=f"unavailable: {missing}")
        else:
            proj = fresh_copy(template(n, seed, with_adegen), work, f"gen{n}")
            out_dir = Path(tempfile.mkdtemp(prefix=f"gen{n}-out-", dir=work))
            row.update(_run_build(proj, out_dir, ["--no-validate"], timeout, work))
            shutil.rmtree(proj.parent, ignore_errors=True)
            shutil.rmtree(out_dir, ignore_errors=True)
        rows.append(row)
        _print_generate([row], header=len(rows) == 1)
    return {"rows": rows}


def bench_validate(project: Path, work, *, naive_max=3, timeout=7200) -> dict:
    res: dict = {"project": str(project)}
    missing = _module_missing("adegen.build")
    if not (project / "dbt_project.yml").is_file():
        res["adegen"] = {"status": f"unavailable: {project} is not a dbt project (no dbt_project.yml)"}
    elif missing:
        res["adegen"] = {"status": f"unavailable: {missing}"}
    else:
        # In place (adegen never writes into the project; its packages.yml may be relative).
        out_dir = Path(tempfile.mkdtemp(prefix="val-out-", dir=work))
        r = _run_build(project, out_dir, [], timeout, work)
        n_tasks = r["tasks_written"]
        if r["status"] == "ok" and n_tasks and r["wall_s"] > 0:
            r["tasks_per_min"] = round(n_tasks / (r["wall_s"] / 60), 3)
        elif r["status"] == "ok":
            r["status"] = "failed: no task written"
        res["adegen"] = r
        tasks = _tasks_in(out_dir)[:naive_max]
        runs = []
        for t in tasks:
            nv = naive.naive_validate(t, workdir=work)
            runs.append({k: v for k, v in nv.items() if k != "steps"} |
                        {"steps": [{k: s[k] for k in ("name", "rc", "seconds")} for s in nv["steps"]]})
        if runs:
            total = sum(x["seconds"] for x in runs)
            res["naive"] = {"status": "ok", "tasks": len(runs), "seconds": round(total, 3),
                            "ok_tasks": sum(1 for x in runs if x["ok"]),
                            "tasks_per_min": round(len(runs) / (total / 60), 3) if total else None,
                            "runs": runs}
        shutil.rmtree(out_dir, ignore_errors=True)
    if "naive" not in res:
        res["naive"] = {"status": "unavailable: no generated task to validate"
                        + ("" if res["adegen"].get("status") == "ok" else
                           f" ({res['adegen']['status']})")}
    a, b = res["adegen"].get("tasks_per_min"), res["naive"].get("tasks_per_min")
    res["ratio"] = round(a / b, 2) if a and b else None
    _print_validate(res)
    return res


def bench_profile(n, seed, work, *, with_adegen=False, top=5) -> dict:
    missing = _module_missing("adegen.discover")
    if missing:
        print(f"\nprofile: unavailable: {missing}")
        return {"status": f"unavailable: {missing}"}
    proj = fresh_copy(template(n, seed, with_adegen), work, f"prof{n}")
    if str(PYDIR) not in sys.path:
        sys.path.insert(0, str(PYDIR))
    old_env = dict(os.environ)
    os.environ.update(DBT_SEND_ANONYMOUS_USAGE_STATS="false", DO_NOT_TRACK="1",
                      ADEGEN_CACHE_DIR=tempfile.mkdtemp(prefix="cache-prof-", dir=work))
    os.environ.pop("DBT_PROFILES_DIR", None)
    prof = cProfile.Profile()
    res: dict = {"n": n}
    try:
        from adegen.discover.payload import run_discovery  # type: ignore

        t0 = time.perf_counter()
        prof.enable()
        try:
            run_discovery(proj)
        finally:
            prof.disable()
        res["wall_s"] = round(time.perf_counter() - t0, 3)
        res["status"] = "ok"
    except Exception as e:  # noqa: BLE001 - a benchmark row, not a crash
        res["status"] = f"failed: {type(e).__name__}: {e}"[:300]
    finally:
        os.environ.clear()
        os.environ.update(old_env)
        shutil.rmtree(proj.parent, ignore_errors=True)
    buf = io.StringIO()
    st = pstats.Stats(prof, stream=buf)
    items = list(st.stats.items())

    def top_by(idx: int, keep=lambda fn: True) -> list[dict]:
        rows = sorted((kv for kv in items if keep(kv[0])), key=lambda kv: kv[1][idx], reverse=True)
        return [{"function": f"{fn[0]}:{fn[1]}({fn[2]})", "ncalls": v[1],
                 "tottime_s": round(v[2], 3), "cumtime_s": round(v[3], 3)} for fn, v in rows[:top]]

    res["top"] = top_by(3)  # cumulative
    res["top_own"] = top_by(2)  # own (tottime)
    res["top_adegen"] = top_by(3, lambda fn: str(PYDIR) in fn[0])
    print(f"\nprofile: run_discovery on N={n} in-process: {res['status']}"
          + (f", {res['wall_s']}s" if "wall_s" in res else ""))
    for title, key in (("top 5 cumulative", "top"), ("top 5 own time", "top_own"),
                       ("top 5 cumulative in adegen", "top_adegen")):
        print(f"  {title}:")
        for e in res[key]:
            fn = e["function"].replace(str(PYDIR) + "/", "").replace(
                str(Path(os.__file__).parent) + "/", "")
            print(f"    {e['cumtime_s']:8.3f}s cum {e['tottime_s']:8.3f}s own {e['ncalls']:>8}  {fn[-100:]}")
    return res


# --------------------------------------------------------------------------------------------
# output


def _cell(d: dict, key: str, fmt: str = "{:.2f}") -> str:
    if not isinstance(d, dict):
        return "-"
    st = d.get("status", "ok")
    if st != "ok":
        return st.split(":")[0]
    v = d.get(key)
    return "-" if v is None else fmt.format(v)


def _load_cell(*ds) -> str:
    loads = [x for d in ds if isinstance(d, dict) for x in (d.get("load_1m") or [])
             if isinstance(x, (int, float))] if ds else []
    return f"{max(loads):.1f}" if loads else "-"


def _print_discover(rows, header=True):
    if header:
        print("\n== discovery (cold = fresh copy, no partial parse; warm = 2nd discover run) ==")
        print("   wall s / cpu s (user+sys of the process tree) / MB (peak RSS of the largest process);"
              " ratios = discovery / dbt parse")
        print(f"{'N':>6} | {'parse s':>8} {'cpu':>7} {'MB':>5} | {'cold s':>8} {'cpu':>7} {'MB':>5}"
              f" {'tree':>5} | {'warm s':>7} {'cpu':>7} {'MB':>5} | {'cold/parse':>10} {'cpu':>5}"
              f" {'mem':>5} | {'warm/parse':>10} {'cpu':>5} | {'load':>5}")
    for r in rows:
        pc, dc, dw = r["parse_cold"], r["discover_cold"], r["discover_warm"]
        print(f"{r['n']:>6} | {_cell(pc, 'wall_s'):>8} {_cell(pc, 'cpu_s'):>7} "
              f"{_cell(pc, 'peak_rss_mb', '{:.0f}'):>5} | {_cell(dc, 'wall_s'):>8} "
              f"{_cell(dc, 'cpu_s'):>7} {_cell(dc, 'peak_rss_mb', '{:.0f}'):>5} "
              f"{_cell(dc, 'peak_tree_rss_mb', '{:.0f}'):>5} | {_cell(dw, 'wall_s'):>7} "
              f"{_cell(dw, 'cpu_s'):>7} {_cell(dw, 'peak_rss_mb', '{:.0f}'):>5} | "
              f"{_cell(r, 'ratio_cold'):>10} {_cell(r, 'ratio_cold_cpu'):>5} "
              f"{_cell(r, 'mem_ratio_cold'):>5} | {_cell(r, 'ratio_warm'):>10} "
              f"{_cell(r, 'ratio_warm_cpu'):>5} | {_load_cell(pc, dc, dw):>5}")
        for k in ("parse_cold", "discover_cold", "discover_warm"):
            st = r[k].get("status", "ok")
            if st != "ok":
                print(f"{'':>6}   {k}: {st}")


def _print_generate(rows, header=True):
    if header:
        print("\n== generation without execution (adegen.build --no-validate --pick all --yes) ==")
        print("   to proposals = from process start (discovery included); proposals phase = the CLI's"
              " own timing after discovery")
        print(f"{'N':>6} | {'to proposals s':>14} {'phase s':>8} {'to tasks s':>10} {'wall s':>8} "
              f"{'cpu s':>7} {'MB':>6} {'proposals':>9} {'tasks':>6} | {'load':>5}")
    for r in rows:
        if r.get("status") != "ok":
            print(f"{r['n']:>6} | {r.get('status')}")
            continue
        load = r.get("load_1m")
        print(f"{r['n']:>6} | {_cell(r, 'time_to_proposals_s'):>14} {_cell(r, 'proposals_phase_s'):>8} "
              f"{_cell(r, 'time_to_tasks_s'):>10} {_cell(r, 'wall_s'):>8} {_cell(r, 'cpu_s'):>7} "
              f"{_cell(r, 'peak_rss_mb', '{:.0f}'):>6} {_cell(r, 'proposals', '{}'):>9} "
              f"{_cell(r, 'tasks_written', '{}'):>6} | {'-' if load is None else f'{load:.1f}':>5}")


def _print_validate(res):
    print(f"\n== validation throughput ({res['project']}) ==")
    a, nv = res["adegen"], res["naive"]
    if a.get("status") == "ok":
        print(f"adegen build (full validation): {a['tasks_written']} tasks in {a['wall_s']:.1f}s "
              f"-> {a.get('tasks_per_min')} tasks/min")
    else:
        print(f"adegen build (full validation): {a.get('status')}")
    if nv.get("status") == "ok":
        print(f"naive per task (copy, seed, run, patch, run, test, patch, run, test): "
              f"{nv['tasks']} tasks ({nv['ok_tasks']} ok) in {nv['seconds']:.1f}s "
              f"-> {nv['tasks_per_min']} tasks/min")
    else:
        print(f"naive per task: {nv.get('status')}")
    print(f"ratio adegen/naive: {res['ratio'] if res['ratio'] is not None else 'n/a'}")


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _ram_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except (OSError, ValueError):
        pass
    return None


def _meta(args) -> dict:
    def cmd_out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO,
                                  timeout=60).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None

    dbt_v = cmd_out(["dbt", "--version"]) or ""
    return {"date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "git_commit": cmd_out(["git", "rev-parse", "HEAD"]),
            "python": platform.python_version(), "platform": platform.platform(),
            "cpus": os.cpu_count(), "load_avg": os.getloadavg() if hasattr(os, "getloadavg") else None,
            "cpu_model": _cpu_model(), "ram_gib": _ram_gib(),
            "dbt": next((ln.split(":")[-1].strip() for ln in dbt_v.splitlines()
                         if "installed" in ln), None),
            "sizes": args.sizes, "seed": args.seed, "repeat": args.repeat,
            "argv": sys.argv[1:]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100,1000,5000",
                    type=lambda s: [int(x) for x in s.split(",") if x.strip()])
    ap.add_argument("--only", choices=["discover", "generate", "validate"])
    ap.add_argument("--out", default=str(BENCH / "results" / "latest.json"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1, help="runs per measurement (median wall)")
    ap.add_argument("--profile", action="store_true",
                    help="cProfile run_discovery in-process on the smallest size (top 5 cumulative)")
    ap.add_argument("--profile-size", type=int, default=None,
                    help="N for --profile (default: the smallest of --sizes)")
    ap.add_argument("--with-adegen", action="store_true",
                    help="generate projects with packages.yml pointing at this repo (dbt deps once)")
    ap.add_argument("--validate-project", default=str(REPO / "integration_tests"),
                    help="project for the validation section (default: integration_tests)")
    ap.add_argument("--naive-max", type=int, default=3, help="tasks run through the naive procedure")
    ap.add_argument("--timeout", type=float, default=3600, help="per command, seconds")
    ap.add_argument("--workdir", help="scratch root (default: a temp dir, removed at the end)")
    args = ap.parse_args(argv)

    work_root = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="adegen-bench-"))
    work_root.mkdir(parents=True, exist_ok=True)
    results: dict = {"meta": _meta(args)}
    mt = results["meta"]
    print(f"machine: {mt['cpus']} CPUs ({mt['cpu_model']}), {mt['ram_gib']} GiB RAM; load average "
          f"{' '.join(f'{x:.2f}' for x in mt['load_avg'] or ())}; dbt {mt['dbt']}; {mt['date']}")
    try:
        if args.only in (None, "discover"):
            results["discover"] = bench_discover(args.sizes, args.seed, work_root,
                                                 repeat=args.repeat, with_adegen=args.with_adegen,
                                                 timeout=args.timeout)
        if args.only in (None, "generate"):
            results["generate"] = bench_generate(args.sizes, args.seed, work_root,
                                                 with_adegen=args.with_adegen, timeout=args.timeout)
        if args.only in (None, "validate"):
            results["validate"] = bench_validate(Path(args.validate_project).resolve(), work_root,
                                                 naive_max=args.naive_max, timeout=args.timeout)
        if args.profile:
            results["profile"] = bench_profile(args.profile_size or min(args.sizes), args.seed, work_root,
                                               with_adegen=args.with_adegen)
    finally:
        if not args.workdir:
            shutil.rmtree(work_root, ignore_errors=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
