"""The preconditions of the semantic patterns of issue 28 on tiny DuckDB files: each admits the
mutation where the data makes it a real bug and rejects it where it does not (real DuckDB, the
operators' own mutants where the operator is the point).

outer_rows_filtered (join_filter_moved_to_where), unit_named (unit_conversion_dropped),
spelling_upstream (labels_respelled: the raw source capitalises, staging lower()s), and the
two checks the new patterns reuse with what they had to learn: value_occurs on a dropped CASE
branch (rows an earlier branch takes do not count; a simple CASE) and related_column (a swap
differs in the column's identifier; INTEGER and BIGINT are one kind of value)."""
from __future__ import annotations

from pathlib import Path

import pytest

from adegen.catalog.patterns import load_catalog
from adegen.realism import ProbeDB
from adegen.realism.locate import locate
from adegen.realism.registry import CheckInput, Verdict, run_check
from adegen.rewrite import ModelContext, apply_site, find_sites
from realism_kit import shop, swap

CAT = load_catalog()
CTX = ModelContext(name="m")


def measure(check: str, db: Path, intact: str, mutant: str) -> Verdict:
    """`check` on the change from `intact` to `mutant`, probed read-only on `db`."""
    scope = locate(intact, mutant)
    assert scope is not None
    probe = ProbeDB(db, None)
    try:
        return run_check({"check": check}, CheckInput(scope, probe, {}, {}, {}, None))
    finally:
        probe.close()


def only_mutant(pid: str, sql: str, k: int = 0) -> str:
    return apply_site(sql, find_sites(sql, CAT.by_id[pid], CTX)[k])


# ---------------------------------------------------------------- outer_rows_filtered
JOINED = ("select c.customer_id, s.plan\nfrom customers as c\nleft join subscriptions as s\n"
          "    on c.customer_id = s.customer_id\n    and s.status = 'active'\n")
CUSTOMERS = "create table customers as select * from (values (1), (2), (3)) v(customer_id)"


def subscriptions(rows: str) -> str:
    return f"create table subscriptions as select * from (values {rows}) v(customer_id, plan, status)"


def test_outer_rows_filtered_holds_where_customers_have_no_active_subscription(tmp_path):
    # 1 has an active plan; 2 only a cancelled one; 3 none at all: 2 and 3 vanish with the filter in WHERE
    db = shop(tmp_path, CUSTOMERS, subscriptions("(1, 'pro', 'active'), (2, 'team', 'cancelled')"))
    mutant = only_mutant("join_filter_moved_to_where", JOINED)
    assert "where s.status = 'active'" in mutant
    v = measure("outer_rows_filtered", db, JOINED, mutant)
    assert v.holds is True, v
    assert v.fact.startswith("2 of 3 rows of the join have no s row with s.status = 'active': the left join keeps them")
    assert v.numbers == {"rows": 3, "lost": 2}


def test_outer_rows_filtered_fails_where_every_customer_has_an_active_subscription(tmp_path):
    db = shop(tmp_path, CUSTOMERS, subscriptions("(1, 'pro', 'active'), (2, 'team', 'active'), (3, 'pro', 'active'), "
                                                     "(3, 'old', 'cancelled')"))
    v = measure("outer_rows_filtered", db, JOINED, only_mutant("join_filter_moved_to_where", JOINED))
    assert v.holds is False and v.fact.startswith("0 of 3 rows of the join"), v


def test_outer_rows_filtered_fails_when_every_row_would_go(tmp_path):
    # nothing is active: the table empties, a different (and obvious) failure than rows going missing
    db = shop(tmp_path, CUSTOMERS, subscriptions("(1, 'pro', 'cancelled')"))
    v = measure("outer_rows_filtered", db, JOINED, only_mutant("join_filter_moved_to_where", JOINED))
    assert v.holds is False and v.numbers == {"rows": 3, "lost": 3}, v


def test_outer_rows_filtered_soft_delete_filter_keeps_unmatched_rows(tmp_path):
    # `s.deleted_at is null` in WHERE keeps customers without a row (NULL passes it) and drops those
    # with only deleted rows: on the intact rows both look alike (no s row), only the join tells them apart
    sql = ("select c.customer_id\nfrom customers as c\nleft join subs as s\n    on c.customer_id = s.customer_id\n"
           "    and s.deleted_at is null\n")
    db = shop(tmp_path, CUSTOMERS, "create table subs as select * from (values (1, null), (2, date '2024-01-01')) "
                                       "v(customer_id, deleted_at)")
    v = measure("outer_rows_filtered", db, sql, only_mutant("join_filter_moved_to_where", sql))
    assert v.holds is True and v.numbers == {"rows": 3, "lost": 1}, v


# ---------------------------------------------------------------- unit_named (static)
def unit_verdict(sql: str, site) -> Verdict:
    inp = CheckInput(None, None, {}, {"unique_id": "model.p.m"}, {}, site, {"raw_sql": {"model.p.m": sql}.get})
    return run_check({"check": "unit_named"}, inp)


def test_unit_named_holds_where_a_name_says_the_unit():
    sql = "select\n    amount_cents / 100.0 as amount,\n    {{ cents_to_dollars('fee') }} as fee\nfrom payments\n"
    first, second = find_sites(sql, CAT.by_id["unit_conversion_dropped"], CTX)
    v = unit_verdict(sql, first)
    assert v.holds is True and v.fact.startswith("amount_cents says cents"), v
    assert unit_verdict(sql, second).fact.startswith("cents_to_dollars says cents")


def test_unit_named_fails_where_no_name_says_a_unit():
    # the operator never proposes this one; a site made by hand (or another operator's) is refused
    sql = "select ratio / 100 as share from t\n"
    site = find_sites("select ratio_pct / 100 as share from t\n", CAT.by_id["unit_conversion_dropped"], CTX)[0]
    site = type(site)(site.pattern_id, 0, site.start - 4, site.end - 4, 1, sql[site.start - 4:site.end - 4], "")
    assert site.before == " / 100"
    v = unit_verdict(sql, site)
    assert v.holds is False and v.fact == "no name of the edited expression, nor a comment on it, says a unit", v


def test_unit_named_holds_where_the_comment_on_the_item_says_the_unit():
    sql = "select\n    -- `amount` is stored in cents, so we convert it to dollars\n    amount / 100 as amount\nfrom t\n"
    (site,) = find_sites(sql, CAT.by_id["unit_conversion_dropped"], CTX)
    v = unit_verdict(sql, site)
    assert v.holds is True and v.fact.startswith("the comment on it says cents"), v


def test_unit_named_unmeasured_when_the_text_moved():
    sql = "select amount_cents / 100.0 as amount from t\n"
    (site,) = find_sites(sql, CAT.by_id["unit_conversion_dropped"], CTX)
    assert unit_verdict("-- edited since\n" + sql, site).holds is None


# ---------------------------------------------------------------- value_occurs on a dropped CASE branch
MAPPING = ("select case when env = 'prod' then 'production' when env in ('sbx', 'sandbox') then 'sandbox' "
           "when env like 's%' then 'staging' else 'other' end as environment from workspaces")


def test_value_occurs_holds_for_a_branch_whose_rows_fall_through(tmp_path):
    db = shop(tmp_path, "create table workspaces as select * from (values ('prod'), ('sbx'), ('dev')) v(env)")
    mutant = only_mutant("case_branch_dropped", MAPPING, 1)
    assert "'sandbox'" not in mutant
    v = measure("value_occurs", db, MAPPING, mutant)
    assert v.holds is True and v.fact.startswith("1 of 3 rows have env IN ('sbx', 'sandbox') and no earlier branch"), v


def test_value_occurs_does_not_count_rows_an_earlier_branch_takes(tmp_path):
    # every 's%' row is a sandbox, which the branch before takes: dropping the third changes nothing
    db = shop(tmp_path, "create table workspaces as select * from (values ('prod'), ('sbx'), ('sandbox')) v(env)")
    v = measure("value_occurs", db, MAPPING, only_mutant("case_branch_dropped", MAPPING, 2))
    assert v.holds is False and v.fact.startswith("0 of 3 rows have env LIKE 's%' and no earlier branch"), v


def test_value_occurs_counts_a_simple_case_and_only_rows_the_where_keeps(tmp_path):
    sql = ("select case env when 'sbx' then 'sandbox' when 'prd' then 'production' else 'other' end as e "
           "from workspaces where active")
    db = shop(tmp_path, "create table workspaces as select * from (values ('sbx', false), ('prd', true)) v(env, active)")
    v = measure("value_occurs", db, sql, only_mutant("case_branch_dropped", sql, 0))
    assert v.holds is False and v.fact.startswith("0 of 1 rows have env = 'sbx'"), v
    v = measure("value_occurs", db, sql, only_mutant("case_branch_dropped", sql, 1))
    assert v.holds is True and v.fact.startswith("1 of 1 rows have env = 'prd'"), v


# ---------------------------------------------------------------- related_column on the operator's swaps
SWAP = "select\n    o.order_id,\n    o.created_at as ordered_at,\n    o.updated_at as changed_at\nfrom orders as o\n"


def orders(updated: str, updated_type: str = "timestamp") -> str:
    return (f"create table orders as select 1 as order_id, timestamp '2024-01-01' as created_at, "
            f"cast({updated} as {updated_type}) as updated_at")


def test_related_column_holds_on_a_swap_of_differing_values(tmp_path):
    db = shop(tmp_path, orders("timestamp '2024-02-01'"))
    v = measure("related_column", db, SWAP, only_mutant("similar_column_swapped", SWAP))
    assert v.holds is True and v.fact == "created_at and updated_at differ on 1 of 1 rows", v


def test_related_column_fails_where_the_values_are_the_same(tmp_path):
    db = shop(tmp_path, orders("timestamp '2024-01-01'"))
    v = measure("related_column", db, SWAP, only_mutant("similar_column_swapped", SWAP))
    assert v.holds is False and v.fact == "created_at and updated_at differ on 0 of 1 rows", v


@pytest.mark.parametrize("other_type, holds", [("date", False), ("varchar", False), ("timestamptz", True)])
def test_related_column_compares_kinds_of_value(tmp_path, other_type, holds):
    db = shop(tmp_path, orders("timestamp '2024-02-01'", other_type))
    v = measure("related_column", db, SWAP, only_mutant("similar_column_swapped", SWAP))
    assert v.holds is holds, v


def test_related_column_integer_counts_of_two_widths(tmp_path):
    sql = "select o.order_count + 0 as n, o.item_count as items from orders as o\n"
    db = shop(tmp_path, "create table orders as select 7::integer as order_count, 9::bigint as item_count")
    v = measure("related_column", db, sql, only_mutant("similar_column_swapped", sql))
    assert v.holds is True and v.fact == "order_count and item_count differ on 1 of 1 rows", v


def test_related_column_fails_for_ids_of_two_entities(tmp_path):
    # reviewers rated id swaps (customer_id for account_id) a made-up slip
    sql = "select o.customer_id + 0 as who, o.account_id as acct from orders as o\n"
    db = shop(tmp_path, "create table orders as select 7::integer as customer_id, 9::bigint as account_id")
    v = measure("related_column", db, sql, only_mutant("similar_column_swapped", sql))
    assert v.holds is False and "ids of different things" in v.fact, v


# ---------------------------------------------------------------- spelling_upstream (labels_respelled)
# f1004's shape: the raw results write 'Disqualified', the staging view lower()s them, and the mart
# counts finishes per driver against the lower-case labels
FINISHES = ("select driver_id,\n"
            "    sum(case when position_desc = 'disqualified' then 1 else 0 end) as disqualified,\n"
            "    sum(case when position_desc = 'excluded' then 1 else 0 end) as excluded\n"
            "from \"shop\".\"main\".\"stg_results\"\ngroup by 1\n")
STAGING = "create view stg_results as select driver_id, lower(status) as position_desc from raw_results"
DAG = {"models": [{"unique_id": "model.f1.stg_results", "depends_on": ["source.f1.f1.results"]}],
       "sources": [{"unique_id": "source.f1.f1.results", "source": "f1", "table": "results",
                    "identifier": "raw_results"}]}
MART = {"unique_id": "model.f1.finishes_by_driver", "depends_on": ["model.f1.stg_results"]}


def results(*statuses: str) -> str:
    rows = ", ".join(f"({k % 2}, '{s}')" for k, s in enumerate(statuses))
    return f"create table raw_results as select * from (values {rows}) v(driver_id, status)"


def upstream_verdict(db: Path, check: str = "spelling_upstream") -> Verdict:
    """`check` on the operator's Title Case mutant of FINISHES, with the DAG above."""
    (site,) = [s for s in find_sites(FINISHES, CAT.by_id["labels_respelled"], CTX) if "'Disqualified'" in s.after]
    scope = locate(FINISHES, apply_site(FINISHES, site))
    probe = ProbeDB(db, None)
    try:
        return run_check({"check": check}, CheckInput(scope, probe, {}, MART, DAG, site))
    finally:
        probe.close()


def test_spelling_upstream_holds_where_the_source_writes_the_labels_capitalised(tmp_path):
    db = shop(tmp_path, results("Finished", "Disqualified", "Disqualified", "Excluded"), STAGING)
    v = upstream_verdict(db)
    assert v.holds is True, v
    assert v.fact == "'Disqualified' is how source raw_results writes status (3 rows)"
    assert upstream_verdict(db, "rows_change").holds is True  # and the counts really drop


def test_spelling_upstream_fails_where_the_source_is_lower_case_too(tmp_path):
    db = shop(tmp_path, results("finished", "disqualified", "excluded"), STAGING)
    v = upstream_verdict(db)
    assert v.holds is False and v.fact == "'Disqualified', 'Excluded' occur nowhere upstream (2 relations searched)", v


# ---------------------------------------------------------------- direction_unnamed (static)
def direction_verdict(sql: str) -> Verdict:
    (site,) = find_sites(sql, CAT.by_id["lag_to_lead"], CTX)
    inp = CheckInput(None, None, {}, {"unique_id": "model.p.m"}, {}, site, {"raw_sql": {"model.p.m": sql}.get})
    return run_check({"check": "direction_unnamed"}, inp)


def test_direction_unnamed_holds_where_the_item_has_a_neutral_name():
    sql = ("select\n    order_id,\n    lag(ordered_at) over (\n        partition by customer_id\n"
           "        order by ordered_at\n    ) as ordered_at_before\nfrom orders\n")
    v = direction_verdict(sql)
    assert v.holds is True and v.fact == "no name of the edited item says which row it reads", v


def test_direction_unnamed_fails_where_the_alias_says_previous():
    # the window spans lines: the alias on the item's last line still counts
    sql = ("select\n    order_id,\n    lag(ordered_at) over (\n        partition by customer_id\n"
           "        order by ordered_at, order_id\n    ) as previous_ordered_at\nfrom orders\n")
    v = direction_verdict(sql)
    assert v.holds is False and v.fact.startswith("previous_ordered_at says the row it reads (previous)"), v
    assert direction_verdict(sql.replace("previous_ordered_at", "prevOrderedAt")).holds is False


def test_direction_unnamed_unmeasured_when_the_text_moved():
    sql = "select lag(x) over (order by t) as x_before from t\n"
    (site,) = find_sites(sql, CAT.by_id["lag_to_lead"], CTX)
    inp = CheckInput(None, None, {}, {"unique_id": "model.p.m"}, {}, site,
                     {"raw_sql": {"model.p.m": "-- edited\n" + sql}.get})
    assert run_check({"check": "direction_unnamed"}, inp).holds is None


# ---------------------------------------------------------------- label_case on a pivot summed with ELSE 0
PIVOT = ("select order_id,\n    sum(case when method = 'card' then amount else 0 end) as card_amount\n"
         "from payments\ngroup by order_id\n")
PIVOT_MUTANT = swap(PIVOT, " else 0 end", " end")


def payments(*rows: str) -> str:
    return f"create table payments as select * from (values {', '.join(rows)}) v(order_id, method, amount)"


def test_label_case_holds_for_a_summed_pivot_where_a_group_matches_no_when(tmp_path):
    # order 2 paid by coupon only: its card_amount turns from 0 to NULL without the ELSE
    db = shop(tmp_path, payments("(1, 'card', 10)", "(1, 'coupon', 5)", "(2, 'coupon', 7)"))
    v = measure("label_case", db, PIVOT, PIVOT_MUTANT)
    assert v.holds is True and v.fact == "1 of 2 groups have no row that matches: the sum turns from 0 to NULL", v


def test_label_case_fails_for_a_summed_pivot_where_every_group_matches(tmp_path):
    db = shop(tmp_path, payments("(1, 'card', 10)", "(1, 'coupon', 5)", "(2, 'card', 7)"))
    v = measure("label_case", db, PIVOT, PIVOT_MUTANT)
    assert v.holds is False and v.fact.startswith("0 of 2 groups"), v


def test_label_case_refuses_other_cases_inside_an_aggregate(tmp_path):
    # COUNT of a CASE ... ELSE 0 counts every row: dropping the ELSE is the fix, not a slip; a
    # non-zero fallback or a CASE nested deeper in the SUM is not the pivot either
    db = shop(tmp_path, payments("(1, 'card', 10)", "(2, 'coupon', 7)"))
    for intact in (PIVOT.replace("sum(case", "count(case"), PIVOT.replace("else 0 end", "else -1 end"),
                   PIVOT.replace("sum(case", "sum(1 + case")):
        mutant = intact.replace(" else 0 end", " end").replace(" else -1 end", " end")
        v = measure("label_case", db, intact, mutant)
        assert v.holds is False and "inside an aggregate" in v.fact, (intact, v)
