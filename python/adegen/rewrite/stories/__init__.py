"""Stories: the change an engineer set out to make, with the slip inside it.

A pattern's site is one small edit (the slip). A story wraps it in the commit it plausibly came from
(a flat model refactored to import CTEs, a CTE moved into a model of its own), so the diff reads like
a change a reviewer could approve and the slip hides in it. Story edits are behaviour-neutral by construction; python/tests/test_stories.py
builds each one alone on real projects and compares every table. `tell` picks one of the stories
that fit, by a stable hash of the model and the site, or none."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from adegen.rewrite.stories import extract_cte, import_ctes
from adegen.rewrite.stories.base import Draft, Model, Slip, Story, compose

KINDS = (import_ctes, extract_cte)
# Blind reviewers on real projects named the cosmetic wrappers as the tell (issue 51): "leading-comma
# reformat is noise hiding sum->count", "CTE refactor camouflage hides left->inner". The style passes
# (keyword case, leading commas) and the re-layouts of a model that is already layered in CTEs (a
# `final` CTE added, pass-through CTEs inlined) were retired: nobody re-styles a model to change one
# token in it. What is left is a layout change that is plausible for the model it touches: a flat
# model (no CTEs) given import CTEs as dbt's style guide asks, and a CTE moved into a model of its own
# (told only when a candidate asks for it). Even the flat-model refactor wraps a site only when its
# stable hash falls in the first COSMETIC_SHARE of its range: the commits with a purpose are the
# purposeful changes (rewrite/purposes, on by default in `adegen build`), not layout noise.
COSMETIC_SHARE = 0.5

__all__ = ["Story", "KINDS", "Where", "tell", "drafts"]


@dataclass(frozen=True)
class Where:
    """Where the model lives: its path in the project and every model name the project has (a
    story that adds a model file names it beside the model, never over an existing one)."""

    path: str
    taken: frozenset = frozenset()


def drafts(raw: str, model_name: str, slip: Slip, where: Where | None = None) -> list[Draft]:
    """Every story that fits this slip in this model, in KINDS order."""
    model = Model(raw, model_name, path=where.path if where else "", taken=where.taken if where else frozenset())
    return [d for d in (kind.draft(model, slip) for kind in KINDS) if d is not None]


def tell(raw: str, site, model_name: str, where: Where | None = None, only: str | None = None
         ) -> tuple[str, Story | None]:
    """The model's text with the site's slip applied inside a story that fits, and the story (or the
    plain mutant and None). A pair task (the same slip in sibling files) keeps its one-line edits.
    A story that adds a model file is told only when asked for by its kind (`only`): the proposal
    run offers such candidates on their own, a few per run (adegen.propose.moves)."""
    slip = Slip(site.start, site.end, site.after)
    plain = raw[:site.start] + site.after + raw[site.end:]
    if getattr(site, "companions", ()):
        return plain, None
    told = [(d.story, text) for d in drafts(raw, model_name, slip, where)
            if (text := compose(raw, slip, d)) is not None and text != plain
            and (d.story.kind == only if only else not d.story.files)]
    if not told:
        return plain, None
    seed = hashlib.sha256(f"{model_name}\0{site.pattern_id}\0{site.index}\0{raw}".encode()).digest()
    if not only and int.from_bytes(seed[4:8], "big") >= COSMETIC_SHARE * 2 ** 32:
        return plain, None
    story, text = told[int.from_bytes(seed[:4], "big") % len(told)]
    return text, story
