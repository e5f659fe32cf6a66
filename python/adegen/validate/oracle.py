"""ade-bench's equality oracle on two DuckDB states, plus the evidence a prompt needs.

The oracle is `ade_bench_equality_test`: lower-cased column sets must be equal, then
`A EXCEPT B` and `B EXCEPT A` over the columns cast to varchar must both be empty. It is
set-based, so duplicate rows and row order are invisible to it; row counts are compared too so a
duplicates-only change can be reported as such.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..sqlquote import ident as q


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


@dataclass
class Evidence:
    columns_differ: list[str]
    example: str | None
    details: dict


def _example(f: dict) -> str | None:
    """A one-line summary of a table's facts for logs and --json (the prompt is written from the
    facts themselves, by adegen.prompts)."""
    t = f["table"]
    if f.get("error"):
        return f"{t} could not be read after the build ({f['error']})"
    if f.get("columns_missing") or f.get("columns_extra"):
        parts = [f"no longer has {', '.join(f['columns_missing'])}" if f.get("columns_missing") else "",
                 f"has new {', '.join(f['columns_extra'])}" if f.get("columns_extra") else ""]
        return f"{t} " + " and ".join(p for p in parts if p)
    key = " + ".join(f.get("key") or [])
    miss = f.get("missing") or {}
    if miss.get("count") and miss.get("sample"):
        return (f"{t} is missing {miss['count']} of {f['rows_intact']} rows "
                f"(e.g. {key} = {' / '.join(map(_fmt, miss['sample'][0]['key']))})")
    for c in f.get("columns") or []:
        for s in c.get("sample") or []:
            return (f"{t}: {key} = {' / '.join(map(_fmt, s['key']))} has {c['name']} = {_fmt(s['observed'])} "
                    f"(expected {_fmt(s['expected'])})")
    extra = f.get("extra") or {}
    if extra.get("count"):
        return f"{t} has {extra['count']} unexpected rows; expected {f['rows_intact']}"
    if f["rows_broken"] != f["rows_intact"]:
        return f"{t} has {f['rows_broken']} rows; the intact build has {f['rows_intact']}"
    cols = [c["name"] for c in f.get("columns") or []]
    return f"{t}: {f['rows_differing']} of {f['rows_intact']} rows differ" + (f" ({cols[0]})" if cols else "")


def evidence(con, diff: TableDiff, base_rel: str, mut_rel: str, symptom: str | None = None,
             *, distance: int = 0) -> Evidence:
    """The measured facts of one changed table (adegen.validate.evidence.table_facts), the columns
    whose values differ, and a one-line summary. `symptom` (the pattern's guess) is not used to
    choose facts: the prompt reports what the data shows."""
    from .evidence import table_facts

    facts = table_facts(con, diff, base_rel, mut_rel, distance=distance)
    cols = list(facts.get("columns_missing") or []) + list(facts.get("columns_extra") or [])
    cols += [c["name"] for c in facts.get("columns") or []]
    return Evidence(cols, _example(facts), facts)


def tables_evidence(con, visible: dict, rels: dict, dist: dict, mutated, compared,
                    known: dict | None = None) -> list[dict]:
    """Facts of the few changed tables a prompt may name (evidence.pick_tables), nearest first.
    `visible`: {uid: TableDiff} of tables that differ, `rels`: {uid: (base_rel, mut_rel)}, `dist`:
    {uid: DAG distance from the mutated model}, `known`: {uid: facts} already measured."""
    from .evidence import pick_tables, table_facts

    out = []
    for u in pick_tables(visible, dist, mutated, compared):
        f = (known or {}).get(u) or table_facts(con, visible[u], *rels[u], distance=dist.get(u, 0))
        f["distance"] = int(dist.get(u, 0))
        out.append(f)
    return sorted(out, key=lambda f: (f["distance"], f["table"]))


@dataclass
class RelationInspector:
    """Measured facts from one connection that sees both builds (verdict.Inspector).
    `rels`: {uid: (base_rel, mut_rel)}, `dist`: {uid: DAG distance from `mutated`}."""

    con: object
    rels: dict
    dist: dict
    mutated: str

    def evidence(self, uid: str, diff: TableDiff) -> Evidence:
        return evidence(self.con, diff, *self.rels[uid], distance=self.dist.get(uid, 0))

    def tables(self, visible: dict, compared: str, known: dict) -> list[dict]:
        return tables_evidence(self.con, visible, self.rels, self.dist, self.mutated, compared, known)
