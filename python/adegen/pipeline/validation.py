"""The run's validator: started before discovery (its worker processes must fork before any
in-process dbt run), the baseline built in the background, and the screening of candidates.

The validator is used only through the contract of docs/architecture.md ("Build <-> validation
contract"): usable, baseline, seed_based, screen, screen_many, prepare_database, prove, close."""
from __future__ import annotations

import time
from typing import Any, Callable

from adegen.backends import ValidatorSetup
from adegen.propose.candidate_sites import added_files, story_files
from adegen.propose.siblings import changed_files
from adegen.pipeline.context import RunContext
from adegen.pipeline.pending import PendingValidator


class ValidatorBroken(Exception):
    """Every screened mutant failed the same way: the validator, not the mutants, is at fault."""


def start(ctx: RunContext) -> None:
    """ctx.pending (or the reason validation is off in ctx.doc.validation)."""
    if not ctx.opts.validate:
        ctx.doc.validation.usable, ctx.doc.validation.reason = False, "--no-validate"
        return
    ctx.pending, why = _start(ctx)
    if ctx.pending is None:
        ctx.doc.validation.usable, ctx.doc.validation.reason = False, why


def _start(ctx: RunContext) -> tuple[PendingValidator | None, str]:
    ui, opts = ctx.ui, ctx.opts
    v = ctx.backend.make_validator(ctx.project, ValidatorSetup(
        ctx.workroot / "validate", jobs=opts.jobs, progress=ui.progress, emulate_snowflake=opts.emulate_snowflake,
        db_dir=opts.db_path, ade=ctx.ade, executor=opts.executor))
    ok, why = v.usable()
    if not ok:
        ui.warn(f"execution validation unusable ({why}); tasks will be patch-validated only (status: dev)")
        close(v)
        return None, why
    pool = getattr(v, "pool", None)
    if callable(pool):
        # start the worker processes now, before dbt runs in this process (they exist once the pool
        # does); not waiting for them to import dbt lets discovery start meanwhile
        pool()
    ui.say("Building the intact project once in the background (baseline)...")
    return PendingValidator(v, ui.warn), why


def wait(ctx: RunContext) -> None:
    """Wait for the baseline; ctx.validator is the validator when it is usable."""
    if ctx.pending is None:
        return
    t1 = time.monotonic()
    ctx.validator, why = ctx.pending.result()
    ctx.timing("baseline_wait", t1)
    ctx.doc.validation.usable, ctx.doc.validation.reason = ctx.validator is not None, why


def close(validator: Any) -> None:
    if validator is not None and hasattr(validator, "close"):
        try:
            validator.close()
        except Exception:  # noqa: BLE001 - closing must never hide the run's own outcome
            pass


ScreenFn = Callable[[Any, Any, str], Any]  # (candidate, site, mutant text) -> Observation


SCREEN_ROUNDS = 6  # batches of likely picks screened in parallel before the selection proper


def batched_screen(ctx: RunContext, cands: list, count: int) -> ScreenFn:
    """Screen the likely picks in parallel batches (Validator.screen_many), then return the screen
    function the selection calls. A batch is a dry selection of `count` from `cands` that takes
    the unscreened sites as observable; its unscreened picks are screened together, and the dry
    selection is repeated with what they showed (the drops replaced by the next likely picks)
    until it needs nothing new. So replacements are screened in parallel batches too, instead of
    one at a time by the selection; a later miss is still screened on its own. Raises
    ValidatorBroken when every mutant of the first batch fails the same way."""
    from adegen.propose import proposals as pp

    ui, validator = ctx.ui, ctx.validator
    cache: dict[tuple[int, int], Any] = {}
    for round_ in range(SCREEN_ROUNDS):
        dry = pp.select(cands, ctx.scope(), count=count, screen=lambda c, site, text: cache.get((id(c), site.index)))
        items, keys = [], []
        for p in dry.proposals:
            c = p.candidate
            if (id(c), p.site.index) not in cache:
                compiled = c.compile_results.get(c.sites.index(p.site)) if p.site in c.sites else None
                items.append((c.model["unique_id"], c.model["path"], pp.decode(p.mutant), c.pattern, compiled,
                              changed_files(p.site) + added_files(p.story)))
                keys.append((id(c), p.site.index))
        if not items:
            break
        ui.say(f"Screening {len(items)} candidates by execution (mutated model + downstream)...")
        obs = validator.screen_many(items, progress=ui.progress)
        cache.update(zip(keys, obs))
        errors = {str(getattr(o, "example", "") or o.reason) for o in obs}
        if round_ == 0 and len(obs) >= 3 and all(o.build_error for o in obs) and len(errors) == 1:
            raise ValidatorBroken(f"every screened mutant failed with the same error: {errors.pop()[:200]}")

    def screen(c, site, text):
        key = (id(c), site.index)
        if key not in cache:
            ui.say(f"Screening {c.pattern.id} on {c.name} (line {site.line})...")
            cache[key] = validator.screen(c.model["unique_id"], c.model["path"], text, c.pattern,
                                          changed_files(site) + story_files(c, site))
        return cache[key]

    return screen
