"""What `verdict.judge` asks of a backend (its `Inspector`), on one DuckDB connection that sees both
builds: the measured facts of a changed table (validate.evidence), the columns that differ, and a
one-line example for logs and --json (the prompt is written from the facts themselves)."""
from __future__ import annotations

from dataclasses import dataclass

from adegen.facts.measured import TableFacts, read_table
from adegen.facts.evidence import pick_tables, table_facts
from adegen.validate.rules.oracle import TableDiff


def _fmt(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return repr(round(v, 6)).rstrip("0").rstrip(".") if "e" not in repr(v) else repr(v)
    return str(v)


@dataclass
class Evidence:
    columns_differ: list[str]
    example: str | None
    details: dict


def _example(f: TableFacts) -> str | None:
    """A one-line summary of a table's facts for logs and --json (the prompt is written from the
    facts themselves, by adegen.prompts)."""
    t = f.table
    if f.error:
        return f"{t} could not be read after the build ({f.error})"
    if f.columns_missing or f.columns_extra:
        parts = [f"no longer has {', '.join(f.columns_missing)}" if f.columns_missing else "",
                 f"has new {', '.join(f.columns_extra)}" if f.columns_extra else ""]
        return f"{t} " + " and ".join(p for p in parts if p)
    key = " + ".join(f.key)
    miss = f.missing
    if miss and miss.count and miss.sample:
        return (f"{t} is missing {miss.count} of {f.rows_intact} rows "
                f"(e.g. {key} = {' / '.join(map(_fmt, miss.sample[0].key))})")
    for c in f.columns:
        for s in c.sample:
            return (f"{t}: {key} = {' / '.join(map(_fmt, s.key))} has {c.name} = {_fmt(s.observed)} "
                    f"(expected {_fmt(s.expected)})")
    if f.extra and f.extra.count:
        return f"{t} has {f.extra.count} unexpected rows; expected {f.rows_intact}"
    if f.rows_broken != f.rows_intact:
        return f"{t} has {f.rows_broken} rows; the intact build has {f.rows_intact}"
    cols = [c.name for c in f.columns]
    return f"{t}: {f.rows_differing} of {f.rows_intact} rows differ" + (f" ({cols[0]})" if cols else "")


@dataclass
class RelationInspector:
    """Measured facts from one connection that sees both builds (verdict.Inspector).
    `rels`: {uid: (base_rel, mut_rel)}, `dist`: {uid: DAG distance from `mutated`}."""

    con: object
    rels: dict
    dist: dict
    mutated: str | tuple  # the mutated model, or every model one mistake changed (siblings)

    def evidence(self, uid: str, diff: TableDiff) -> Evidence:
        """The measured facts of one changed table (evidence.table_facts), the columns whose values
        differ, and a one-line summary (the pattern's guess never chooses facts: the prompt reports
        what the data shows)."""
        facts = table_facts(self.con, diff, *self.rels[uid], distance=self.dist.get(uid, 0))
        read = read_table(facts)
        cols = [*read.columns_missing, *read.columns_extra, *(c.name for c in read.columns)]
        return Evidence(cols, _example(read), facts)

    def tables(self, visible: dict, compared: str, known: dict) -> list[dict]:
        """Facts of the few changed tables a prompt may name (evidence.pick_tables), nearest first.
        `visible`: {uid: TableDiff} of tables that differ, `known`: {uid: facts} already measured."""
        out = []
        for u in pick_tables(visible, self.dist, self.mutated, compared):
            f = (known or {}).get(u) or table_facts(self.con, visible[u], *self.rels[u], distance=self.dist.get(u, 0))
            f["distance"] = int(self.dist.get(u, 0))
            out.append(f)
        return sorted(out, key=lambda f: (f["distance"], f["table"]))
