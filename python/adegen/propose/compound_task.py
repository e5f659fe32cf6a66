"""A compound (adegen.propose.compound) as a Proposal: the upstream slip's proposal with the other
slip's file as its sibling, the combined screening as its observation, prompts written by the
prompt writer the way a sibling pair's are (the base reports the upstream slip's table and says
the other slip's table looks off too; never "the same problem": they are two different slips)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from adegen import prompts
from adegen.core.drops import Drop, DropCode
from adegen.propose.compound import FAMILY, slip_of
from adegen.propose.model import Proposal, SiblingChange, levels_of
from adegen.propose.site import prompt_key, retarget


@dataclass(frozen=True)
class CompoundPattern:
    """What the prompt writer and the task writer read of a pattern, for a compound."""

    id: str
    name: str
    family: str = FAMILY
    symptom: str = "values_wrong"
    realistic: str = ""
    mutation: str = ""
    difficulty: str = "hard"
    symptom_template: str = ""
    assertion_tests: tuple = ()


def pattern_for(up, other) -> CompoundPattern:
    return CompoundPattern(
        f"compound:{up.pattern_id}+{other.pattern_id}", f"{up.pattern_name} + {other.pattern_name}",
        realistic=(f"Two independent slips on one lineage: {up.realistic.rstrip('.')} (in {up.model}); and "
                   f"{other.realistic.rstrip('.')} (in {other.model})."))


def _measured(obs, table: str) -> bool:
    return any(str(f.get("table")) == table for f in (getattr(obs, "details", None) or {}).get("tables") or [])


def realise(up, other, combined, scope, avoid: dict[str, str]) -> Proposal | Drop:
    """The compound's Proposal, or the Drop that says why it has none (no prompt, a prompt the run
    already has). `combined`: the screening of both slips; `avoid`: normalised prompt -> who has it."""
    pattern = pattern_for(up, other)
    discovery = scope.discovery
    model = next(m for m in discovery.get("models", []) if m["unique_id"] == up.model_unique_id)
    t_up, t_other = up.compared_table, other.compared_table
    if not _measured(combined, t_up):
        return Drop(up.model, pattern.id, f"the combined screening did not inspect {t_up} (nothing to report)",
                    DropCode.COMPOUND_UNFAIR)
    obs = retarget(combined, t_up)
    two = t_other != t_up
    pset = prompts.write_prompts(prompts.PromptRequest(
        seed=f"{scope.project_name}:{pattern.id}:{up.site.line}:{other.site.line}", model=up.model,
        project_name=scope.project_name, pattern=pattern, site=up.site, model_path=up.model_path, observation=obs,
        table=t_up, column=None, avoid=frozenset(avoid), start=t_up, sibling=t_other if two else None,
        distinct=True, **prompts.model_facts(model, discovery)))
    if pset.base is None:
        why = "; ".join(sorted({r for _, _, rs in pset.rejected for r in rs})[:3])
        return Drop(up.model, pattern.id, f"no prompt: {why or 'nothing a user would report'}", DropCode.NO_PROMPT)
    repeated = next((t for t in pset.prompts.values() if prompt_key(t) in avoid), None)
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
        realistic=pattern.realistic, prompt=pset.base, prompt_source=pset.sources["base"],
        levels=levels_of(pset, t_up), prompt_set=pset,
        # the upstream slip's own description first (`<pattern name> in <model>`: the review page reads it)
        description=f"{up.description.rstrip('.')}; and, independently, {other.description.rstrip('.')}.",
        assertion_tests=list(up.assertion_tests) + list(other.assertion_tests), observation=obs, test_setup_models=between, solution_rebuild=between,
        tags=list(dict.fromkeys(up.tags + other.tags + ["compound"])), candidate=None,
        precondition=[*(up.precondition or []), *(other.precondition or [])] or None,
        siblings=(sib,), story=up.story, shallow_because=None, compound=slips)
