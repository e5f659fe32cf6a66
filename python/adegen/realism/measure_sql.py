"""SQL helpers the checks share: the scope's rows, a local oracle between the intact and the mutated
scope, and the columns a node reads. Pure query building plus one ProbeDB call each."""
from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from adegen.sql.quote import ident as quote_ident, literal as quote_literal
from adegen.realism.locate import SiteScope
from adegen.realism.probe import WITH, ProbeDB, groups_query, rows_query, visible_ctes

MAX_TEXT_COLUMNS = 24  # text columns of one relation searched for a spelling
MAX_HITS = 1000        # matching rows counted, at most, per relation


def sql(node: exp.Expression) -> str:
    return node.sql(dialect="duckdb")


def _body(scope: exp.Expression) -> str:
    body = scope.copy()
    body.set(WITH, None)
    return sql(body)


def scope_change(probe: ProbeDB, s: SiteScope) -> tuple[int, int] | None:
    """(rows of the intact scope's output, rows that differ between the intact and the mutated
    scope, as bags): a local equality oracle on the one SELECT the mutation changed."""
    ctes = visible_ctes(s.scope)
    with_sql = ("with " + ", ".join(sql(c) for c in ctes) + " ") if ctes else ""
    a, b = _body(s.scope), _body(s.mutant_scope)
    row = probe.one(f"{with_sql}select (select count(*) from ({a}) adegen_a), (select count(*) from "
                    f"(({a}) except all ({b}) union all (({b}) except all ({a}))) adegen_d)")
    if row is None:
        return None
    return int(row[0] or 0), int(row[1] or 0)


def scope_columns_differ(probe: ProbeDB, s: SiteScope) -> str | None:
    """How the intact and the mutated scope's column lists differ ("12 columns instead of 7"), or
    None when they are the same or cannot be read."""
    ctes = visible_ctes(s.scope)
    with_sql = ("with " + ", ".join(sql(c) for c in ctes) + " ") if ctes else ""
    a = probe.columns(f"{with_sql}{_body(s.scope)}")
    b = probe.columns(f"{with_sql}{_body(s.mutant_scope)}")
    if a is None or b is None or list(a) == list(b):
        return None
    return f"{len(b)} columns instead of {len(a)}" if len(a) != len(b) else "columns of other names or types"


def either_where(s: SiteScope) -> bool | exp.Expression:
    """The `where` for count_rows that keeps the rows the intact or the edited SELECT keeps: the
    rows an edit of the filter itself can gain or lose, and none that both sides filter out. True:
    the two WHEREs are the same; False: one side has none."""
    wa = s.select.args.get("where") if s.select is not None else None
    wb = s.mutant_select.args.get("where") if s.mutant_select is not None else wa
    if wa is None or wb is None:
        return False
    if sql(wa) == sql(wb):
        return True
    return exp.or_(exp.paren(wa.this.copy()), exp.paren(wb.this.copy()))


def count_rows(probe: ProbeDB, select: exp.Select, conditions: list, *, where=True) -> list[int] | None:
    """[rows of the scope, then rows meeting each condition] over `select`'s FROM/JOINs and WHERE
    (`where` as rows_query takes it).

    The conditions are evaluated as columns of an inner select and counted outside it, so they
    may hold window functions; a condition over aggregates is evaluated per group of the select's
    GROUP BY instead (then the counts are groups)."""
    conds = [_as_cond(c) for c in conditions]
    flags = [exp.alias_(exp.Coalesce(this=exp.Paren(this=c), expressions=[exp.false()]), f"c{i}")
             for i, c in enumerate(conds)]
    outer = ", ".join(["count(*)"] + [f"count(*) filter (where c{i})" for i in range(len(conds))])
    if any(c.find(exp.AggFunc) is not None for c in conds):
        inner = groups_query(select, [f.this for f in flags], [f"g{i} as c{i}" for i in range(len(flags))])
    else:
        inner = rows_query(select, flags or [exp.alias_(exp.true(), "c")], where=where)
    row = probe.one(f"select {outer} from ({inner}) adegen_rows")
    return None if row is None else [int(x or 0) for x in row]


def _as_cond(c) -> exp.Expression:
    return c.copy() if isinstance(c, exp.Expression) else sqlglot.parse_one(str(c), read="duckdb")


def nearest(node: exp.Expression | None, types: tuple) -> exp.Expression | None:
    """`node` itself when it is one of `types`, else its nearest ancestor that is."""
    if node is None or isinstance(node, types):
        return node
    return node.find_ancestor(*types)


def when_test(case: exp.Case, when: exp.If) -> exp.Expression:
    """What one WHEN of `case` tests: its condition, or `x = 'a'` in a simple CASE x WHEN 'a'."""
    subject = case.this
    return exp.EQ(this=subject.copy(), expression=when.this.copy()) if subject is not None else when.this


def in_where(node: exp.Expression) -> bool:
    return node.find_ancestor(exp.Where) is not None


def in_join(node: exp.Expression) -> exp.Join | None:
    return node.find_ancestor(exp.Join)


def column_name(node: exp.Expression) -> str:
    """A readable name for what an expression reads (its first column, else its SQL)."""
    col = node if isinstance(node, exp.Column) else node.find(exp.Column)
    return col.name if col is not None else sql(node)


def projection_alias(node: exp.Expression) -> str | None:
    """The output name of the select item holding `node`."""
    cur = node
    while cur is not None and not isinstance(cur, exp.Select):
        if isinstance(cur, exp.Alias):
            return cur.alias
        if isinstance(cur.parent, exp.Select) and cur.arg_key == "expressions":
            return cur.alias_or_name or None
        cur = cur.parent
    return None


def share(part: int, whole: int) -> str:
    return f"{part:,} of {whole:,}"


@dataclass(frozen=True)
class Spelled:
    """Where a spelling was found: the relation, one text column holding it, the value, and how
    many rows hold one of the values searched for (counted up to MAX_HITS)."""

    relation: str
    column: str
    value: str
    rows: int


def spelled_in(probe: ProbeDB, relations: list[str], values: list[str]) -> Spelled | None:
    """The first relation (in the order given) with a text column holding one of `values` exactly:
    the spelling someone saw when they wrote it into the model."""
    listed = ", ".join(quote_literal(v) for v in values)
    for rel in relations:
        types = probe.columns(f"select * from {rel}") or {}
        names = [c for c, t in types.items() if t.upper().startswith(("VARCHAR", "TEXT", "STRING"))][:MAX_TEXT_COLUMNS]
        if not names:
            continue
        cols = [quote_ident(c) for c in names]
        hit = " ".join(f"when {c} in ({listed}) then {k}" for k, c in enumerate(cols))
        value = " ".join(f"when {c} in ({listed}) then {c}" for c in cols)
        cond = " or ".join(f"{c} in ({listed})" for c in cols)
        row = probe.one(f"select count(*), min(k), arg_min(v, k) from (select case {hit} end as k, case {value} end"
                        f" as v from {rel} where {cond} limit {MAX_HITS})")
        if row and row[0]:
            return Spelled(rel, names[int(row[1])], str(row[2]), int(row[0]))
    return None
