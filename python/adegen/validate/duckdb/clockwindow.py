"""Row sets that grow with the clock, graded through a date (issue 53).

A date spine up to today, or a `where order_date <= current_date` filter, makes a table whose rows
grow every day: a solution seed exported today lacks next month's rows. The rows up to a past date
do not change, though. Where column lineage (adegen.dbt.clock_columns) says a table's rows depend on
the clock, and the shifted-clock check built it 40 days ahead, the first date or timestamp column W
for which both builds hold the same rows with W up to `through` (two days before the build day, so
a harness in another time zone agrees; the clock columns left out) makes the table gradable through
that date: screening compares those rows only, and the task's equality test is a windowed stand-in
(tasks.stand_in_tests.render_windowed). A trailing window (`date > current_date - 30`) loses its old
rows 40 days ahead and stays never graded.

Where lineage carries a column from a date spine (adegen.dbt.clock_spine: a month spine read through
other models, `date_month + interval 1 month`), the window ends where the data does, not at the
clock: the last date the seeds and sources hold (before today), plus one step of the spine and the
shifts ahead. A month spine up to `date_trunc('month', current_date)` gains next month's row within
40 days, which a window through two days ago would hold on one side only; the data's own months
never move.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb

from adegen.dbt.clock_spine import SpineDate, through as spine_through
from adegen.sql.quote import ident as q
from adegen.validate.duckdb.clockcheck import SHIFT_DAYS
from adegen.validate.duckdb.jobs import window_condition
from adegen.validate.rules.oracle import compare_relations, typed_columns, without

MARGIN_DAYS = 2
_DATE_TYPES = ("DATE", "TIMESTAMP")


def through_date(today: dt.date | None = None) -> str:
    """The last day a window keeps: MARGIN_DAYS before the build day."""
    return str((today or dt.date.today()) - dt.timedelta(days=MARGIN_DAYS))


def find_window(reference: Path, shifted: Path, rel: str, exclude: list[str], through: str | dict[str, str]
                ) -> tuple[str, str] | None:
    """(column, through) of `rel` ("schema.alias"): the first date or timestamp column through which
    the two snapshot databases hold the same rows (without `exclude`), the reference at least one;
    `through`: one date for every such column, or {column: date} for those columns only (in table
    order). None: none does."""
    schema, alias = rel.split(".", 1)
    a = f"{q(schema)}.{q(alias)}"
    ends = {c.lower(): d for c, d in through.items()} if isinstance(through, dict) else None
    con = duckdb.connect(str(reference), read_only=True)
    try:
        con.execute(f"ATTACH '{shifted}' AS adegen_shifted (READ_ONLY)")
        b = f"adegen_shifted.{a}"
        for col, typ in typed_columns(con, a).items():
            if not typ.upper().startswith(_DATE_TYPES) or col.lower() in {c.lower() for c in exclude}:
                continue
            end = through if ends is None else ends.get(col.lower())
            if end is None:
                continue
            cond = window_condition(col, end)
            if not con.execute(f"select count(*) from {a} where {cond}").fetchone()[0]:
                continue
            d = compare_relations(con, alias, without(con, a, exclude, cond), without(con, b, exclude, cond))
            if not d.visible and d.rows_base == d.rows_mut:
                return col, end
    except duckdb.Error:
        return None
    finally:
        con.close()
    return None


def data_last(db: Path, skip: set[tuple[str, str]], before: dt.date) -> dt.date | None:
    """The last date before `before` that the tables and views of `db` other than `skip` ((schema,
    name) lower-cased: the models) hold in a date or timestamp column: the data's own time range."""
    con = duckdb.connect(str(db), read_only=True)
    last: dt.date | None = None
    try:
        rows = con.execute("select table_schema, table_name, column_name, data_type from information_schema.columns "
                           "where table_catalog = current_database()").fetchall()
        for schema, table, col, typ in rows:
            if (schema.lower(), table.lower()) in skip or not str(typ).upper().startswith(_DATE_TYPES):
                continue
            got = con.execute(f"select max(cast({q(col)} as date)) from {q(schema)}.{q(table)} "
                              f"where cast({q(col)} as date) < ?", [before]).fetchone()[0]
            if got is not None and (last is None or got > last):
                last = got
    except duckdb.Error:
        return last
    finally:
        con.close()
    return last


def spine_ends(spines: dict[str, dict], last: dt.date | None, today: dt.date) -> dict[str, str]:
    """{column: through} of a table's spine-carried columns (`spines`: {column: SpineDate as a dict}):
    the data's last date plus what each column's lineage needs, never past `through_date(today)`."""
    cap = dt.date.fromisoformat(through_date(today))
    if last is None:
        return {}
    return {c: str(min(spine_through(last, SpineDate.from_dict(sd)), cap)) for c, sd in spines.items()}


def windows(base, shifted_snapshot: Path, today: dt.date | None = None) -> dict[str, dict]:
    """{uid: {"column", "through", "columns", "why"}} of the tables lineage says grow with the
    clock (`base.clock_windowable`, still in `base.clock`) that the shifted build holds equal through
    a date on some column: on their spine-carried columns (`base.clock_spines`) through the data's
    own last date and the lineage's margin, on any date column through two days ago otherwise. A
    spine table that gets no window keeps its place in `base.clock`, its reason saying so."""
    today = today or dt.date.today()
    out = {}
    skip = {(m["schema"].lower(), m["alias"].lower()) for m in base.models.values()}
    last = data_last(Path(base.baseline_db), skip, today) if base.clock_spines and base.baseline_db else None
    for uid, clocked in sorted(base.clock_windowable.items()):
        m = base.models.get(uid)
        if uid not in base.clock or m is None or m["materialized"] == "ephemeral":
            continue
        spines = base.clock_spines.get(uid) or {}
        # no date in the data (dates kept as text): the two-days-ago window, as for tables off a spine
        ends: str | dict[str, str] = spine_ends(spines, last, today) if spines and last else through_date(today)
        got = find_window(Path(base.snapshot_db), shifted_snapshot, f"{m['schema']}.{m['alias']}", clocked, ends) \
            if ends else None
        if got:
            col, end = got
            how = (f"{SpineDate.from_dict(spines[col]).describe()}, the data's last date {last}"
                   if col in spines else "two days before the build")
            out[uid] = {"column": col, "through": end, "columns": list(clocked),
                        "why": f"{base.clock[uid]}; graded on its rows with {col} through {end} ({how})"
                               + (f", without {', '.join(clocked)}" if clocked else "")}
        elif spines and last:  # stays excluded: say why the data's own time range did not do
            tried = ", ".join(f"{c} through {d}" for c, d in sorted(spine_ends(spines, last, today).items()))
            base.clock[uid] += (f"; no window: it has no row with {tried}, or those rows change when the clock "
                                f"moves {SHIFT_DAYS} days")
    return out
