"""Compound tasks (adegen.propose.compound): which proposals pair, and the verdict on the three
screenings (combined, each slip alone)."""
from __future__ import annotations

from types import SimpleNamespace as NS

from adegen.propose import compound

DISCOVERY = {"models": [
    {"unique_id": "model.p.stg_orders", "name": "stg_orders", "layer": "staging", "depth": 1, "depends_on": []},
    {"unique_id": "model.p.stg_customers", "name": "stg_customers", "layer": "staging", "depth": 1, "depends_on": []},
    {"unique_id": "model.p.stg_other", "name": "stg_other", "layer": "staging", "depth": 1, "depends_on": []},
    {"unique_id": "model.p.fct_orders", "name": "fct_orders", "layer": "marts", "depth": 2,
     "depends_on": ["model.p.stg_orders", "model.p.stg_customers"]},
]}


def obs(**tables):
    """An observation whose changed tables differ as given: table -> rows_differing (0: unchanged)."""
    return NS(observable=True, build_error=False, reason="ok", changed_tables={t: 0 for t, n in tables.items() if n},
              details={"tables": [
        {"table": t, "rows_intact": 10, "rows_broken": 10, "rows_differing": n} for t, n in tables.items()]})


def prop(model, family, table, **kw):
    site = NS(line=3, before="a", after="b")
    base = dict(model=model, model_unique_id=f"model.p.{model}", model_path=f"models/{model}.sql",
                pattern_id=f"{family}_x", family=family, compared_table=table, observation=obs(**{table: 2}),
                build_error=False, siblings=(), candidate=None, site=site)
    base.update(kw)
    return NS(**base)


def test_pairs_need_one_lineage_and_two_families():
    a = prop("stg_orders", "filter", "fct_orders")
    b = prop("fct_orders", "aggregation", "fct_orders")
    same_family = prop("stg_customers", "filter", "fct_orders")
    unrelated = prop("stg_other", "join", "stg_other")
    out = compound.pairs([a, b, same_family, unrelated], DISCOVERY)
    assert (a, b) in out and (same_family, b) in out  # upstream first
    assert all(unrelated not in pair for pair in out)
    assert (a, same_family) not in out and (same_family, a) not in out  # one family


def test_pairs_both_upstream_of_one_mart_and_two_tables_first():
    a = prop("stg_orders", "filter", "fct_orders")
    c = prop("stg_customers", "join", "stg_customers")
    b = prop("fct_orders", "aggregation", "fct_orders")
    out = compound.pairs([a, b, c], DISCOVERY)
    assert out[0] in ((a, c), (c, a))  # two tables to grade come before one
    assert len(out) == 3


def test_unusable_slips_are_left_out():
    a = prop("stg_orders", "filter", "fct_orders")
    for bad in (prop("fct_orders", "aggregation", "fct_orders", build_error=True),
                prop("fct_orders", "aggregation", "fct_orders", siblings=("x",)),
                prop("fct_orders", "dag-ref", "fct_orders"),
                prop("fct_orders", "aggregation", "fct_orders", observation=None),
                prop("fct_orders", "aggregation", "fct_orders", candidate=NS(origin="history"))):
        assert compound.pairs([a, bad], DISCOVERY) == []



def test_a_compound_takes_no_slip_of_the_runs_own_tasks():
    """Its slips come from the proposals the run kept back, never from its picks: a compound of
    tasks 001 and 003 is read inside task 005 as the run repeating itself (issue 51)."""
    picked_up = prop("stg_orders", "filter", "fct_orders")
    picked_down = prop("fct_orders", "aggregation", "fct_orders")
    spare_up = prop("stg_customers", "join", "fct_orders")
    spare_down = prop("fct_orders", "null-handling", "fct_orders", site=NS(line=9, before="c", after="d"))
    # the same slip again as another proposal object: still a task of the run
    again = prop("stg_orders", "filter", "fct_orders")
    kept = [(picked_down, "filled"), (again, "kept"), (spare_up, "kept"), (spare_down, "kept")]
    left = compound.spare([picked_up, picked_down], kept)
    assert left == [spare_up, spare_down]
    found = compound.pairs(left, DISCOVERY)
    assert found and all(picked_up not in pair and picked_down not in pair for pair in found)
    # only picks could pair: no compound, and the record says why
    assert compound.pairs(compound.spare([picked_up, picked_down], [(again, "kept")]), DISCOVERY) == []
    why = compound.why_none([picked_up, picked_down], [(again, "kept")], DISCOVERY)
    assert "slip of a task of the run" in why, why
    assert "no two proposals" in compound.why_none([], [(spare_up, "kept")], DISCOVERY)
    # kept back for what the slip is (a made-up looking edit, a conversion reported on its own column),
    # not for want of room: never a compound's slip (the example's acme005 took stg_payments' cents slip)
    from adegen.core.drops import Drop, DropCode
    for code in (DropCode.LAST_RESORT, DropCode.OWN_CONVERSION):
        assert compound.spare([], [(spare_up, Drop("m", "p", "why", code)), (spare_down, "kept")]) == [spare_down]
    assert compound.spare([], [(spare_up, Drop("m", "p", "why", DropCode.KEPT_BACK))]) == [spare_up]


def test_verdict_fair():
    both, up, other = obs(stg_orders=3, fct_orders=5), obs(stg_orders=3, fct_orders=2), obs(fct_orders=4)
    assert compound.verdict(both, up, other, ["fct_orders", "stg_orders"]) is None


def test_verdict_one_fix_would_pass():
    both, up, other = obs(fct_orders=5), obs(fct_orders=5), obs(stg_other=4)
    assert "fixed alone" in compound.verdict(both, up, other, ["fct_orders"])


def test_verdict_a_slip_masked():
    # the combined state's difference on every graded table is the upstream slip's alone: the
    # downstream slip cannot be seen, yet the grade needs it fixed
    both, up, other = obs(fct_orders=5), obs(fct_orders=5), obs(fct_orders=1)
    assert "downstream slip does not show" in compound.verdict(both, up, other, ["fct_orders"])


def test_verdict_combined_intact_or_unscreened():
    assert "shows nothing" in compound.verdict(None, obs(), obs(), ["t"])
    assert "equals intact" in compound.verdict(obs(other=1), obs(t=1), obs(t=2), ["t"])


def test_verdict_unmeasured_difference_is_not_shown():
    # both states differ on the one graded table, but the combined screening did not inspect it:
    # nothing says the upstream slip shows there
    both = obs(fct_orders=5)
    both.details["tables"] = []
    assert "does not show" in compound.verdict(both, obs(fct_orders=5), obs(fct_orders=1), ["fct_orders"])


def _reporting(model, family, table, *levels):
    """A slip's proposal whose own report levels are given as (key, text, tables)."""
    from adegen.propose.model import PromptLevel

    lv = [PromptLevel(k, text, tuple(named)) for k, text, named in levels]
    return prop(model, family, table, prompt_set=None, prompt_levels=lambda: lv)


def test_a_compound_message_holds_both_slips_own_reports():
    from adegen.propose.compound_task import two_report_levels

    up = _reporting("stg_orders", "filter", "fct_orders",
                    ("base", "fct_orders is missing most of the refunded orders.", ()),
                    ("medium", "Revenue by month looks low.", ("rpt_revenue",)))
    other = _reporting("stg_customers", "join", "dim_customers",
                       ("base", "Why is customer_tier blank for half the customers in dim_customers?", ()))
    levels = two_report_levels(up, other, obs(fct_orders=3, dim_customers=5, rpt_revenue=1), "seed")
    assert [lv.key for lv in levels] == ["base"]  # the other slip has no medium report: no medium key
    text = levels[0].text
    assert "refunded orders" in text and "customer_tier blank" in text  # both symptoms are reported
    assert levels[0].tables == ("dim_customers",)  # the other slip's table is graded too


def test_a_compound_whose_second_report_no_longer_holds_has_no_message():
    from adegen.propose.compound_task import two_report_levels

    up = _reporting("stg_orders", "filter", "fct_orders", ("base", "fct_orders is missing rows.", ()))
    other = _reporting("stg_customers", "join", "dim_customers", ("base", "dim_customers has blanks.", ()))
    assert two_report_levels(up, other, obs(fct_orders=3, dim_customers=0), "s") == []  # masked in the combined state
    same = _reporting("stg_customers", "join", "dim_customers", ("base", "fct_orders is missing rows!", ()))
    assert two_report_levels(up, same, obs(fct_orders=3, dim_customers=5), "s") == []  # the same report twice
