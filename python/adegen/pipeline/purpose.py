"""Stage "purposeful changes" of the build (`--purpose`): tasks whose change has a purpose that
changes the model's output on purpose (a new count, a category left out, a column brought in from
another model), with the slip inside it (propose/purpose.py, propose/grain.py, rewrite/purposes).
Their solution is not the setup's inverse: it keeps the purpose and does it right, so the
solution seeds come from that state. They are written as every patch task is (taskgen's files, the patch check in its purposeful form) and proven by the
validator as the data-change tasks are: the proof's full emulation builds the solved state by
running setup.sh then solution.sh (its prepared path assumes the solution restores the intact
project and hands such a task on, with the reason).

The models, their materializations and what is never graded come from the validator's intact
build; one dbt compile gives every candidate model's compiled SQL; the data is read on the intact
build. At most WANT tasks are written, from at most MAX_TRIES candidates, kinds interleaved."""
from __future__ import annotations

import time
from pathlib import Path

from adegen.core.errors import AdegenError
from adegen.pipeline.context import RunContext
from adegen.pipeline.extra_task import ExtraTask, entry, proof_seconds, write_and_prove, write_until_proven
from adegen.pipeline.realise import proof_to_json
from adegen.propose import grain
from adegen.propose.mutant_compile import compile_mutants
from adegen.propose.purpose import DIFFICULTY, TAGS, ModelText, Purposeful, candidates
from adegen.realism.probe import ProbeDB
from adegen.sql.quote import ident
from adegen.tasks.assertions import render_assertions
from adegen.tasks.patchcheck import TaskPatches, check_task
from adegen.tasks.shape import shape_of
from adegen.tasks.task_yaml import PromptEntry, SeedEntry, Variant
from adegen.tasks.taskgen import TaskPlan, build_task_files, unified_diff

WANT = 3          # purposeful tasks a build adds (one per kind when the data has each)
MAX_TRIES = 6     # candidates proven at most (each proof is a full emulation)
MAX_MODELS = 30   # models probed (marts first)
GRADABLE = ("table", "view")


def purposeful_tasks(ctx: RunContext) -> list[str]:
    """Write up to WANT proven purposeful tasks after the build's others; the ids written."""
    t1 = time.monotonic()
    if not ctx.backend.data_changes:
        ctx.ui.warn(f"--purpose writes DuckDB tasks only (this project's adapter: {ctx.project.adapter_type})")
        return []
    if ctx.validator is None:
        ctx.ui.warn(f"--purpose needs the validator (its intact build): {ctx.unproven_reason()}")
        return []
    cands = find(ctx)
    if not cands:
        ctx.ui.say("No purposeful change found: no model with a category column, or a column to bring in, "
                   "that its data supports.")
        return []
    written = write_until_proven(ctx, cands[:MAX_TRIES], lambda cand, task_id: _realise(ctx, cand, task_id), WANT)
    ctx.timing("purposeful", t1)
    return written


def _models(ctx: RunContext) -> list[tuple[str, str, str, str]]:
    """(unique id, name, path, layer) of the own models a task may grade: tables and views that
    neither read the clock nor differ between two intact builds; marts first, then by name."""
    info = ctx.validator.baseline_info()
    layers = {m["name"]: m.get("layer", "") for m in ctx.discovery.get("models", [])}
    unstable = info.get("nondeterministic") or {}
    clock = set(info.get("clock") or {})
    out_ = [(u, m["name"], m["path"], layers.get(m["name"], "")) for u, m in info["models"].items()
            if m.get("package", ctx.project.name) == ctx.project.name and m.get("path")
            and (m.get("materialized") or "") in GRADABLE and u not in clock and m["name"] not in unstable]
    return sorted(out_, key=lambda x: (x[3] != "marts", x[1]))[:MAX_MODELS]


def find(ctx: RunContext) -> list:
    """The measured purposeful changes of the project (propose/purpose.candidates and
    propose/grain.candidates: Purposeful and GrainChange, one shape), kinds interleaved."""
    root = ctx.opts.project_dir
    texts = {}
    for uid, name, path, layer in _models(ctx):
        try:
            texts[uid] = (name, path, layer, (root / path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
    compiled = compile_mutants(ctx.project, [(uid, t[1], t[3]) for uid, t in texts.items()], workdir=ctx.workroot)
    catalog = next((r.catalog for r in compiled.values() if r.catalog), None)
    models = [ModelText(uid, t[0], t[1], t[3], compiled[uid].compiled, t[2]) for uid, t in texts.items()
              if uid in compiled and compiled[uid].compiled]
    info = ctx.validator.baseline_info()
    db = ProbeDB(Path(info["baseline_db"]), catalog)
    try:
        found = candidates(models, db, say=ctx.ui.say)
        joins = grain.candidates(models, _sides(ctx, catalog), info.get("graph"), db, say=ctx.ui.say)
    finally:
        db.close()
    return interleaved([*found, *joins])


def interleaved(cands: list) -> list:
    """Kinds taking turns, each kind's own order kept: the first of each kind, then the second, ..."""
    by_kind: dict[str, list] = {}
    for c in cands:
        by_kind.setdefault(c.kind, []).append(c)
    return [v[i] for i in range(max(map(len, by_kind.values()), default=0)) for v in by_kind.values() if i < len(v)]


def _sides(ctx: RunContext, catalog: str | None) -> list[grain.Side]:
    """Every model built in the intact database (packages' too), as compiled SQL names it: the
    relations a grain change may bring a column from."""
    layers = {m["name"]: m.get("layer", "") for m in ctx.discovery.get("models", [])}
    return [grain.Side(u, m["name"], ".".join(ident(x) for x in (catalog or m.get("database"), m["schema"], m["alias"])
                                              if x), layers.get(m["name"], ""))
            for u, m in ctx.validator.baseline_info()["models"].items()
            if (m.get("materialized") or "view") != "ephemeral" and m.get("current", True)]


def _details(c: Purposeful | grain.GrainChange, proof) -> dict:
    """What the run record adds to the task's entry (pipeline/record.py's fields)."""
    return {"layer": c.model.layer, "graded_tables": [c.model.name], "observation": None,
            "prompts": [{"key": k, "prompt": t, "tables": [c.model.name]} for k, t in c.prompts()],
            "proof_seconds": proof_seconds(proof),
            "story": {"kind": c.kind, "subject": c.subject()},
            "purpose": {"kind": c.kind, "scope": c.ask.scope or "final select", "column": c.ask.column,
                        "value": c.ask.value, "name": c.ask.name, "measured": c.facts}}


def _realise(ctx: RunContext, c: Purposeful | grain.GrainChange, task_id: str) -> dict | None:
    """Files, patch check, proof, commit (pipeline/extra_task.py): the task's --json entry (None:
    the patch check failed, or a grain change's test could not be rendered)."""
    plan, project = ctx.output, ctx.project
    variant = Variant(db_type=project.adapter_type, db_name=project.db_name, project_name=project.name,
                      project_dir=plan.project_dir_field, extra=ctx.backend.variant_fields(ctx.opts))
    spec = TaskPlan(task_id=task_id, description=f"{c.subject()} (purposeful change: {c.kind})",
                    prompts=[PromptEntry(k, t) for k, t in c.prompts()], difficulty=DIFFICULTY,
                    tags=[*TAGS, project.name], test_setup_models=[c.model.name],
                    solution_seeds=[SeedEntry(c.model.name)], variant=variant, seed_based=plan.seed_based,
                    solution_rebuild=[c.model.name])
    files = c.files()
    setup = b"".join(unified_diff(old, broken, path) for path, old, broken, _ in files)
    solution = b"".join(unified_diff(broken, right, path) for path, _, broken, right in files)
    patches = tuple((p, o, b) for p, o, b, _ in files)

    def check(task_dir):
        return check_task(plan.project_root, TaskPatches(task_id, task_dir, patches,
                                                         solved=tuple((p, r) for p, _, _, r in files)),
                          [c.model.name], set(plan.known_models), workdir=ctx.workroot)

    # a grain change's copies are whole rows: a test of the model's key grades them (GrainChange.assertions)
    entries = c.assertions() if hasattr(c, "assertions") else []
    try:
        tests = render_assertions(project.project_dir, project.name, entries) if entries else []
    except AdegenError as exc:  # a task without its grading test would be proven on nothing: not written
        ctx.ui.warn(f"{c.subject()}: not written, its test could not be rendered ({exc})")
        return None
    task = ExtraTask(task_id, build_task_files(spec, setup, solution, tests).files, check, c.subject(),
                     solved="done right")
    w = write_and_prove(ctx, task)
    if w is None:
        return None
    ctx.report.task_details[task_id] = _details(c, w.proof)
    return entry(task, w, model=c.model.name, pattern_id=f"purpose:{c.kind}", family="purposeful-change",
                 difficulty=DIFFICULTY, proof_label=w.detail if w.proven else "unproven",
                 proof=None if w.proof is None else proof_to_json(w.proof, ctx.backend),
                 change=shape_of(patches).to_json())
