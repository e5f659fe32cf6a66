"""A prompt reports what a reader of the table sees, never how the slip works: the words of the
slip's operator or construct (banks/mechanisms.yaml, per class) are refused on every key. Pure
unit tests: one sentence per class that a reviewer would read as the fix given away, refused for
a slip of that class, accepted for a slip of another; the class from the pattern's family, else
from the SQL tokens a diff changes; names are not words; the full writer never uses them."""
from __future__ import annotations

from dataclasses import replace

import pytest
from test_prompts import Pat, Site, obs, request, value_table

from adegen import prompts
from adegen.prompts import mechanisms

# class -> (a family of that class, a sentence leaning on its mechanism)
LEANING = {
    "cast": ("casting", "The amount in fct_orders should keep its decimals, it got rounded off."),
    "comparison": ("comparison", "fct_sessions is missing the boundary records, the ones right at the start date."),
    "join": ("join", "dim_accounts fans out: each account shows up once per join match."),
    "null_handling": ("null-handling", "The discount in fct_orders is null for most orders."),
    "filter": ("filter", "fct_orders has test orders the filter used to keep out."),
    "case": ("case-logic", "The segment in dim_accounts falls through to the else for a few accounts."),
    "dedup": ("dedup-set-ops", "dim_customers isn't deduplicated anymore."),
    "dedup_dropped": ("dedup-dropped", "stg_events has duplicate events again, each one once per load."),
    "grain": ("grain", "fct_orders is at the wrong grain now: the order id repeats in the items it reads."),
    "aggregation": ("aggregation", "The revenue in fct_monthly looks like a sum of the maximum values."),
    "window": ("window", "The latest status in dim_orders comes from the wrong partition."),
    "date_time": ("date-time", "The signup dates in dim_users look like they're in UTC now."),
    "arithmetic": ("arithmetic", "The price in fct_items is off, looks like the unit conversion was applied twice."),
    "string": ("string", "Some country codes in dim_stores have trailing spaces now."),
    "dag_ref": ("dag-ref", "fct_orders reads from the wrong model now."),
    "incremental": ("incremental", "fct_events has duplicates after the last incremental run."),
    "column": ("column-confusion", "The ship date in fct_orders is the wrong column."),
}
PLAIN = "The amount in fct_orders doesn't match what finance has for most orders."


def test_every_class_of_the_bank_has_a_leaning_sentence_here():
    assert {m.name for m in mechanisms.classes()} == set(LEANING)


@pytest.mark.parametrize("name", sorted(LEANING))
def test_each_class_refuses_its_own_words_and_only_those(name):
    family, text = LEANING[name]
    mine = mechanisms.slip_classes(family)
    assert name in {m.name for m in mine}
    assert mechanisms.mechanism_words(text, mine), text
    assert mechanisms.mechanism_words(PLAIN, mine) == []
    # the words are the class's own: most other classes' sentences are no giveaway here (the
    # words of a comparison say nothing about a string slip)
    others = [n for n in LEANING if n != name and not mechanisms.mechanism_words(LEANING[n][1], mine)]
    assert len(others) >= len(LEANING) - 4, others


def test_a_diff_without_a_known_family_is_classed_by_the_tokens_it_changes():
    assert [m.name for m in mechanisms.slip_classes("reverted-fix", {"coalesce", "("})] == ["null_handling"]
    assert {m.name for m in mechanisms.slip_classes("external-diff", {">=", ">"})} == {"comparison"}
    assert mechanisms.slip_classes("reverted-fix", {"select", "amount"}) == ()
    # a known family wins over the tokens
    assert [m.name for m in mechanisms.slip_classes("casting", {"coalesce"})] == ["cast"]


def test_names_and_allowed_words_are_not_mechanism_words():
    cast = mechanisms.slip_classes("casting")
    assert mechanisms.mechanism_words("The decimal_places in dim_currency look off.", cast) == []
    assert mechanisms.mechanism_words("The `rounded_total` in fct_orders is too low.", cast) == []
    assert mechanisms.mechanism_words("The precision in dim_sensors looks off.", cast, allowed={"precision"}) == []
    assert mechanisms.mechanism_words("The amounts were truncated.", cast)  # a * word: any ending


def test_a_type_change_is_reported_by_its_type():
    """ade-bench's own "The id field ... is now a string": the type is what a reader of a column
    whose type changed sees, so a type_changed report of a cast may say "whole numbers"."""
    cast = mechanisms.slip_classes("casting")
    text = "The amount in stg_payments comes out as whole numbers now instead of decimals."
    assert mechanisms.mechanism_words(text, cast, "type_changed") == []
    assert mechanisms.mechanism_words(text, cast, "values_changed")


def test_lost_fractions_are_reported_without_naming_the_cast():
    """A cast to integer: the writer's every key reports what a reader sees (totals that don't
    reconcile, values a little off), never decimals or rounding, in every voice."""
    t = value_table("fct_revenue", 0, column="net_amount", obs_v="12", exp_v="12.4", changed=80, total=90,
                    higher=0, lower=80, rounded=80)
    req = request(obs(t), model="fct_revenue", pattern=Pat("decimal_cast_to_integer", "Decimal cast", "casting",
                                                           "values_wrong"),
                  site=Site("cast(net_amount as decimal(12, 2))", "cast(net_amount as integer)"))
    cast = mechanisms.slip_classes("casting")
    for seed in (f"cast:{i}" for i in range(20)):
        ps = prompts.write_prompts(replace(req, seed=seed))
        assert ps.base, seed
        for key, text in ps.prompts.items():
            assert mechanisms.mechanism_words(text, cast) == [], (seed, key, text)
