"""The grain kind's texts (rewrite/purposes/grain.py), pure: the new CTE is written as the model's
first one is, the join and the column land where the scope's style puts them (ON between qualified
relations, USING where the columns are unqualified), the right text differs from the broken one
only by the CTE's grain; scopes a column is not brought into are refused."""
from __future__ import annotations

from adegen.rewrite.purposes.grain import GrainAsk, change

REF = "{{ ref('fct_order_items') }}"
JOINED = """with payments as (

    select * from {{ ref('stg_payments') }}

),

orders as (

    select order_id, customer_id from {{ ref('stg_orders') }}

)

select
    payments.payment_id,
    payments.order_id,
    orders.customer_id,
    payments.amount
from payments
inner join orders
    on payments.order_id = orders.order_id
where payments.amount > 0
"""
ASK = GrainAsk("", "fct_order_items", "order_id", "order_status", "order_items")


def test_a_joined_select_gets_an_import_cte_a_left_join_on_the_key_and_the_column():
    broken, fixed = change(JOINED, ASK, REF)
    assert broken.startswith("with order_items as (\n\n    select order_id, order_status from "
                             "{{ ref('fct_order_items') }}\n\n),\n\npayments as (")
    assert "    payments.amount,\n    order_items.order_status\nfrom payments" in broken
    assert ("    on payments.order_id = orders.order_id\nleft join order_items\n"
            "    on payments.order_id = order_items.order_id\nwhere payments.amount > 0") in broken
    assert fixed == broken.replace("select order_id, order_status", "select distinct order_id, order_status")


def test_unqualified_columns_join_with_using_and_a_model_without_a_with_gets_one():
    text = "select\n    order_id,\n    amount\nfrom {{ ref('stg_payments') }}\n"
    broken, fixed = change(text, ASK, REF)
    assert broken == ("with order_items as (\n    select order_id, order_status from {{ ref('fct_order_items') }}\n)\n\n"
                      "select\n    order_id,\n    amount,\n    order_status\nfrom {{ ref('stg_payments') }}\n"
                      "left join order_items using (order_id)\n")
    assert "select distinct order_id, order_status" in fixed


def test_a_column_reaches_the_output_through_the_final_select():
    text = ("with p as (\n\n    select * from {{ ref('stg_payments') }}\n\n),\n\nfinal as (\n\n    select\n"
            "        p.payment_id,\n        p.order_id\n    from p\n\n)\n\nselect * from final\n")
    broken, _ = change(text, GrainAsk("final", "fct_order_items", "order_id", "order_status", "order_items"), REF)
    assert "        p.order_id,\n        order_status\n    from p\n    left join order_items using (order_id)" in broken
    assert broken.endswith("select * from final\n")


def test_scopes_a_column_is_not_brought_into_are_refused():
    grouped = "select\n    customer_id,\n    count(*) as n\nfrom {{ ref('stg_orders') }}\ngroup by customer_id\n"
    one_line = "select order_id, amount from {{ ref('stg_payments') }}\n"
    star = "select\n    *\nfrom {{ ref('stg_payments') }}\n"
    distinct = "select distinct\n    order_id,\n    amount\nfrom {{ ref('stg_payments') }}\n"
    for text in (grouped, one_line, star, distinct):
        assert change(text, ASK, REF) is None, text
    # the column or the CTE's name is taken already
    assert change(JOINED.replace("payments.amount\n", "payments.amount,\n    1 as order_status\n"), ASK, REF) is None
    assert change(JOINED, GrainAsk("", "fct_order_items", "order_id", "order_status", "orders"), REF) is None
