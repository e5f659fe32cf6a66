"""The SELECT scopes a purposeful change edits: each top-level CTE's body and the model's final
SELECT, read from the lexer's tokens (the same reading on a model's raw SQL and on its compiled
SQL, so a scope found in one is found by name in the other). Pure functions.

A scope is taken only when its clauses can be read at depth 0 and edited as text: it starts with
SELECT, has a FROM whose first item is a relation or a CTE (not a subquery), no set operation and
no Jinja statement (`{% ... %}`: an edit could land in a branch that does not compile)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from adegen.rewrite.stories.base import Model
from adegen.rewrite.stories.ctes import top_ctes

FINAL = ""  # the name of the final SELECT's scope
AGGREGATES = frozenset({"count", "sum", "avg", "min", "max"})
# what ends a FROM clause or a WHERE clause at depth 0
CLAUSES = ("where", "group", "having", "qualify", "window", "order", "limit", "offset")
SET_OPS = frozenset({"union", "except", "intersect", "minus"})
NOT_ALIAS = frozenset({"left", "right", "inner", "outer", "full", "cross", "join", "natural", "lateral",
                        "on", "using", "positional", "asof", "anti", "semi", *CLAUSES, *SET_OPS})
_RELATION_NAME = re.compile(r"""(?:ref|source)\s*\((?:\s*['"][^'"]*['"]\s*,)*\s*['"]([^'"]+)['"]""")


@dataclass(frozen=True)
class Scope:
    """One SELECT: offsets into the text it was read from."""

    name: str                 # the CTE's name, FINAL for the final SELECT
    start: int                # the SELECT keyword
    from_start: int           # the FROM keyword
    end: int                  # after its last token
    list_start: int           # after SELECT (the select list's first character)
    list_end: int             # after the select list's last token
    from_end: int             # after the FROM clause's last token (JOINs included)
    where_end: int | None     # after the WHERE clause's last token; None: no WHERE
    where_has_or: bool        # the WHERE holds an OR at its own depth (an AND appended would bind to one side)
    grouped: bool             # has GROUP BY
    aggregates: bool          # the select list calls an aggregate at its own depth
    relation: str             # the first FROM item as written (a CTE name, `{{ ref('x') }}`, a table)
    qualifier: str            # how a column of that item is qualified ("" when the FROM has no JOIN)
    indent: str               # the FROM keyword's line indentation
    item_indent: str          # the select list's first item's line indentation
    leading_commas: bool      # the select list is written `, col` at line starts


def _line_indent(text: str, pos: int) -> str:
    line = text[text.rfind("\n", 0, pos) + 1:pos]
    return line[:len(line) - len(line.lstrip(" \t"))]


def relation_name(relation: str) -> str:
    """The name a FROM item is known by: a CTE's or table's own name, a ref's model, a source's table."""
    m = _RELATION_NAME.search(relation)
    if m:
        return m.group(1)
    return relation.strip().split(".")[-1].strip('"')


def _read(text: str, toks: list, name: str) -> Scope | None:
    """The scope of the tokens `toks` (one SELECT, nothing after it), or None when it is not simple."""
    if not toks or toks[0].text != "select" or "{%" in text[toks[0].start:toks[-1].end]:
        return None
    depth, marks = 0, {}
    for k, t in enumerate(toks):
        if t.text == "(":
            depth += 1
        elif t.text == ")":
            depth -= 1
        elif depth == 0 and t.kind == "sql":
            if t.text in SET_OPS:
                return None
            if t.text in ("from", *CLAUSES, "join", "or") and t.text not in marks:
                marks[t.text] = k
            if t.text == "select" and k:
                return None  # a second SELECT at depth 0
    if depth != 0 or "from" not in marks:
        return None
    f = marks["from"]
    first = toks[f + 1] if f + 1 < len(toks) else None
    if first is None or first.text == "(":
        return None  # a subquery: not read here
    last = f + 1  # a dotted name (`"db"."main"."orders"`, as dbt compiles a ref) is one item
    while last + 2 < len(toks) and toks[last + 1].text == "." and toks[last + 2].kind == "sql":
        last += 2
    after = [k for c, k in marks.items() if c in CLAUSES and k > f]
    from_last = (min(after) if after else len(toks)) - 1
    where_last = None
    if "where" in marks:
        nxt = [k for c, k in marks.items() if c in CLAUSES and k > marks["where"]]
        where_last = (min(nxt) if nxt else len(toks)) - 1
    k = last + 1
    alias = ""
    if k < len(toks) and toks[k].text == "as":
        k += 1
    if k < len(toks) and toks[k].kind == "sql" and re.fullmatch(r"[a-z_][a-z0-9_]*", toks[k].text) \
            and toks[k].text not in NOT_ALIAS and k <= from_last:
        alias = text[toks[k].start:toks[k].end]
    relation = text[first.start:toks[last].end]
    joined = "join" in marks and marks["join"] < from_last + 1
    qualifier = (alias or relation_name(relation)) if joined else ""
    items = toks[1:f]
    inner = 0
    aggregates = False
    for a, b in zip(items, items[1:]):
        if a.text == "(":
            inner += 1
        elif a.text == ")":
            inner -= 1
        if inner == 0 and a.text in AGGREGATES and b.text == "(":
            aggregates = True
    first_item = items[0].start if items else toks[0].end
    listing = text[toks[0].end:toks[f].start]
    return Scope(
        name=name, start=toks[0].start, from_start=toks[f].start, end=toks[-1].end, list_start=toks[0].end, list_end=toks[f - 1].end,
        from_end=toks[from_last].end, where_end=toks[where_last].end if where_last is not None else None,
        where_has_or="or" in marks and "where" in marks and marks["where"] < marks["or"] <= where_last,
        grouped="group" in marks, aggregates=aggregates, relation=relation, qualifier=qualifier,
        indent=_line_indent(text, toks[f].start), item_indent=_line_indent(text, first_item),
        leading_commas=any(line.lstrip().startswith(",") for line in listing.splitlines()[1:]))


def scopes(text: str) -> dict[str, Scope]:
    """The simple scopes of a model by name: each top-level CTE's, and the final SELECT's (FINAL)."""
    model = Model(text, "")
    toks = model.toks
    ctes = top_ctes(model)
    out: dict[str, Scope] = {}
    for c in ctes:
        s = _read(text, c.body_tokens(model), c.name)
        if s is not None:
            out[c.name] = s
    start = ctes[-1].last + 1 if ctes else 0
    if not ctes and toks and toks[0].text == "with":
        return out  # a WITH the CTE reader could not read
    s = _read(text, toks[start:], FINAL)
    if s is not None:
        out[FINAL] = s
    return out


def passes_through(text: str, name: str) -> bool:
    """The final SELECT is `select * from <name>` (every column of the CTE reaches the model)."""
    final = scopes(text).get(FINAL)
    if final is None:
        return False
    words = [t for t in Model(text, "").toks if final.start <= t.start < final.end]
    return [t.text for t in words] == ["select", "*", "from", name.lower()]
