"""conversion_applied_twice: a model converts a column that a model it reads already converted.
The operator's sites (`convert_again`), the upstream conversions it recognises
(`conversion_items`), and where it finds none."""
from __future__ import annotations

from adegen.catalog.patterns import load_catalog
from adegen.rewrite import ModelContext, apply_site, find_sites
from adegen.rewrite.operators.conversions import conversion_items

PATTERN = load_catalog().by_id["conversion_applied_twice"]
STG = """select
    id as payment_id,
    order_id,
    -- amounts arrive in cents
    amount / 100 as amount,
    {{ cents_to_dollars('fee_cents') }} as fee,
    case when kind = 'x' then total / 100 else 0 end as total_usd,
    (gross_cents - tax_cents) / 100 as net
from {{ source('shop', 'payments') }}
"""


def ctx(upstream: dict[str, str]) -> ModelContext:
    return ModelContext(name="m", refs=tuple(upstream), upstream_models=tuple(upstream), model_sql=upstream.get)


def mutants(sql: str, upstream: dict[str, str]) -> list[str]:
    return [apply_site(sql, s) for s in find_sites(sql, PATTERN, ctx(upstream))]


def test_the_upstream_conversions_are_items_converting_one_column_into_a_name():
    convs = {c.column: c for c in conversion_items(STG, "stg_payments")}
    # a conversion inside a CASE or of a formula is no column someone re-converts by name
    assert sorted(convs) == ["amount", "fee"]
    assert convs["amount"].apply("amount") == "amount / 100"
    assert convs["fee"].apply("p.fee") == "{{ cents_to_dollars('p.fee') }}"


def test_a_column_read_downstream_is_converted_again_where_a_value_stands():
    sql = ("select\n    order_id,\n    sum(amount) as total,\n    p.amount,\n    amount * quantity as line_total,\n"
           "    fee as fee_paid\nfrom {{ ref('stg_payments') }} as p\ngroup by 1, 3\n")
    got = mutants(sql, {"stg_payments": STG})
    assert [g.split("\n")[2:6] for g in got] == [
        ["    sum(amount / 100) as total,", "    p.amount,", "    amount * quantity as line_total,", "    fee as fee_paid"],
        ["    sum(amount) as total,", "    p.amount / 100 as amount,", "    amount * quantity as line_total,",
         "    fee as fee_paid"],
        ["    sum(amount) as total,", "    p.amount,", "    (amount / 100) * quantity as line_total,",
         "    fee as fee_paid"],
        ["    sum(amount) as total,", "    p.amount,", "    amount * quantity as line_total,",
         "    {{ cents_to_dollars('fee') }} as fee_paid"],
    ]


def test_no_site_without_the_upstream_sql_or_where_it_is_converted_already():
    sql = "select\n    sum(amount) as total\nfrom {{ ref('stg_payments') }}\n"
    assert mutants(sql, {}) == []
    assert find_sites(sql, PATTERN, ModelContext(name="m", refs=("stg_payments",), upstream_models=("stg_payments",))) == []
    # the column is converted here already, or only filtered on, or only the alias is the name
    assert mutants("select\n    sum(amount / 100) as total\nfrom {{ ref('stg_payments') }}\n", {"stg_payments": STG}) == []
    assert mutants("select\n    order_id\nfrom {{ ref('stg_payments') }}\nwhere amount > 0\n",
                   {"stg_payments": STG}) == []
    assert mutants("select\n    sum(x) as amount\nfrom {{ ref('stg_payments') }}\n", {"stg_payments": STG}) == []
    # an upstream model without a named conversion of one column
    plain = "select id, amount_cents from {{ source('shop', 'payments') }}\n"
    assert mutants("select\n    sum(amount_cents) as total\nfrom {{ ref('stg') }}\n", {"stg": plain}) == []
