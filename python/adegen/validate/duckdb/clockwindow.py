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
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb

from adegen.sql.quote import ident as q
from adegen.validate.duckdb.jobs import window_condition
from adegen.validate.rules.oracle import compare_relations, typed_columns, without

MARGIN_DAYS = 2
_DATE_TYPES = ("DATE", "TIMESTAMP")


def through_date(today: dt.date | None = None) -> str:
    """The last day a window keeps: MARGIN_DAYS before the build day."""
    return str((today or dt.date.today()) - dt.timedelta(days=MARGIN_DAYS))


def find_window(reference: Path, shifted: Path, rel: str, exclude: list[str], through: str) -> str | None:
    """The first date or timestamp column of `rel` ("schema.alias") through which the two snapshot
    databases hold the same rows (without `exclude`), the reference at least one; None: none does."""
    schema, alias = rel.split(".", 1)
    a = f"{q(schema)}.{q(alias)}"
    con = duckdb.connect(str(reference), read_only=True)
    try:
        con.execute(f"ATTACH '{shifted}' AS adegen_shifted (READ_ONLY)")
        b = f"adegen_shifted.{a}"
        for col, typ in typed_columns(con, a).items():
            if not typ.upper().startswith(_DATE_TYPES) or col.lower() in {c.lower() for c in exclude}:
                continue
            cond = window_condition(col, through)
            if not con.execute(f"select count(*) from {a} where {cond}").fetchone()[0]:
                continue
            d = compare_relations(con, alias, without(con, a, exclude, cond), without(con, b, exclude, cond))
            if not d.visible and d.rows_base == d.rows_mut:
                return col
    except duckdb.Error:
        return None
    finally:
        con.close()
    return None


def windows(base, shifted_snapshot: Path, through: str) -> dict[str, dict]:
    """{uid: {"column", "through", "columns", "why"}} of the tables lineage says grow with the
    clock (`base.clock_windowable`, still in `base.clock`) that the shifted build holds equal
    through `through` on some column."""
    out = {}
    for uid, clocked in sorted(base.clock_windowable.items()):
        m = base.models.get(uid)
        if uid not in base.clock or m is None or m["materialized"] == "ephemeral":
            continue
        col = find_window(Path(base.snapshot_db), shifted_snapshot, f"{m['schema']}.{m['alias']}", clocked, through)
        if col:
            out[uid] = {"column": col, "through": through, "columns": list(clocked),
                        "why": f"{base.clock[uid]}; graded on its rows with {col} through {through}"
                               + (f", without {', '.join(clocked)}" if clocked else "")}
    return out
