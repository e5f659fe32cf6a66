"""One candidate site -> one Proposal: the compile check's and the precondition's verdicts, the
screening, the table the symptom is reported on, the prompt levels, the facts the proposal shows.

The table a base prompt names: a bug in a staging or intermediate model is reported where people
look, on a mart downstream that shows it (`deep_table`), so the agent has to trace the symptom
upstream; a bug in a mart is reported on the mart itself."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable

from adegen import prompts
from adegen.propose import siblings
from adegen.core.drops import Drop, DropCode
from adegen.propose.facts import (assertion_context, compared_table_for, difficulty_for, models_between,
                             novelty_text, pick_column, tags_for, why_model)
from adegen.propose.model import Proposal, SiblingChange, levels_of
from adegen.propose.candidate_sites import added_models, storied_mutant
from adegen.core.settings import get_settings

ScreenFn = Callable[[Any, Any, str], Any]  # (candidate, site, mutant text) -> Observation | None


@dataclass
class Selection:
    """What picking one proposal needs besides the candidate (shared by a select() call)."""

    scope: Any  # proposals.Scope
    screen: ScreenFn | None
    dropped: list[Drop]
    used_prompts: dict[str, str]  # normalised prompt text -> who has it (task id or proposal)
    order: int = 0  # tasks about data before the one being realised (see proposals.select)
    # the same prompts as written: the prompt writer masks their names (capitals, punctuation) to
    # tell a frame another task used (adegen.prompts.frames), which the normalised keys have lost
    used_texts: list[str] = field(default_factory=list)


def about_data(prop) -> bool:
    """Whether a proposal's base report is about the table's data (so it may quote values)."""
    pset = getattr(prop, "prompt_set", None)
    return pset is not None and pset.about_data


def prompt_key(text: str) -> str:
    """Prompts are "the same" when they differ only in case, spacing or punctuation."""
    return prompts.norm(text)


def encode(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


def deep_table(model: dict, obs, discovery: dict) -> str | None:
    """The downstream table a bug in a non-mart model is reported on: among the changed tables the
    screening measured (those whose row count changed, when there are), the nearest mart, else the
    farthest; None for marts, build errors,
    materialization changes and mutants nothing downstream shows."""
    if obs is None or getattr(obs, "build_error", False) or model.get("layer") == "marts":
        return None
    details = getattr(obs, "details", None) or {}
    if details.get("relation_kind"):
        return None
    layers = {m["name"]: m.get("layer") for m in discovery.get("models", [])}
    down = [f for f in details.get("tables") or []
            if int(f.get("distance") or 0) > 0 and not f.get("error") and not f.get("columns_missing")
            and int(f.get("rows_differing") or 0) > 0]
    if not down:
        return None
    # a table that lost or gained rows shows a row bug plainly ("orders are missing"); one that
    # only aggregates them shows it as numbers that are a bit off
    counted = [f for f in down if int(f.get("rows_broken") or 0) != int(f.get("rows_intact") or 0)]
    down = counted or down
    marts = [f for f in down if layers.get(str(f["table"])) == "marts"]
    pick = min(marts, key=lambda f: int(f["distance"])) if marts else max(down, key=lambda f: int(f["distance"]))
    return str(pick["table"])


def why_not_deeper(model: dict, obs, discovery: dict) -> str:
    """Why a task's symptom is reported on the changed model itself, not on a table downstream of
    it (the run record says it, so a shallow task is a measured fact, not an accident)."""
    if model.get("layer") == "marts":
        return "the changed model is a mart: people read it directly"
    if obs is None:
        return "not screened: no downstream table was measured"
    if getattr(obs, "build_error", False):
        return "the change breaks the build at the changed model"
    details = getattr(obs, "details", None) or {}
    if details.get("relation_kind"):
        return "the change is to how the model is materialized"
    if not model.get("downstream_models"):
        return "no model reads the changed model"
    return "no table downstream shows the change on this data (the screening measured each)"


def retarget(obs, table: str):
    """The observation as seen from another changed table it measured (compared there)."""
    facts = next(f for f in obs.details["tables"] if str(f.get("table")) == table)
    cols = [str(c.get("name")) for c in facts.get("columns") or [] if c.get("name")]
    return dataclasses.replace(obs, compared_table=table, rows_differing=int(facts.get("rows_differing") or 0),
                               rows_total=int(facts.get("rows_intact") or 0), columns_differ=cols, example=None)


def sibling_changes(c, site, obs, discovery: dict):
    """(the table the pair's own model is reported on, (SiblingChange, ...)) of a pair-site, or the
    Drop when a side shows nothing of its own (a fix of one file alone would pass the task). Not
    screened yet (a dry selection takes unscreened sites as observable): each model's own table."""
    by_uid = {m["unique_id"]: m for m in discovery.get("models", [])}
    comps = siblings.companions_of(site)
    tables = []
    for comp in comps:
        other = by_uid.get(comp.unique_id)
        if obs is None:
            tables.append((c.name, comp.model))
            continue
        sides = siblings.side_tables(obs, discovery, c.model, other) if other else None
        if sides is None:
            return Drop(c.name, c.pattern.id, f"line {site.line}: the same edit in {comp.model} does not show in "
                        "a table of each model's own", DropCode.EQUIVALENT)
        tables.append(sides)
    changes = tuple(SiblingChange(comp.model, comp.unique_id, comp.path, encode(comp.raw),
                                  encode(siblings.apply_site(comp.raw, comp.site)), tb, comp.site.line)
                    for comp, (_, tb) in zip(comps, tables))
    return tables[0][0], changes


def checked_drop(c, si: int) -> Drop | None:
    """Why site `si` of a checked candidate is not tried: its mutant did not compile (or its rewrite
    failed in the compile check), or its data precondition fails. None: screen it. (A measured
    precondition implies a compiled mutant, so the order of the two never changes the reason.)"""
    line = c.sites[si].line
    r = c.compile_results.get(si)
    if r is not None and r.ok is False:
        return Drop(c.name, c.pattern.id, f"line {line}: mutant does not compile/parse ({r.reason})",
                    DropCode.NOT_COMPILE)
    measured = c.preconditions.get(si)
    if measured is not None and measured.drop_reason():
        return Drop(c.name, c.pattern.id, f"line {line}: {measured.drop_reason()}", DropCode.PRECONDITION)
    return None


def realise_candidate(c, st: Selection) -> Proposal | None:
    """The first site of a candidate that compiles, screens observable and gets a safe prompt no
    other task of the run or of the survey already has."""
    survey, discovery, project_name = st.scope.survey, st.scope.discovery, st.scope.project_name
    screen, dropped = st.screen, st.dropped
    for si, site in enumerate(c.sites):
        checked = checked_drop(c, si)
        if checked is not None:
            dropped.append(checked)
            continue
        try:
            mutant_text, story = storied_mutant(c, si)
        except Exception as exc:  # noqa: BLE001
            dropped.append(Drop(c.name, c.pattern.id, f"rewrite failed: {exc}", DropCode.REWRITE_FAILED))
            continue
        if getattr(c, "story_only", None) and story is None:  # made for its story (propose.moves)
            dropped.append(Drop(c.name, c.pattern.id, f"line {site.line}: the {c.story_only} story does not "
                                "compile", DropCode.NOT_COMPILE))
            continue
        if mutant_text == c.raw:
            dropped.append(Drop(c.name, c.pattern.id, f"line {site.line}: rewrite changes nothing",
                                DropCode.REWRITE_NO_CHANGE))
            continue
        obs = None
        if screen is not None:
            obs = screen(c, site, mutant_text)
            if obs is not None and not obs.observable:
                dropped.append(Drop(c.name, c.pattern.id, f"line {site.line}: {obs.reason}", obs.code))
                continue
            if obs is not None and story is not None and story.files and getattr(obs, "build_error", False):
                # the model a story adds is checked by the compile alone (the model's text refs it):
                # a refactor that does not build is no neutral one, whatever the slip does
                dropped.append(Drop(c.name, c.pattern.id, f"line {site.line}: the story's new model "
                                    f"{story.files[0][0]} does not build", DropCode.NOT_COMPILE))
                continue
        pair = None
        if siblings.companions_of(site) and hasattr(c, "companion_changes"):
            # a multi-file diff (propose.diffs): its other files graded where they show
            deep = deep_table(c.model, obs, discovery) or c.mart_shown(obs, discovery)
            table = deep or compared_table_for(c.model, discovery, obs) or c.name
            pair = (deep, c.companion_changes(obs, table, discovery))
        elif siblings.companions_of(site):
            pair = sibling_changes(c, site, obs, discovery)
            if isinstance(pair, Drop):
                dropped.append(pair)
                continue
            # the pair's own side, even on the model itself: what its prompt reports (unscreened:
            # a dry selection's guess, the model's own table)
            deep = pair[0] if obs is not None else None
        else:
            deep = deep_table(c.model, obs, discovery)
        if deep is not None:  # reported where people look: a mart downstream (the model is not one)
            obs = retarget(obs, deep)
        moved = story is not None and bool(story.files)  # the slip sits in the new model, upstream of this one
        shallow = None if deep is not None or pair or moved else why_not_deeper(c.model, obs, discovery)
        compared = compared_table_for(c.model, discovery, obs)
        if compared is None:
            dropped.append(Drop(c.name, c.pattern.id, "no materialized table to compare (ephemeral, no child)",
                                DropCode.NO_TABLE))
            continue
        column = pick_column(c, site, obs)
        try:
            pset = prompts.write_prompts(prompts.PromptRequest(
                seed=f"{project_name}:{c.name}:{c.pattern.id}:{site.line}", model=c.name, project_name=project_name,
                pattern=c.pattern, site=site, model_path=c.model["path"], observation=obs, table=compared,
                column=column, avoid=frozenset(st.used_texts or st.used_prompts), order=st.order, start=deep,
                sibling=pair[1][0].table if pair and siblings.is_pair(c) else None,
                **prompts.model_facts(c.model, discovery)))
        except Exception as exc:  # noqa: BLE001 - a bug in one site's wording, not a reason to end the run
            if get_settings().debug:
                raise
            dropped.append(Drop(c.name, c.pattern.id, f"line {site.line}: no prompt (internal error: "
                                                      f"{type(exc).__name__}: {exc})", DropCode.PROMPT_ERROR))
            continue
        if pset.base is None:
            why = "; ".join(sorted({r for _, _, rs in pset.rejected for r in rs})[:3])
            dropped.append(Drop(c.name, c.pattern.id, f"no prompt: {why or 'the diff shows no change a user would report'}",
                                DropCode.NO_PROMPT))
            continue
        repeated = next((t for t in pset.prompts.values() if prompt_key(t) in st.used_prompts), None)
        if repeated is not None:
            dropped.append(Drop(c.name, c.pattern.id, f"line {site.line}: the prompt repeats the one of "
                                                      f"{st.used_prompts[prompt_key(repeated)]}",
                                DropCode.PROMPT_REPEATS))
            continue
        between = models_between(discovery, c.model["unique_id"], compared)
        for s in (pair[1] if pair else ()):
            between += [m for m in models_between(discovery, s.unique_id, s.table) if m not in between]
        distance = 0
        if obs is not None and getattr(obs, "changed_tables", None):
            distance = int(obs.changed_tables.get(compared, 0) or 0)
        elif compared != c.name:
            distance = max(len(between) - 1, 1)
        diff = difficulty_for(c.pattern, c.model, obs, distance)
        if pair and diff == "easy":
            diff = "medium"  # two files to find and fix, each from its own table's symptom
        novelty, closest = novelty_text(c, survey, project_name)
        ctx = assertion_context(c.model, column, project_name)
        for k, v in (getattr(site, "placeholders", None) or {}).items():
            ctx.setdefault(k, v)
        tests = []
        for entry in getattr(c.pattern, "assertion_tests", None) or []:
            e = dict(entry) if isinstance(entry, dict) else {"type": getattr(entry, "type"), "args": getattr(entry, "args")}
            tests.append({"type": e.get("type"), "args": e.get("args") or {}, "context": ctx})
        grain = (getattr(obs, "details", None) or {}).get("grain_test") if obs is not None else None
        if grain:  # duplicates only: the set-based equality test cannot see them (validate.verdict)
            tests.append({"type": "columns_must_be_unique", "args": dict(grain), "context": ctx})
        realistic = " ".join(c.pattern.realistic.split())  # how an engineer ships this bug (never guidance)
        return Proposal(
            number=0, model=c.name, model_unique_id=c.model["unique_id"], model_path=c.model["path"],
            layer=c.model.get("layer", "other"), pattern_id=c.pattern.id,
            pattern_name=str(getattr(c.pattern, "name", c.pattern.id)), family=c.family, difficulty=diff,
            why_model=why_model(c.model, c.covered_by), realistic=realistic or str(getattr(c.pattern, "mutation", "")),
            prompt=pset.base, prompt_source=pset.sources["base"], levels=levels_of(pset, compared), prompt_set=pset,
            description=prompts.description_for(
                c.pattern, " and ".join([c.name] + [s.model for s in pair[1]]) if pair else c.name, site),
            assertion_tests=tests, novelty=novelty, closest_task=closest, site=site, original=c.raw_bytes,
            mutant=encode(mutant_text), compared_table=compared, test_setup_models=added_models(story) + between,  # the new model first
            solution_rebuild=between, tags=tags_for(c.pattern, project_name), observation=obs,
            build_error=bool(getattr(obs, "build_error", False)) if obs is not None else False,
            candidate=c, precondition=c.preconditions[si].to_json() if si in c.preconditions else None,
            siblings=pair[1] if pair else (), story=story, shallow_because=shallow,
        )
    return None
