"""Purposeful changes (rewrite/purposes): SQL in, (broken, fixed) SQL out, asserted whole; and the
measurement (propose/purpose) on a real DuckDB database: a change is kept only when its slip shows
in the data."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from adegen.propose.purpose import ModelText, candidates, measure
from adegen.realism.probe import ProbeDB
from adegen.rewrite.purposes import EXCLUSION, METRIC, Ask, change, metric_name, noun
from adegen.rewrite.purposes import scopes as sc

MART = """with orders as (

    select * from {{ ref('stg_orders') }}

)

select
    customer_id,
    count(*) as order_count,
    sum(amount) as revenue
from orders
group by customer_id
"""

JOINED = """select
    o.region,
    sum(o.amount) as revenue
from {{ ref('stg_orders') }} as o
left join {{ ref('stg_customers') }} as c
    on o.customer_id = c.customer_id
where o.amount > 0
group by o.region
"""


def test_metric_in_where_broken_and_fixed():
    ask = Ask(METRIC, sc.FINAL, "status", "completed", metric_name("completed", "orders"))
    broken, fixed = change(MART, ask)
    assert ask.name == "completed_order_count"
    assert broken == MART.replace(
        "    sum(amount) as revenue\nfrom orders\n",
        "    sum(amount) as revenue,\n    count(*) as completed_order_count\nfrom orders\nwhere status = 'completed'\n")
    assert fixed == MART.replace(
        "    sum(amount) as revenue\n",
        "    sum(amount) as revenue,\n    count(case when status = 'completed' then 1 end) as completed_order_count\n")


def test_exclusion_qualifies_the_column_beside_a_join_and_appends_to_the_where():
    broken, fixed = change(JOINED, Ask(EXCLUSION, sc.FINAL, "status", "returned"))
    assert broken == JOINED.replace("where o.amount > 0\n", "where o.amount > 0\n    and o.status <> 'returned'\n")
    assert fixed == JOINED.replace("where o.amount > 0\n",
                                   "where o.amount > 0\n    and o.status is distinct from 'returned'\n")


def test_scopes_that_cannot_take_a_change():
    # a CTE whose column does not reach the model: no metric there
    assert change(MART, Ask(METRIC, "orders", "status", "x", "x_order_count")) is None
    # a WHERE with an OR at its depth: an AND appended would bind to one side
    assert change("select a, count(*) as n from t where a = 1 or b = 2 group by a",
                  Ask(EXCLUSION, sc.FINAL, "s", "x")) is None
    # a Jinja statement in the scope, a set operation: not read
    assert sc.scopes("select * from t {% if x %} where a {% endif %}") == {}
    assert sc.FINAL not in sc.scopes("select a from t union all select a from u")
    # the new column's name is taken
    assert change(MART, Ask(METRIC, sc.FINAL, "status", "x", "order_count")) is None


def test_compiled_refs_read_as_one_relation():
    s = sc.scopes('select a, count(*) as n from "db"."main"."stg_orders" group by a')[sc.FINAL]
    assert s.relation == '"db"."main"."stg_orders"' and sc.relation_name(s.relation) == "stg_orders"
    assert noun("{{ ref('stg_order_items') }}") == "order_item" and noun("categories") == "category"


@pytest.fixture
def shop(tmp_path) -> Path:
    db = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(db))
    con.execute("create table stg_orders as select * from (values "
                "(1, 'a', 10, 'completed'), (2, 'a', 20, 'returned'), (3, 'b', 5, 'completed'), "
                "(4, 'b', 7, null), (5, 'c', 3, 'placed'), (6, 'c', 4, 'completed'), (7, 'a', 1, 'placed'), "
                "(8, 'c', 2, 'shipped'), (9, 'b', 6, 'shipped'), (10, 'a', 8, 'completed')"
                ") t(order_id, customer_id, amount, status)")
    con.close()
    return db


def _model(raw: str) -> ModelText:
    return ModelText("model.p.m", "m", "models/m.sql", raw, raw.replace("{{ ref('stg_orders') }}", "stg_orders"))


def test_measured_on_real_duckdb(shop):
    db = ProbeDB(shop, None)
    try:
        found = candidates([_model(MART)], db)
        kinds = {c.kind: c for c in found}
        assert set(kinds) == {METRIC, EXCLUSION}
        metric = kinds[METRIC]
        assert metric.ask.column == "status" and metric.ask.value == "completed"
        # the WHERE keeps only completed orders: every customer's order count and revenue change
        assert metric.facts["rows_differ"] == 3 and metric.facts["rows_fixed"] == 3
        excl = kinds[EXCLUSION]
        # order 4 (status NULL) is dropped with the excluded value: customer b's figures change
        assert excl.facts["rows_differ"] == 1 and excl.facts["rows_left_out"] >= 1
        # what the change set out to do in business words, never its condition as code (issue 51: "the
        # records whose status is 'completed'" disclosed the change); how far off, in rough words
        assert "one row is wrong now" in excl.prompts()[0][1]
        assert "completed_order_count" in metric.fixed and "completed_order_count" in metric.prompts()[0][1]
        for c in (metric, excl):
            for _key, text in c.prompts():
                assert "status" not in text and "'" + c.ask.value + "'" not in text and " where " not in text, text
        # without NULLs the `<>` slip drops nothing more: no exclusion task
        assert measure(Ask(EXCLUSION, sc.FINAL, "customer_id", "a"), _model(MART), db) is None
    finally:
        db.close()


CARRIED = """with orders as (

    select * from {{ ref('stg_orders') }}

),

customer_orders as (

    select
        customer_id,
        count(order_id) as number_of_orders
    from orders
    group by customer_id

),

final as (

    select
        customers.customer_id,
        customer_orders.number_of_orders
    from {{ ref('stg_customers') }} as customers
    left join customer_orders
        on customers.customer_id = customer_orders.customer_id

)

select * from final
"""


def test_a_count_in_a_joined_cte_is_carried_to_the_output():
    ask = Ask(METRIC, "customer_orders", "status", "completed", "completed_order_count")
    broken, fixed = change(CARRIED, ask)
    carried = "        customer_orders.number_of_orders,\n        customer_orders.completed_order_count\n"
    assert broken == CARRIED.replace(
        "        count(order_id) as number_of_orders\n    from orders\n",
        "        count(order_id) as number_of_orders,\n        count(*) as completed_order_count\n"
        "    from orders\n    where status = 'completed'\n").replace("        customer_orders.number_of_orders\n", carried)
    assert fixed == CARRIED.replace(
        "        count(order_id) as number_of_orders\n",
        "        count(order_id) as number_of_orders,\n"
        "        count(case when status = 'completed' then 1 end) as completed_order_count\n"
    ).replace("        customer_orders.number_of_orders\n", carried)
    # a CTE nothing of the output reads cannot carry it
    assert change(CARRIED.replace("    left join customer_orders\n        on customers.customer_id = "
                                  "customer_orders.customer_id\n", ""), ask) is None


PROPERTIES = """version: 2

models:
  - name: order_summary
    description: One row per customer with their orders.   # owned by finance
    columns:
      - name: customer_id
        description: Primary key.
        data_tests: [unique, not_null]
      - name: revenue
        description: Net revenue.

  - name: other
    description: "Quoted: left alone."
    columns:
      - name: id
"""


def test_the_purpose_is_documented_in_the_models_properties_file():
    """A commit that adds a column documents it; one that leaves a category out says so in the
    model's description (a second file, as engineers' commits have); the file's layout is kept."""
    from adegen.rewrite.purposes.docs import document_column, document_exclusion

    added = document_column(PROPERTIES, "order_summary", "completed_order_count", "Number of orders whose status is 'completed'.")
    assert added == PROPERTIES.replace(
        "        description: Net revenue.\n",
        "        description: Net revenue.\n      - name: completed_order_count\n"
        "        description: Number of orders whose status is 'completed'.\n")
    said = document_exclusion(PROPERTIES, "order_summary", "Leaves out the orders whose status is 'returned'.")
    assert said == PROPERTIES.replace("with their orders.   # owned by finance",
                                      "with their orders. Leaves out the orders whose status is 'returned'.   # owned by finance")
    assert document_exclusion(PROPERTIES, "other", "Leaves out x.") is None  # quoted: not edited as text
    assert document_column(PROPERTIES, "missing", "x", "y") is None
    assert document_column(PROPERTIES.replace("    columns:\n      - name: id\n", ""), "other", "x", "y") is None
    contract = PROPERTIES.replace("  - name: other\n", "  - name: other\n    config:\n      contract: {enforced: true}\n")
    assert document_column(contract, "other", "x", "y") is None  # an enforced contract wants a type


def test_a_purpose_names_labels_and_spreads_over_models():
    """A request names a label a person would type, never a hash, a UUID, a date or a number (hashed
    data holds such categories); two purposeful tasks of a run are on two models where there are two."""
    from types import SimpleNamespace

    from adegen.pipeline.purpose import interleaved
    from adegen.propose.purpose import is_label

    assert all(map(is_label, ["returned", "EMEA", "Gold tier", "shipped_to_customer"]))
    assert not any(map(is_label, ["f4b016bb8e1a47a052ca6a232f51276cea8c006d5e76923ab341f70584249d02",
                                  "a1b2c3d4-1111-2222-3333-444455556666", "2024-01-01", "123", "", "x" * 41,
                                  "https://join.slack.com/t/", "ops@example.com",
                                  "This is the summary of the issue."]))

    def cand(kind, model):
        return SimpleNamespace(kind=kind, model=SimpleNamespace(unique_id=model))

    got = interleaved([cand("exclusion", "a"), cand("exclusion", "a"), cand("exclusion", "b"), cand("metric", "a")])
    assert [(c.kind, c.model.unique_id) for c in got] == [("exclusion", "a"), ("exclusion", "b"), ("metric", "a")]


def test_a_crlf_model_keeps_its_bytes_in_the_patch(tmp_path):
    """A model file with CRLF line endings (and a byte that is not UTF-8) is read as it is on disk, so
    the text a purposeful patch is made from is the user's file byte for byte (read_text made it LF:
    every purposeful patch check then failed, "the project differs from the text the patch was made
    from", on a real project written on Windows)."""
    from adegen.propose.candidate_sites import read_as_is
    from adegen.propose.purpose import Purposeful

    path = tmp_path / "fct_orders.sql"
    path.write_bytes(b"select\r\n    order_id,\r\n    status -- caf\xe9\r\nfrom orders\r\n")
    m = ModelText("model.x.fct_orders", "fct_orders", "models/fct_orders.sql", read_as_is(path), "", "marts")
    c = Purposeful(Ask(EXCLUSION, sc.FINAL, "status", "returned"), m, m.raw, m.raw)
    assert c.files()[0][1] == path.read_bytes()
    # the lines an edit adds end as the file's do: a bare LF among CRLF lines would point at the edit
    added = m.raw.replace("from orders\r\n", "from orders\nwhere status <> 'returned'\n")
    broken = Purposeful(c.ask, m, added, added).files()[0][2]
    assert broken.count(b"\r\n") == broken.count(b"\n") == 5


GROUPED = """select
    grp,
    count(*) as n,
    sum(amount) as total
from {{ ref('REL') }}
group by grp
"""


@pytest.mark.parametrize("relation, key, nouns, count_name, column", [
    ("fct_subscription_revenue", "subscription_id", "subscriptions", "enterprise_subscription_count", "plan"),
    ("int_orders__enriched", "id", "orders", "enterprise_order_count", "plan"),
    ("dim_customers", "customer_id", "customers", "enterprise_customer_count", "plan"),
    # no column keys a row (one per group and month): an exclusion says the column's own words
    ("int_channel_monthly_orders", "order_month", "plan", None, "plan"),
    # ... unless they name no thing ("the Starter status"): what the relation holds
    ("int_channel_monthly_orders", "order_month", "orders", None, "status"),
])
def test_the_rows_are_named_by_the_grain_the_data_shows(tmp_path, relation, key, nouns, count_name, column):
    """What the purposeful prompts count or leave out is what one row of the data is (its unique key
    column), never the model's name pluralised: "how many Enterprise subscription revenues are behind
    each row" and "the email channel_orders" were read as a program's (issue 51)."""
    db_path = tmp_path / "grain.duckdb"
    con = duckdb.connect(str(db_path))
    plans = ["Enterprise"] * 4 + ["Team"] * 3 + ["Starter"] * 2 + [None]
    keys = [f"'2024-0{i % 2 + 1}-01'" for i in range(10)] if key == "order_month" else [str(i + 1) for i in range(10)]
    rows = ", ".join(f"({k}, '{'abc'[i % 3]}', {i + 1}, {repr(p) if p else 'null'})" for i, (k, p) in enumerate(zip(keys, plans)))
    con.execute(f"create table {relation} as select * from (values {rows}) t({key}, grp, amount, {column})")
    con.close()
    raw = GROUPED.replace("REL", relation)
    m = ModelText("model.p.m", "m", "models/m.sql", raw, raw.replace(f"{{{{ ref('{relation}') }}}}", relation))
    db = ProbeDB(db_path, None)
    try:
        found = {c.kind: c for c in candidates([m], db)}
    finally:
        db.close()
    assert EXCLUSION in found
    texts = [t for c in found.values() for _k, t in c.prompts()] + [c.subject() for c in found.values()]
    stem = relation.split("_", 1)[1]
    for text in texts:
        assert relation not in text, text
        if stem != nouns:  # dim_customers' rows are customers
            assert stem not in text and stem.replace("_", " ") not in text, text
    excl = found[EXCLUSION]
    assert f"the Starter {nouns} out" in excl.prompts()[0][1], excl.prompts()[0][1]
    if count_name is None:
        return
    metric = found[METRIC]
    assert metric.ask.name == count_name, metric.ask
    assert f"how many Enterprise {nouns} are behind each row" in metric.prompts()[0][1], metric.prompts()[0][1]
