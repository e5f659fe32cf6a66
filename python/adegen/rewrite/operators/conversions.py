"""A unit conversion applied twice: a model converts a column that a model upstream of it already
converted (`sum(amount)` -> `sum(amount / 100)` where stg_payments has `amount / 100 as amount`).

The story: the engineer knows the raw data is in cents and converts where they read it, without
seeing that staging already did. The conversions upstream are found with drop_conversion's own
site finder (`expressions.conversion_sites`), so the two operators agree on what a conversion is."""
from __future__ import annotations

import re
from dataclasses import dataclass

from adegen.rewrite.operators import expressions
from adegen.rewrite.operators.registry import operator
from adegen.rewrite.operators.select_lists import item_name, item_span, item_spans
from adegen.rewrite.text import Candidate, Edit, Struct

_COLUMN = re.compile(r"[A-Za-z_][\w$]*(\.[A-Za-z_][\w$]*)*")
# tokens that end the operand slot around a reference: a value standing alone in them needs no parentheses
_OPEN_SLOT = frozenset({"(", ",", "select", "then", "else", "when", "distinct"})
_CLOSE_SLOT = frozenset({")", ",", "as", "end", "else", "when", "then", "from"})


@dataclass(frozen=True)
class Conversion:
    """One select item of an upstream model that converts one column into a named output."""
    model: str  # the upstream model
    column: str  # the name it gives the converted value
    before: str  # text the conversion puts before the value ("100.0 * ", "{{ cents_to_dollars('")
    after: str  # and after it (" / 100", "') }}")

    def apply(self, ref: str) -> str:
        return f"{self.before}{ref}{self.after}"

    @property
    def is_macro(self) -> bool:
        return self.before.startswith("{{")


def _plain_column(S, a: int, b: int) -> bool:
    return all(S.toks[k].kind == "sql" for k in range(a, b + 1)) and S.gap_plain(a, b) \
        and _COLUMN.fullmatch(S.span(a, b)) is not None


def conversion_items(sql: str, model: str) -> list[Conversion]:
    """The items of `sql` that convert one column and name the result: `amount / 100 as amount`,
    `100.0 * rate as rate_pct`, `{{ cents_to_dollars('price_cents') }} as price`. A conversion
    inside a larger expression (a CASE, a formula) is not one: nobody would repeat it by name."""
    S = Struct(sql)
    out = []
    for site in expressions.conversion_sites(S):
        i = site.group
        a, b = item_span(S, i)
        if not (b - 2 >= a and S.texts[b - 1] == "as"):
            continue
        name, last = item_name(S, a, b), b - 2
        if S.toks[i].kind == "jinja":
            m = expressions.MACRO_CALL.match(S.text(i))
            if a == i == last and m and _COLUMN.fullmatch(m.group(3).strip()):
                raw = S.text(i)
                out.append(Conversion(model, name, raw[:m.start(3)], raw[m.end(3):]))
            continue
        double = S.texts[i:i + 2] == ["/", "/"] and S.toks[i].end == S.toks[i + 1].start
        factor = i + 2 if double else i + 1
        if factor == last and expressions.conversion_factor(S.texts[factor]) and _plain_column(S, a, i - 1):
            out.append(Conversion(model, name, "", " " + re.sub(r"\s+", " ", S.span(i, factor))))
        elif S.texts[i] == "*" and a == i - 1 and _plain_column(S, i + 1, last):
            out.append(Conversion(model, name, re.sub(r"\s+", " ", S.span(a, i)) + " ", ""))
    return [c for c in out if c.column]


def _reference(S, k: int) -> tuple[int, int] | None:
    """(first, last) token of the column reference ending at token k (`amount`, `payments.amount`),
    or None when token k is no column read (a function name, an alias being defined)."""
    if not S.ident(k) or S.texts[k + 1:k + 2] in (["("], ["."]) or S.texts[k - 1:k] == ["as"]:
        return None
    first = k
    while first >= 2 and S.texts[first - 1] == "." and S.ident(first - 2) and S.gap_plain(first - 2, k):
        first -= 2
    return first, k


def _already_converted(S, first: int, last: int) -> bool:
    after = S.texts[last + 1:last + 3]
    before = S.texts[max(0, first - 2):first]
    return (len(after) == 2 and after[0] in ("/", "*") and expressions.conversion_factor(after[1])) \
        or (len(before) == 2 and before[1] == "*" and expressions.conversion_factor(before[0]))


def _edit(S, conv: Conversion, span: tuple[int, int], item: tuple[int, int], named: bool) -> Edit:
    """The reference `span` (first, last token) converted again; `named`: the item has an alias of
    its own (`amount as total`)."""
    first, last = span
    ref = S.span(first, last)
    new = conv.apply(ref)
    a, b = item
    if first == a and last == b and not named:  # the item is the column itself: it keeps its name
        return Edit(S.toks[first].start, S.toks[last].end, f"{new} as {S.text(last)}")
    prev = S.texts[first - 1] if first else ""
    nxt = S.texts[last + 1] if last + 1 < S.n else ""
    if not conv.is_macro and not (prev in _OPEN_SLOT and nxt in _CLOSE_SLOT):
        new = f"({new})"  # `price * quantity` -> `(price / 100) * quantity`, never a changed precedence
    return Edit(S.toks[first].start, S.toks[last].end, new)


@operator("convert_again")
def convert_again(S, args, ctx):
    """In a select item, a column that a model upstream already converted (its item `amount / 100
    as amount`, `{{ cents_to_dollars('x') }} as x`) is converted again the same way: `sum(amount)`
    -> `sum(amount / 100)`. Needs the upstream models' SQL (`ModelContext.model_sql`)."""
    read = getattr(ctx, "model_sql", None)
    if read is None:
        return []
    convs: dict[str, Conversion] = {}
    for up in getattr(ctx, "upstream_models", ()):
        sql = read(up)
        for conv in conversion_items(sql, up) if sql else ():
            convs.setdefault(conv.column.lower(), conv)
    if not convs:
        return []
    out = []
    for a, b in item_spans(S):
        named = b - 1 > a and S.texts[b - 1] == "as"
        b_read = b - 2 if named else b  # the alias names the item; it reads nothing
        for k in range(a, b_read + 1):
            conv = convs.get(S.texts[k])
            span = _reference(S, k) if conv else None
            if span is None or span[0] < a or _already_converted(S, *span):
                continue
            out.append(Candidate(k, [_edit(S, conv, span, (a, b_read), named)],
                                 f"{conv.column} converted again (already converted in {conv.model})",
                                 placeholders={"upstream_model": conv.model},
                                 touches_jinja=conv.is_macro))
    return out
