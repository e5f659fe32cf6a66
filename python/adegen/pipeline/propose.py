"""Stages "enumerate candidates" and "screen": every (model, pattern) candidate with its rewrite
sites, ranked; then rounds of compile check + screening + selection until `--count` proposals
stand. And the user's pick among them."""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from adegen.pipeline.options import parse_pick
from adegen.propose.bind_check import bind_check
from adegen.core.settings import get_settings
from adegen.core.errors import InputError
from adegen.pipeline import compound, diffs, validation
from adegen.propose import mix
from adegen.pipeline.context import RunContext

ROUNDS = 3  # pools screened before giving up on reaching --count (a pool nothing of which passes
# the compile check and the data preconditions is not screened and does not count: on a small
# database most sites fail their precondition, and the next pool costs one dbt compile)
MAX_POOLS = 8  # pools compiled and measured at most, screened or not
POOL_FACTOR = 4  # a pool holds this many times --count candidates
TOP_UPS = 2  # extra compile checks a pool takes to replace candidates that fail every check


def measure_run(ctx: RunContext):
    """The run's realism.MeasureRun (built once): the intact build the preconditions are measured
    on (none without a DuckDB intact build: then nothing is measured), the discovery payload and
    the raw SQL of any own model."""
    from adegen import realism

    if ctx.measure is None:
        info = ctx.validator.baseline_info() if ctx.validator is not None else {}
        db = info.get("baseline_db")
        probe = realism.ProbeDB(Path(db), None) if db and Path(db).is_file() else None
        paths = {m["unique_id"]: m.get("path") for m in (ctx.discovery or {}).get("models", [])
                 if m.get("package_name") == ctx.project.name and m.get("path")}
        cache: dict = {}

        def raw_sql(uid: str) -> str | None:
            if uid not in cache:
                rel = paths.get(uid)
                try:
                    cache[uid] = (ctx.opts.project_dir / rel).read_text(encoding="utf-8", errors="replace") if rel else None
                except OSError:
                    cache[uid] = None
            return cache[uid]

        ctx.measure = realism.MeasureRun(probe, ctx.discovery or {}, raw_sql)
    return ctx.measure


def check_candidates(ctx: RunContext, cands: list) -> None:
    """The compile check of `cands` (one dbt compile), the bind check of the compiled mutants on the
    intact build (propose.bind_check), then their data preconditions."""
    from adegen.propose import proposals as pp

    pp.compile_check(ctx.project, cands, workdir=ctx.workroot, progress=ctx.ui.say)
    run = measure_run(ctx)
    if get_settings().bind_check:
        bound = bind_check(cands, run.probe)
        if bound.dropped:
            ctx.ui.say(f"{bound.dropped} candidate mutant(s) do not bind on the intact build (not screened)")
    failing = pp.measure_preconditions(cands, run)
    if failing:
        ctx.ui.say(f"{failing} candidate site(s) fail their pattern's data precondition (not screened)")


def has_live_site(c) -> bool:
    """Whether a checked candidate has a site that compiles and meets its data precondition."""
    from adegen.propose.site import checked_drop

    return any(checked_drop(c, si) is None for si in range(len(c.sites)))


def checked_pool(ctx: RunContext, remaining: list, scope, *, size: int) -> list:
    """The pool a round screens, checked (compile + data preconditions). A pool candidate with no
    live site is replaced within the round: the dry selection runs again, skips it (its checks are
    recorded) and picks what would have come next, up to TOP_UPS more compile checks. Otherwise a
    family's only slot in the pool is lost to a candidate that fails its precondition, and the
    family's next candidate waits for a later pool the run may never take."""
    from adegen.propose import proposals as pp

    sel = pp.pool(remaining, scope, size=size)
    checked: set[int] = set()
    for top_up in range(1 + TOP_UPS):
        new = [c for c in sel if id(c) not in checked]
        if not new:
            break
        check_candidates(ctx, new)
        checked |= {id(c) for c in new}
        if top_up == TOP_UPS or all(has_live_site(c) for c in new):
            break
        sel = pp.pool(remaining, scope, size=size)
    # every checked candidate, the dead ones included (the selection records why each was not
    # tried), in rank order
    return [c for c in remaining if id(c) in checked]


def enumerate_candidates(ctx: RunContext) -> tuple[list, list]:
    """(ranked candidates, excluded (model, pattern_id, task_id) that repeat an existing task)."""
    from adegen.propose import proposals as pp

    from adegen.propose.moves import move_candidates
    from adegen.propose.pairs import sibling_candidates

    scope = ctx.scope()
    cands, excluded = pp.enumerate_candidates(scope, ctx.catalog, warn=ctx.ui.warn)
    if scope.siblings:  # a screening that builds several files at once (a new one too): DuckDB's
        moves = move_candidates(scope, cands)
        cands += sibling_candidates(scope, ctx.catalog, cands) + moves
    return pp.rank(cands, ctx.survey), excluded


def propose(ctx: RunContext):
    """The run's ProposalSet. Rounds: the candidates a selection would try first (4x --count, spread)
    are compiled in one dbt run, screened in one parallel batch, then selected from; only if too
    many drop out is the next pool taken. Snowflake projects: at least half the picks use
    Snowflake-specific patterns (the spec's "prefer Snowflake-specific SQL ... but also include
    some ANSI SQL bugs")."""
    from adegen.propose import proposals as pp

    opts, ui = ctx.opts, ctx.ui
    t1 = time.monotonic()
    # --mix hard: EXTRA more proposals than --count are made, the hardest --count kept (propose/mix.py)
    count = opts.count + (mix.EXTRA if opts.mix == "hard" else 0)
    cands, excluded = enumerate_candidates(ctx)
    offered = diffs.offer(ctx)  # candidates that come as a diff: ranked with the patterns' from here on
    if offered.candidates:
        cands = pp.rank(cands + offered.candidates, ctx.survey)
    run_scope = ctx.scope()
    # the pool a round screens still holds last-resort candidates; only the picks stop at the floor
    pick_scope = dataclasses.replace(run_scope, fill_to=min(pp.MIN_PROPOSALS, count))
    remaining = list(cands)
    chosen: list = []
    dropped: list = list(offered.drops)
    kept: list = []
    rounds = pools = 0
    while remaining and len(chosen) < count and rounds < ROUNDS and pools < MAX_POOLS:
        if pools and ctx.budget_spent():  # --time-budget: no new pool; the first always runs
            ctx.budget.stopped_at = "proposals"
            ui.say(f"Time budget reached: no further proposal round ({len(chosen)} proposal(s) so far).")
            break
        pools += 1
        sel = checked_pool(ctx, remaining, run_scope, size=POOL_FACTOR * count)
        if not sel:
            break
        ids = {id(c) for c in sel}
        remaining = [c for c in remaining if id(c) not in ids]
        if not any(has_live_site(c) for c in sel):
            continue  # every site failed its compile check or data precondition: nothing was screened
        rounds += 1
        screen = None
        if ctx.validator is not None:
            try:
                screen = validation.batched_screen(ctx, sel, count + 2)
            except validation.ValidatorBroken as exc:
                ui.warn(f"execution validation disabled: {exc}; tasks will be patch-validated only (status: dev)")
                ctx.disable_validation(str(exc))
        part = pp.select(sel, pick_scope, count=count - len(chosen), screen=screen, taken=chosen)
        chosen += part.proposals
        dropped += part.dropped
        kept += part.kept_back
    pp.fill_from_kept(chosen, kept, dropped, count)
    compound.add(ctx, chosen, kept, dropped)  # at most one more: two slips on one lineage
    if opts.mix == "hard":
        chosen = keep_hardest(chosen, dropped, opts.count, mix.incremental_models(ctx.discovery.get("models", [])))
    if ctx.budget is not None and ctx.budget.stopped_at == "proposals":
        ctx.budget.proposals_short = max(0, opts.count - len(chosen))
    for i, p in enumerate(chosen, 1):
        p.number = i
    pset = pp.ProposalSet(chosen, excluded, dropped, len(cands))
    diffs.account(ctx, offered, pset)
    ctx.timing("proposals", t1)
    ctx.doc.proposals = [p.to_json() for p in pset.proposals]
    ctx.doc.excluded = {"count": len(pset.excluded),
                           "items": [{"model": m, "pattern_id": p, "task_id": t} for m, p, t in pset.excluded],
                           "line": pset.excluded_line()}
    ctx.doc.dropped_candidates = [{"model": d.model, "pattern_id": d.pattern_id, "reason": d.reason,
                                   "code": d.code.id} for d in pset.dropped]
    ctx.doc.tasks = []
    return pset


def keep_hardest(chosen: list, dropped: list, count: int, incremental: frozenset[str] = frozenset()) -> list:
    """--mix hard: the `count` hardest proposals (propose/mix.py; `incremental`: the project's
    incremental models), each with the hard prompt level as its base; the others go to `dropped`."""
    from adegen.core.drops import Drop, DropCode

    kept = mix.hardest(chosen, count, incremental)
    for p in chosen:
        if all(p is not k for k in kept):
            dropped.append(Drop(p.model, p.pattern_id,
                                f"an easier kind ({mix.kind(p, incremental)}) than the hard mix keeps",
                                DropCode.MIX_EASIER))
    for p in kept:
        p.levels = mix.hard_first(p.prompt_levels())
        p.prompt = p.levels[0].text
    return kept


def show(ctx: RunContext, pset) -> None:
    ui = ctx.ui
    ui.say(f"Proposed tasks ({len(pset.proposals)}):")
    ui.say()
    for p in pset.proposals:
        print_proposal(ui, p)
    for line in (pset.excluded_line(), pset.held_back_line()):
        if line:
            ui.say(line)
            ui.say()


def print_proposal(ui, p) -> None:
    ui.say(f"[{p.number}] {p.model} ({p.layer}) - {p.pattern_id} ({p.family}), {p.difficulty}")
    ui.say(f"    Target: {p.model_path} line {p.site.line}: {p.why_model}")
    ui.say(f"    Bug: {p.pattern_name}: `{' '.join(str(p.site.before).split())}` -> "
           f"`{' '.join(str(p.site.after).split())}`")
    ui.say(f"    Prompt: {p.prompt}")
    for key, text in list(p.prompts.items())[1:]:
        ui.say(f"    Prompt ({key}): {text}")
    ui.say(f"    Realistic: {p.realistic}")
    if p.assertion_tests:
        ui.say("    Assertion tests: " + ", ".join(t["type"] for t in p.assertion_tests))
    else:
        ui.say("    Assertion tests: none (the AUTO equality test on "
               f"{p.compared_table} catches it)")
    ui.say(f"    Novelty: {p.novelty}")
    if p.observation is not None:
        ui.say(f"    Screening: {p.observation.reason}")
    ui.say()


def pick(ctx: RunContext, pset) -> list | None:
    """The proposals to generate: --pick, --yes on a terminal, or the user's answer. None when
    not on a terminal and no --pick (the proposals were only shown)."""
    ui, n = ctx.ui, len(pset.proposals)
    if ctx.opts.pick is not None:
        picked = parse_pick(ctx.opts.pick, n)
    elif ui.interactive:
        picked = list(range(n)) if ctx.opts.yes else _ask(ui, n)
    else:
        ui.say("Not a terminal and no --pick: nothing was written. Re-run with --pick all (or --pick 1,3).")
        ctx.doc.selected = []
        return None
    ctx.doc.selected = [i + 1 for i in picked]
    chosen = [pset.proposals[i] for i in picked]
    if ctx.opts.prompt_command and chosen:
        rewrite_prompts(ctx, chosen)
        ctx.doc.proposals = [p.to_json() for p in pset.proposals]
    return chosen


def rewrite_prompts(ctx: RunContext, chosen: list) -> None:
    """--prompt-command: let the user's command rewrite the chosen tasks' prompts (adegen's own
    are kept for any key whose text fails a check)."""
    from adegen.prompts.command import rewrite_proposals

    surveyed = {t for task in ctx.survey.tasks for t in (task.prompts or [task.prompt]) if t}
    rewrite_proposals(ctx.opts.prompt_command, chosen, avoid=surveyed, progress=ctx.ui.say)


def _ask(ui, n: int) -> list[int]:
    while True:
        ans = ui.ask(f"Which proposals should I generate? [all / 1,3 / none] (1-{n}):", "all")
        if ans.lower() in ("none", "n", "q", "quit", "no"):
            return []
        try:
            return parse_pick(ans, n)
        except InputError as exc:
            ui.say(f"  {exc.message}")
