"""Task folders + run records -> the page's view model (`Page`). Pure apart from reading the
seed previews; every fact that is neither on disk nor in a record is shown as not recorded."""
from __future__ import annotations

import re

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from adegen.discover.survey import summarise_patch
from adegen.report import dag as dg
from adegen.report.folders import SeedFile, TaskFolder, preview_seed
from adegen.report.highlight import highlight
from adegen.report.model import (NOT_RECORDED, CodeView, ExampleRow, Impact, Overview, Page, ProofView, RunRow,
                    TableImpact, TaskView)
from adegen.report.records import Records, RunRecord

MAX_IMPACT_ROWS = 10  # tables listed under "Measured impact" (graded first, then the nearest changed)


@dataclass
class Context:
    """What every task view is built against."""

    records: Records
    catalog: object | None  # adegen.catalog.patterns.Catalog, for inferring pattern and family
    graph_override: dict | None = None  # a graph from --project, preferred over the records'
    measured: dict | None = None  # task id -> calibrate.measure.MeasuredDifficulty (calibration.jsonl)
    _graphs: dict | None = None

    def graph_for(self, run: RunRecord | None):
        """(networkx graph, layers) for a task written by `run`, or (None, {})."""
        graph = self.graph_override or self.records.graph(prefer=run)
        if graph is None:
            return None, {}
        if self._graphs is None:
            self._graphs = {}
        key = id(graph)
        if key not in self._graphs:
            self._graphs[key] = dg.build_graph(graph)
        return self._graphs[key]


def _pattern_from_description(description: str, catalog) -> object | None:
    """The catalog pattern whose name the build's description starts with
    (`<pattern name> in <model>...`); the longest name wins."""
    best = None
    for p in getattr(catalog, "patterns", []) or []:
        if description.startswith(p.name + " in ") and (best is None or len(p.name) > len(best.name)):
            best = p
    return best


def _inferred(folder: TaskFolder, catalog, known: dict) -> dict:
    """Model, path, pattern and family read from the task folder itself, for what `known` (the
    record's facts) lacks."""
    out: dict = {}
    if folder.setup_patch and not (known.get("model") and known.get("family") and known.get("model_path")):
        changes, _problem = summarise_patch(folder.setup_patch.encode("utf-8"), catalog)
        for c in changes:
            if c.model:
                out.update(model=c.model, model_path=c.file)
                if c.family:
                    out["family"] = c.family
                break
    if not known.get("pattern_id"):
        description = str(folder.data.get("description") or "")
        pattern = _pattern_from_description(description, catalog)
        purposeful = _PURPOSEFUL.search(description)  # pipeline/purpose.py's description
        if pattern is not None:
            out.update(pattern_id=pattern.id, pattern_name=pattern.name, family=pattern.family)
        elif purposeful:
            out.update(pattern_id=f"purpose:{purposeful.group(1)}", family="purposeful-change")
    return out


_PURPOSEFUL = re.compile(r"\(purposeful change: ([a-z_]+)\)\Z")


def _text(value) -> str:
    return "" if value is None else str(value)


def _proof(folder: TaskFolder, entry: dict | None) -> ProofView:
    status = _text(folder.data.get("status")) or "unknown"
    if entry is None:
        why = "proof not recorded (no run record names this task)"
        return ProofView("unrecorded", "ready" if status == "ready" else status, why)
    proof = entry.get("proof") or {}
    seconds = {str(k): float(v) for k, v in (proof.get("seconds") or {}).items() if isinstance(v, (int, float))}
    total = entry.get("proof_seconds")
    total = float(total) if isinstance(total, (int, float)) else seconds.get("total")
    detail = _text(entry.get("proof_detail") or proof.get("detail"))
    if entry.get("proven"):
        return ProofView("proven", _text(entry.get("proof_label")) or "proven", _text(proof.get("detail")) or detail,
                         seconds, total)
    if proof:
        return ProofView("failed", "not proven", detail, seconds, total)
    return ProofView("unproven", "not validated", detail or "no execution proof in this run", seconds, total)


def _status(folder: TaskFolder, proof: ProofView) -> tuple[str, str]:
    """The filterable status (proven | dev | ready) and why."""
    yaml_status = _text(folder.data.get("status")) or "unknown"
    if proof.state == "proven":
        return "proven", proof.label
    if yaml_status == "ready":
        return "ready", proof.detail if proof.state != "unrecorded" else "status: ready; proof not recorded"
    return yaml_status, proof.detail or "no reason recorded"


def _shown(value) -> str:
    return "NULL" if value is None else str(value)


def _example(details: dict, seed: SeedFile | None, table: str) -> ExampleRow | None:
    """The evidence row: the whole intact row from the solution seed when the key is found there
    (the broken row is that row with the observed value), else just the key and the column."""
    key, kv, col = details.get("key"), details.get("example_key_value"), details.get("example_column")
    if not (key and kv is not None and col):
        return None
    broken_v, intact_v = _shown(details.get("example_observed")), _shown(details.get("example_expected"))
    if seed is not None and seed.match is not None and col in seed.columns:
        intact = list(seed.match)
        broken = list(intact)
        broken[seed.columns.index(col)] = broken_v
        return ExampleRow(table, str(key), str(kv), list(seed.columns), broken, intact,
                          [c == col for c in seed.columns])
    return ExampleRow(table, str(key), str(kv), [str(key), str(col)], [str(kv), broken_v], [str(kv), intact_v],
                      [False, True])


def _impact(entry: dict | None, folder: TaskFolder, seeds: list[SeedFile]) -> Impact:
    obs = (entry or {}).get("observation") or {}
    if not obs:
        return Impact(recorded=False)
    graded = folder.graded_tables()
    compared = obs.get("compared_table") or (graded[0] if graded else None)
    changed = obs.get("changed_tables") if isinstance(obs.get("changed_tables"), dict) else {}
    details = obs.get("details") if isinstance(obs.get("details"), dict) else {}
    per_table = obs.get("tables") if isinstance(obs.get("tables"), dict) else {}
    nearest = sorted(changed, key=lambda t: (changed[t] if isinstance(changed[t], int) else 10**6, str(t)))
    names = list(dict.fromkeys(list(graded) + ([compared] if compared else []) + nearest))
    tables = []
    for t in names[:MAX_IMPACT_ROWS]:
        rows = per_table.get(t, {}) if isinstance(per_table.get(t), dict) else {}
        n = rows.get("rows_differing", obs.get("rows_differing") if t == compared else None)
        total = rows.get("rows_total", obs.get("rows_total") if t == compared else None)
        dist = changed.get(t)
        tables.append(TableImpact(t, t in graded, dist if isinstance(dist, int) else None,
                                  n if isinstance(n, int) else None, total if isinstance(total, int) else None))
    seed = next((s for s in seeds if s.table == compared), None)
    return Impact(
        recorded=True, summary=_text(obs.get("example") or obs.get("reason")) or None, tables=tables,
        more_tables=max(0, len(names) - MAX_IMPACT_ROWS),
        columns_differ=[str(c) for c in obs.get("columns_differ") or []],
        example=_example(details, seed, compared or ""),
        missing_rows=details.get("missing_rows") if isinstance(details.get("missing_rows"), int) else None,
        extra_rows=details.get("extra_rows") if isinstance(details.get("extra_rows"), int) else None,
    )


def _dag(ctx: Context, run: RunRecord | None, model: str, entry: dict | None, graded: list[str]):
    g, layers = ctx.graph_for(run)
    if g is None:
        return None, "DAG not recorded: no run record with the discovery graph (rebuild with --project DIR)", layers
    obs = (entry or {}).get("observation") or {}
    changed = obs.get("changed_tables") if isinstance(obs.get("changed_tables"), dict) else {}
    symptoms = {str(k): (v if isinstance(v, int) else None) for k, v in changed.items()}
    if not symptoms and obs.get("compared_table"):
        symptoms[str(obs["compared_table"])] = None
    pic = dg.picture(g, layers, dg.DagFocus(model, symptoms, tuple(graded)))
    if pic is None:
        return None, f"DAG: model {model or '?'} is not in the recorded graph", layers
    return pic, "", layers


def _seed_previews(folder: TaskFolder, entry: dict | None) -> tuple[list[SeedFile], list[str]]:
    """A preview of each solution seed; the graded table's also finds the evidence row by key."""
    obs = (entry or {}).get("observation") or {}
    details = obs.get("details") if isinstance(obs.get("details"), dict) else {}
    graded = folder.graded_tables()
    compared = obs.get("compared_table") or (graded[0] if graded else None)
    kv = details.get("example_key_value")
    seeds, problems = [], []
    for table, path in folder.seed_files.items():
        key = details.get("key") if table == compared else None
        got = preview_seed(table, path, folder.column_types(table), key, None if kv is None else str(kv))
        if isinstance(got, str):
            problems.append(got)
        else:
            seeds.append(got)
    return seeds, problems


def task_view(folder: TaskFolder, ctx: Context) -> TaskView:
    entry, run = ctx.records.task(folder.task_id)
    facts = _inferred(folder, ctx.catalog, entry or {})
    for k, v in (entry or {}).items():
        if v not in (None, "") and k in ("model", "model_path", "layer", "pattern_id", "pattern_name", "family",
                                         "difficulty"):
            facts[k] = v
    family_inferred = "family" in facts and not (entry or {}).get("family")
    graded = folder.graded_tables()
    seeds, problems = _seed_previews(folder, entry)
    model = _text(facts.get("model"))
    pic, dag_note, layers = _dag(ctx, run, model, entry, graded)
    proof = _proof(folder, entry)
    status, why = _status(folder, proof)
    prompts = (entry or {}).get("prompts") or []
    prompts = folder.prompts() or [p for p in prompts if isinstance(p, dict) and p.get("prompt")]
    return TaskView(
        task_id=folder.task_id, status=status, status_why=why, model=model or "unknown",
        model_path=_text(facts.get("model_path")), layer=_text(facts.get("layer") or layers.get(model)) or NOT_RECORDED,
        pattern_id=_text(facts.get("pattern_id")) or "unknown", pattern_name=_text(facts.get("pattern_name")),
        family=_text(facts.get("family")) or "unknown", family_inferred=family_inferred,
        difficulty=_text(folder.data.get("difficulty") or facts.get("difficulty")) or "unknown",
        description=_text(folder.data.get("description")), prompts=prompts,
        setup_diff=highlight(folder.setup_patch, "diff") if folder.setup_patch else None,
        solution_diff=highlight(folder.solution_patch, "diff") if folder.solution_patch else None,
        tests=[CodeView(n, highlight(t, "sql")) for n, t in folder.tests.items()],
        auto_tests=[f"AUTO_{t}_{kind}" for t in graded for kind in ("equality", "existence")] if seeds else [],
        seeds=seeds,
        task_yaml=highlight(folder.yaml_text, "yaml") if folder.yaml_text else None,
        impact=_impact(entry, folder, seeds), proof=proof, dag=pic, dag_note=dag_note,
        problems=folder.problems + problems,
        **_measured(ctx, folder.task_id),
    )


def _measured(ctx: Context, task_id: str) -> dict:
    m = (ctx.measured or {}).get(task_id)
    return {"measured": m.line(), "measured_label": m.label} if m is not None else {}


def _sorted_counts(values) -> dict[str, int]:
    return dict(sorted(Counter(values).items(), key=lambda kv: (-kv[1], kv[0])))


def overview(tasks: list[TaskView], folders: list[TaskFolder], records: Records) -> Overview:
    runs, phases = [], []
    dropped: Counter = Counter()
    for r in records.runs:
        timings = r.timings()
        phases += [p for p in timings if p not in phases]
        dropped.update(r.dropped_by_reason())
        code = r.doc.get("exit_code")
        elapsed = r.doc.get("elapsed_sec")
        runs.append(RunRow(r.run_id, r.command, r.started_at, len(r.task_entries()),
                           code if isinstance(code, int) else None,
                           float(elapsed) if isinstance(elapsed, (int, float)) else None, timings))
    newest = records.runs[-1].doc if records.runs else {}
    proj = newest.get("project") if isinstance(newest.get("project"), dict) else {}
    variant = next((f.variant() for f in folders if f.variant()), {})
    # an output directory may hold tasks of several projects: name them all, the newest run's first
    names = [proj.get("name")] + [f.variant().get("project_name") for f in folders]
    name = ", ".join(dict.fromkeys(str(n) for n in names if n)) or "unknown project"
    db_type = proj.get("db_type") or variant.get("db_type") or "?"
    db_name = proj.get("db_name") or variant.get("db_name") or "?"
    db_file = (newest.get("database") or {}).get("db_file") if isinstance(newest.get("database"), dict) else None
    rt = newest.get("runtime") if isinstance(newest.get("runtime"), dict) else {}
    clock = rt.get("clock_dependent") if isinstance(rt.get("clock_dependent"), dict) else {}
    clock_cols = rt.get("clock_columns") if isinstance(rt.get("clock_columns"), dict) else {}
    clock_wins = rt.get("clock_windows") if isinstance(rt.get("clock_windows"), dict) else {}
    return Overview(
        project=str(name), database=f"{db_type} {db_name}" + (f" ({db_file})" if db_file else ""),
        tasks=len(tasks), by_status=_sorted_counts(t.status for t in tasks),
        by_family=_sorted_counts(t.family for t in tasks), by_layer=_sorted_counts(t.layer for t in tasks),
        by_difficulty=_sorted_counts(t.difficulty for t in tasks),
        dropped_by_reason=dict(sorted(dropped.items(), key=lambda kv: (-kv[1], kv[0]))),
        runs=runs, phases=phases, warnings=list(records.warnings),
        by_measured=_sorted_counts(t.measured_label for t in tasks) if any(t.measured for t in tasks) else {},
        clock_dependent={str(k): str(v) for k, v in sorted(clock.items())},
        clock_columns={str(k): {"columns": [str(c) for c in v.get("columns") or []], "why": str(v.get("why", ""))}
                       for k, v in sorted(clock_cols.items()) if isinstance(v, dict) and v.get("columns")},
        clock_windows={str(k): {"column": str(v.get("column", "")), "through": str(v.get("through", "")),
                                "why": str(v.get("why", ""))} for k, v in sorted(clock_wins.items()) if isinstance(v, dict)},
        clock_check=str(rt["clock_check"]) if rt.get("clock_check") else None,
    )


def assemble(output_dir: Path, folders: list[TaskFolder], ctx: Context) -> Page:
    tasks = [task_view(f, ctx) for f in folders]
    ov = overview(tasks, folders, ctx.records)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return Page(f"adegen review: {ov.project}", now, str(output_dir), ov, tasks)
