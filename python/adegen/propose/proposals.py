"""Phase 2: candidates (model x pattern x site), novelty against existing tasks, spread, screening.

Flow: a run's `Scope` (project files, name, database, discovery, survey) is built once;
`enumerate_candidates` lists every applicable (model, pattern) pair with its sites (from the
model file's raw text, read from the project), dropping pairs that duplicate an existing task
(same model + same family). `rank` orders them by the one ranking (`adegen.propose.ranking`, the twin of
the discovery macro's) minus survey penalties. `compile_check` compiles all candidate mutants in
one dbt run. `select` then picks `count` proposals greedily for spread across families, layers and
models, never repeating a pattern or a prompt while it can avoid it; with a screen function (the
Validator) a dropped site/pattern is replaced by the next one. The proposal's descriptive facts
(difficulty, compared table, column, tags, novelty) come from `proposal_facts`."""
from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from adegen import prompts
from adegen.propose import ranking
from adegen.propose import siblings
from adegen.propose.candidate_sites import (LazySites, MAX_SITES_PER_PAIR, apply_site, decode, storied_mutant,  # noqa: F401 - part of this module's API
                              model_context, model_sql_reader, sites_for)
from adegen.propose.compile_check import MAX_MUTANTS, compile_check, measure_preconditions  # noqa: F401 - part of this module's API
from adegen.core.drops import Drop, DropCode
from adegen.rewrite.stories import Where
from adegen.catalog.retired import retired_reason
from adegen.propose.model import PromptLevel, Proposal, ProposalSet, levels_of  # noqa: F401 - part of this module's API
from adegen.propose.facts import (DIFFICULTIES, FAMILY_TAGS, assertion_context, compared_table_for,  # noqa: F401
                             difficulty_for, item_alias, models_between, novelty_text, pick_column, tags_for,
                             why_model)
from adegen.propose.mistakes import same_mistake
from adegen.propose.site import ScreenFn, Selection, about_data, prompt_key, realise_candidate
from adegen.propose.site import encode as encode_text
from adegen.discover.survey import Survey

@dataclass(frozen=True)
class Scope:
    """The project a proposal run works on: enumeration reads its model files and database type,
    ranking and selection its discovery, survey and name (the pipeline builds one per run:
    `pipeline.context.RunContext.scope`)."""

    project_dir: Path
    project_name: str
    db_type: str  # dbt adapter type: patterns limited to other databases are skipped
    discovery: dict
    survey: Survey
    # Snowflake projects: at least half the picks come from database-specific patterns (see select)
    prefer_db_specific: bool = False
    # how many tasks about data the run has before this selection (default: counted in `taken`);
    # each one moves the run along the cycle of report details (render.DETAIL_CYCLE)
    order: int | None = None
    # a proposal run takes last-resort candidates only while it has fewer tasks than this (select)
    fill_to: int | None = None
    # one mistake in two sibling models (adegen.propose.siblings) is offered: its screening builds both
    # changed files at once, which the DuckDB validator does
    siblings: bool = False
    # picks go to untouched models before new kinds of bug on touched ones (select); off in a pool,
    # which keeps several kinds per model (a model's first kind may fail its precondition)
    models_first: bool = True
    # slips made while moving a CTE into a model of its own (adegen.propose.moves) a selection takes:
    # a run takes MOVES_PER_RUN; the pool it screens holds more (the first may not show on the data)
    moves: int = 1
    # model name -> raw SQL, filled as operators read other models (model_sql_reader)
    sql_cache: dict = field(default_factory=dict, compare=False, repr=False)


class Candidate:
    """model x pattern, with the rewrite sites (up to MAX_SITES_PER_PAIR); `sites` is a list, or
    the model's LazySites that computes them on first access. `score` is set by `rank`."""

    def __init__(self, model: dict, pattern: Any, raw_bytes: bytes, sites: list | LazySites,
                 covered_by: str | None = None):
        self.model = model  # discovery model entry
        self.pattern = pattern  # adegen.catalog.patterns.Pattern
        self.lazy = sites if isinstance(sites, LazySites) else None
        self._sites: list | None = None if self.lazy is not None else sites  # [Site]
        self.raw_bytes = raw_bytes
        self.raw = decode(raw_bytes)  # model file text (utf-8, surrogateescape)
        self.score = 0.0
        self.covered_by = covered_by  # an existing task touching the same model (other family)
        self.compile_results: dict = {}  # site index -> CompileResult
        self.story_results: dict = {}  # site index -> CompileResult of the site inside its story
        self.compiled_intact = None  # the CompileResult of the model itself (compiled beside the mutants)
        self.preconditions: dict = {}  # site index -> realism.Measured (the pattern's data preconditions)
        self.where = None  # rewrite.stories.Where: the model's path and the project's model names (stories adding a file)
        self.story_only: str | None = None  # the one story kind its sites are told in (adegen.propose.moves)

    def with_sites(self, sites: list) -> Candidate:
        """The same candidate (model, pattern, score, coverage) limited to `sites`."""
        one = Candidate(self.model, self.pattern, self.raw_bytes, sites, covered_by=self.covered_by)
        one.score, one.where, one.story_only = self.score, self.where, self.story_only
        return one

    @property
    def sites(self) -> list:
        if self._sites is None:
            self._sites = self.lazy.get(self.pattern.id) if self.lazy is not None else []
        return self._sites

    @sites.setter
    def sites(self, value: list) -> None:
        self._sites = value

    def __repr__(self) -> str:
        return f"Candidate({self.name!r}, {getattr(self.pattern, 'id', self.pattern)!r}, score={self.score})"

    @property
    def name(self) -> str:
        return self.model["name"]

    @property
    def family(self) -> str:
        return str(getattr(self.pattern, "family", "") or getattr(self.pattern, "id", ""))


encode = encode_text  # the one encoder (proposal_site), under this module's older name


# ---------------------------------------------------------------------------------------------
# enumeration and ranking


def pattern_ok_for_db(pattern, db_type: str) -> bool:
    dbt = getattr(pattern, "db_types", "all")
    if dbt in (None, "all") or dbt == ["all"] or dbt == ("all",):
        return True
    return db_type in list(dbt)


def own_models(discovery: dict, project_name: str) -> list[dict]:
    return [m for m in discovery.get("models", [])
            if m.get("package_name", project_name) == project_name and m.get("enabled", True)
            and str(m.get("path", "")).endswith(".sql")]


def enumerate_candidates(scope: Scope, catalog, warn: Callable[[str], None] = lambda s: None
                         ) -> tuple[list[Candidate], list[tuple[str, str, str]]]:
    """(candidates, excluded (model, pattern_id, task_id) that repeat an existing task)."""
    covered_pairs = scope.survey.covered_pairs
    covered_models = scope.survey.covered_models
    by_id = {p.id: p for p in catalog.patterns}
    cands: list[Candidate] = []
    excluded: list[tuple[str, str, str]] = []
    taken = frozenset(str(m.get("name", "")).lower() for m in scope.discovery.get("models", []))
    for m in own_models(scope.discovery, scope.project_name):
        pats = [by_id[pid] for pid in m.get("matched_patterns", []) if pid in by_id]
        pats = [p for p in pats if pattern_ok_for_db(p, scope.db_type) and retired_reason(p) is None]
        if not pats:
            continue
        path = scope.project_dir / m["path"]
        try:
            raw_bytes = path.read_bytes()
        except OSError as exc:
            warn(f"cannot read {path}: {exc}")
            continue
        lazy = LazySites(decode(raw_bytes), m, pats, scope, warn)
        fams = [str(getattr(p, "family", "") or p.id) for p in pats]
        if any((m["name"], fam) in covered_pairs for fam in fams):
            # an existing task covers this model: decide now (as before) which pairs have sites
            lazy.get("")
            if not lazy._sites:
                continue
        for p, fam in zip(pats, fams):
            if lazy._sites is not None and not lazy.get(p.id):
                continue
            if (m["name"], fam) in covered_pairs:
                excluded.append((m["name"], p.id, covered_pairs[(m["name"], fam)]))
                continue
            cands.append(Candidate(m, p, raw_bytes, lazy, covered_by=covered_models.get(m["name"])))
            cands[-1].where = Where(str(m["path"]).replace("\\", "/"), taken)
    return cands, excluded


# Survey penalties and the selection's spread penalties, in units of ranking.POINTS_PER_UNIT points.
COVERED_PENALTY = 8  # an existing task already touches the model (ranked lower, not excluded)
SURVEYED_FAMILY_PENALTY = 2  # per existing task of the same family
# a run whose tasks take one kind of slip 3 of 5 times reads as a menu: past MAX_SAME_SLIP tasks of one
# slip kind (the pattern's family: a join, a filter, an aggregation, NULL handling, ...), other kinds go first
MAX_SAME_SLIP = 2


def slip_kind(c) -> str:
    """The kind of slip a candidate makes: its pattern's family (else the pattern id)."""
    pattern = getattr(c, "pattern", None)
    return str(getattr(pattern, "family", "") or getattr(pattern, "id", ""))
SPREAD = {"model": 6, "family": 4, "layer": 1.5, "existing_layer": 1, "same_model_and_family": 100}
# one mistake in two sibling models: blind reviewers took multi-file changes for a person's work
# (ade-bench's f1006, helixops_saas005) where every one-line edit read as a program's
PAIR_BONUS = 8
# but two pairs of the same one-token edit in one run read as a program again (round 10: "the
# same edit repeated across files"): one pair per run
PAIRS_PER_RUN = 1
# a slip made while moving a CTE into a model of its own (adegen.propose.moves): a change of two files
# with a purpose, ranked as a pair is; one such refactor per run (two read as a program's again)
MOVE_BONUS = PAIR_BONUS
MOVES_PER_RUN = 1  # Scope.moves
MOVES_IN_POOL = 3


def score(c: Candidate, survey: Survey, _fams: Counter | None = None) -> int:
    """`ranking.model_score` (the one ranking, twin of the discovery macro's) minus the survey
    penalties and the pattern's `rank_penalty`; in ranking points."""
    s = ranking.model_score(c.model)
    if c.covered_by:
        s -= COVERED_PENALTY * ranking.POINTS_PER_UNIT
    fams = _fams if _fams is not None else _survey_families(survey)
    s -= SURVEYED_FAMILY_PENALTY * ranking.POINTS_PER_UNIT * fams.get(c.family, 0)
    s -= int(getattr(c.pattern, "rank_penalty", 0) or 0) * ranking.POINTS_PER_UNIT
    if siblings.is_pair(c):
        s += PAIR_BONUS * ranking.POINTS_PER_UNIT
    if getattr(c, "story_only", None):
        s += MOVE_BONUS * ranking.POINTS_PER_UNIT
    return s


def _survey_families(survey: Survey) -> Counter:
    return Counter(ch.family for t in survey.tasks for ch in t.changes if ch.family)


def rank(cands: list[Candidate], survey: Survey) -> list[Candidate]:
    fams = _survey_families(survey)  # once, not once per candidate
    for c in cands:
        c.score = score(c, survey, fams)
    return sorted(cands, key=lambda c: (-c.score, c.name, str(c.pattern.id)))


# ---------------------------------------------------------------------------------------------
# selection (the compile check: propose/compile_check.py)


def pool(cands: list[Candidate], scope: Scope, *, size: int) -> list[Candidate]:
    """The `size` candidates a selection would try first (greedy spread, no compile/screen yet)."""
    dry = select(cands, dataclasses.replace(scope, models_first=False, moves=MOVES_IN_POOL), count=size)
    return [p.candidate for p in dry.proposals]


# At least this share of a run's tasks changes a model upstream of the table its base prompt names
# (issue 28: "no task made the agent trace a symptom upstream"; the issue asks for 2 of 5, and the
# blind reviews rated the traced tasks harder and more worth keeping; rounds 11 and 12 rated the
# tasks whose prompt named the changed model itself 2.0-2.7 for value, the traced ones 3.0-4.0):
# every task, where the project has candidates enough; the others fill a run that ends short.
# A sibling pair is exempt: its prompt names both changed models by design.
DEEP_SHARE_NUM, DEEP_SHARE_DEN = 1, 1


# A pattern whose `rank_penalty` is at least this is a last resort: one-token swaps (max -> min,
# sum -> count) that blind reviewers rated 2.0-2.3 for realism in every round, beside 3.0-4.0 for
# the rest. A proposal run takes them only to reach the spec's minimum of MIN_PROPOSALS tasks; a
# smaller project then gets 3 or 4 tasks worth keeping instead of 5 with two made-up ones.
LAST_RESORT_PENALTY = 6
MIN_PROPOSALS = 3


def is_last_resort(pattern) -> bool:
    return int(getattr(pattern, "rank_penalty", 0) or 0) >= LAST_RESORT_PENALTY


def is_config_only(pattern) -> bool:
    """A pattern that changes configuration only (the data stays the same): one per run."""
    return str(getattr(pattern, "family", "")) == "config-materialization"


def _deep_quota_at_risk(picked: list, slots: int, want: int, untried: list) -> bool:
    """Taking one more proposal whose symptom is on the changed model itself would leave too few
    slots for the deep ones the run wants, while candidates that could still give one remain."""
    have = sum(1 for p in picked if p.upstream)
    if have >= want or slots - 1 >= want - have:
        return False
    return any(c.model.get("layer") != "marts" for c in untried)


def fill_from_kept(chosen: list, kept: list, dropped: list, count: int) -> None:
    """A run that ends short of `count` takes the proposals it kept back for the deep quota
    ((proposal, its drop) in `kept`, in order), unless one repeats a prompt of the run: the deep
    tasks they waited for did not all come, and a kept-back task beats a short run. Held last
    resorts come after them and only up to MIN_PROPOSALS. Their drops leave `dropped`."""
    def held(pair) -> bool:
        return pair[1].code is DropCode.LAST_RESORT

    for prop, drop in sorted(kept, key=held):  # stable: the deep kept-backs first, each in order
        if len(chosen) >= (min(count, MIN_PROPOSALS) if held((prop, drop)) else count):
            continue
        said = {prompt_key(lv.text) for p in chosen for lv in p.prompt_levels()}
        if not said & {prompt_key(lv.text) for lv in prop.prompt_levels()}:
            dropped.remove(drop)
            chosen.append(prop)


# a conversion reported on the very column it converts ("the amount in fct_payments is way too
# high" over a dropped `/ 100` on `... as amount`) puts the fix on the line of the symptom: blind
# reviews rated every such task value 2.0-2.3 (rounds 14-24: "the well-worn cents slip, and the
# message points straight at it"), against 2.9 for the kind as a whole. Kept back for a report from
# what the value feeds (jaffle's customer_lifetime_value over stg_payments), taken if a run ends short
CONVERSIONS = frozenset({"unit_conversion_dropped", "conversion_applied_twice"})


def reports_its_own_conversion(prop: Proposal, raw: str) -> bool:
    """Whether a conversion task's base report is about the column its changed line produces."""
    if prop.pattern_id not in CONVERSIONS or prop.prompt_set is None or prop.site is None:
        return False
    column = (getattr(prop.prompt_set, "columns", None) or {}).get("base")
    alias = item_alias(raw, prop.site)
    return bool(column and alias and column.lower() == alias.lower())


def is_db_specific(pattern) -> bool:
    """A pattern limited to some database types (e.g. `db_types: [snowflake]`), not ANSI (`all`)."""
    dbt = getattr(pattern, "db_types", "all")
    if dbt in (None, "all"):
        return False
    return list(dbt) != ["all"]




def _used_texts(survey: Survey, taken: list) -> list[str]:
    """The prompts `_used_prompts` holds, as written (surveyed tasks', then the run's)."""
    return [text for t in survey.tasks for text in (t.prompts or [t.prompt]) if text.strip()] + [
        lv.text for p in taken for lv in p.prompt_levels()]


def _used_prompts(survey: Survey, taken: list) -> dict[str, str]:
    used: dict[str, str] = {}
    for t in survey.tasks:
        for text in t.prompts or [t.prompt]:
            if text.strip():
                used.setdefault(prompt_key(text), t.task_id)
    for p in taken:
        for lv in p.prompt_levels():
            used.setdefault(prompt_key(lv.text), f"proposal {p.number}")
    return used


def select(cands: list[Candidate], scope: Scope, *, count: int, screen: ScreenFn | None = None,
           taken: list | None = None) -> ProposalSet:
    """Greedy picks for spread; `taken` = proposals already chosen in an earlier round.

    No repeats within a run: a model or a pattern id already picked (`taken` included) is picked
    again only when no untried candidate on another model, then with another pattern, remains, and a proposal whose prompt repeats
    one of the run or of a surveyed task is dropped (the next site or candidate is tried).

    `scope.prefer_db_specific` (Snowflake projects, spec: "prefer bug patterns that use Snowflake-specific
    SQL when the model uses it ... but also include some ANSI SQL bugs"): at least half of all picks
    (`taken` included, rounded up) come from database-specific patterns while such candidates remain;
    picks alternate specific / ANSI so the set mixes both.

    `scope.fill_to` (a proposal run: MIN_PROPOSALS): a last-resort candidate (`is_last_resort`) is taken
    only while the run has fewer proposals than that; past it, it is dropped with the reason and
    the run may end with fewer than `count`. Bulk mode passes none: it takes them after the rest."""
    taken = list(taken or [])
    survey, discovery = scope.survey, scope.discovery
    chosen: list[Proposal] = []
    state = Selection(scope, screen, [], _used_prompts(survey, taken),
                       sum(about_data(p) for p in taken) if scope.order is None else scope.order,
                       _used_texts(survey, taken))
    used_models: Counter = Counter()
    used_fams: Counter = Counter()
    used_layers: Counter = Counter()
    used_patterns = {p.pattern_id for p in taken}
    used_slips = Counter(slip_kind(p.candidate) for p in taken if p.candidate is not None)
    existing_layers = Counter()
    models_by_name = {m["name"]: m for m in discovery.get("models", [])}
    for t in survey.tasks:
        for mname in t.models:
            if mname in models_by_name:
                existing_layers[models_by_name[mname].get("layer", "other")] += 1
    for p in taken:
        used_models[p.model] += 1
        used_fams[p.family] += 1
        used_layers[p.layer] += 1
    remaining = list(cands)
    tried: set[int] = set()
    total = len(taken) + count
    want_specific = (total + 1) // 2 if scope.prefer_db_specific else 0
    want_deep = (DEEP_SHARE_NUM * total) // DEEP_SHARE_DEN if total >= 3 else 0
    kept: list[tuple[Proposal, Drop]] = []  # proposals kept back for the deep quota, in order

    def take(prop: Proposal) -> None:
        c = prop.candidate
        state.order += about_data(prop)  # a materialization or build report quotes no values
        prop.number = len(taken) + len(chosen) + 1
        chosen.append(prop)
        for lv in prop.prompt_levels():
            state.used_prompts.setdefault(prompt_key(lv.text), f"proposal {prop.number}")
            state.used_texts.append(lv.text)
        used_models[c.name] += 1
        used_fams[c.family] += 1
        used_layers[c.model.get("layer", "other")] += 1
        used_patterns.add(c.pattern.id)
        used_slips[slip_kind(c)] += 1

    while len(chosen) < count:
        only_specific = False
        if want_specific:
            have = sum(1 for p in taken + chosen
                       if is_db_specific(getattr(p.candidate, "pattern", None) if p.candidate else None))
            need = want_specific - have
            slots = count - len(chosen)
            if need > 0 and (need >= slots or (len(taken) + len(chosen)) % 2 == 0):
                only_specific = any(is_db_specific(c.pattern) for i, c in enumerate(remaining) if i not in tried)
        open_ = [i for i, c in enumerate(remaining)
                 if i not in tried and (not only_specific or is_db_specific(c.pattern))]
        # a configuration change is the cheapest bug to make and the least worth benchmarking: taken
        # only when no data bug is left to try
        data = [i for i in open_ if not is_config_only(remaining[i].pattern)]
        open_ = data or open_
        fresh = [i for i in open_ if remaining[i].pattern.id not in used_patterns]
        # a new kind of bug on an untouched model first, then any bug on one (one column of one model
        # broken twice says less than two models)
        new_model = [i for i in open_ if not used_models[remaining[i].name]] if scope.models_first else []
        untouched = set(new_model)
        fresh_models = [i for i in fresh if i in untouched]
        best, best_s = None, None
        first = fresh_models or new_model or fresh or open_
        varied = [i for i in first if used_slips[slip_kind(remaining[i])] < MAX_SAME_SLIP]
        for i in varied or [i for i in open_ if used_slips[slip_kind(remaining[i])] < MAX_SAME_SLIP] or first:
            c = remaining[i]
            layer = c.model.get("layer", "other")
            s = c.score - ranking.POINTS_PER_UNIT * (
                SPREAD["model"] * used_models[c.name] + SPREAD["family"] * used_fams[c.family]
                + SPREAD["layer"] * used_layers[layer] + SPREAD["existing_layer"] * existing_layers[layer]
                + (SPREAD["same_model_and_family"] if used_models[c.name] and used_fams[c.family] else 0))
            if best_s is None or s > best_s:
                best, best_s = i, s
        if best is None:
            break
        tried.add(best)
        c = remaining[best]
        if is_config_only(c.pattern) and any(is_config_only(p.candidate.pattern) for p in taken + chosen
                                              if p.candidate is not None):
            continue  # one config-only task per run: the data bugs are the ones worth benchmarking
        if siblings.is_pair(c) and sum(1 for p in taken + chosen
                                       if p.candidate is not None and siblings.is_pair(p.candidate)) >= PAIRS_PER_RUN:
            continue  # the rest of the run spreads over single-file bugs
        if getattr(c, "story_only", None) and sum(1 for p in taken + chosen
                                if getattr(p.candidate, "story_only", None)) >= scope.moves:
            continue
        last_resort = scope.fill_to is not None and is_last_resort(c.pattern)
        if last_resort and len(taken) + len(chosen) >= scope.fill_to:
            state.dropped.append(Drop(c.name, c.pattern.id, f"not needed: the run has {len(taken) + len(chosen)} "
                                      "tasks, and this kind of edit reads as made up", DropCode.LAST_RESORT))
            continue
        prop = realise_candidate(c, state)
        if prop is None:
            continue
        if same_mistake(prop, taken + chosen + [k for k, _d in kept]):
            state.dropped.append(Drop(c.name, c.pattern.id, "the same mistake as another task of the run",
                                      DropCode.SAME_MISTAKE))
            continue
        if last_resort:
            # held, not taken: a later candidate of another kind may still come, and a run that
            # ends short takes it then (fill_from_kept, after the deep kept-backs)
            drop = Drop(c.name, c.pattern.id, "held: taken only if the run ends with fewer than "
                                              f"{scope.fill_to} tasks", DropCode.LAST_RESORT)
            state.dropped.append(drop)
            kept.append((prop, drop))
            continue
        if prop.observation is not None and reports_its_own_conversion(prop, c.raw):
            # (screened proposals only: a dry selection's guessed report would keep it out of the pool)
            drop = Drop(c.name, c.pattern.id, "kept back: its report names the very column the change converts, "
                                              "so the fix sits on the line of the symptom", DropCode.OWN_CONVERSION)
            state.dropped.append(drop)
            kept.append((prop, drop))
            continue
        untried = [remaining[i] for i in range(len(remaining)) if i not in tried]
        if (not prop.upstream and not siblings.is_pair(c) and prop.observation is not None
                and _deep_quota_at_risk(taken + chosen, count - len(chosen), want_deep, untried)):
            drop = Drop(c.name, c.pattern.id, "kept back: the run needs tasks whose symptom shows "
                                              "downstream of the change", DropCode.KEPT_BACK)
            state.dropped.append(drop)
            kept.append((prop, drop))
            continue
        take(prop)
    return ProposalSet(chosen, [], state.dropped, len(cands), kept_back=kept)


