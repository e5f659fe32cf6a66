"""The run record: `<output_dir>/.adegen/runs/<UTC timestamp>-<pid>.json`, written atomically at
the end of every run that wrote (or tried to write) tasks, so a report can be rebuilt from disk.

It is the run's --json document plus, per task, what a report needs and --json leaves out (layer,
every prompt key and text, the screening observation's changed tables and evidence, proof
seconds), the discovery graph (`graph`: models, the sources/seeds they read, their layers and
edges) and what adegen.report reads (`run_id`, `command`, `started_at`). Schema:
`schemas/run_record.schema.json` (a record is also a valid `build.schema.json` document)."""
from __future__ import annotations

import copy
import json
import os
import time
from pathlib import Path
from typing import Any

from adegen.core.atomic import TMP_PREFIX, write_text_atomic
from adegen.report.records import graph_from_discovery
from adegen.pipeline import runtime
from adegen.pipeline.context import RunContext

RECORD_VERSION = 1
RUNS_DIR = Path(".adegen") / "runs"
ISO = "%Y-%m-%dT%H:%M:%SZ"


def task_details(p, proof=None) -> dict:
    """What the record adds to one task's --json entry (p: the task's Proposal)."""
    obs = p.observation
    return {
        "layer": p.layer,
        "prompts": [{"key": lv.key, "prompt": lv.text, "tables": list(lv.tables)} for lv in p.prompt_levels()],
        "graded_tables": p.graded_tables(),
        **({"compound": True, "slips": list(p.compound)} if getattr(p, "compound", None) else {}),
        "observation": None if obs is None else {
            "reason": str(obs.reason), "compared_table": obs.compared_table,
            "rows_differing": int(obs.rows_differing or 0), "rows_total": int(obs.rows_total or 0),
            "columns_differ": list(obs.columns_differ or []),
            "changed_tables": {str(k): int(v) for k, v in (obs.changed_tables or {}).items()},
            "example": obs.example, "details": _plain(obs.details or {}),
        },
        "proof_seconds": None if proof is None else {k: round(float(v), 2) for k, v in (proof.seconds or {}).items()},
    }


def build_record(ctx: RunContext, started: float, run_id: str) -> dict:
    if ctx.doc.runtime is None:  # written before the summary collected it
        ctx.doc.runtime = runtime.collect(ctx)
    doc = copy.deepcopy(_plain(ctx.doc.to_json()))
    details = ctx.report.task_details
    for t in doc.get("tasks", []):
        t.update(details.get(t["task_id"], {}))
    started_at, finished_at = _utc(started, ISO), _utc(time.time(), ISO)
    doc["record"] = {"version": RECORD_VERSION, "started_utc": started_at, "finished_utc": finished_at,
                     "pid": os.getpid()}
    # the fields adegen.report reads (its package docstring, RUN RECORD)
    doc.update(run_id=run_id, command=ctx.command, started_at=started_at, finished_at=finished_at,
               graph=graph_from_discovery(ctx.discovery or {}))
    return doc


def write_record(ctx: RunContext, started: float) -> Path:
    """Write the record atomically (temp file + rename); its path, also set as ctx.doc.run_record."""
    runs = ctx.opts.output_dir / RUNS_DIR
    runs.mkdir(parents=True, exist_ok=True)
    path = runs / f"{_utc(started, '%Y%m%dT%H%M%SZ')}-{os.getpid()}.json"
    ctx.doc.run_record = str(path)
    ctx.record = build_record(ctx, started, path.stem)
    write_text_atomic(path, json.dumps(ctx.record, indent=2, default=str) + "\n", tmp_prefix=TMP_PREFIX)
    return path


def clean_stale(output_dir: Path) -> None:
    """Temp files of runs killed while writing their record (called with the run lock held)."""
    runs = output_dir / RUNS_DIR
    if runs.is_dir():
        for p in runs.glob(TMP_PREFIX + "*"):
            p.unlink(missing_ok=True)


def _utc(t: float, fmt: str) -> str:
    return time.strftime(fmt, time.gmtime(t))


def _plain(value: Any) -> Any:
    """JSON-safe copy (observation details may hold paths, tuples, numbers of numpy/duckdb types)."""
    return json.loads(json.dumps(value, default=str))
