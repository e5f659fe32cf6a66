"""ade-bench's equality oracle on two DuckDB states, plus the evidence a prompt needs.

The oracle is `ade_bench_equality_test`: lower-cased column sets must be equal, then
`A EXCEPT B` and `B EXCEPT A` over the columns cast to varchar must both be empty. It is
set-based, so duplicate rows and row order are invisible to it; row counts are compared too so a
duplicates-only change can be reported as such.
"""
from __future__ import annotations

from dataclasses import dataclass, field

KEY_SUFFIXES = ("_id", "_key", "_pk")


def q(name: str) -> str:
    return '"' + str(name).replace('"', '""') + '"'


def _fmt(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return repr(round(v, 6)).rstrip("0").rstrip(".") if "e" not in repr(v) else repr(v)
    return str(v)


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


def find_key(con, rel: str, cols: list[str]) -> str | None:
    """First id-like column that is unique and non-null in `rel`."""
    cands = [c for c in cols if c.lower() == "id" or c.lower().endswith(KEY_SUFFIXES)]
    total = con.execute(f"select count(*) from {rel}").fetchone()[0]
    if total == 0:
        return None
    for c in cands:
        n, nn = con.execute(f"select count(distinct {q(c)}), count({q(c)}) from {rel}").fetchone()
        if n == total and nn == total:
            return c
    return None


@dataclass
class Evidence:
    columns_differ: list[str]
    example: str | None
    details: dict


def evidence(con, diff: TableDiff, base_rel: str, mut_rel: str, symptom: str | None) -> Evidence:
    """Columns that differ and one concrete, fix-free example of the symptom."""
    t = diff.table
    if diff.error:
        return Evidence([], f"{t} could not be read after the build ({diff.error})", {"error": diff.error})
    if diff.column_set_differs:
        parts = []
        if diff.columns_missing:
            parts.append("missing column(s) " + ", ".join(diff.columns_missing))
        if diff.columns_extra:
            parts.append("unexpected column(s) " + ", ".join(diff.columns_extra))
        return Evidence(diff.columns_missing + diff.columns_extra, f"{t} has " + " and ".join(parts),
                        {"columns_missing": diff.columns_missing, "columns_extra": diff.columns_extra})
    bcols = columns(con, base_rel)
    mcols = {c.lower(): c for c in columns(con, mut_rel)}
    key = find_key(con, base_rel, bcols)
    details: dict = {"rows_intact": diff.rows_base, "rows_broken": diff.rows_mut, "key": key}
    if key is not None:
        mk = mcols[key.lower()]
        vk = f"cast(b.{q(key)} as varchar)"
        missing = con.execute(
            f"select count(*), min({vk}) from {base_rel} b where not exists "
            f"(select 1 from {mut_rel} m where cast(m.{q(mk)} as varchar) = {vk})").fetchone()
        extra = con.execute(
            f"select count(*), min(cast(m.{q(mk)} as varchar)) from {mut_rel} m where not exists "
            f"(select 1 from {base_rel} b where cast(m.{q(mk)} as varchar) = {vk})").fetchone()
        changed: dict[str, int] = {}
        first: dict[str, tuple] = {}
        for c in bcols:
            if c == key:
                continue
            mc = mcols[c.lower()]
            cond = f"cast(b.{q(c)} as varchar) is distinct from cast(m.{q(mc)} as varchar)"
            join = (f"from {base_rel} b join {mut_rel} m on cast(m.{q(mk)} as varchar) = {vk} "
                    f"where {cond}")
            n = con.execute(f"select count(*) {join}").fetchone()[0]
            if n:
                changed[c] = n
                first[c] = con.execute(
                    f"select {vk}, cast(m.{q(mc)} as varchar), cast(b.{q(c)} as varchar) {join} "
                    f"order by 1 limit 1").fetchone()
        details.update(missing_rows=missing[0], extra_rows=extra[0], changed_columns=changed)
        cols_differ = list(changed)
        examples = []
        if changed:
            c = max(changed, key=lambda k: changed[k]) if symptom != "values_null" else next(
                (k for k in changed if first[k][1] is None), max(changed, key=lambda k: changed[k]))
            kv, mv, bv = first[c]
            details.update(example_key_value=kv, example_column=c, example_observed=mv,
                           example_expected=bv)
            examples.append(("value", f"{t}: {key} = {_fmt(kv)} has {c} = {_fmt(mv)} "
                                      f"(expected {_fmt(bv)})"))
        if missing[0]:
            examples.append(("missing", f"{t} is missing {missing[0]} of {diff.rows_base} rows "
                                        f"(e.g. {key} = {_fmt(missing[1])})"))
        if extra[0]:
            examples.append(("extra", f"{t} has {extra[0]} unexpected row(s) "
                                      f"(e.g. {key} = {_fmt(extra[1])}); expected {diff.rows_base} rows"))
        pref = {"rows_missing": "missing", "extra_rows": "extra"}.get(symptom or "", "value")
        examples.sort(key=lambda e: e[0] != pref)
        return Evidence(cols_differ, examples[0][1] if examples else None, details)
    # no key: per-column distinct value sets
    cols_differ = []
    for c in bcols:
        mc = mcols[c.lower()]
        n = con.execute(
            f"select count(*) from ((select cast({q(c)} as varchar) from {base_rel} except "
            f"select cast({q(mc)} as varchar) from {mut_rel}) union all (select cast({q(mc)} as varchar) "
            f"from {mut_rel} except select cast({q(c)} as varchar) from {base_rel}))").fetchone()[0]
        if n:
            cols_differ.append(c)
    details["columns_differ"] = cols_differ
    if diff.rows_mut != diff.rows_base:
        ex = f"{t} has {diff.rows_mut} rows; the intact build has {diff.rows_base}"
    else:
        ex = (f"{t}: {diff.mut_minus_base} of {diff.rows_base} rows differ from the intact build"
              + (f" (column {cols_differ[0]})" if cols_differ else ""))
    return Evidence(cols_differ, ex, details)
