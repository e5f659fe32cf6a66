"""Stage "compound" of the build (after the proposal rounds): at most one task of two independent
slips on one lineage (`adegen.propose.compound`), made from two proposals the run screened and did
not pick (`compound.spare`: a compound of the run's own picks repeats two of its tasks). The
combined mutant (both files changed) is screened here; `compound.verdict` compares it with intact
and with each slip alone (their own screenings) and keeps it only when fixing one slip alone still
fails the grade and each slip shows in the combined state. The compound takes the place of the run's last
proposal that is not one of its slips when the run already has `--count`; what was tried and why it was dropped goes into --json
`compound` and the run record."""
from __future__ import annotations

import time

from adegen.core.drops import Drop, DropCode
from adegen.pipeline.context import RunContext


def add(ctx: RunContext, chosen: list, kept: list, dropped: list) -> None:
    """Append the compound proposal to `chosen` when one is fair; the drops of the tried ones go
    to `dropped`. Needs execution validation (the combined mutant is screened)."""
    from adegen.propose import compound, compound_task
    from adegen.propose.candidate_sites import decode
    from adegen.propose.proposals import _used_prompts

    if ctx.opts.compound == "off" or ctx.validator is None or not ctx.discovery:
        return
    t1 = time.monotonic()
    tried: list[dict] = []
    scope = ctx.scope()
    found = compound.pairs(compound.spare(chosen, kept), ctx.discovery)
    if not found:
        why = compound.why_none(chosen, kept, ctx.discovery)
        ctx.doc.compound = [{"outcome": "skipped", "reason": why}]
        ctx.ui.say(f"Compound task: none ({why})")
        return
    for up, other in found[:compound.MAX_TRIES]:
        pattern = compound_task.pattern_for(up, other)
        ctx.ui.say(f"Screening a compound: {up.pattern_id} on {up.model} + {other.pattern_id} on {other.model}...")
        extra = ((other.model_unique_id, other.model_path, decode(other.mutant)),)
        obs = ctx.validator.screen(up.model_unique_id, up.model_path, decode(up.mutant), pattern, extra)
        graded = list(dict.fromkeys([up.compared_table, other.compared_table]))
        why = compound.verdict(obs, up.observation, other.observation, graded)
        made = compound_task.realise(up, other, obs, scope, _used_prompts(ctx.survey, chosen)) if why is None else \
            Drop(up.model, pattern.id, why, DropCode.COMPOUND_UNFAIR)
        entry = {"pattern_id": pattern.id, "slips": [compound.slip_of(up).to_json(), compound.slip_of(other).to_json()]}
        if isinstance(made, Drop):
            dropped.append(made)
            tried.append({**entry, "outcome": "dropped", "reason": made.reason, "code": made.code.id})
            continue
        _make_room(ctx, chosen, (up, other), dropped)
        chosen.append(made)
        tried.append({**entry, "outcome": "proposed"})
        break
    ctx.doc.compound = tried
    if tried:
        ctx.timing("compound", t1)
        last = tried[-1]
        ctx.ui.say("Compound task: " + ("proposed" if last["outcome"] == "proposed" else
                                        f"none ({len(tried)} tried; last: {last['reason']})"))


def _make_room(ctx: RunContext, chosen: list, parts: tuple, dropped: list) -> None:
    """A run with --count proposals gives its last one up for the compound (no pick is one of its
    slips: `compound.spare`; the check stays for safety)."""
    if len(chosen) < ctx.opts.count:
        return
    last = next((p for p in reversed(chosen) if all(p is not q for q in parts)), None)
    if last is not None:
        chosen.remove(last)
        dropped.append(Drop(last.model, last.pattern_id, "gave its place to the compound task",
                            DropCode.COMPOUND_PLACE))
