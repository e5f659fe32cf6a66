"""ade-bench's equality oracle on two DuckDB states (what a prompt is written from is measured by
validate.evidence, for the verdict through validate.inspector).

The oracle is `ade_bench_equality_test` as ade-bench d739fc3 runs it (harness/resources): the
lower-cased column sets must be equal, then `A EXCEPT B` and `B EXCEPT A` over the columns as they
are typed must both be empty. DuckDB's set operations bring each column pair to a common type
first, so a value whose type alone changed (a count's 0 against a sum's 0.0, 1 against 1.00, a
date against the same timestamp at midnight) is equal there: ade-bench's test passes on it, and it
is no evidence of a bug (issue 30). It is set-based, so duplicate rows and row order are invisible
to it; row counts are compared too so a duplicates-only change can be reported as such.

Another revision of ade-bench's macro casts every column to varchar first; there a type-only
change does fail. Values that differ as typed also differ as text (no case found where they do not),
so a mutant the typed oracle sees is seen by both revisions, and one it does not see is dropped
whichever revision grades the task.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from adegen.sql.quote import ident as q


@dataclass
class TableDiff:
    table: str
    rows_base: int = 0
    rows_mut: int = 0
    base_minus_mut: int = 0          # intact rows the mutant lacks (distinct, compared as typed)
    mut_minus_base: int = 0          # mutant rows the intact build lacks
    columns_missing: list[str] = field(default_factory=list)
    columns_extra: list[str] = field(default_factory=list)
    error: str | None = None         # the mutant's relation cannot be read
    compare_error: str | None = None  # the typed EXCEPT fails (no common type): ade-bench's test errors
    retyped: dict[str, tuple[str, str]] = field(default_factory=dict)  # column -> (intact, broken) type
    text_differing: int = 0          # distinct rows differing once cast to varchar (the larger side),
                                     # measured only when the typed rows do not differ

    @property
    def column_set_differs(self) -> bool:
        return bool(self.columns_missing or self.columns_extra)

    @property
    def rows_differing(self) -> int:
        return self.base_minus_mut + self.mut_minus_base

    @property
    def visible(self) -> bool:
        """Would ade-bench's equality test (seeded from the intact table) fail on the mutant?"""
        return (self.column_set_differs or self.rows_differing > 0 or self.error is not None
                or self.compare_error is not None)

    @property
    def duplicates_only(self) -> bool:
        return not self.visible and self.rows_base != self.rows_mut

    @property
    def type_only(self) -> bool:
        """Only column types changed: the values are equal as ade-bench compares them, their text
        is not (0 vs 0.0)."""
        return not self.visible and self.text_differing > 0


def columns(con, rel: str) -> list[str]:
    return [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {rel}").fetchall()]


def without(con, rel: str, exclude: list[str], where: str | None = None) -> str:
    """`rel` without the `exclude` columns (case-insensitive, as ade-bench's `cols_to_exclude`
    removes them from both sides) and, given `where`, only its rows that hold it: a subquery, or
    `rel` itself when nothing is left out or it cannot be read (the comparison reports the error)."""
    drop = {c.lower() for c in exclude}
    if not drop and not where:
        return rel
    try:
        cols = columns(con, rel)
    except Exception:  # noqa: BLE001 - a missing relation: compare_relations says so
        return rel
    keep = [c for c in cols if c.lower() not in drop]
    if not keep:
        return rel
    listed = "*" if len(keep) == len(cols) else ", ".join(q(c) for c in keep)
    return f"(select {listed} from {rel}" + (f" where {where})" if where else ")")


def typed_columns(con, rel: str) -> dict[str, str]:
    return {r[0]: str(r[1]) for r in con.execute(f"DESCRIBE SELECT * FROM {rel}").fetchall()}


def _except_counts(con, sel_b: str, base_rel: str, sel_m: str, mut_rel: str) -> tuple[int, int]:
    """(rows of base not in mut, rows of mut not in base), distinct, as the equality macro counts."""
    one = con.execute(f"select count(*) from (select {sel_b} from {base_rel} except select {sel_m} from {mut_rel})")
    a = one.fetchone()[0]
    b = con.execute(f"select count(*) from (select {sel_m} from {mut_rel} except select {sel_b} from {base_rel})"
                    ).fetchone()[0]
    return int(a), int(b)


def compare_relations(con, table: str, base_rel: str, mut_rel: str) -> TableDiff:
    d = TableDiff(table=table)
    try:
        btypes, mtypes = typed_columns(con, base_rel), typed_columns(con, mut_rel)
    except Exception as exc:  # relation missing in the mutant
        d.error = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        return d
    d.rows_base = con.execute(f"select count(*) from {base_rel}").fetchone()[0]
    d.rows_mut = con.execute(f"select count(*) from {mut_rel}").fetchone()[0]
    bl, ml = {c.lower() for c in btypes}, {c.lower() for c in mtypes}
    d.columns_missing = [c for c in btypes if c.lower() not in ml]
    d.columns_extra = [c for c in mtypes if c.lower() not in bl]
    if d.column_set_differs:
        return d
    by_lower = {c.lower(): c for c in btypes}
    # both sides list the columns in the mutant's order, as the macro lists the actual table's
    pairs = [(by_lower[c.lower()], c) for c in mtypes]
    d.retyped = {b: (btypes[b], mtypes[m]) for b, m in pairs if btypes[b].lower() != mtypes[m].lower()}
    as_text = (", ".join(f"cast({q(b)} as varchar)" for b, _ in pairs),
               ", ".join(f"cast({q(m)} as varchar)" for _, m in pairs))
    try:
        d.base_minus_mut, d.mut_minus_base = _except_counts(
            con, ", ".join(q(b) for b, _ in pairs), base_rel, ", ".join(q(m) for _, m in pairs), mut_rel)
    except Exception as exc:  # noqa: BLE001 - e.g. no common type: the test itself errors
        d.compare_error = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        # still count rows as text, so the evidence has a size to report
        d.base_minus_mut, d.mut_minus_base = _except_counts(con, as_text[0], base_rel, as_text[1], mut_rel)
        return d
    if not d.rows_differing and d.retyped:
        # equal as typed, but some column's type changed: measure whether its text did (type only)
        d.text_differing = max(_except_counts(con, as_text[0], base_rel, as_text[1], mut_rel))
    return d
