"""The third purposeful kind (issue 51): "bring <column> into this model from <relation>". The
commit adds an import CTE that reads the key and the new column from another of the project's
relations, joins it on the key and selects the column. The slip: the key is not unique on that
side (the relation is at a finer grain: an order's status read from the order items), so every
row of the scope whose key repeats there comes out once per match: the model gains rows and every
sum over it grows. Right: the same CTE at the key's grain (`select distinct key, column`, which is
one row per key because the data measured the column to be a function of the key), so the model
keeps its rows and its other columns, with the new column beside them.

Pure functions: SQL text in, SQL text out. `relation` is how the model's text names the other side:
`{{ ref('fct_order_items') }}` in the raw SQL, the quoted relation in the compiled SQL."""
from __future__ import annotations

import re
from dataclasses import dataclass

from adegen.rewrite.purposes import _apply, _item_edit, carry
from adegen.rewrite.purposes import scopes as sc
from adegen.rewrite.stories.base import Model, keyword_upper
from adegen.rewrite.stories.ctes import top_ctes

GRAIN = "join_at_wrong_grain"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class GrainAsk:
    """Bring `column` of the relation `source` (a model's name) into the scope `scope`, matched on
    `key`, through a new CTE named `cte`."""

    scope: str       # a CTE's name, or scopes.FINAL
    source: str      # the other relation's model name
    key: str
    column: str
    cte: str

    @property
    def kind(self) -> str:
        return GRAIN

    @property
    def name(self) -> str:   # the new column of the model (the run record's `name`)
        return self.column

    @property
    def value(self) -> str:  # where the column comes from (the run record's `value`)
        return self.source


def taken(text: str, word: str) -> bool:
    """The word is already a name in the model's text (a CTE, a column, an alias)."""
    return re.search(rf"(?<![\w.]){re.escape(word)}\b", text, re.I) is not None


def _kw(upper: bool, words: str) -> str:
    return words.upper() if upper else words


def _cte_edit(text: str, name: str, select: str) -> tuple[int, str]:
    """The new CTE, written as the model's first CTE is (its blank lines, its body's indentation),
    inserted before it; a model without a WITH gets one before its SELECT."""
    upper = keyword_upper(Model(text, ""))
    ctes = top_ctes(Model(text, ""))
    if not ctes:
        final = sc.scopes(text).get(sc.FINAL)
        return final.start, f"{_kw(upper, 'with')} {name} {_kw(upper, 'as')} (\n    {select}\n)\n\n"
    first = ctes[0]
    body = text[first.body_start:first.body_end]
    lead, trail = body[:len(body) - len(body.lstrip())], body[len(body.rstrip()):]
    after = text[first.end:ctes[1].start] if len(ctes) > 1 else (",\n\n" if text[first.end:].startswith("\n\n") else ",\n")
    return first.start, f"{name} {_kw(upper, 'as')} ({lead}{select}{trail}){after}"


def change(text: str, ask: GrainAsk, relation: str) -> tuple[str, str] | None:
    """(broken, fixed) model texts for `ask`, the other side named `relation` in this text; None
    when the scope cannot take it (a grouped or DISTINCT select, a bare `*`, a name already taken,
    the column cannot reach the model's output)."""
    s = sc.scopes(text).get(ask.scope)
    if s is None or s.grouped or not all(_IDENT.match(w) for w in (ask.key, ask.column, ask.cte)):
        return None
    listing = text[s.list_start:s.list_end].strip()
    if re.match(r"distinct\b", listing, re.I) or re.search(r"(?<![\w.])\*", listing):
        return None  # DISTINCT hides the repeated rows; a bare * would take every joined column
    if "\n" not in listing or "\n" not in text[s.list_end:s.from_start]:
        return None  # a one-line select (an import CTE): not where a column is brought in
    if taken(text, ask.column) or taken(text, ask.cte):
        return None
    carried = carry(text, ask.scope, ask.column)
    if carried is None:
        return None
    upper = keyword_upper(Model(text, ""))
    join = _kw(upper, "left join")
    if s.qualifier:
        on = f"{_kw(upper, 'on')} {s.qualifier}.{ask.key} = {ask.cte}.{ask.key}"
        joined = (s.from_end, f"\n{s.indent}{join} {ask.cte}\n{s.indent}    {on}")
        item = f"{ask.cte}.{ask.column}"
    else:  # the scope's columns are unqualified: USING keeps the key one column
        joined = (s.from_end, f"\n{s.indent}{join} {ask.cte} {_kw(upper, 'using')} ({ask.key})")
        item = ask.column
    edits = [joined, _item_edit(s, item), *carried]
    frm = _kw(upper, "from")
    cols = f"{ask.key}, {ask.column} {frm} {relation}"
    broken = _apply(text, [_cte_edit(text, ask.cte, f"{_kw(upper, 'select')} {cols}"), *edits])
    fixed = _apply(text, [_cte_edit(text, ask.cte, f"{_kw(upper, 'select distinct')} {cols}"), *edits])
    return broken, fixed
