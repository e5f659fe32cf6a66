"""Run records: find them, read them tolerantly, and give one normalised view of their tasks.

The record's shape is documented in `adegen.report` (package docstring). Nothing here raises on a
bad record: unreadable files and wrong types become warnings, missing fields stay missing."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from adegen.core.graph import ProjectGraph

RECORDS_DIR = Path(".adegen") / "runs"

# Per-task fields taken over from the task's proposal when the task entry itself lacks them
# (the --json document keeps them on the proposal).
_FROM_PROPOSAL = ("model", "model_path", "layer", "pattern_id", "pattern_name", "family", "difficulty",
                  "description", "site", "compared_table")


@dataclass
class RunRecord:
    """One run's record (the --json document plus the record's own fields)."""

    run_id: str
    source: str  # the file it was read from, or "this run"
    doc: dict

    def get(self, key: str, kind: type, default=None):
        value = self.doc.get(key)
        return value if isinstance(value, kind) else default

    @property
    def command(self) -> str:
        return self.get("command", str, "build")

    @property
    def started_at(self) -> str:
        return self.get("started_at", str, "")

    def task_entries(self) -> dict[str, dict]:
        """task_id -> the task's facts, with its proposal's facts filled in (see _normalise)."""
        proposals = {p.get("number"): p for p in self.get("proposals", list, []) if isinstance(p, dict)}
        out: dict[str, dict] = {}
        for t in self.get("tasks", list, []):
            if isinstance(t, dict) and isinstance(t.get("task_id"), str):
                out[t["task_id"]] = _normalise(t, proposals.get(t.get("proposal")))
        return out

    def dropped_by_reason(self) -> dict[str, int]:
        given = self.get("dropped_by_reason", dict)
        if given:
            return {str(k): int(v) for k, v in given.items() if isinstance(v, (int, float))}
        counts: dict[str, int] = {}
        for d in self.get("dropped_candidates", list, []):
            if isinstance(d, dict):
                key = reason_bucket(str(d.get("reason") or "unknown"))
                counts[key] = counts.get(key, 0) + 1
        return counts

    def timings(self) -> dict[str, float]:
        t = self.get("timings_sec", dict, {})
        return {str(k): float(v) for k, v in t.items() if isinstance(v, (int, float))}


def _normalise(task: dict, proposal: dict | None) -> dict:
    """One dict per task: the task's own fields first, then its proposal's; `prompts` always a list
    of {key, prompt}; `observation` the record's observation, else the proposal's screening."""
    out = dict(task)
    prop = proposal if isinstance(proposal, dict) else {}
    for key in _FROM_PROPOSAL:
        if out.get(key) in (None, "") and prop.get(key) not in (None, ""):
            out[key] = prop[key]
    prompts = out.get("prompts")
    if not isinstance(prompts, list) or not prompts:
        text = out.get("prompt") or prop.get("prompt")
        out["prompts"] = [{"key": "base", "prompt": text}] if isinstance(text, str) and text else []
    obs = out.get("observation")
    if not isinstance(obs, dict):
        screening = prop.get("screening")
        obs = dict(screening) if isinstance(screening, dict) else {}
    out["observation"] = _with_measured_facts(obs)
    if not isinstance(out.get("proof"), dict):
        out["proof"] = {}
    return out


def _with_measured_facts(obs: dict) -> dict:
    """The observation with the page's impact fields filled from the measured facts the validator
    records per changed table (`details["tables"]`, adegen.facts.evidence): rows per table, and
    the compared table's key, first changed value and missing/extra row counts."""
    details = obs.get("details")
    facts = details.get("tables") if isinstance(details, dict) else None
    if not isinstance(facts, list):
        return obs
    obs, details = dict(obs), dict(details)
    per_table = {str(f["table"]): {"rows_differing": f.get("rows_differing"), "rows_total": f.get("rows_intact")}
                 for f in facts if isinstance(f, dict) and f.get("table")}
    obs.setdefault("tables", per_table)
    main = next((f for f in facts if isinstance(f, dict) and f.get("table") == obs.get("compared_table")), None)
    if main is not None:
        key = main.get("key") or []
        sample = next(((c, x) for c in main.get("columns") or [] for x in c.get("sample") or []
                       if isinstance(x, dict)), None)
        if key and sample is not None:
            col, x = sample
            details.setdefault("key", " + ".join(map(str, key)))
            details.setdefault("example_key_value", " / ".join(map(str, x.get("key") or [])))
            details.setdefault("example_column", col.get("name"))
            details.setdefault("example_observed", x.get("observed"))
            details.setdefault("example_expected", x.get("expected"))
        for field_name, detail in (("missing", "missing_rows"), ("extra", "extra_rows")):
            part = main.get(field_name)
            if isinstance(part, dict) and isinstance(part.get("count"), int):
                details.setdefault(detail, part["count"])
    obs["details"] = details
    return obs


@dataclass
class Records:
    runs: list[RunRecord] = field(default_factory=list)  # oldest first
    warnings: list[str] = field(default_factory=list)
    _tasks: dict[str, tuple[dict, RunRecord]] | None = None

    def _index(self) -> dict[str, tuple[dict, RunRecord]]:
        if self._tasks is None:
            self._tasks = {}
            for run in self.runs:  # later runs win
                for tid, entry in run.task_entries().items():
                    self._tasks[tid] = (entry, run)
        return self._tasks

    def task(self, task_id: str) -> tuple[dict, RunRecord] | tuple[None, None]:
        return self._index().get(task_id, (None, None))

    def graph(self, prefer: RunRecord | None = None) -> dict | None:
        """The discovery graph of `prefer` when it has one, else of the newest record that has one."""
        if prefer is not None and _is_graph(prefer.doc.get("graph")):
            return prefer.doc["graph"]
        for run in reversed(self.runs):
            if _is_graph(run.doc.get("graph")):
                return run.doc["graph"]
        return None


def _is_graph(g) -> bool:
    return isinstance(g, dict) and isinstance(g.get("models"), list)


def load_records(output_dir: Path, run_doc: dict | None = None) -> Records:
    """Every record under `<output_dir>/.adegen/runs/`, oldest first, then `run_doc` (the current
    run's document, when the caller has it in memory) unless a file already holds the same run."""
    recs = Records()
    folder = Path(output_dir) / RECORDS_DIR
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    for f in files:
        try:
            doc = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            recs.warnings.append(f"run record {f} skipped: {type(exc).__name__}: {str(exc).splitlines()[0]}")
            continue
        if not isinstance(doc, dict):
            recs.warnings.append(f"run record {f} skipped: not a JSON object")
            continue
        recs.runs.append(RunRecord(str(doc.get("run_id") or f.stem), str(f), doc))
    if isinstance(run_doc, dict):
        rid = run_doc.get("run_id")
        if not (rid and any(r.run_id == rid for r in recs.runs)):
            recs.runs.append(RunRecord(str(rid or "this run"), "this run", run_doc))
    return recs


_LINE_PREFIX = re.compile(r"^line \d+:\s*")


def reason_bucket(reason: str) -> str:
    """A dropped candidate's reason without its particulars: `line 16: equivalent on this data:
    every rebuilt table ...` -> `equivalent on this data` (what the overview counts by)."""
    text = _LINE_PREFIX.sub("", " ".join(reason.split()))
    text = re.split(r":\s| \(", text, maxsplit=1)[0].strip()
    return (text[:77] + "...") if len(text) > 80 else (text or "unknown")


def graph_from_discovery(payload: dict) -> dict:
    """The record's `graph` from a discovery payload (discovery.schema.json): every model with
    its layer, the sources, seeds and snapshots models depend on, and one edge per dependency.
    Nodes are named like the tables tasks name (the model name; `source.table` for sources)."""
    models = [m for m in payload.get("models", []) if isinstance(m, dict) and m.get("unique_id")]
    names: dict[str, str] = {}
    counts: dict[str, int] = {}
    for m in models:
        counts[m["name"]] = counts.get(m["name"], 0) + 1
    for m in models:  # two packages (or versions) with one name: keep them apart
        uid = m["unique_id"]
        names[uid] = m["name"] if counts[m["name"]] == 1 else uid.split(".", 1)[1]
    for s in payload.get("sources", []) or []:
        if isinstance(s, dict) and s.get("unique_id"):
            names[s["unique_id"]] = f"{s.get('source')}.{s.get('table')}"
    nodes = [{"name": names[m["unique_id"]], "layer": m.get("layer") or "other",
              "unique_id": m["unique_id"]} for m in models]
    seen = {n["name"] for n in nodes}
    edges = []
    for dep, child in ProjectGraph.from_models(models).edges():
        kind = dep.split(".", 1)[0]
        if kind not in ("model", "source", "seed", "snapshot"):
            continue
        parent = names.get(dep) or dep.rsplit(".", 1)[-1]
        if parent not in seen:
            seen.add(parent)
            nodes.append({"name": parent, "layer": kind, "unique_id": dep})
        edges.append([parent, names[child]])
    return {"models": nodes, "edges": edges}
