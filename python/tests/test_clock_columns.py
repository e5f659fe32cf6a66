"""Column-level clock lineage (adegen.dbt.clock_columns, issue 53): which output columns of a model
are computed from the clock, and when its row set depends on it instead. Pure: small SQL strings
and a small manifest, no database."""
from __future__ import annotations

import pytest

from adegen.dbt.clock_columns import ClockColumns, model_clock_columns, run_dates, sql_clock

SCHEMA = {"db": {"main": {"orders": {"order_id": "int", "created_at": "date", "status": "text", "amount": "int"},
                          "tenure": {"customer_id": "int", "region": "text", "tenure_days": "int"}}}}
# main.tenure: a parent model whose tenure_days is computed from the clock
PARENTS = {"main.tenure": ClockColumns({"tenure_days": "current_date"}, None, True)}
STAMPS = frozenset({"2026-12-07"})

COLUMNS = [  # (sql, the clock columns) - the row set does not depend on the clock
    ("select order_id, current_date - created_at as age_days from db.main.orders where status != 'x'",
     {"age_days": "current_date"}),
    ("with a as (select order_id, date_diff('day', created_at, now()) as age from db.main.orders), "
     "b as (select * from a) select order_id, age + 1 as age2, age from b", {"age2": "now()", "age": "now()"}),
    ("select sysdate as s, getdate() as g, order_id from db.main.orders", {"s": "sysdate", "g": "getdate()"}),
    # `{{ run_started_at }}` compiled: a timestamp literal of the run's day
    ("select order_id, cast('2026-12-07 12:00:01.123+00:00' as timestamp) as loaded_at, "
     "cast('2020-01-01 00:00:00' as timestamp) as epoch from db.main.orders", {"loaded_at": "run_started_at"}),
    # inherited through a ref: the parent's clock column, by name, through an aggregate and a star
    ("select region, count(*) as n, max(tenure_days) as longest from db.main.tenure group by region",
     {"longest": "main.tenure.tenure_days"}),
    ("select * from db.main.tenure", {"tenure_days": "main.tenure.tenure_days"}),
    ("select region from db.main.tenure", {}),  # reads the parent, not its clock column
    ("select customer_id, row_number() over (order by tenure_days) as rn from db.main.tenure",
     {"rn": "main.tenure.tenure_days"}),
    ("select order_id, current_date as d from db.main.orders union all select order_id, created_at from db.main.orders",
     {"d": "current_date"}),
    ("select order_id, (select max(created_at) from db.main.orders) < current_date as stale from db.main.orders",
     {"stale": "current_date"}),
    ("select order_id, sysdate as s from db.main.orders order by s", {"s": "sysdate"}),  # order alone: no rows
    ("select order_id, today as t from db.main.orders", {}),  # `today` is a column name unless called
    # DuckDB's lateral aliases and star modifiers
    ("select current_date - created_at as age, age * 2 as age2 from db.main.orders",
     {"age": "current_date", "age2": "current_date"}),
    ("select * replace (current_date as created_at) from db.main.orders", {"created_at": "current_date"}),
]

ROWS = [  # (sql, the clause its row set depends on the clock through)
    ("select order_id from db.main.orders where created_at <= current_date", "current_date in a filter"),
    ("with s as (select * from generate_series(date '2024-01-01', current_date, interval 1 day) as g(d)) "
     "select d, count(o.order_id) as n from s left join db.main.orders o on o.created_at = s.d group by d",
     "current_date in its from clause"),
    ("select tenure_days, count(*) as n from db.main.tenure group by tenure_days", "in a grouping"),
    ("select c.region from db.main.tenure c join db.main.orders o on c.tenure_days > o.amount", "in a join"),
    ("select order_id from db.main.orders where order_id in "
     "(select order_id from db.main.orders where created_at < current_date)", "current_date in a filter"),
    ("select order_id, sysdate as s from db.main.orders order by s limit 3", "in an order with a limit"),
    ("select distinct region, tenure_days > 100 as old from db.main.tenure", "select distinct"),
    ("select order_id, current_date as d from db.main.orders union select order_id, created_at from db.main.orders",
     "a set operation"),
    ("select * from db.main.tenure t join unknown u using (customer_id)", "select * over main.tenure"),
    ("select region from db.main.spine", "whose rows depend on the clock"),  # a whole-table parent
    ("select from where", "cannot be followed column by column"),
    ("select current_date - created_at as age from db.main.orders where age > 3", "current_date in a filter"),
    ("select order_id, row_number() over (partition by status order by now() - created_at) as rn "
     "from db.main.orders qualify rn = 1", "now() in a filter"),
]


@pytest.mark.parametrize("sql,columns", COLUMNS)
def test_clock_columns_of_a_select(sql, columns):
    cc = sql_clock(sql, PARENTS, schema=SCHEMA, stamps=STAMPS)
    assert not cc.whole, cc.rows
    assert cc.columns == columns


@pytest.mark.parametrize("sql,why", ROWS)
def test_a_row_set_that_depends_on_the_clock_is_the_whole_table(sql, why):
    parents = {**PARENTS, "main.spine": ClockColumns(rows="its rows depend on the clock (current_date in a filter)")}
    cc = sql_clock(sql, parents, schema=SCHEMA, stamps=STAMPS)
    assert cc.whole and why in cc.rows, cc


def test_run_dates_are_the_manifests_day_and_its_neighbours():
    assert run_dates("2026-12-07T12:00:00Z") == {"2026-12-06", "2026-12-07", "2026-12-08"}
    assert run_dates(None) == frozenset()


def _node(name: str, compiled: str, raw: str, parents=()) -> dict:
    return {"resource_type": "model", "name": name, "schema": "main", "alias": name, "database": "db",
            "raw_code": raw, "compiled_code": compiled, "package_name": "p",
            "depends_on": {"macros": [], "nodes": [f"model.p.{p}" for p in parents]}}


def test_models_inherit_clock_columns_through_refs():
    manifest = {"metadata": {"project_name": "p", "generated_at": "2026-12-07T10:00:00Z"}, "macros": {}, "nodes": {
        "model.p.tenure": _node("tenure", "select id, current_date - signup as tenure_days from db.main.raw",
                                "select id, current_date - signup as tenure_days from {{ ref('raw') }}"),
        "model.p.by_id": _node("by_id", "select id, tenure_days * 2 as double_days from db.main.tenure",
                               "select ... from {{ ref('tenure') }}", ["tenure"]),
        "model.p.ids": _node("ids", "select id from db.main.tenure", "select id from {{ ref('tenure') }}", ["tenure"]),
        "model.p.spine": _node("spine", "select * from range(0, 10) as r(i) where i < day(current_date)",
                               "select ... current_date"),
        "model.p.after": _node("after", "select i from db.main.spine", "select i from {{ ref('spine') }}", ["spine"]),
        # the clock is read in a Jinja block that leaves no trace in the SQL: the whole table
        "model.p.hidden": _node("hidden", "select 1 as x", "{% set d = run_started_at %}select 1 as x"),
    }}
    got = model_clock_columns(manifest)
    assert got["model.p.tenure"].columns == {"tenure_days": "current_date"}
    assert got["model.p.by_id"].columns == {"double_days": "main.tenure.tenure_days"}
    assert got["model.p.ids"] == ClockColumns({}, None, False)  # reads tenure, none of its clock columns
    assert got["model.p.spine"].whole and got["model.p.after"].rows == "reads main.spine, whose rows depend on the clock"
    assert got["model.p.hidden"].rows == "reads run_started_at, which its compiled SQL does not show"
