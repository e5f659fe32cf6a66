"""proposals: novelty against existing tasks, ranking, spread, difficulty (real catalog + acme discovery)."""
from __future__ import annotations

from pathlib import Path

import pytest

from adegen import proposals as pp
from adegen import settings
from adegen import survey as sv
from adegen.drops import DropCode


@pytest.fixture(scope="session")
def catalog():
    from adegen.patterns import load_catalog

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
