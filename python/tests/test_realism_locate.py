"""What the realism checks stand on: `locate` (the changed scope and node of a compiled mutant),
`count_rows` and `scope_change` (probe queries over one SELECT scope) and `ProbeDB` (read-only,
through the compile catalog's mirror views, bounded by a timeout), on tiny DuckDB files."""
from __future__ import annotations

import time

import sqlglot
from realism_kit import T, duck, shop, swap
from sqlglot import exp

from adegen.realism import ProbeDB
from adegen.realism.locate import locate
from adegen.realism.measure_sql import count_rows, scope_change

CTES = (f"with orders as (select * from {T}orders where amount > 0), "
        "totals as (select customer_id, sum(amount) as total from orders group by customer_id) "
        "select c.customer_id, t.total from totals t left join orders c on t.customer_id = c.customer_id "
        "where c.status in ('completed', 'shipped') and t.total > 10")


# --- locate ---------------------------------------------------------------------------------------

def test_locate_a_token_swap_finds_the_join():
    s = locate(CTES, swap(CTES, "left join", "inner join"))
    assert isinstance(s.before, exp.Join) and isinstance(s.after, exp.Join)
    assert s.before.side == "LEFT" and not s.after.side
    assert s.select is s.scope and s.scope.find(exp.Join) is s.before  # the outer select, not a CTE


def test_locate_a_dropped_list_item_finds_the_in():
    s = locate(CTES, swap(CTES, ", 'shipped')", ")"))
    assert isinstance(s.before, exp.In) and len(s.before.expressions) == 2 and len(s.after.expressions) == 1


def test_locate_a_dropped_condition_and_a_dropped_where():
    s = locate(CTES, swap(CTES, " and t.total > 10", ""))
    assert isinstance(s.before, exp.And) and isinstance(s.after, exp.In)
    plain = f"select * from {T}orders where amount > 0"
    s = locate(plain, swap(plain, " where amount > 0", ""))
    assert isinstance(s.before, exp.Select) and s.before.args.get("where") is not None
    assert s.after.args.get("where") is None


def test_locate_a_change_inside_a_cte_finds_that_cte():
    s = locate(CTES, swap(CTES, "amount > 0", "amount >= 0"))
    assert isinstance(s.before, exp.GT) and isinstance(s.after, exp.GTE)
    assert s.scope.find(exp.Table).name == "orders" and s.scope.args.get("group") is None  # the orders CTE
    assert s.select is s.scope


def test_locate_a_string_case_change():
    """Found whichever way the installed sqlglot's == treats the case of strings (some releases
    ignore it; locate compares the text too)."""
    s = locate(CTES, swap(CTES, "'completed'", "'Completed'"))
    assert isinstance(s.before, exp.Literal) and (s.before.this, s.after.this) == ("completed", "Completed")


def test_locate_a_call_unwrapped_with_its_alias_finds_the_call():
    """`coalesce(amount, 0) as amount` -> `amount`: the output name stays, the change is the call's
    (a new alias, `as total`, is a change of its own: the alias)."""
    sql = f"select order_id, coalesce(amount, 0) as amount from {T}orders"
    s = locate(sql, swap(sql, "coalesce(amount, 0) as amount", "amount"))
    assert isinstance(s.before, exp.Coalesce) and isinstance(s.after, exp.Column)
    s = locate(sql, swap(sql, "coalesce(amount, 0) as amount", "amount as total"))
    assert isinstance(s.before, exp.Identifier) and (s.before.name, s.after.name) == ("amount", "total")


def test_locate_nothing_changed_or_unparseable():
    assert locate(CTES, CTES) is None
    assert locate(CTES, "select from where (") is None


# --- count_rows -----------------------------------------------------------------------------------

ORDERS = ("create table orders as select * from (values (1, 1, 'completed', 5), (2, 1, 'completed', 7), "
          "(3, 2, 'shipped', 3), (4, 3, 'cancelled', 0)) v(order_id, customer_id, status, amount)")


def select_of(sql: str) -> exp.Select:
    return sqlglot.parse_one(sql, read="duckdb")


def test_count_rows_with_a_window_condition(tmp_path):
    probe = ProbeDB(shop(tmp_path, ORDERS), None)
    sel = select_of(f"select order_id from {T}orders where amount > 0")
    first = "row_number() over (partition by customer_id order by order_id) = 1"
    assert count_rows(probe, sel, [first, "amount > 4"]) == [3, 2, 2]
    assert count_rows(probe, sel, [first], where=False) == [4, 3]  # the cancelled order is a first one too
    probe.close()


def test_count_rows_with_an_aggregate_condition_counts_groups(tmp_path):
    probe = ProbeDB(shop(tmp_path, ORDERS), None)
    for group in ("customer_id", "1", "all"):  # as dbt models write it
        sel = select_of(f"select customer_id, sum(amount) as total from {T}orders group by {group}")
        assert count_rows(probe, sel, ["count(*) > 1", "sum(amount) >= 3"]) == [3, 1, 2]
    probe.close()


# --- scope_change ---------------------------------------------------------------------------------

def test_scope_change_compares_bags(tmp_path):
    probe = ProbeDB(shop(tmp_path, ORDERS), None)
    distinct = f"select distinct customer_id from {T}orders"
    assert scope_change(probe, locate(distinct, swap(distinct, "distinct ", ""))) == (3, 1)  # customer 1's second order
    where = f"with o as (select * from {T}orders) select order_id from o where status = 'completed'"
    assert scope_change(probe, locate(where, swap(where, "'completed'", "'shipped'"))) == (2, 3)
    assert scope_change(probe, locate(where, swap(where, "'completed'", "'Completed'"))) == (2, 2)
    probe.close()


# --- ProbeDB --------------------------------------------------------------------------------------

def test_probe_runs_sql_compiled_against_another_catalog(tmp_path):
    db = duck(tmp_path / "acme.duckdb", ORDERS)
    probe = ProbeDB(db, "compile")
    assert probe.one('select count(*) from "compile"."main"."orders"') == (4,)
    assert probe.columns('select * from "compile"."main"."orders"') == {
        "order_id": "INTEGER", "customer_id": "INTEGER", "status": "VARCHAR", "amount": "INTEGER"}
    assert probe.one('select count(*) from "acme"."main"."orders" where amount > 4') == (2,)
    assert probe.one("create table main.x(a int)") is None and probe.errors  # read-only
    probe.close()


def test_probe_timeout_interrupts_and_reports_none(tmp_path):
    probe = ProbeDB(shop(tmp_path, ORDERS), None, seconds=0.2)
    t0 = time.monotonic()
    # 5e9 comparisons: seconds even on many cores, about half a minute on two (when nothing interrupts it)
    got = probe.one("select count(*) from range(100000) a, range(50000) b where a.range + b.range < 0")
    assert got is None and time.monotonic() - t0 < 5
    assert "interrupt" in probe.errors[-1].lower()
    assert probe.one("select count(*) from orders") == (4,)  # still usable afterwards
    probe.close()


def test_probe_on_a_missing_build_reports_none(tmp_path):
    probe = ProbeDB(tmp_path / "no_such_file.duckdb", None)
    assert probe.one("select 1") is None and "cannot open" in probe.errors[-1]
