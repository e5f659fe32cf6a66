"""One ranking: adegen.propose.ranking (the definition), the discovery macro's candidates (its twin) and
the build's proposals order the example project's models the same way (real dbt discovery)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from adegen.propose import proposals as pp
from adegen.propose import ranking
from adegen.discover import survey as sv


def test_macro_candidates_are_the_python_ranking(acme_discovery):
    cands = acme_discovery["candidates"]
    assert len(cands) == 10
    expected = ranking.rank_models(acme_discovery["models"], top_n=10)
    assert [c["unique_id"] for c in cands] == [m["unique_id"] for m in expected]
    assert [c["score"] for c in cands] == [ranking.model_score(m) for m in expected]
    assert len({c["score"] for c in cands}) > 3  # the scores discriminate, not a constant


def _unpenalised(catalog):
    """The catalog with every pattern's rank_penalty at 0: the model ranking alone."""
    pats = [dataclasses.replace(p, rank_penalty=0) for p in catalog.patterns]
    return dataclasses.replace(catalog, patterns=pats, by_id={p.id: p for p in pats})


def test_build_orders_models_like_the_macro(example_project, acme_discovery):
    from adegen.catalog.patterns import load_catalog

    empty = sv.Survey("acme", [], [], [], 0)
    cands, _ = pp.enumerate_candidates(pp.Scope(example_project, "acme", "duckdb", acme_discovery, empty),
                                      _unpenalised(load_catalog()))
    order: list[str] = []
    for c in pp.rank(cands, empty):
        if c.model["unique_id"] not in order:
            order.append(c.model["unique_id"])
    assert order[:10] == [c["unique_id"] for c in acme_discovery["candidates"]]
    assert all(c.score == ranking.model_score(c.model) for c in cands)  # no survey: no penalty


def test_survey_penalties_lower_a_covered_model(example_project, acme_discovery):
    from adegen.catalog.patterns import load_catalog

    top = acme_discovery["candidates"][0]["name"]
    task = sv.ExistingTask("acme001", Path("."), "ade-bench", "", "prompt", [], "medium",
                           changes=[sv.PatchChange(f"models/{top}.sql", 1, 1, "a", "b", None)])
    s = sv.Survey("acme", [task], [], [], 1)
    cands, _ = pp.enumerate_candidates(pp.Scope(example_project, "acme", "duckdb", acme_discovery, s),
                                      load_catalog())
    mine = [c for c in pp.rank(cands, s) if c.name == top]
    assert mine and all(c.score == ranking.model_score(c.model) - pp.COVERED_PENALTY * ranking.POINTS_PER_UNIT
                        - c.pattern.rank_penalty * ranking.POINTS_PER_UNIT for c in mine)


def test_a_penalised_pattern_is_tried_after_the_others_of_its_model(example_project, acme_discovery):
    """A pattern's rank_penalty (the one-token swaps blind reviewers rated least realistic) costs
    its candidates that many units: on one model they come after every unpenalised pattern."""
    from adegen.catalog.patterns import load_catalog

    catalog = load_catalog()
    assert {p.id for p in catalog.patterns if p.rank_penalty} >= {"max_to_min", "min_to_max", "sum_to_count"}
    empty = sv.Survey("acme", [], [], [], 0)
    cands, _ = pp.enumerate_candidates(pp.Scope(example_project, "acme", "duckdb", acme_discovery, empty), catalog)
    ranked = pp.rank(cands, empty)
    assert all(c.score == ranking.model_score(c.model) - c.pattern.rank_penalty * ranking.POINTS_PER_UNIT
               for c in ranked)
    mixed = [m for m in {c.name for c in ranked}
             if {bool(c.pattern.rank_penalty) for c in ranked if c.name == m} == {True, False}]
    assert mixed, "the example project has a model with both kinds of candidate"
    for m in mixed:
        kinds = [bool(c.pattern.rank_penalty) for c in ranked if c.name == m]
        assert kinds == sorted(kinds), (m, kinds)


def test_layer_weights_and_unknown_layers():
    base = {"name": "m", "features": [], "downstream": {"transitive": 0}, "refs": [], "sources": [], "complexity": 0}
    assert ranking.model_score({**base, "layer": "marts"}) == ranking.LAYER * 3
    assert ranking.model_score({**base, "layer": "reports"}) == ranking.model_score({**base, "layer": "other"})
    big = {**base, "features": ["left_join"], "downstream": {"transitive": 50}, "complexity": 99,
           "refs": ["a", "b", "c"], "sources": [["s", "t"], ["s", "u"]], "layer": "staging"}
    assert ranking.model_score(big) == (ranking.JOIN + ranking.DOWNSTREAM * ranking.DOWNSTREAM_CAP
                                        + ranking.COMPLEXITY_CAP + ranking.INPUTS * ranking.INPUTS_CAP)
