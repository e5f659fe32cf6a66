"""ade-bench's equality oracle on two DuckDB states (what a prompt is written from is measured by
validate.evidence, for the verdict through validate.inspector).

The oracle is `ade_bench_equality_test`: lower-cased column sets must be equal, then
`A EXCEPT B` and `B EXCEPT A` over the columns cast to varchar must both be empty. It is
set-based, so duplicate rows and row order are invisible to it; row counts are compared too so a
duplicates-only change can be reported as such.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..sqlquote import ident as q


@dataclass
class TableDiff:
    table: str
    rows_base: int = 0
    rows_mut: int = 0
    base_minus_mut: int = 0          # intact rows the mutant lacks (distinct, varchar-cast)
    mut_minus_base: int = 0          # mutant rows the intact build lacks
    columns_missing: list[str] = field(default_factory=list)
    columns_extra: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def column_set_differs(self) -> bool:
        return bool(self.columns_missing or self.columns_extra)

    @property
    def rows_differing(self) -> int:
        return self.base_minus_mut + self.mut_minus_base

    @property
    def visible(self) -> bool:
        """Would ade-bench's equality test (seeded from the intact table) fail on the mutant?"""
        return self.column_set_differs or self.rows_differing > 0 or self.error is not None

    @property
    def duplicates_only(self) -> bool:
        return not self.visible and self.rows_base != self.rows_mut


def columns(con, rel: str) -> list[str]:
    return [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {rel}").fetchall()]


def compare_relations(con, table: str, base_rel: str, mut_rel: str) -> TableDiff:
    d = TableDiff(table=table)
    try:
        bcols, mcols = columns(con, base_rel), columns(con, mut_rel)
    except Exception as exc:  # relation missing in the mutant
        d.error = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        return d
    d.rows_base = con.execute(f"select count(*) from {base_rel}").fetchone()[0]
    d.rows_mut = con.execute(f"select count(*) from {mut_rel}").fetchone()[0]
    bl, ml = {c.lower() for c in bcols}, {c.lower() for c in mcols}
    d.columns_missing = [c for c in bcols if c.lower() not in ml]
    d.columns_extra = [c for c in mcols if c.lower() not in bl]
    if d.column_set_differs:
        return d
    by_lower = {c.lower(): c for c in bcols}
    sel_m = ", ".join(f"cast({q(c)} as varchar)" for c in mcols)
    sel_b = ", ".join(f"cast({q(by_lower[c.lower()])} as varchar)" for c in mcols)
    d.base_minus_mut = con.execute(
        f"select count(*) from (select {sel_b} from {base_rel} except select {sel_m} from {mut_rel})"
    ).fetchone()[0]
    d.mut_minus_base = con.execute(
        f"select count(*) from (select {sel_m} from {mut_rel} except select {sel_b} from {base_rel})"
    ).fetchone()[0]
    return d
