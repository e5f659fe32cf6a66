"""The run's runtime facts: what the validator measured and decided (temp bytes, DuckDB limits,
storage version and why, nondeterministic tables, clock-dependent models never graded, those graded
without their clock columns, and the shifted-clock check, packages reused offline, runaway candidates, how the user's database was used) plus the peak resident memory of the run's processes.

`collect` builds the --json / run record entry `runtime` (schema: build.schema.json); `lines`
renders it for the human summary."""
from __future__ import annotations

import os
import resource
from pathlib import Path

from adegen.pipeline.context import RunContext

MiB = 1024 ** 2


def collect(ctx: RunContext) -> dict:
    """doc["runtime"]: the validator's RunFacts (also when validation was switched off mid-run:
    the pending validator still measured the baseline) and the process tree's peak memory."""
    validator = ctx.validator or (ctx.pending.validator if ctx.pending is not None else None)
    facts = validator.facts() if validator is not None and hasattr(validator, "facts") else None
    doc: dict = {"memory_peak_bytes": peak_rss_bytes(), "temp_bytes_peak": 0, "temp_bytes_limit": None,
                 "memory_limit": None, "storage": None, "nondeterministic": {}, "packages_reused": [],
                 "package_notes": [], "runaway": [], "db_note": None, "clock_dependent": {}, "clock_columns": {},
                 "clock_windows": {}, "clock_check": None}
    if facts is None:
        return doc
    doc.update({"temp_bytes_peak": int(facts.temp_bytes_peak), "temp_bytes_limit": facts.temp_bytes_limit,
                "memory_limit": facts.memory_limit,
                "nondeterministic": {str(t): list(c) for t, c in sorted(facts.nondeterministic.items())},
                "packages_reused": list(facts.packages), "package_notes": list(facts.package_notes),
                "runaway": list(facts.runaway), "db_note": facts.db_note,
                "clock_dependent": dict(facts.clock_dependent), "clock_check": facts.clock_check,
                "clock_columns": {m: dict(c) for m, c in getattr(facts, "clock_columns", {}).items()},
                "clock_windows": {m: dict(w) for m, w in getattr(facts, "clock_windows", {}).items()}})
    if facts.storage is not None:  # set by a validator that writes a DuckDB file, after its baseline
        doc["storage"] = {"version": facts.storage.version, "reason": facts.storage.reason}
    return doc


def lines(runtime: dict) -> list[str]:
    """The summary's "Run facts" block (one fact per line)."""
    out = []
    if runtime.get("storage"):
        st = runtime["storage"]
        out.append(f"Database storage version: {st['version']} ({st['reason']})")
    nd = runtime.get("nondeterministic") or {}
    if nd:
        named = ", ".join(f"{t} ({', '.join(c)})" if c else f"{t} (rows)" for t, c in nd.items())
        out.append(f"Nondeterministic models (two intact builds differ; never evidence, unstable columns "
                   f"excluded from seeds): {named}")
    elif runtime.get("storage"):
        out.append("Nondeterministic models: none (two intact builds under different plans agree)")
    clock = runtime.get("clock_dependent") or {}
    if clock:
        out.append(f"Excluded from grading, they read the clock ({len(clock)}; a solution seed exported today "
                   "would fail next month):")
        out += [f"  {m}: {why}" for m, why in clock.items()]
    cols = {m: c for m, c in (runtime.get("clock_columns") or {}).items() if c.get("columns")}
    if cols:
        out.append(f"Graded without their clock columns ({len(cols)}; exclude_columns, as ade-bench's asana001 "
                   "grades days_open):")
        out += [f"  {m} without {', '.join(c['columns'])}: {c.get('why', '')}" for m, c in cols.items()]
    wins = runtime.get("clock_windows") or {}
    if wins:
        out.append(f"Graded on their rows up to a date, which grow with the clock ({len(wins)}; a windowed "
                   "equality test):")
        out += [f"  {m} through {w['column']} <= {w['through']}: {w.get('why', '')}" for m, w in wins.items()]
    if runtime.get("clock_check"):
        out.append(f"Shifted-clock check: {runtime['clock_check']}")
    if runtime.get("packages_reused"):
        out.append("Packages reused offline: " + ", ".join(runtime["packages_reused"]))
    out += [f"Packages: {n}" for n in runtime.get("package_notes") or []]
    for r in runtime.get("runaway") or []:
        out.append(f"Runaway candidate dropped: {r}")
    if runtime.get("db_note"):
        out.append(f"User database: {runtime['db_note']}")
    temp = f"Resources: peak temp {_mib(runtime.get('temp_bytes_peak'))} in the work directory"
    if runtime.get("temp_bytes_limit"):
        temp += f" (DuckDB spill limit {_mib(runtime['temp_bytes_limit'])} per worker)"
    temp += f", peak memory {_mib(runtime.get('memory_peak_bytes'))} (largest process"
    temp += f"; DuckDB memory_limit {runtime['memory_limit']} per worker)" if runtime.get("memory_limit") else ")"
    out.append(temp)
    return out


def _mib(n) -> str:
    return f"{(n or 0) / MiB:.0f} MiB"


def peak_rss_bytes() -> int:
    """Peak resident set of the largest process of the run: this process, its finished children
    (getrusage) and its live descendants (VmHWM; the validator's workers are still running when
    the summary is written)."""
    peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) * 1024  # Linux: KiB
    for pid in _descendants(os.getpid()):
        peak = max(peak, _vm_hwm(pid))
    return peak


def _descendants(pid: int) -> list[int]:
    """Live descendant pids (Linux /proc/<pid>/task/<tid>/children; empty elsewhere)."""
    found, stack = [], [pid]
    while stack:
        p = stack.pop()
        for children in Path(f"/proc/{p}/task").glob("*/children"):
            try:
                kids = [int(k) for k in children.read_text().split()]
            except (OSError, ValueError):
                continue
            found += kids
            stack += kids
    return found


def _vm_hwm(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0
