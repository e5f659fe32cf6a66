"""Worker side: which intact tables read the clock, and in which columns (issue 53).

adegen.dbt.clock names the models that read the clock; adegen.dbt.clock_columns follows each one's
compiled SQL column by column, with the built database's columns (which expand `select *`). A
table whose clock dependence is only in some columns is graded without them (`Baseline.clock_columns`,
ade-bench's exclude_columns); one whose rows depend on the clock stays never graded (`Baseline.clock`).
The shifted-clock check (validate.clockcheck, in the validator's determinism step) then holds each
graded table equal 40 days ahead except those columns.
"""
from __future__ import annotations

from pathlib import Path

import duckdb

from adegen.dbt.clock import clock_reasons
from adegen.dbt.clock_columns import ClockSplit, model_clock_columns, split
from adegen.dbt.clock_spine import model_spine_dates


def built_columns(db_file: Path) -> dict[tuple[str, str, str], list[str]]:
    """{(catalog, schema, table) lower-cased: columns in order} of every table and view of `db_file`."""
    out: dict[tuple[str, str, str], list[str]] = {}
    con = duckdb.connect(str(db_file), read_only=True)
    try:
        rows = con.execute("select table_catalog, table_schema, table_name, column_name from "
                           "information_schema.columns where table_catalog = current_database() "
                           "order by table_schema, table_name, ordinal_position").fetchall()
    finally:
        con.close()
    for cat, schema, table, col in rows:
        out.setdefault((cat.lower(), schema.lower(), table.lower()), []).append(col)
    return out


def clock_lineage(manifest: dict, db_file: Path, models: dict) -> ClockSplit:
    """The clock-reading models of `manifest` split into whole tables and clock columns, read with
    the columns `db_file` (the intact build) holds; `models`: the validator's model facts."""
    reasons = clock_reasons(manifest)
    if not reasons:
        return ClockSplit({}, {})
    cols = built_columns(db_file)
    schema: dict = {}
    for (cat, sch, table), names in cols.items():
        schema.setdefault(cat, {}).setdefault(sch, {})[table] = {c: "text" for c in names}
    by_rel = {(sch, table): names for (_, sch, table), names in cols.items()}
    table_columns = {u: by_rel.get((m["schema"].lower(), m["alias"].lower()), []) for u, m in models.items()}
    spines = model_spine_dates(manifest, set(reasons), schema)
    return split(reasons, model_clock_columns(manifest, schema), table_columns, spines)
