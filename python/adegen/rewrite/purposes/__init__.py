"""Purposeful changes: a commit that changes what a model returns because someone asked for it, with
the slip inside it (issue 51). Unlike a story of `rewrite/stories/` (a behaviour-neutral refactor
around a one-token slip), the purpose itself changes the output, and the task's solution keeps it:
the setup is intact -> the purpose with the slip, the solution is that -> the purpose done right.

Kinds (each `change(text, ask)` returns (broken, fixed) texts, or None when the scope cannot take it):
- `metric_in_where`: "add the count of <value> <rows> per group" - the new count goes in, but its
  condition lands in the WHERE, so every other aggregate of the SELECT is computed over those rows
  only (right: the condition inside the new column's CASE).
- `exclusion_drops_nulls`: "leave the <value> rows out" - a `<>` filter that drops the rows whose
  column is NULL as well (right: `is distinct from`, the NULL rows stay).
Pure functions: SQL text in, SQL text out."""
from __future__ import annotations

import re
from dataclasses import dataclass

from adegen.rewrite.purposes import scopes as sc
from adegen.rewrite.stories.base import Model, keyword_upper
from adegen.sql.quote import literal

METRIC, EXCLUSION = "metric_in_where", "exclusion_drops_nulls"
KINDS = (METRIC, EXCLUSION)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_PREFIX = re.compile(r"^(?:stg|int|fct|fact|dim|rpt|base|src|raw|mart|agg)_+", re.I)


@dataclass(frozen=True)
class Ask:
    """What the stakeholder asked for: the kind, the scope it lands in, the column and value it
    reads, and the new column's name (METRIC only)."""

    kind: str
    scope: str        # a CTE's name, or scopes.FINAL
    column: str
    value: str
    name: str = ""
    entity: str = ""  # what one row of the scope is, as its data shows it ("subscription"); "" unknown


def noun(relation: str) -> str:
    """What one row of a relation is, singular: `{{ ref('stg_orders') }}` -> `order`."""
    word = _PREFIX.sub("", sc.relation_name(relation)).split("__")[-1].lower()
    for plural, single in (("ies", "y"), ("sses", "ss"), ("ses", "s"), ("s", "")):
        if word.endswith(plural) and len(word) > len(plural) + 2:
            return word[: len(word) - len(plural)] + single
    return word


def slug(value: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", value.lower()).strip("_")


def metric_name(value: str, relation: str, entity: str = "") -> str:
    """`completed` over orders -> `completed_order_count`; `entity`: what a row is, when known
    (`Enterprise` over fct_subscription_revenue keyed by subscription_id -> `enterprise_subscription_count`,
    never `enterprise_subscription_revenue_count`)."""
    return f"{slug(value)}_{slug(entity) if entity else noun(relation)}_count"


def _kw(text: str, word: str) -> str:
    return word.upper() if keyword_upper(Model(text, "")) else word


def _col(s: sc.Scope, column: str) -> str:
    return f"{s.qualifier}.{column}" if s.qualifier else column


def _filter_edit(text: str, s: sc.Scope, cond: str) -> tuple[int, str] | None:
    """Where and what to insert so the scope's rows also meet `cond`."""
    if s.where_end is not None:
        if s.where_has_or:
            return None  # `a or b and c` would bind the new condition to one side
        return s.where_end, f"\n{s.indent}    {_kw(text, 'and')} {cond}"
    return s.from_end, f"\n{s.indent}{_kw(text, 'where')} {cond}"


def _item_edit(s: sc.Scope, item: str) -> tuple[int, str]:
    if s.leading_commas:
        return s.list_end, f"\n{s.item_indent}, {item}"
    return s.list_end, f",\n{s.item_indent}{item}"


def _apply(text: str, edits: list[tuple[int, str]]) -> str:
    for pos, ins in sorted(edits, reverse=True):
        text = text[:pos] + ins + text[pos:]
    return text


def _output(text: str) -> sc.Scope | None:
    """The scope whose select list is the model's columns: the final SELECT, or the CTE it passes through."""
    found = sc.scopes(text)
    through = [s for n, s in found.items() if n != sc.FINAL and sc.passes_through(text, n)]
    return through[0] if through else found.get(sc.FINAL)


def carry(text: str, scope: str, column: str) -> list[tuple[int, str]] | None:
    """The edits that bring a column the scope adds to the model's output: none when the scope is
    the output (or the final SELECT passes it through); the column added to the output's select list
    when that SELECT reads the scope in its FROM or a JOIN (`customer_orders.completed_order_count`,
    as the other columns of a CTE joined in a `final` CTE are carried); None when it cannot reach."""
    if scope == sc.FINAL or sc.passes_through(text, scope):
        return []
    out = _output(text)
    if out is None or out.name == scope:
        return [] if out is not None else None
    m = re.search(rf"\b(?:from|join)\s+{re.escape(scope)}\b(?:\s+(?:as\s+)?([A-Za-z_]\w*))?",
                  text[out.from_start:out.from_end], re.I)
    if m is None:
        return None
    alias = m.group(1) if m.group(1) and m.group(1).lower() not in sc.NOT_ALIAS else ""
    if text[out.list_start:out.list_end].strip() == "*":
        return []
    qual = (alias or scope) if out.qualifier else ""
    return [_item_edit(out, f"{qual}.{column}" if qual else column)]


def reaches_output(text: str, scope: str) -> bool:
    """A column the scope adds can be made a column of the model (`carry`)."""
    return carry(text, scope, "x") is not None


def change(text: str, ask: Ask) -> tuple[str, str] | None:
    """(broken, fixed) model texts for `ask`, or None when its scope cannot take it."""
    s = sc.scopes(text).get(ask.scope)
    if s is None or not _IDENT.match(ask.column):
        return None
    col, val = _col(s, ask.column), literal(ask.value)
    if ask.kind == METRIC:
        carried = carry(text, ask.scope, ask.name)
        if not (s.grouped and s.aggregates and _IDENT.match(ask.name)) or carried is None:
            return None
        if re.search(rf"\b{re.escape(ask.name)}\b", text, re.I):
            return None  # the name is taken
        cond = f"{col} = {val}"
        where = _filter_edit(text, s, cond)
        if where is None:
            return None
        count = _kw(text, "count")
        broken = _apply(text, [_item_edit(s, f"{count}(*) {_kw(text, 'as')} {ask.name}"), where, *carried])
        case = " ".join(_kw(text, w) for w in ("case", "when")) + f" {cond} " + \
            " ".join(_kw(text, w) for w in ("then", "1", "end"))
        fixed = _apply(text, [_item_edit(s, f"{count}({case}) {_kw(text, 'as')} {ask.name}"), *carried])
        return broken, fixed
    if ask.kind == EXCLUSION:
        broken_edit = _filter_edit(text, s, f"{col} <> {val}")
        fixed_edit = _filter_edit(text, s, f"{col} {_kw(text, 'is distinct from')} {val}")
        if broken_edit is None or fixed_edit is None:
            return None
        return _apply(text, [broken_edit]), _apply(text, [fixed_edit])
    raise ValueError(f"unknown purposeful change kind {ask.kind!r}")
