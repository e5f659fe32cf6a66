"""Stage "data change" of the build (`--data-change`, `--mix hard`): one task of the run's --count,
written after the picked proposals, whose setup changes the data the project reads
(propose/resent.py: the source re-sends records; propose/datachange.py: a raw table's columns
arrive renamed), written and proven
as every task is (tasks/datachange.py for the files, the validator's proof, which runs setup.sh's
SQL through the emulated `/scripts/run_sql.sh` on its copy of the database).

The raw tables, their columns and their readers come from the validator's intact build (its
model graph, and the raw database it seeded): no extra dbt call. The tables are tried in order
(most table models downstream first) until one task is proven, at most MAX_TRIES."""
from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from adegen.pipeline.context import RunContext
from adegen.pipeline.extra_task import ExtraTask, entry, proof_seconds, write_and_prove, write_until_proven
from adegen.propose import resent
from adegen.propose.candidate_sites import read_as_is
from adegen.propose.mix import hard_texts
from adegen.sql.quote import ident
from adegen.propose.datachange import DIFFICULTY, KIND_ORDER, TAGS, DataChange, ModelFile, RawRelation, plan_change
from adegen.tasks.datachange import build_files
from adegen.tasks.patchcheck import TaskPatches, check_solution
from adegen.tasks.rebuild import refresh_for
from adegen.tasks.task_yaml import PromptEntry, SeedEntry, Variant
from adegen.tasks.taskgen import TaskPlan, unified_diff

NONE_FOUND = ("No data change found: no raw table (read by the project's own models, with a table downstream) "
              "with a unique id to re-send or snake_case columns to rename; the proposals make every task.")
FAMILY = "data-change"
MAX_TRIES = 2  # each try is a full emulated proof (two harness trials and two solved builds)


def data_change_tasks(ctx: RunContext) -> list[str]:
    """Write (at most) one proven data-change task; the ids written (ctx.report.tasks: entries)."""
    t1 = time.monotonic()
    changes = candidates(ctx)
    if not changes:
        ctx.ui.say(NONE_FOUND)
        return []
    layers = {m["name"]: m.get("layer", "") for m in ctx.discovery.get("models", [])}
    written = write_until_proven(ctx, changes[:MAX_TRIES],
                                 lambda change, task_id: _realise(ctx, change, task_id, layers.get(change.readers[0], "")),
                                 1)
    ctx.timing("data_change", t1)
    return written


def available(ctx: RunContext) -> bool:
    """Whether this run can write a data change (DuckDB, a working validator); warns why not."""
    if not ctx.backend.data_changes:
        ctx.ui.warn(f"no data change: DuckDB tasks only (this project's adapter: {ctx.project.adapter_type})")
        return False
    if ctx.validator is None:
        ctx.ui.warn(f"no data change: it needs the validator (its intact build): {ctx.unproven_reason()}")
        return False
    if not ctx.validator.baseline_info().get("raw_db"):
        ctx.ui.warn(f"no data change: {NO_RAW_DATA}")
        return False
    if not candidates(ctx):  # no slot is kept for a task that cannot be made
        ctx.ui.say(NONE_FOUND)
        return False
    return True


def candidates(ctx: RunContext) -> list[DataChange]:
    """Every raw table's change that has a fix and a table to grade: the most tables downstream
    first, then the most models, then by name."""
    info = ctx.validator.baseline_info()
    if not info.get("raw_db"):  # NO_RAW_DATA
        return []
    graph = info["graph"]
    models = {u: m for u, m in info["models"].items() if m.get("package", ctx.project.name) == ctx.project.name}
    layers = {m["name"]: m.get("layer", "") for m in ctx.discovery.get("models", [])}
    root = ctx.opts.project_dir
    files = {uid: ModelFile(uid, m["name"], m["path"], _read(root / m["path"]), m.get("materialized") or "",
                            layers.get(m["name"], "")) for uid, m in models.items() if m.get("path")}
    depth = {m["name"]: int(m.get("depth", 0) or 0) for m in ctx.discovery.get("models", [])}
    # never graded: a model that reads the clock, or whose rows differ between two intact builds
    unstable_columns = info.get("nondeterministic") or {}  # table -> what differed between two intact builds
    ungradable = set(info.get("clock") or {}) | {u for u, f in files.items() if unstable_columns.get(f.name) == []}
    out_: list[tuple[int, int, str, DataChange]] = []
    for rel in raw_relations(info["raw_db"], graph, ctx.discovery):
        downstream = {u: d for u, d in graph.downstream_of(rel.readers).items() if u not in ungradable}

        def between(end: str, readers=rel.readers) -> list[str]:
            on_path = {u for r in readers for u in graph.between(r, end)}
            return sorted(on_path, key=lambda u: (depth.get(files[u].name if u in files else "", 0), u))

        tables = sum(1 for u in downstream if u in files and files[u].materialized == "table")
        for plan in PLANS:
            change = plan(rel, files, downstream, between)
            if change is None:
                continue
            graded = models[next(u for u, f in files.items() if f.name == change.graded)]
            change = replace(change, drop=((graded["schema"], graded["alias"]),))
            out_.append((KIND_ORDER.index(change.kind), -tables, -len(downstream), rel.identifier, change))
    return [c for *_, c in sorted(out_, key=lambda x: x[:4])]


# The intact build started from the user's own tables (validate.userbase: the database holds incremental
# models' rows), so there is no copy of the raw data alone to change and rebuild from.
NO_RAW_DATA = ("the intact build starts from your database's own tables (it holds incremental models' rows), "
               "and a data change is proven by rebuilding from the raw data alone")
PLANS = (resent.plan_resent, plan_change)  # every kind's planner (propose/): each may decline a table
KEYS_MEASURED = 3  # id-named columns measured per table (the first ones in table order)


def raw_relations(raw_db: str, graph, discovery: dict) -> list[RawRelation]:
    """The raw tables the models read (sources and seeds; a source that names a seed's table is the
    same table), with their columns as the raw database holds them."""
    import duckdb

    sources = {s["unique_id"]: s for s in discovery.get("sources", []) or []}
    con = duckdb.connect(raw_db, read_only=True)
    try:
        tables: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for schema, name, column, typ in con.execute(
                "select table_schema, table_name, column_name, data_type from information_schema.columns "
                "order by table_schema, table_name, ordinal_position").fetchall():
            tables.setdefault((schema, name), []).append((column, typ))
        found = _readers(tables, graph, sources)
        return [RawRelation(s, t, tuple(e["calls"]), tuple(c for c, _ in tables[(s, t)]), tuple(e["readers"]),
                            tuple(ty for _, ty in tables[(s, t)]), _keys(con, s, t, tables[(s, t)]))
                for (s, t), e in sorted(found.items())]
    finally:
        con.close()


def _keys(con, schema: str, table: str, columns: list[tuple[str, str]]) -> tuple[str, ...]:
    """The id-named columns (the first KEYS_MEASURED) whose values are unique and never NULL."""
    named = [c for c, _ in columns if resent.KEY.search(c)][:KEYS_MEASURED]
    if not named:
        return ()
    exprs = ", ".join(f"count(distinct {ident(c)}) = count(*) and count({ident(c)}) = count(*)" for c in named)
    row = con.execute(f"select count(*) > 0, {exprs} from {ident(schema)}.{ident(table)}").fetchone()
    return tuple(c for c, ok in zip(named, row[1:]) if row[0] and ok)


def _readers(tables: dict, graph, sources: dict) -> dict[tuple[str, str], dict]:
    """{(schema, table): {calls, readers}} of the raw tables the models read."""
    found: dict[tuple[str, str], dict] = {}
    for uid in graph.inputs():
        call, identifier = _call(uid, sources)
        where = [k for k in tables if k[1].lower() == identifier.lower()] if call else []
        if len(where) != 1:
            continue  # not a raw table, or in more than one schema: which one is read is not known here
        entry = found.setdefault(where[0], {"calls": [], "readers": []})
        entry["calls"].append(call)
        entry["readers"] += [c for c in graph.children(uid) if c not in entry["readers"]]
    return found


def _call(uid: str, sources: dict) -> tuple[str | None, str]:
    """The Jinja call that reads a source or seed node, and its table's identifier."""
    parts = uid.split(".")
    if parts[0] == "source" and uid in sources:
        s = sources[uid]
        return f"source('{s['source']}', '{s['table']}')", str(s.get("identifier") or s["table"])
    if parts[0] == "seed" and len(parts) >= 3:
        return f"ref('{parts[-1]}')", parts[-1]
    return None, ""


def _read(path: Path) -> str:
    try:
        return read_as_is(path)
    except OSError:
        return ""


def _details(change: DataChange, proof, layer: str) -> dict:
    """What the run record adds to the task's entry (pipeline/record.py's fields; no screening
    observation: a data change is not screened)."""
    return {"layer": layer, "graded_tables": [change.graded], "observation": None,
            "prompts": [{"key": k, "prompt": t, "tables": [change.graded]} for k, t in change.prompts()],
            "proof_seconds": proof_seconds(proof),
            "data_change": change.record()}


def _realise(ctx: RunContext, change: DataChange, task_id: str, layer: str = "") -> dict | None:
    """Files, solution patch check, proof, commit (pipeline/extra_task.py): the task's --json entry
    (None: patch check failed); its run-record details in ctx.report.task_details. `layer`: the
    (first) adapted model's."""
    change = for_run(ctx, change)
    task = task_of(ctx, change, task_id)
    w = write_and_prove(ctx, task)
    return None if w is None else finish(ctx, change, (task, w), layer)


def for_run(ctx: RunContext, change: DataChange) -> DataChange:
    """The change as this run words it: --mix hard takes the hard prompt (fewest hints) as the base."""
    if getattr(ctx.opts, "mix", "default") == "hard":
        return replace(change, texts=hard_texts(change.texts))
    return change


def task_of(ctx: RunContext, change: DataChange, task_id: str) -> ExtraTask:
    """The task's files and its solution patch check."""
    plan, project = ctx.output, ctx.project
    variant = Variant(db_type=project.adapter_type, db_name=project.db_name, project_name=project.name,
                      project_dir=plan.project_dir_field, extra=ctx.backend.variant_fields(ctx.opts))
    spec = TaskPlan(task_id=task_id, description=change.description(),
                    prompts=[PromptEntry(k, t) for k, t in change.prompts()], difficulty=DIFFICULTY,
                    tags=[*TAGS, project.name],
                    test_setup_models=list(change.rebuild), solution_seeds=[SeedEntry(change.graded)],
                    variant=variant, seed_based=plan.seed_based, data_change=True,
                    solution_rebuild=list(change.rebuild), max_test_timeout_sec=120 if plan.seed_based else None,
                    # the broken run's rows in an incremental table (re-sent rows): kept only where needed
                    full_refresh=refresh_for(change.rebuild, ctx.discovery.get("models", [])))
    patch = b"".join(unified_diff(old, new, path) for path, old, new in change.fixes)
    files = build_files(spec, change.setup_sql(), patch)

    def check(task_dir):
        return check_solution(plan.project_root, TaskPatches(task_id, task_dir, change.fixes),
                              list(change.rebuild), plan.known_models, workdir=ctx.workroot)

    return ExtraTask(task_id, files.files, check, f"data change of {change.relation}", solved="adapted",
                     refresh=spec.full_refresh, rebuild=tuple(spec.solution_rebuild))


def finish(ctx: RunContext, change: DataChange, made: tuple, layer: str) -> dict:
    """The committed task's --json entry (made: the ExtraTask and its Written); its run-record
    details go to ctx.report.task_details."""
    task, w = made
    ctx.report.task_details[task.task_id] = _details(change, w.proof, layer)
    proof = w.proof
    return entry(task, w, model=change.readers[0], pattern_id=change.kind, family=FAMILY,
                 difficulty=DIFFICULTY,
                 proof=None if proof is None else {"ok": bool(proof.ok), "broken_fails": bool(proof.broken_fails),
                                                   "solved_passes": bool(proof.solved_passes),
                                                   **({"fixed_only_fails": proof.fixed_only_fails} if w.refresh else {})})
