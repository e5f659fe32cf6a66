"""The screening verdict (validate.verdict) and the proof's (validate.proof) are written once: both
backends judge the same observation the same way, and the verdict rules hold on typed observations,
each drop with its code beside its message."""
from __future__ import annotations

import inspect

import pytest

from adegen.core.drops import DropCode
from adegen.facts.measured import RelationKind
from adegen.validate.duckdb import screening
from adegen.validate.snowflake import validator as snowflake
from adegen.validate.rules import verdict
from adegen.validate.rules.inspector import Evidence
from adegen.validate.rules.oracle import TableDiff
from adegen.validate.rules.proof import ProofInput, TrialSummary, finish_proof
from adegen.validate.rules.verdict import ScreenFacts, judge

MODELS = {
    "model.p.stg": {"name": "stg", "alias": "stg", "materialized": "view"},
    "model.p.fct": {"name": "fct", "alias": "fct", "materialized": "table"},
    "model.p.top": {"name": "top", "alias": "top", "materialized": "table"},
}
DIST = {"model.p.stg": 0, "model.p.fct": 1, "model.p.top": 2}


def facts(**kw) -> ScreenFacts:
    base = dict(uid="model.p.stg", models=MODELS, dist=DIST, symptom="values_wrong", difficulty="easy")
    base.update(kw)
    return ScreenFacts(**base)


class FixedInspector:
    """Evidence as a backend's connection would give it (one fixed example)."""

    def evidence(self, uid, diff):
        facts = {"key": ["id"]}
        if diff.table in ("top", "fct") and diff.rows_mut > diff.rows_base:  # a key the extra rows repeat
            facts["duplicates"] = {"keys": 3, "max_copies": 2, "sample": []}
        if diff.table == "fct":
            facts["key"] = ["order"]  # a keyword: the grain test could not name it unquoted
        return Evidence(["amount"], f"{diff.table}: id = 1 has amount = 2 (expected 1)", facts)

    def tables(self, visible, compared, known):
        return [dict(known.get(u) or {}, table=u) for u in sorted(visible)]


evidence = FixedInspector()


SCENARIOS = {
    "observable": facts(diffs={"model.p.stg": TableDiff("stg", 10, 10, 2, 2), "model.p.fct": TableDiff("fct", 5, 5)}),
    "hard_downstream": facts(difficulty="hard", diffs={"model.p.stg": TableDiff("stg", 10, 10, 1, 1),
                                                        "model.p.fct": TableDiff("fct", 5, 5, 1, 1)}),
    "duplicates": facts(diffs={"model.p.stg": TableDiff("stg", 10, 12)}),
    # duplicates only, in a table with a key: graded by a grain test the equality test cannot replace
    "duplicates_keyed": facts(diffs={"model.p.stg": TableDiff("stg", 10, 10), "model.p.top": TableDiff("top", 20, 23)}),
    "duplicates_keyword_key": facts(diffs={"model.p.fct": TableDiff("fct", 5, 6)}),
    "equivalent": facts(diffs={"model.p.stg": TableDiff("stg", 10, 10)}),
    "nondeterministic_only": facts(diffs={"model.p.stg": TableDiff("stg", 10, 10),
                                          "model.p.top": TableDiff("top", 20, 20, 1, 1)},
                                   unstable={"model.p.top"}),
    "build_error_intended": facts(symptom="build_error", build_ok=False, errored=["model.p.stg"],
                                  error_message="Binder Error: column amout not found"),
    "build_error_unintended": facts(build_ok=False, error_message="Binder Error: x"),
    "runaway": facts(stopped=(DropCode.RUNAWAY, "runaway: stg would hold more than 6e+06 rows")),
    "build_error_expected": facts(symptom="build_error", diffs={"model.p.stg": TableDiff("stg", 10, 10, 1, 1)}),
    "build_error_expected_equivalent": facts(symptom="build_error", diffs={"model.p.stg": TableDiff("stg", 10, 10)}),
    "build_error_expected_duplicates": facts(symptom="build_error", diffs={"model.p.stg": TableDiff("stg", 10, 12)}),
    "unknown_model": facts(uid="model.p.gone"),
    # equal values, another type (0.0 -> 0): ade-bench's typed equality test passes (issue 30)
    "type_only": facts(diffs={"model.p.stg": TableDiff("stg", 10, 10, retyped={"amount": ("DOUBLE", "BIGINT")},
                                                       text_differing=10)}),
    # a retyped column beside a real difference: the difference is evidence
    "retyped_and_changed": facts(diffs={"model.p.stg": TableDiff("stg", 10, 10, 1, 1, text_differing=0,
                                                                 retyped={"amount": ("DOUBLE", "BIGINT")})}),
    # types with no common one: ade-bench's EXCEPT errors, so its test fails
    "no_common_type": facts(diffs={"model.p.stg": TableDiff("stg", 10, 10, 0, 0, compare_error="Binder Error: x",
                                                            retyped={"d": ("DATE", "INTEGER")})}),
    "materialization_only": facts(symptom="structure_wrong", diffs={"model.p.stg": TableDiff("stg", 10, 10)},
                                  relation_kind=RelationKind("stg", "view", "table")),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_both_backends_give_the_same_verdict(name):
    # each backend's screening path calls the one verdict function it imports
    assert screening.judge is verdict.judge and snowflake.judge is verdict.judge
    for module in (screening, snowflake):
        src = inspect.getsource(module)
        assert "judge(facts" in src and "choose_compared" not in src.replace("verdict.choose_compared", "")
    a = screening.judge(SCENARIOS[name], evidence)
    b = snowflake.judge(SCENARIOS[name], evidence)
    assert a == b


def test_verdict_rules():
    v = {name: judge(f, evidence) for name, f in SCENARIOS.items()}
    o = v["observable"]
    assert o.observable and o.compared_table == "stg" and o.rows_differing == 4 and o.rows_total == 10
    assert o.changed_tables == {"stg": 0} and o.columns_differ == ["amount"]
    assert o.details["rows_intact"] == 10 and o.details["rows_broken"] == 10
    assert v["hard_downstream"].compared_table == "fct"
    d = v["duplicates"]
    assert not d.observable and "duplicate rows" in d.reason and d.details["duplicates_only"] == {"stg": [10, 12]}
    g = v["duplicates_keyed"]
    assert g.observable and g.compared_table == "top" and g.rows_differing == 3 and g.rows_total == 20
    assert g.details["grain_test"] == {"model": "top", "columns": ["id"]} and g.changed_tables == {"top": 2}
    assert "grain_test" not in d.details and not v["build_error_expected_duplicates"].observable
    assert not v["duplicates_keyword_key"].observable and "grain_test" not in v["duplicates_keyword_key"].details
    assert not v["equivalent"].observable and "equivalent on this data" in v["equivalent"].reason
    nd = v["nondeterministic_only"]
    assert not nd.observable and "nondeterministic" in nd.reason and nd.details["ignored_nondeterministic"] == ["top"]
    assert v["build_error_intended"].observable and v["build_error_intended"].build_error
    assert not v["build_error_unintended"].observable and "symptom is values_wrong" in v["build_error_unintended"].reason
    assert not v["runaway"].observable and v["runaway"].reason.startswith("runaway:")
    assert [t["table"] for t in o.details["tables"]] == ["model.p.stg"]  # facts of the changed tables
    mk = v["materialization_only"]
    assert mk.observable and mk.compared_table == "stg" and mk.changed_tables == {"stg": 0}
    assert mk.details["tables"][0]["relation_kind"] == {"intact": "view", "broken": "table"}
    assert not v["equivalent"].observable  # same data and same kind: nothing to report
    # every drop has its code beside its message; an observable mutant has none
    assert {name: o.code for name, o in v.items()} == {
        "observable": None, "hard_downstream": None, "duplicates_keyed": None, "materialization_only": None, "build_error_intended": None,
        "duplicates": DropCode.DUPLICATES_ONLY, "duplicates_keyword_key": DropCode.DUPLICATES_ONLY,
        "equivalent": DropCode.EQUIVALENT,
        "nondeterministic_only": DropCode.NONDETERMINISTIC_ONLY, "runaway": DropCode.RUNAWAY,
        "build_error_unintended": DropCode.UNEXPECTED_BUILD_ERROR, "build_error_expected": DropCode.NO_BUILD_ERROR,
        "build_error_expected_equivalent": DropCode.NO_BUILD_ERROR,
        "build_error_expected_duplicates": DropCode.DUPLICATES_ONLY, "unknown_model": DropCode.UNKNOWN_MODEL,
        "type_only": DropCode.TYPE_ONLY, "retyped_and_changed": None, "no_common_type": None}
    t = v["type_only"]
    assert t.reason == ("only column types changed: stg column(s) amount (DOUBLE -> BIGINT) hold equal values, "
                        "which ade-bench's equality test (typed EXCEPT against the seed) passes; 10 of 10 row(s) "
                        "differ only as text")
    assert t.details["type_only"] == {"stg": {"amount": ["DOUBLE", "BIGINT"]}}
    assert all(o.observable is (o.code is None) for o in v.values())


def test_finish_proof():
    none = TrialSummary("none", resolved=False, summary="none: UNRESOLVED", tail="FAIL 1")
    sage = TrialSummary("sage", resolved=True, summary="sage: RESOLVED", expected=2, seconds={"tests": 25.0})
    p = finish_proof(ProofInput(none, sage, ["solution__t"], {}, None), {})
    # 25 s of tests: x3, in 30 s steps (proof.test_timeout, no CPU share measured: the wall time as it is)
    assert p.ok and p.expected_tests == 2 and p.max_test_timeout_sec == 90 and "unproven" not in p.detail
    p = finish_proof(ProofInput(none, sage, [], {}, 120, label="proven on emulator (x)"), {})
    assert p.ok and p.max_test_timeout_sec is None and p.detail.startswith("proven on emulator (x): ")
    p = finish_proof(ProofInput(TrialSummary("none", resolved=True, summary="none: RESOLVED", tail="PASS"), sage,
                                [], {}, None), {})
    assert not p.ok and p.detail.startswith("unproven: the broken state passes") and "PASS" in p.detail
    blocked = TrialSummary("sage", resolved=True, unsupported=["current_session: missing"])
    p = finish_proof(ProofInput(none, blocked, [], {}, None), {})
    assert not p.ok and p.detail.startswith("unproven: the emulator cannot run: current_session")
    p = finish_proof(ProofInput(none, sage, [], {}, None, solved_differs="t differs"), {})
    assert not p.ok and not p.solved_passes and "differs from the intact build" in p.detail


def test_incremental_downstream_tables_are_never_named():
    models = dict(MODELS, **{"model.p.inc": {"name": "inc", "alias": "inc", "materialized": "incremental"}})
    f = facts(models=models, dist=dict(DIST, **{"model.p.inc": 1}),
              diffs={"model.p.stg": TableDiff("stg", 10, 10, 1, 1), "model.p.inc": TableDiff("inc", 5, 5, 1, 1),
                     "model.p.fct": TableDiff("fct", 5, 5, 1, 1)})
    obs = judge(f, evidence)
    assert [t["table"] for t in obs.details["tables"]] == ["model.p.fct", "model.p.stg"]
    assert obs.changed_tables["inc"] == 1  # still reported as changed, only never named
