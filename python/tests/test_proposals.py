"""proposals: novelty against existing tasks, ranking, spread, difficulty (real catalog + acme discovery)."""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from pathlib import Path

import pytest

from adegen.propose import proposals as pp
from adegen.core import settings
from adegen.discover import survey as sv
from adegen.core.drops import DropCode
from adegen.propose.mistakes import same_mistake


@pytest.fixture(scope="session")
def catalog():
    from adegen.catalog.patterns import load_catalog

    return load_catalog()


def _survey(changes: list[tuple[str, str | None]]) -> sv.Survey:
    t = sv.ExistingTask("acme001", Path("."), "ade-bench", "", "prompt", [], "medium",
                        changes=[sv.PatchChange(f"models/x/{m}.sql", 1, 1, "a", "b", fam) for m, fam in changes])
    return sv.Survey("acme", [t], [], [], 1)


def _scope(example_project, acme_discovery, survey) -> pp.Scope:
    return pp.Scope(example_project, "acme", "duckdb", acme_discovery, survey)


def _cands(example_project, acme_discovery, catalog, survey):
    return pp.enumerate_candidates(_scope(example_project, acme_discovery, survey), catalog)


def test_same_model_same_family_is_excluded(example_project, acme_discovery, catalog):
    base, _ = _cands(example_project, acme_discovery, catalog, sv.Survey("acme", [], [], [], 0))
    target = base[0]
    cands, excluded = _cands(example_project, acme_discovery, catalog, _survey([(target.name, target.family)]))
    assert all((c.name, c.family) != (target.name, target.family) for c in cands)
    assert (target.name, target.pattern.id, "acme001") in excluded
    # other families on the same model stay, ranked lower (covered)
    same_model = [c for c in cands if c.name == target.name]
    assert same_model and all(c.covered_by == "acme001" for c in same_model)


def test_unclassified_change_ranks_lower_not_excluded(example_project, acme_discovery, catalog):
    free = pp.rank(_cands(example_project, acme_discovery, catalog, sv.Survey("acme", [], [], [], 0))[0],
                   sv.Survey("acme", [], [], [], 0))
    top = free[0].name
    s = _survey([(top, None)])
    cands, excluded = _cands(example_project, acme_discovery, catalog, s)
    ranked = pp.rank(cands, s)
    assert not excluded and any(c.name == top for c in ranked)
    assert ranked[0].name != top


def test_selection_spreads_families_and_models(example_project, acme_discovery, catalog):
    s = sv.Survey("acme", [], [], [], 0)
    cands = pp.rank(_cands(example_project, acme_discovery, catalog, s)[0], s)
    pset = pp.select(cands, _scope(example_project, acme_discovery, s), count=5)
    props = pset.proposals
    assert len(props) == 5
    assert len({p.family for p in props}) >= 4
    assert len({p.model for p in props}) == 5
    for p in props:
        assert p.mutant != p.original and p.prompt and p.test_setup_models
        assert p.difficulty in ("easy", "medium", "hard")
        assert p.novelty == "no overlap - first task for acme"
        pat = catalog.by_id[p.pattern_id]
        assert p.realistic == pat.realistic and pat.guidance not in p.realistic


def test_difficulty_matches_model_size(catalog):
    hard = next(p for p in catalog.patterns if p.difficulty == "hard")
    tiny = {"line_count": 5, "complexity": 1}
    assert pp.difficulty_for(hard, tiny) == "easy"
    big = {"line_count": 120, "complexity": 30, "downstream": {"transitive": 5}}
    assert pp.difficulty_for(hard, big) == "hard"


def test_models_between(acme_discovery):
    by = {m["name"]: m for m in acme_discovery["models"]}
    child = next(m for m in acme_discovery["models"] if m.get("downstream_models"))
    grandchild_uid = child["downstream_models"][0]
    gname = next(m["name"] for m in acme_discovery["models"] if m["unique_id"] == grandchild_uid)
    path = pp.models_between(acme_discovery, child["unique_id"], gname)
    assert path[0] == child["name"] and path[-1] == gname
    assert pp.models_between(acme_discovery, child["unique_id"], child["name"]) == [child["name"]]
    assert by


def test_no_pattern_or_prompt_repeats_in_a_run(example_project, acme_discovery, catalog):
    s = sv.Survey("acme", [], [], [], 0)
    cands = pp.rank(_cands(example_project, acme_discovery, catalog, s)[0], s)
    props = pp.select(cands, _scope(example_project, acme_discovery, s), count=5).proposals
    assert len({p.pattern_id for p in props}) == 5
    assert len({pp.prompt_key(p.prompt) for p in props}) == 5
    # a pattern repeats only when no other pattern is left: one candidate of another pattern
    by_pattern: dict[str, list] = {}
    for c in cands:
        by_pattern.setdefault(c.pattern.id, []).append(c)
    common = max(by_pattern, key=lambda k: len({c.name for c in by_pattern[k]}))
    other = next(k for k in by_pattern if k != common)
    pool = by_pattern[common] + by_pattern[other][:1]
    picked = pp.select(pool, _scope(example_project, acme_discovery, s), count=2).proposals
    assert {p.pattern_id for p in picked} == {common, other}


def test_prompts_of_surveyed_tasks_are_not_reused(example_project, acme_discovery, catalog):
    empty = sv.Survey("acme", [], [], [], 0)
    cands = pp.rank(_cands(example_project, acme_discovery, catalog, empty)[0], empty)
    first = pp.select(cands, _scope(example_project, acme_discovery, empty), count=1).proposals[0]
    # an existing task elsewhere (another model) that already asks exactly this
    t = sv.ExistingTask("acme001", Path("."), "ade-bench", "", "other", [], "medium",
                        changes=[sv.PatchChange("models/x/unrelated.sql", 1, 1, "a", "b", "join")],
                        prompts=["other", first.prompt.upper() + "  "])
    s = sv.Survey("acme", [t], [], [], 1)
    res = pp.select(pp.rank(_cands(example_project, acme_discovery, catalog, s)[0], s),
                    _scope(example_project, acme_discovery, s), count=5)
    keys = [pp.prompt_key(lv.text) for p in res.proposals for lv in p.prompt_levels()]
    assert pp.prompt_key(first.prompt) not in keys and len(keys) == len(set(keys))
    # the same bug is still proposed, worded another way (the writer avoids used texts)
    again = [p for p in res.proposals if (p.model, p.pattern_id, p.site.line) ==
             (first.model, first.pattern_id, first.site.line)]
    assert again and pp.prompt_key(again[0].prompt) != pp.prompt_key(first.prompt)


def test_a_failure_writing_one_sites_prompt_drops_that_site_only(example_project, acme_discovery, catalog,
                                                                  monkeypatch):
    """A bug in the wording of one site (a math domain error on a negative ratio once ended a bulk
    run of twelve tasks) drops that site with the error as its reason; the run goes on and the
    selection is filled from the other candidates."""
    s = sv.Survey("acme", [], [], [], 0)
    cands = pp.rank(_cands(example_project, acme_discovery, catalog, s)[0], s)
    first = pp.select(cands, _scope(example_project, acme_discovery, s), count=1).proposals[0]
    real = pp.prompts.write_prompts

    def broken_for_first(req):
        if req.model == first.model:
            raise ValueError("math domain error")
        return real(req)

    monkeypatch.setattr(pp.prompts, "write_prompts", broken_for_first)
    res = pp.select(cands, _scope(example_project, acme_discovery, s), count=5)
    assert len(res.proposals) == 5 and first.model not in {p.model for p in res.proposals}
    assert any(d.model == first.model and "internal error: ValueError: math domain error" in d.reason
               and d.code is DropCode.PROMPT_ERROR for d in res.dropped)
    with settings.override(debug=True), pytest.raises(ValueError):  # a developer asking for the traceback
        pp.select(cands, _scope(example_project, acme_discovery, s), count=5)


def test_a_last_resort_swap_only_fills_a_run_up_to_three(example_project, acme_discovery, catalog):
    """One-token swaps (rank_penalty >= LAST_RESORT_PENALTY: max -> min, sum -> count) are taken
    only while a proposal run has fewer than MIN_PROPOSALS tasks: with two other candidates they fill
    the third slot and no more; with four others they are not taken at all. Bulk (no fill_to) takes
    them once the rest are used."""
    s = sv.Survey("acme", [], [], [], 0)
    cands = pp.rank(_cands(example_project, acme_discovery, catalog, s)[0], s)
    scope = _scope(example_project, acme_discovery, s)
    # the swaps worded without screening (an added filter's prompt needs the screened data)
    last = [c for c in cands if pp.is_last_resort(c.pattern)
            and pp.select([c], dataclasses.replace(scope, fill_to=None), count=1).proposals]
    other = [c for c in cands if not pp.is_last_resort(c.pattern) and not pp.is_config_only(c.pattern)]
    assert len({c.pattern.id for c in last}) >= 3, "the example project has last-resort candidates"

    def run(pool, fill_to):
        return pp.select(pool, dataclasses.replace(scope, fill_to=fill_to), count=5)

    # two others first in the pool: the run fills one slot with a swap and holds back the rest
    # (two that are worded without screening: a conversion applied twice needs the screened data)
    two = [c for c in other if c.pattern.id not in ("case_mapping_collapsed",)
           and pp.select([c], dataclasses.replace(scope, fill_to=None), count=1).proposals]
    two = [two[0], next(c for c in two if c.pattern.id != two[0].pattern.id and c.name != two[0].name)]
    # (held to the run's end, then taken by fill_from_kept, up to the floor only)
    res = run(two + last, pp.MIN_PROPOSALS)
    assert [pp.is_last_resort(p.candidate.pattern) for p in res.proposals] == [False, False]
    assert res.kept_back and all(pp.is_last_resort(p.candidate.pattern) for p, _d in res.kept_back)
    chosen, dropped = list(res.proposals), list(res.dropped)
    pp.fill_from_kept(chosen, res.kept_back, dropped, 5)
    assert [pp.is_last_resort(p.candidate.pattern) for p in chosen] == [False, False, True]
    held = [d for d in dropped if d.code is DropCode.LAST_RESORT]
    res.dropped[:] = dropped
    assert held and res.held_back_line() and "fewer than 3 tasks" in res.held_back_line()
    # a swap ranked first is held, not taken: the two others come first, then it fills the third slot
    res = run(last[:1] + two, pp.MIN_PROPOSALS)
    assert [pp.is_last_resort(p.candidate.pattern) for p in res.proposals] == [False, False]
    assert [p.candidate for p, _d in res.kept_back] == [last[0]]
    # enough others: no swap at all, and the run may stop short of 5 rather than take one
    res = run(other + last, pp.MIN_PROPOSALS)
    assert len(res.proposals) == 5 and not any(pp.is_last_resort(p.candidate.pattern) for p in res.proposals)
    # bulk (no floor): the swaps come after the others, but they come
    res = run(two + last, None)
    assert len(res.proposals) == 5 and sum(pp.is_last_resort(p.candidate.pattern) for p in res.proposals) == 3
    assert not res.held_back_line()


def test_a_short_run_takes_what_it_kept_back_for_the_deep_quota():
    """Proposals kept back for tasks traced upstream are taken when the run ends short (intercom
    ended with 3 of 5 while its one kept-back filter task was observable), in order, never one
    whose prompt the run already has, and only up to the count; their drops go."""
    from types import SimpleNamespace

    from adegen.core.drops import Drop
    from adegen.propose.model import PromptLevel

    def prop(text):
        return SimpleNamespace(prompt_levels=lambda: [PromptLevel("base", text, ())])

    chosen = [prop("The orders table is short.")]
    kept = [(prop(t), Drop("m", f"p{i}", "kept back", DropCode.KEPT_BACK))
            for i, t in enumerate(["The orders table is short.", "Totals are high.", "Names are blank.",
                                   "Dates moved."])]
    dropped = [d for _p, d in kept] + [Drop("x", "y", "eq", DropCode.EQUIVALENT)]
    pp.fill_from_kept(chosen, kept, dropped, 3)
    assert [p.prompt_levels()[0].text for p in chosen] == [
        "The orders table is short.", "Totals are high.", "Names are blank."]
    assert [d.pattern_id for d in dropped] == ["p0", "p3", "y"]


def test_one_mistake_is_one_task():
    """A proposal that leaves some file exactly as another proposal of the run leaves it (a sibling
    pair and the single-file task making one of its edits) is the same mistake: never two tasks."""
    from types import SimpleNamespace

    def prop(path, mutant, siblings=()):
        return SimpleNamespace(model_path=path, mutant=mutant, siblings=tuple(
            SimpleNamespace(path=p, mutant=m) for p, m in siblings))

    pair = prop("models/a.sql", b"a2", [("models/b.sql", b"b2")])
    assert same_mistake(prop("models/b.sql", b"b2"), [pair])
    assert same_mistake(prop("models/a.sql", b"a2"), [pair])
    assert not same_mistake(prop("models/a.sql", b"a3"), [pair])  # another edit of the same file
    assert not same_mistake(prop("models/c.sql", b"b2"), [pair])
    assert DropCode.SAME_MISTAKE.id == "same_mistake"

    # the very same edit in two files of one lineage (a filter added to stg_orders and to orders)
    def edit(path, original, mutant, pid="exclusion_filter_added"):
        p = prop(path, mutant.encode())
        p.pattern_id, p.original = pid, original.encode()
        return p

    stg = edit("models/stg_orders.sql", "select * from renamed\n", "select * from renamed\nwhere status != 'returned'\n")
    assert same_mistake(edit("models/orders.sql", "with a as (select 1)\nselect * from final\n",
                                 "with a as (select 1)\nselect * from final\n  where status != 'returned'\n"), [stg])
    assert not same_mistake(edit("models/orders.sql", "select * from final\n",
                                     "select * from final\nwhere status != 'placed'\n"), [stg])
    assert not same_mistake(edit("models/orders.sql", "select * from final\n",
                                     "select * from final\nwhere status != 'returned'\n", pid="other"), [stg])
    # one pattern's one-token edit on two other lines is two mistakes
    gt = edit("models/a.sql", "select * from t\nwhere amount > 0\n", "select * from t\nwhere amount >= 0\n", "gt_to_gte")
    assert not same_mistake(edit("models/b.sql", "select * from t\nwhere views > 0\n",
                                     "select * from t\nwhere views >= 0\n", "gt_to_gte"), [gt])
    # the same pattern on the same names: stg_payments's conversion repeated in orders and customers
    def named(path, mutant, said, pid="conversion_applied_twice"):
        p = prop(path, mutant)
        p.pattern_id, p.site = pid, SimpleNamespace(placeholders=said)
        return p

    orders = named("models/orders.sql", b"o3", {"upstream_model": "stg_payments"})
    assert same_mistake(named("models/customers.sql", b"c3", {"upstream_model": "stg_payments"}), [orders])
    assert not same_mistake(named("models/customers.sql", b"c3", {"upstream_model": "stg_refunds"}), [orders])
    assert not same_mistake(named("models/customers.sql", b"c3", {}), [named("models/x.sql", b"x", {})])


def test_a_pool_candidate_failing_its_precondition_is_replaced_in_the_same_round(
        example_project, acme_discovery, catalog, monkeypatch):
    """The pool's one join candidate fails its data precondition: the round checks the join
    candidate that would have come next instead of screening the pool without any join."""
    from adegen.pipeline import propose

    s = sv.Survey("acme", [], [], [], 0)
    scope = pp.Scope(example_project, "acme", "duckdb", acme_discovery, s)
    cands = pp.rank(pp.enumerate_candidates(scope, catalog)[0], s)
    first = pp.pool(cands, scope, size=6)
    victims = [c for c in first if c.family == "join"]
    assert len(victims) == 1 and sum(c.family == "join" for c in cands) >= 2
    failing = SimpleNamespace(drop_reason=lambda: "precondition not met: 0 of 987 rows find no match")
    checks_run: list[list] = []

    def fake_check(ctx, batch):  # what the dbt compile and the data probes would record
        checks_run.append(list(batch))
        for c in batch:
            c.compile_results = {}
            c.preconditions = {si: failing for si in range(len(c.sites))} if c in victims else {}

    monkeypatch.setattr(propose, "check_candidates", fake_check)
    got = propose.checked_pool(SimpleNamespace(), cands, scope, size=6)
    assert len(checks_run) == 2 and checks_run[0] == first and victims[0] not in checks_run[1]
    live_joins = [c for c in got if c.family == "join" and propose.has_live_site(c)]
    assert live_joins and victims[0] in got  # the dead one stays: the selection records why
    assert all(c.compile_results == {} for c in got)  # nothing unchecked reaches screening


def test_a_conversion_reported_on_the_column_it_converts_is_kept_back():
    raw = "select\n    amount_cents,\n    {{ cents_to_dollars('amount_cents') }} as amount,\n    created_at\nfrom source\n"
    start = raw.index("{{")
    site = SimpleNamespace(start=start, end=raw.index("}}") + 2, before="", after="")

    def prop(pattern_id, column):
        return SimpleNamespace(pattern_id=pattern_id, site=site,
                               prompt_set=SimpleNamespace(columns={"base": column}))

    # "the amount in fct_payments is way too high": the fix sits on the line of the symptom
    assert pp.reports_its_own_conversion(prop("unit_conversion_dropped", "amount"), raw)
    assert pp.reports_its_own_conversion(prop("conversion_applied_twice", "AMOUNT"), raw)
    # reported from what the amount feeds (a customer's lifetime value): the agent traces it back
    assert not pp.reports_its_own_conversion(prop("unit_conversion_dropped", "customer_lifetime_value"), raw)
    # another kind of change on that line is not a conversion report
    assert not pp.reports_its_own_conversion(prop("coalesce_dropped", "amount"), raw)



def test_a_run_does_not_take_one_kind_of_slip_most_of_the_time(example_project, acme_discovery, catalog):
    """Candidates of one slip kind (family) ranked far first, one other kind behind them: the run of
    five takes the first kind MAX_SAME_SLIP times, then the other, and only then the first again (a
    run of one slip kind reads as a menu; without the cap it takes the first kind 4 times)."""
    from collections import Counter

    s = sv.Survey("acme", [], [], [], 0)
    cands = pp.rank(_cands(example_project, acme_discovery, catalog, s)[0], s)
    common, other = [k for k, _n in Counter(pp.slip_kind(c) for c in cands).most_common(2)]
    cands = [c for c in cands if pp.slip_kind(c) in (common, other)]
    for c in cands:
        c.score += 1000 if pp.slip_kind(c) == common else 0
    props = pp.select(sorted(cands, key=lambda c: -c.score), _scope(example_project, acme_discovery, s), count=5).proposals
    kinds = Counter(pp.slip_kind(p.candidate) for p in props)
    assert len(props) == 5 and kinds[common] <= 3 and kinds[other] >= 2, kinds
