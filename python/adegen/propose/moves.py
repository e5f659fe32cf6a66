"""Candidates for a slip made while moving a CTE into a model of its own (the story
`adegen.rewrite.stories.extract_cte`): a change of two files with a purpose, where the moved CTE
loses a filter, a dedup or a join condition on the way.

Built from the run's single-model candidates, as sibling pairs are (`propose.pairs`): for each model
with a CTE that can move, each pattern whose site inside that CTE leaves something out gives one
candidate with that site alone, told in that story only (`Candidate.story_only`). `proposals.score`
ranks them up by MOVE_BONUS and `proposals.select` takes MOVES_PER_RUN of them per run."""
from __future__ import annotations

from adegen.propose.candidate_sites import tell_for
from adegen.propose.proposals import Candidate, Scope, is_config_only, is_last_resort, own_models
from adegen.rewrite.stories import extract_cte
from adegen.rewrite.stories.base import Model
from adegen.rewrite.stories.ctes import top_ctes

MAX_MOVES = 12  # candidates per run (each one's sites are computed; a selection takes one)
MAX_MODELS = 400  # as siblings.MAX_MODELS: beyond this, no model's sites are computed for a move


def movable(raw: str) -> bool:
    """The model has a CTE that reads a relation and transforms it (cheap: tokens only)."""
    model = Model(raw, "m")
    ctes = top_ctes(model)
    imports = {c.name: c for c in ctes if c.reads_relation(model)}
    return any(extract_cte.movable(model, c, imports) is not None for c in ctes if c.name not in imports)


def move_candidates(scope: Scope, cands: list[Candidate]) -> list[Candidate]:
    """One candidate per (model, pattern) whose first site inside a movable CTE is a slip the move
    makes, at most MAX_MOVES, in the order of `cands`."""
    own = {m["name"] for m in own_models(scope.discovery, scope.project_name)}
    if len(own) > MAX_MODELS:
        return []
    out: list[Candidate] = []
    fits: dict[str, bool] = {}
    for c in cands:
        if (c.lazy is None or c.where is None or c.name not in own or is_last_resort(c.pattern)
                or is_config_only(c.pattern)):
            continue
        if c.name not in fits:
            fits[c.name] = movable(c.raw)
        if not fits[c.name]:
            continue
        one = c.with_sites([])
        one.story_only = extract_cte.KIND
        site = next((s for s in c.lazy.all(c.pattern.id) if tell_for(one, s)[1] is not None), None)
        if site is None:
            continue
        one.sites = [site]
        out.append(one)
        if len(out) >= MAX_MOVES:
            break
    return out
