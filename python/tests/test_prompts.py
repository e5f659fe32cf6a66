"""prompts: symptom text from the pattern template, and the leak check that rejects giveaways."""
from __future__ import annotations

from dataclasses import dataclass

from adegen import prompts


@dataclass
class Site:
    before: str
    after: str
    line: int = 12
    start: int = 0
    end: int = 0
    note: str = ""
    pattern_id: str = "p"


@dataclass
class Pat:
    id: str = "wrong_aggregation"
    name: str = "Wrong aggregation function"
    family: str = "aggregation"
    symptom: str = "values_too_high"
    symptom_template: str = "The {column} in {model} looks inflated for some customers. Can you fix it?"


def test_template_used_with_real_names():
    r = prompts.make_prompt(Pat(), model="int_customer_order_history", column="lifetime_value",
                            project_name="acme", site=Site("max(", "sum("), model_path="models/x/int_customer_order_history.sql")
    assert r.source == "template"
    assert r.prompt == "The lifetime_value in int_customer_order_history looks inflated for some customers. Can you fix it?"
    assert not prompts.leaks(r.prompt, site=Site("max(", "sum("), pattern=Pat(),
                             allowed={"int_customer_order_history", "lifetime_value"})


def test_leaking_template_falls_back():
    leaky = Pat(symptom_template="{model} uses sum where it should use max for {column}.")
    r = prompts.make_prompt(leaky, model="fct_orders", column="item_quantity", project_name="acme",
                            site=Site("max(quantity)", "sum(quantity)"), model_path="models/marts/fct_orders.sql")
    assert r.rejected and "sum" in " ".join(r.rejected[0][1])
    assert r.source == "generic" and "sum" not in r.prompt.lower() and "max" not in r.prompt.lower()
    assert "fct_orders" in r.prompt


def test_leak_reasons():
    s = Site("left join order_lines", "join order_lines", line=51)
    p = Pat(id="wrong_join_type", name="Wrong join type", family="join")
    assert prompts.leaks("Rows vanish; look at line 51 of int_orders_enriched.sql", site=s, pattern=p,
                         model_path="models/intermediate/int_orders_enriched.sql")
    assert any("pattern" in r for r in prompts.leaks("Looks like a wrong join type somewhere.", site=s, pattern=p))
    assert any("changed code" in r for r in prompts.leaks("it says join order_lines now", site=s))
    assert any("giveaway" in r for r in prompts.leaks("There is a bug in the SQL.", site=None))
    assert prompts.leaks("Some orders are missing from fct_orders. Can you fix it?", site=s, pattern=p,
                         model_path="models/intermediate/int_orders_enriched.sql") == []


def test_changed_column_is_a_leak_unless_it_is_the_symptom_column():
    s = Site("coalesce(l.discount_cents, 0)", "l.discount_cents")
    p = Pat(id="drop_coalesce", name="Dropped COALESCE", family="null_handling", symptom="values_null")
    assert prompts.leaks("coalesce is gone", site=s, pattern=p)
    assert not prompts.leaks("discount_cents is empty in fct_orders for some orders", site=s, pattern=p,
                             allowed={"discount_cents", "fct_orders"})


def test_example_included_when_safe_and_dropped_when_leaking():
    r = prompts.make_prompt(Pat(), model="dim_customers", column="lifetime_value", project_name="acme",
                            site=Site("max(", "sum("), example="customer 42 shows 1,980.00 instead of 990.00")
    assert "customer 42" in r.prompt
    r = prompts.make_prompt(Pat(), model="dim_customers", column="lifetime_value", project_name="acme",
                            site=Site("max(", "sum("), example="the sum is 1,980.00")
    assert "sum" not in r.prompt.lower()


def test_missing_placeholder_falls_back_to_generic():
    r = prompts.make_prompt(Pat(symptom_template="{model}: {unknown_thing} is off"), model="fct_orders",
                            column=None, project_name="acme", site=Site("a", "b"))
    assert r.prompt and r.source in ("generic", "minimal")


def test_changed_string_literal_is_a_leak():
    s = Site("else 'active'", "")
    assert prompts.leaks("customer_tier is NULL (expected active).", site=s,
                         changed=({"'active'", "else"}, set()), allowed={"customer_tier"})
    r = prompts.make_prompt(Pat(symptom="values_null", symptom_template="{column} in {table} is blank."),
                            model="dim_customers", column="customer_tier", project_name="acme", site=s,
                            example="dim_customers: customer_id = 1 has customer_tier = NULL (expected active)")
    assert "active" not in r.prompt.replace("customer_tier", "")
