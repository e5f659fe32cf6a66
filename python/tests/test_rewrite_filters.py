"""add_exclusion (exclusion_filter_added): which codes a model may filter out, where the filter goes,
and where no site is offered."""
from __future__ import annotations

import pytest

from adegen.catalog.patterns import load_catalog
from adegen.rewrite import ModelContext, apply_site, find_sites
from adegen.rewrite.operators.filters import compared_values, excludable

PATTERN = load_catalog().by_id["exclusion_filter_added"]

STAGING = """with source as (
    select * from {{ source('shop', 'orders') }}
),

renamed as (
    select
        id as order_id,
        user_id as customer_id,
        status
    from source
)

select * from renamed
"""


def ctx(accepted=None, downstream=None, columns=()):
    return ModelContext(name="stg_orders", columns=tuple(columns),
                        accepted_values=tuple((c, tuple(v)) for c, v in (accepted or {}).items()),
                        downstream_models=tuple(downstream or {}), model_sql=(downstream or {}).get)


def mutants(sql, context):
    return [apply_site(sql, s) for s in find_sites(sql, PATTERN, context)]


def test_codes_people_filter_out():
    assert excludable("returned") and excludable("return_pending") and excludable("Test Account")
    assert excludable("CANCELLED")
    assert not excludable("completed") and not excludable("shipped") and not excludable("42")
    # a word inside another word is not one (contest, protesting)
    assert not excludable("contest") and not excludable("protesting")


def test_values_a_column_is_compared_with():
    sql = ("select sum(case when o.status = 'returned' then 1 end) as n, count(*) filter (where status in "
           "('placed', 'test')) as m, case status when 'draft' then 1 end as d\nfrom orders o\n"
           "where 'void' <> status and status not in ('x')\n")
    assert compared_values(sql, "status") == ["returned", "placed", "test", "draft", "void", "x"]
    # an alias being defined, or another column, is no comparison
    assert compared_values("select kind as status, region = 'test' as r from t\n", "status") == []


def test_a_staging_model_filters_a_listed_code_on_a_new_line():
    got = mutants(STAGING, ctx({"status": ["placed", "shipped", "returned", "completed"]}))
    assert got == [STAGING + "where status != 'returned'\n"]


def test_codes_compared_downstream_count_too():
    mart = "select customer_id, count(*) filter (where status = 'cancelled') as cancelled\nfrom {{ ref('stg_orders') }}\ngroup by 1\n"
    got = mutants(STAGING, ctx(downstream={"customers": mart}))
    assert got == [STAGING + "where status != 'cancelled'\n"]


def test_an_existing_where_gets_one_more_condition_in_the_file_s_style():
    sql = "select o.id, o.status as order_status, amount\nfrom {{ ref('orders') }} o\nwhere amount <> 0\norder by 1\n"
    got = mutants(sql, ctx({"order_status": ["ok", "cancelled"]}))
    assert got == [sql.replace("where amount <> 0", "where amount <> 0 and o.status <> 'cancelled'")]


def test_flags():
    sql = "select id, is_test_account, _fivetran_active\nfrom {{ source('crm', 'accounts') }}\n"
    got = mutants(sql, ctx())
    assert sql + "where not is_test_account\n" in got and sql + "where _fivetran_active\n" in got


@pytest.mark.parametrize("sql", [
    # the filter would land inside an incremental block, or after a Jinja statement
    "select * from {{ ref('orders') }}\n{% if is_incremental() %}\nwhere updated_at > (select max(updated_at) from {{ this }})\n{% endif %}\n",
    # a WHERE of ORs: the new condition would bind to one side
    "select id, status from orders where a = 1 or b = 2\n",
    # a computed column is not filtered by its name
    "select id, lower(state) as status from orders\n",
])
def test_no_site(sql):
    assert mutants(sql, ctx({"status": ["returned", "placed"]})) == []


def test_no_site_without_a_code_people_filter_out():
    assert mutants(STAGING, ctx({"status": ["placed", "shipped", "completed"]})) == []


def test_one_code_per_column_the_plainest():
    # a status that can be returned or return_pending: a report leaves out the returned orders
    got = mutants(STAGING, ctx({"status": ["placed", "return_pending", "returned"]}))
    assert got == [STAGING + "where status != 'returned'\n"]
