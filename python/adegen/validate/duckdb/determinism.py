"""The determinism guard: which intact tables change when the same project is built a second time
under another physical plan (input rows in another order, another DuckDB thread count), which
changes how ties are broken (row_number over equal keys, LIMIT without a total order, ...).

Such tables are never evidence of a mutant (screening ignores them) and never an unexcluded
solution seed: their unstable columns are excluded, or the table is refused when its rows differ.
"""
from __future__ import annotations

from pathlib import Path

import duckdb

from adegen.adebench.procedure.seeds import differing_columns
from adegen.sql.quote import ident as q
from adegen.validate.rules.oracle import columns, compare_relations


def unstable_tables(reference: Path, other: Path, tables: list[str]) -> dict[str, list[str]]:
    """{"schema.alias": unstable columns} for the `tables` ("schema.alias", where dbt built each
    model) of two snapshot databases that differ; [] when the rows themselves differ (count or
    column set), so no column list helps."""
    out: dict[str, list[str]] = {}
    con = duckdb.connect(str(reference), read_only=True)
    try:
        con.execute(f"ATTACH '{other}' AS adegen_other (READ_ONLY)")
        for t in tables:
            schema, alias = t.split(".", 1)
            a = f"{q(schema)}.{q(alias)}"
            b = f"adegen_other.{a}"
            try:
                d = compare_relations(con, alias, a, b)
            except duckdb.Error:
                continue
            if d.error or d.column_set_differs or d.rows_base != d.rows_mut:
                if d.error is None or "does not exist" not in d.error:
                    out[t] = []
                continue
            if d.visible:
                out[t] = differing_columns(con, a, b, columns(con, a))
    finally:
        con.close()
    return out
