"""A compound (adegen.propose.compound) as a Proposal: the upstream slip's proposal with the other
slip's file as its sibling, the combined screening as its observation, and a message holding
both slips' own reports (each as its own task would have it), so the agent is asked about both."""
from __future__ import annotations

import dataclasses

from adegen import prompts
from adegen.core.drops import Drop, DropCode
from adegen.prompts.joins import two_reports
from adegen.propose.compound import FAMILY, differing_tables, slip_of
from adegen.propose.model import PatternFace, PromptLevel, Proposal, SiblingChange, levels_of
from adegen.propose.site import prompt_key, retarget


def pattern_for(up, other) -> PatternFace:
    return PatternFace(
        f"compound:{up.pattern_id}+{other.pattern_id}", f"{up.pattern_name} + {other.pattern_name}",
        FAMILY, "values_wrong", difficulty="hard",
        realistic=(f"Two independent slips on one lineage: {up.realistic.rstrip('.')} (in {up.model}); and "
                   f"{other.realistic.rstrip('.')} (in {other.model})."))


def _measured(obs, table: str) -> bool:
    return any(str(f.get("table")) == table for f in (getattr(obs, "details", None) or {}).get("tables") or [])


def realise(up, other, combined, scope, avoid: dict[str, str]) -> Proposal | Drop:
    """The compound's Proposal, or the Drop that says why it has none (no prompt, a prompt the run
    already has). `combined`: the screening of both slips; `avoid`: normalised prompt -> who has it.

    The message holds both slips' own reports, each as its own task would have it (written from that
    slip's own screening), key by key: an agent may only be asked to fix what the message reports,
    and a compound whose message reports one slip and says another table "looks off too" asks for a
    fix of something it never describes (a strong agent, seeing the second symptom, rightly left it
    alone). Every table a report names must still differ in the combined state."""
    pattern = pattern_for(up, other)
    t_up, t_other = up.compared_table, other.compared_table
    if not _measured(combined, t_up):
        return Drop(up.model, pattern.id, f"the combined screening did not inspect {t_up} (nothing to report)",
                    DropCode.COMPOUND_UNFAIR)
    obs = retarget(combined, t_up)
    levels = two_report_levels(up, other, combined, f"{scope.project_name}:{pattern.id}:{up.site.line}:{other.site.line}",
                               frozenset(avoid))
    if not levels:
        return Drop(up.model, pattern.id, "no prompt: the two slips' own reports do not both hold in the combined state",
                    DropCode.NO_PROMPT)
    repeated = next((lv.text for lv in levels if prompt_key(lv.text) in avoid), None)
    if repeated is not None:
        return Drop(up.model, pattern.id, f"the prompt repeats the one of {avoid[prompt_key(repeated)]}",
                    DropCode.PROMPT_REPEATS)
    sib = SiblingChange(other.model, other.model_unique_id, other.model_path, other.original, other.mutant,
                        t_other, int(other.site.line))
    between = list(dict.fromkeys(up.test_setup_models + other.test_setup_models))
    slips = [slip_of(up).to_json(), slip_of(other).to_json()]
    return dataclasses.replace(
        # the upstream slip's own pattern names the task (the catalog knows it; `compound` lists both slips)
        up, number=0, pattern_id=up.pattern_id, pattern_name=up.pattern_name, family=up.family, difficulty="hard",
        realistic=pattern.realistic, prompt=levels[0].text, prompt_source="adegen (two reports)",
        # no PromptSet: a --prompt-command rewrites one report from one screening, and this message is two
        levels=levels, prompt_set=None,
        # the upstream slip's own description first (`<pattern name> in <model>`: the review page reads it)
        description=f"{up.description.rstrip('.')}; and, independently, {other.description.rstrip('.')}.",
        assertion_tests=list(up.assertion_tests) + list(other.assertion_tests), observation=obs, test_setup_models=between, solution_rebuild=between,
        tags=list(dict.fromkeys(up.tags + other.tags + ["compound"])), candidate=None,
        precondition=[*(up.precondition or []), *(other.precondition or [])] or None,
        siblings=(sib,), story=up.story, shallow_because=None, compound=slips)


def two_report_levels(up, other, combined, seed: str, avoid=frozenset()) -> list[PromptLevel]:
    """The compound's prompt levels, base first ([] when there is no base): for each key both slips'
    own reports have, the two joined in one message (prompts.joins.two_reports), provided the two
    differ and every table either names (its compared table included) still differs from intact in
    the combined state."""
    changed = differing_tables(combined)
    mines = _reported_again(up, seed, avoid)
    # the second report takes frames and openings the first did not: two reports built alike ("Why
    # is X ...? ... Why is Y ...?") read as one template filled twice (blind reviewers, issue 51)
    theirs = {lv.key: lv for lv in _reported_again(other, seed, frozenset(avoid) | {lv.text for lv in mines})}
    out: list[PromptLevel] = []
    # the run's texts (normalised, padded) and the joins this task used: no join twice in a run
    said = tuple(f" {t} " for t in avoid)
    for mine in mines:
        their = theirs.get(mine.key)
        if their is None or prompt_key(mine.text) == prompt_key(their.text):
            continue
        named = list(dict.fromkeys([*mine.tables, other.compared_table, *their.tables]))
        if not {up.compared_table, *named} <= changed:
            continue
        tables = tuple(t for t in named if t != up.compared_table)
        text, join = two_reports(mine.text, their.text, f"{seed}:{mine.key}", said)
        said += (join,)
        out.append(PromptLevel(mine.key, text, tables))
    return out if out and out[0].key == "base" else []


def _reported_again(p, seed: str, avoid=frozenset()) -> list[PromptLevel]:
    """A slip's own report levels in another voice than its own task's (the slip may be a task of the
    run too, and one message should not repeat another's word for word): the prompt writer's request
    again with another seed, its own texts to avoid; its own levels when it has no request (a prompt
    command's, a diff's). `avoid`: the run's prompts (normalised), so the reports take frames the
    run's other tasks did not use (adegen.prompts.frames)."""
    req = getattr(getattr(p, "prompt_set", None), "request", None)
    if req is None:
        return p.prompt_levels()
    again = prompts.write_prompts(dataclasses.replace(
        req, seed=f"{req.seed}:compound:{seed}", avoid=req.avoid | avoid | {lv.text for lv in p.prompt_levels()}))
    return levels_of(again, p.compared_table) if again.base else p.prompt_levels()
