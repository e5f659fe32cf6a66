"""A run that writes fewer than 5 tasks says, per model, why (adegen.pipeline.shortfall, issue 53):
one line per model, its drops grouped by kind, and whether the project or adegen is the limit."""
from __future__ import annotations

from adegen.pipeline.shortfall import lines, per_model


def test_one_line_per_model_with_grouped_reasons_and_the_limit():
    doc = {"tasks": [{"model": "orders"}],
           "proposals": [{"model": "orders"}],
           "dropped_candidates": [
               {"model": "orders", "pattern_id": "a", "reason": "x", "code": "family_cap"},
               {"model": "daily", "pattern_id": "a", "reason": "line 3: no row", "code": "precondition"},
               {"model": "daily", "pattern_id": "b", "reason": "line 4: no row", "code": "precondition"},
               {"model": "daily", "pattern_id": "c", "reason": "only daily", "code": "clock_dependent"},
               {"model": "stg", "pattern_id": "d", "reason": "boom", "code": "not_compile"},
               {"model": "mixed", "pattern_id": "e", "reason": "boom", "code": "screening_failed"},
               {"model": "mixed", "pattern_id": "f", "reason": "same", "code": "equivalent"},
               {"model": "mixed", "pattern_id": "g", "reason": "same", "code": "equivalent"}],
           "runtime": {"clock_dependent": {"daily": "reads current_date;\n its rows depend on the clock"},
                       "nondeterministic": {"scores": ["rank"]}}}
    got = per_model(doc, ["orders", "daily", "stg", "mixed", "scores"])
    assert list(got) == ["orders", "daily", "stg", "mixed", "scores"]
    assert got["orders"] == "1 task(s); 2 candidate(s), 1 proposed; 1 family over a fifth of the dataset (room used)"
    assert got["daily"] == ("0 task(s); 3 candidate(s); 2 data precondition not met; 1 clock-dependent tables only; "
                            "never graded: reads current_date; its rows depend on the clock (the project is the limit)")
    assert got["stg"] == "0 task(s); 1 candidate(s); 1 mutant does not compile (adegen is the limit)"
    assert got["mixed"].endswith("2 equivalent on this data; 1 screening failed (both: mostly the project)")
    assert got["scores"] == ("0 task(s); no catalog pattern matches its SQL; never graded: it changes between "
                             "identical builds (rank) (adegen's catalog is the limit)")
    assert lines(got, 1)[0] == "Fewer than 5 tasks (1): why, per model:" and len(lines(got, 1)) == 6
    assert lines({}, 7) == []
