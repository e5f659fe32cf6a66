"""The window finder for tables downstream of a date spine (adegen.dbt.clock_spine, issue 53): pure,
compiled SQL and lineage in, spine columns and the window's last date out. The build on
fixtures/spinefix (test_spine_build.py) checks the window by execution."""
from __future__ import annotations

import datetime as dt

from adegen.dbt.clock_spine import SpineDate, spine_dates, through

# what dbt_utils.date_spine(datepart="month", ...) compiles to on DuckDB (generate_series shortened)
DBT_UTILS_MONTH = """
with rawdata as (
    with p as (select 0 as generated_number union all select 1), unioned as (
        select p0.generated_number * power(2, 0) + p1.generated_number * power(2, 1) + 1 as generated_number
        from p as p0 cross join p as p1)
    select * from unioned where generated_number <= 47 order by generated_number
),
all_periods as (
    select ((cast('2023-01-01' as date) + cast(row_number() over (order by generated_number) - 1 as bigint)
             * interval 1 month)) as date_month
    from rawdata
),
filtered as (select * from all_periods where date_month <= date_trunc('month', current_date))
select * from filtered
"""
MONTH = SpineDate("month")


def test_a_dbt_utils_month_spine_is_found_in_its_compiled_sql():
    assert spine_dates(DBT_UTILS_MONTH) == {"date_month": MONTH}


def test_generate_series_and_range_spines_of_any_datepart():
    week = spine_dates("select cast(s.d as date) as week_start, 1 as one "
                       "from generate_series(date '2024-01-01', current_date, interval 1 week) as s(d)")
    assert week == {"week_start": SpineDate("week")}
    quarter = spine_dates("select d as q from range(date '2020-01-01', current_date, interval '3 month') t(d)")
    assert quarter == {"q": SpineDate("quarter")}
    two = spine_dates("select d from generate_series(date '2020-01-01', current_date, interval 2 week) t(d)")
    assert two == {"d": SpineDate("week", (("week", 1),))}
    assert spine_dates("select order_date, count(*) as n from orders group by 1") == {}


def test_lineage_through_models_with_shifts_truncs_lags_and_set_operations():
    parents = {"main.util_months": {"date_month": MONTH}}
    by_month = spine_dates(
        "with m as (select date_month from main.util_months), c as (select customer_id, start_date from main.subs) "
        "select m.date_month, c.customer_id, c.start_date, "
        "max(m.date_month) over (partition by c.customer_id) as last_month "
        "from c join m on m.date_month >= c.start_date", parents)
    assert by_month == {"date_month": MONTH, "last_month": MONTH}  # start_date is the data's, not the spine's
    churn = spine_dates("select date_month, customer_id from main.by_month union all "
                        "select cast(date_month + interval 1 month as date), customer_id from main.by_month",
                        {"main.by_month": by_month})
    assert churn == {"date_month": SpineDate("month", (("month", 1),))}
    later = spine_dates("select date_trunc('quarter', date_month) as q, lag(date_month) over (order by date_month) "
                        "as prev, lead(date_month, 2) over (order by date_month) as nxt, "
                        "date_month - interval 1 month as before from main.churn", {"main.churn": churn})
    assert later == {"q": SpineDate("quarter", (("month", 1),)), "prev": churn["date_month"],
                     "nxt": SpineDate("month", (("month", 3),)), "before": churn["date_month"]}


def test_the_window_ends_one_step_past_the_data_plus_the_shifts_ahead():
    last = dt.date(2024, 5, 31)
    assert through(last, MONTH) == dt.date(2024, 6, 30)
    assert through(last, SpineDate("month", (("month", 1),))) == dt.date(2024, 7, 31)
    assert through(last, SpineDate("week")) == dt.date(2024, 6, 7)
    assert through(dt.date(2024, 2, 29), SpineDate("year", (("day", 3),))) == dt.date(2025, 3, 3)
