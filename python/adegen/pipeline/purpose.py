"""Stage "purposeful changes" of the build (on by default; `--no-purpose`): tasks whose change has a purpose that
changes the model's output on purpose (a new count, a category left out, a column brought in from
another model), with the slip inside it (propose/purpose.py, propose/grain.py, rewrite/purposes). Their solution is not the setup's inverse: it keeps the
purpose and does it right, so the solution seeds come from that state. They are written as every
patch task is (taskgen's files, the patch check in its purposeful form) and proven by the
validator as the data-change tasks are: the proof's full emulation builds the solved state by
running setup.sh then solution.sh (its prepared path assumes the solution restores the intact
project and hands such a task on, with the reason).

The models, their materializations and what is never graded come from the validator's intact
build; one dbt compile gives every candidate model's compiled SQL; the data is read on the intact
build. At most WANT tasks are written, from at most MAX_TRIES candidates, kinds interleaved.

They take slots of the run's --count, ahead of the plain slips: the stage runs after the pick and
before the picked proposals are written, and `make_room` then leaves out as many of the picked
proposals as purposeful tasks were proven, plain slips (no story, no sibling, not compound, not a
diff from the history or --bug-command) from the lowest rank first. A purposeful task that is not proven takes no slot."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from adegen.core.errors import AdegenError
from adegen.pipeline.context import RunContext
from adegen.pipeline.extra_task import ExtraTask, entry, proof_seconds, write_and_prove, write_until_proven
from adegen.pipeline.realise import proof_to_json
from adegen.propose import dedup, grain
from adegen.propose.mix import hard_texts
from adegen.propose.candidate_sites import read_as_is
from adegen.propose.mutant_compile import compile_mutants
from adegen.propose.purpose import DIFFICULTY, TAGS, ModelText, Purposeful, candidates, take_turns
from adegen.realism.probe import ProbeDB
from adegen.rewrite.purposes import docs
from adegen.sql.quote import ident
from adegen.tasks.assertions import render_assertions
from adegen.tasks.patchcheck import TaskPatches, check_task
from adegen.tasks.rebuild import refresh_for
from adegen.tasks.shape import shape_of
from adegen.tasks.stand_in_tests import ZERO_OR_NULL
from adegen.tasks.task_yaml import PromptEntry, SeedEntry, Variant
from adegen.tasks.taskgen import TaskPlan, build_task_files, unified_diff

WANT = 2          # purposeful tasks a build writes at most (slots of its --count)
MAX_TRIES = 5     # candidates proven at most (kinds interleaved; most take the fast proof path)
MAX_MODELS = 30   # models probed (marts first)
GRADABLE = ("table", "view")
FAMILY = "purposeful-change"


def purposeful_tasks(ctx: RunContext, want: int = WANT) -> list[str]:
    """Write up to `want` proven purposeful tasks; the ids written (unproven ones too, status dev).
    By default (`purpose` "auto") a project where none can be proven gets none, silently; asked for
    (`--purpose`, "on"), the run says why."""
    t1 = time.monotonic()
    asked = ctx.opts.purpose == "on"
    note = ctx.ui.warn if asked else ctx.ui.say
    if want <= 0 or ctx.opts.purpose == "off":
        return []
    if not ctx.backend.data_changes:
        if asked:
            ctx.ui.warn(f"--purpose writes DuckDB tasks only (this project's adapter: {ctx.project.adapter_type})")
        return []
    if ctx.validator is None:
        note(f"no purposeful change: it needs the validator (its intact build): {ctx.unproven_reason()}")
        return []
    written_before = {t.description for t in ctx.survey.tasks}
    cands = [c for c in find(ctx) if description(c) not in written_before]  # a rerun writes new ones
    if not cands:
        ctx.ui.say("No purposeful change found: no model with a category column, a column to bring in, or a "
                   "dedup over an input that repeats its key, that its data supports (or its changes are tasks "
                   "already).")
        return []
    written = write_until_proven(ctx, cands[:MAX_TRIES], lambda cand, task_id: _realise(ctx, cand, task_id), want)
    ctx.timing("purposeful", t1)
    return written


def slots(count: int) -> int:
    """How many purposeful tasks a run of `count` tasks tries for: WANT, fewer where that would leave
    no slot for a slip of the catalog (a run is never purposeful changes alone)."""
    return max(0, min(WANT, count - 1))


def repeats(ctx: RunContext, made: list[str]) -> frozenset[str]:
    """The models whose dedup a proven purposeful task dropped (a picked slip that removes a dedup
    there too would be the same task twice: intercom's DISTINCT, as a cleanup and as a slip)."""
    return frozenset(t["model"] for t in ctx.report.tasks if t["task_id"] in made and t["proven"]
                     and t["pattern_id"] == f"purpose:{dedup.DEDUP}")


def make_room(chosen: list, proven: int, count: int, hardest: Callable[[list, int], list] | None = None,
              repeated: frozenset = frozenset()) -> tuple[list, list]:
    """(kept, left out): the picked proposals that fit in `count` beside `proven` purposeful tasks.
    A slip that removes a dedup of a model in `repeated` leaves whatever the count (it repeats a
    purposeful task); then plain slips (no story, no sibling model, not compound, not a diff) leave
    first, lowest rank first; a hard mix (`hardest`: propose/mix.hardest) keeps its hardest instead.
    A picked list that fits already stays whole."""
    twice = [p for p in chosen if p.model in repeated and p.family == dedup.REPEATS] if repeated else []
    if twice:
        kept, out = make_room([p for p in chosen if all(p is not q for q in twice)], proven, count, hardest)
        return kept, [p for p in chosen if any(p is q for q in twice + out)]
    over = len(chosen) + proven - count
    if over <= 0:
        return list(chosen), []
    if hardest is not None:
        kept = hardest(chosen, len(chosen) - over)
        return kept, [p for p in chosen if all(p is not k for k in kept)]
    last_first = list(reversed(chosen))
    plain = [p for p in last_first if p.story is None and not p.siblings and not p.compound
             and getattr(p.candidate, "origin", None) is None]  # a diff (history, --bug-command) is a commit
    out = {id(p) for p in (plain + [p for p in last_first if all(p is not q for q in plain)])[:over]}
    return [p for p in chosen if id(p) not in out], [p for p in chosen if id(p) in out]


def _models(ctx: RunContext, info: dict) -> list[tuple[str, str, str, str]]:
    """(unique id, name, path, layer) of the own models a task may grade (`info`: the validator's
    intact build): tables and views that neither read the clock nor differ between two intact
    builds; marts first, then by name."""
    layers = {m["name"]: m.get("layer", "") for m in ctx.discovery.get("models", [])}
    unstable = info.get("nondeterministic") or {}
    clock = set(info.get("clock") or {})
    out_ = [(u, m["name"], m["path"], layers.get(m["name"], "")) for u, m in info["models"].items()
            if m.get("package", ctx.project.name) == ctx.project.name and m.get("path")
            and (m.get("materialized") or "") in GRADABLE and u not in clock and m["name"] not in unstable]
    return sorted(out_, key=lambda x: (x[3] != "marts", x[1]))


def find(ctx: RunContext) -> list:
    """The measured purposeful changes of the project (propose/purpose.candidates,
    propose/grain.candidates and propose/dedup.candidates: one shape), kinds interleaved, a dropped
    dedup first (its symptom is reported downstream of the change; the other kinds' on the changed
    model itself). The first MAX_MODELS models are probed for every kind; the rest (upstream
    layers, where dedups sit) only where their text deduplicates."""
    root = ctx.opts.project_dir
    info = ctx.validator.baseline_info()
    texts = {}
    for k, (uid, name, path, layer) in enumerate(_models(ctx, info)):
        try:
            text = read_as_is(root / path)
        except OSError:
            continue
        if k < MAX_MODELS or dedup.sites(text):
            texts[uid] = (name, path, layer, text, k < MAX_MODELS)
    compiled = compile_mutants(ctx.project, [(uid, t[1], t[3]) for uid, t in texts.items()], workdir=ctx.workroot)
    catalog = next((r.catalog for r in compiled.values() if r.catalog), None)
    every = [ModelText(uid, t[0], t[1], t[3], compiled[uid].compiled, t[2], properties(root, t[1], t[0]))
             for uid, t in texts.items() if uid in compiled and compiled[uid].compiled]
    models = [m for m in every if texts[m.unique_id][4]]
    db = ProbeDB(Path(info["baseline_db"]), catalog)
    try:
        dedups = dedup.candidates(every, db, say=ctx.ui.say)
        found = candidates(models, db, say=ctx.ui.say)
        joins = grain.candidates(models, _sides(ctx, info, catalog), info.get("graph"), db, say=ctx.ui.say)
    finally:
        db.close()
    return interleaved([*dedups, *found, *joins])


def interleaved(cands: list) -> list:
    """Kinds taking turns, each kind's own order kept (the first of each kind, then the second, ...),
    one change per model and kind, and a model's first change ahead of any model's second: two tasks
    of a run on one model read as one template."""
    by_kind: dict[str, list] = {}
    for c in cands:
        by_kind.setdefault(c.kind, []).append(c)
    turns = take_turns(list(by_kind.values()))
    pairs: set[tuple] = set()  # one change per model and kind (two new counts on one model: one template)
    turns = [c for c in turns if (c.model.unique_id, c.kind) not in pairs and not pairs.add((c.model.unique_id, c.kind))]
    seen: set[str] = set()
    firsts = [c for c in turns if c.model.unique_id not in seen and not seen.add(c.model.unique_id)]
    return firsts + [c for c in turns if all(c is not f for f in firsts)]


def _sides(ctx: RunContext, info: dict, catalog: str | None) -> list[grain.Side]:
    """Every model built in the intact database (`info`; packages' too), as compiled SQL names it:
    the relations a grain change may bring a column from."""
    layers = {m["name"]: m.get("layer", "") for m in ctx.discovery.get("models", [])}
    return [grain.Side(u, m["name"], ".".join(ident(x) for x in (catalog or m.get("database"), m["schema"], m["alias"])
                                              if x), layers.get(m["name"], ""))
            for u, m in info["models"].items()
            if (m.get("materialized") or "view") != "ephemeral" and m.get("current", True)]


def properties(root: Path, path: str, name: str) -> tuple[str, str] | None:
    """(path, text) of the YAML file beside the model that documents it (`- name: <model>`), or None."""
    folder = (root / path).parent
    for yml in sorted([*folder.glob("*.yml"), *folder.glob("*.yaml")]):
        try:
            text = read_as_is(yml)
        except OSError:
            continue
        if docs.documents(text, name):
            return yml.relative_to(root).as_posix(), text
    return None


def observation(c: Purposeful | grain.GrainChange) -> dict:
    """What was measured, in the shape of a screening's observation (the review page's impact): the
    table graded first, its rows of the right state that the broken one lacks or has otherwise (the
    model's own, or, a dropped dedup's, the screening's on the table it is reported on)."""
    f = c.facts
    return {"reason": "purposeful change: the broken and the right state built from the intact one differ",
            "compared_table": c.graded_tables()[0], "changed_tables": {c.model.name: 0},
            "rows_differing": int(f.get("reported_rows_differing", f["rows_differ"])),
            "rows_total": int(f.get("reported_rows_total", f["rows_fixed"])), "columns_differ": [],
            "example": c.example(), "details": {}}


def description(c: Purposeful | grain.GrainChange) -> str:
    """The task's description (task.yaml): how a later run knows the change was written already."""
    return f"{c.subject()} (purposeful change: {c.kind})"


def _details(c: Purposeful | grain.GrainChange, proof, prompts: list[tuple[str, str]]) -> dict:
    """What the run record adds to the task's entry (pipeline/record.py's fields)."""
    return {"layer": c.model.layer, "graded_tables": c.graded_tables(), "observation": observation(c),
            "prompts": [{"key": k, "prompt": t, "tables": c.graded_tables()} for k, t in prompts],
            "proof_seconds": proof_seconds(proof),
            "story": {"kind": c.kind, "subject": c.subject()},
            "purpose": {"kind": c.kind, "scope": c.ask.scope or "final select", "column": c.ask.column,
                        **{k: getattr(c.ask, k) for k in ("value", "name", "source", "key") if hasattr(c.ask, k)},
                        "measured": c.facts}}


def _screened(ctx: RunContext, c: dedup.DedupChange) -> dedup.DedupChange | None:
    """A dropped dedup screened by the validator (the model without its dedup and every table
    downstream of it built) and reported where it shows (propose/dedup.reported), or None."""
    obs = ctx.validator.screen(c.model.unique_id, c.model.path, c.broken, dedup.PATTERN)
    # the texts its prompts must not echo (a frame, a sentence): the surveyed tasks' and this run's
    # proposals' (written with the run's own texts avoided, as every proposal's are)
    run = [lv.get("prompt") for p in ctx.doc.proposals or [] for lv in p.get("prompt_levels") or []]
    avoid = frozenset(t for t in [*(t for task in ctx.survey.tasks for t in (task.prompts or [task.prompt])), *run]
                      if t)
    made = dedup.reported(c, obs, ctx.discovery, ctx.project.name, avoid)
    if isinstance(made, str):
        ctx.ui.say(f"{c.subject()}: no task ({made})")
        return None
    return made


def graded_seeds(c: Purposeful | grain.GrainChange | dedup.DedupChange) -> list[SeedEntry]:
    """The solution_seeds entries of the graded tables. A new count's rows that match nothing may hold
    NULL or 0 (issue 52): its AUTO equality test leaves the column out and a stand-in compares whole
    rows with it read as 0 where NULL (tasks/stand_in_tests.render_zero_or_null)."""
    cols = c.zero_or_null()
    return [SeedEntry(t, exclude_columns=list(cols), extra={ZERO_OR_NULL: list(cols)})
            if cols and t == c.model.name else SeedEntry(t) for t in c.graded_tables()]


def _realise(ctx: RunContext, c: Purposeful | grain.GrainChange | dedup.DedupChange, task_id: str) -> dict | None:
    """Files, patch check, proof, commit (pipeline/extra_task.py): the task's --json entry (None:
    the patch check failed, a grain change's test could not be rendered, a dropped dedup's
    screening shows nothing to report)."""
    if c.kind == dedup.DEDUP:
        c = _screened(ctx, c)
        if c is None:
            return None
    task = task_of(ctx, c, task_id)
    w = None if task is None else write_and_prove(ctx, task)
    return None if w is None else finish(ctx, c, task, w)


def _prompts(ctx: RunContext, c) -> list[tuple[str, str]]:
    """The change's prompts as this run words them: --mix hard takes the hard one (fewest hints) as the base."""
    if getattr(ctx.opts, "mix", "default") == "hard":
        return list(hard_texts(c.prompts()))
    return list(c.prompts())


def task_of(ctx: RunContext, c: Purposeful | grain.GrainChange | dedup.DedupChange, task_id: str) -> ExtraTask | None:
    """The task's files and patch check (None: a grain change's test could not be rendered)."""
    plan, project = ctx.output, ctx.project
    variant = Variant(db_type=project.adapter_type, db_name=project.db_name, project_name=project.name,
                      project_dir=plan.project_dir_field, extra=ctx.backend.variant_fields(ctx.opts))
    prompts = _prompts(ctx, c)
    spec = TaskPlan(task_id=task_id, description=description(c),
                    prompts=[PromptEntry(k, t) for k, t in prompts], difficulty=DIFFICULTY,
                    tags=[*TAGS, project.name], test_setup_models=c.rebuild_models(),
                    solution_seeds=graded_seeds(c), variant=variant,
                    seed_based=plan.seed_based, solution_rebuild=c.rebuild_models(),
                    full_refresh=refresh_for(c.rebuild_models(), ctx.discovery.get("models", [])))
    files = c.files()
    setup = b"".join(unified_diff(old, broken, path) for path, old, broken, _ in files)
    solution = b"".join(unified_diff(broken, right, path) for path, _, broken, right in files)
    patches = tuple((p, o, b) for p, o, b, _ in files)

    def check(task_dir):
        return check_task(plan.project_root, TaskPatches(task_id, task_dir, patches,
                                                         solved=tuple((p, r) for p, _, _, r in files)),
                          [c.model.name], set(plan.known_models), workdir=ctx.workroot)

    # a grain change's copies are whole rows: a test of the model's key grades them (GrainChange.assertions)
    entries = c.assertions()
    try:
        tests = render_assertions(project.project_dir, project.name, entries) if entries else []
    except AdegenError as exc:  # a task without its grading test would be proven on nothing: not written
        ctx.ui.warn(f"{c.subject()}: not written, its test could not be rendered ({exc})")
        return None
    return ExtraTask(task_id, build_task_files(spec, setup, solution, tests).files, check, c.subject(),
                     solved="restored" if c.kind == dedup.DEDUP else "done right", refresh=spec.full_refresh,
                     rebuild=tuple(spec.solution_rebuild))


def finish(ctx: RunContext, c: Purposeful | grain.GrainChange | dedup.DedupChange, task: ExtraTask, w) -> dict:
    """The committed task's --json entry; its run-record details go to ctx.report.task_details."""
    ctx.report.task_details[task.task_id] = _details(c, w.proof, _prompts(ctx, c))
    patches = tuple((p, o, b) for p, o, b, _ in c.files())
    return entry(task, w, model=c.model.name, pattern_id=f"purpose:{c.kind}", family=FAMILY,
                 observation=observation(c),
                 difficulty=DIFFICULTY, proof_label=w.detail if w.proven else "unproven",
                 proof=None if w.proof is None else proof_to_json(w.proof, ctx.backend),
                 change=shape_of(patches).to_json())
