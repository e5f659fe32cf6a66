"""Operators on column references: a column read in place of a similar one of the same relation."""
from __future__ import annotations

import difflib
from dataclasses import dataclass

from adegen.rewrite.names import parts, related_names
from adegen.rewrite.text import SQL_WORDS, Candidate, Edit
from adegen.rewrite.operators.registry import operator
from adegen.rewrite.operators.select_lists import item_spans

# Tokens after which a name is a relation, an alias or a type, never a column read.
_NOT_AFTER = frozenset({"from", "join", "as", ".", "::", "with", ")"})


@dataclass(frozen=True)
class _Ref:
    at: int               # token index of the column name
    first: int            # first token of the reference (its qualifier when it has one)
    qualifier: str | None
    scope: int            # the "(" opening the SELECT it is read in, -1 at the top level


def _query_scopes(S) -> list[int]:
    """For every token, the "(" that opens the query (a subquery or CTE body) it belongs to, -1 at
    the top level."""
    out, stack, scope = [], [], -1
    for i, t in enumerate(S.texts):
        if t == ")" and stack and stack[-1][0] == S.open.get(i):
            scope = stack.pop()[1]
        out.append(scope)
        if t == "(" and i in S.close:
            stack.append((i, scope))
            if S.texts[i + 1:i + 2] in (["select"], ["with"]):
                scope = i
    return out


def _glued_to_jinja(S, i) -> bool:
    """Token i is part of a name Jinja builds (`{{ method }}_cents`)."""
    return (i > 0 and S.toks[i - 1].kind == "jinja" and S.toks[i - 1].end == S.toks[i].start) or \
        (i + 1 < S.n and S.toks[i + 1].kind == "jinja" and S.toks[i].end == S.toks[i + 1].start)


def _ref_at(S, i, scopes) -> _Ref | None:
    """The column reference whose name is token i (`x.col` or a bare `col`), or None."""
    if not S.ident(i) or S.texts[i + 1:i + 2] in (["("], ["."]) or _glued_to_jinja(S, i):
        return None
    prev = S.texts[i - 1] if i else ""
    if prev == "." and S.ident(i - 2) and S.texts[i - 3:i - 2] not in (["."], ["from"], ["join"]):
        return _Ref(i, i - 2, S.texts[i - 2], scopes[i])
    if S.texts[i] in SQL_WORDS or prev in _NOT_AFTER or (S.ident(i - 1) and prev not in SQL_WORDS):
        return None  # a keyword, a relation, an alias (`from orders o`, `end status`)
    opener = S.opener(i)
    if S.texts[i + 1:i + 3] == ["as", "("] or S.texts[opener - 1:opener] == ["using"]:
        return None  # a CTE's name, a USING key (no column of one side to swap)
    return _Ref(i, i, None, scopes[i])


def _whole_item(S, r: _Ref) -> bool:
    """The reference is a whole select-list item without an alias: another column there renames
    the output column instead of changing its values."""
    prev = S.texts[r.first - 1] if r.first else ""
    nxt = S.texts[r.at + 1] if r.at + 1 < S.n else ""
    return prev in ("select", "distinct", ",") and nxt in (",", "from", "")


def _in_grouping(S, r: _Ref) -> bool:
    """The reference is a GROUP BY or query ORDER BY key (another column there breaks the build,
    not the data); window ORDER BY keys are fair game."""
    d = S.depth[r.first]
    for k in range(r.first - 1, -1, -1):
        if S.depth[k] > d:
            continue
        if S.depth[k] < d:
            d = S.depth[k]
            continue
        t = S.texts[k]
        if t == "by" and S.texts[k - 1:k] in (["group"], ["order"]):
            opener = S.opener(k)
            return not (opener > 0 and S.texts[opener] == "(" and S.texts[opener - 1] == "over")
        if t in ("select", "where", "on", "having", "qualify", "when", "then", "else", "partition", "from"):
            return False
    return False


def _expressions(S) -> list[tuple[int, int]]:
    """(first, last) token of every select item and every boolean operand of a WHERE / ON / HAVING
    / QUALIFY / WHEN condition: the expression a reference is read in."""
    spans = item_spans(S)
    for kw in ("where", "on", "having", "qualify", "when"):
        for k in S.find([kw]):
            spans.extend((a, b) for a, b, _c in S.operands(k + 1, S.clause_end(k, extra_stop=("then",))))
    return spans


def _beside(S, r: _Ref, refs: list[_Ref], spans: list) -> set[str]:
    """The columns of r's relation that the innermost expression holding r already reads."""
    holding = [(a, b) for a, b in spans if a <= r.at <= b]
    a, b = min(holding, key=lambda ab: ab[1] - ab[0]) if holding else (r.at, r.at)
    return {S.texts[x.at] for x in refs if a <= x.at <= b and x.qualifier == r.qualifier}


def _item_alias(S, at: int, items: list[tuple[int, int]]) -> str | None:
    """The output name (`... as name`) of the innermost select item holding token `at`, or None."""
    holding = [(a, b) for a, b in items if a <= at <= b]
    if not holding:
        return None
    a, b = min(holding, key=lambda ab: ab[1] - ab[0])
    return S.texts[b] if b - 1 > a and S.texts[b - 1] == "as" and S.ident(b) else None


def alias_gives_away(alias: str | None, name: str, other: str) -> bool:
    """The item's own name says which of the two columns it should read: a word that sets one
    apart from the other is in the alias (`start_date` read in `... as subscription_start_month`).
    Reading the other column there contradicts the name in plain sight: blind reviewers rated such
    swaps (`updated_at as conversation_created_at`) 2.0-2.5 for realism, a slip nobody would ship."""
    if not alias:
        return False
    own = set(parts(name)) ^ set(parts(other))
    # `ended_at` names `end_date` as much as `end_at` would
    return any(w == o or (len(o) >= 3 and w.startswith(o)) for w in parts(alias) for o in own)


def _references(S) -> list[_Ref]:
    scopes = _query_scopes(S)
    return [r for r in (_ref_at(S, i, scopes) for i in range(S.n)) if r is not None]


@operator("swap_column")
def swap_column(S, args, ctx):
    """One column reference reads another column with a related name that the same SELECT already
    reads from the same relation alias (or unqualified): created_at <-> updated_at, gross_amount
    <-> net_amount, customer_id <-> account_id. The most similar such column per reference; none
    for a bare select item (it would rename the output), a GROUP BY / ORDER BY key, or an item
    whose alias names the column it reads (`alias_gives_away`)."""
    refs = _references(S)
    read: dict[tuple, dict[str, int]] = {}
    for r in refs:
        read.setdefault((r.scope, r.qualifier), {}).setdefault(S.texts[r.at], r.at)
    out, spans, items = [], _expressions(S), item_spans(S)
    for r in refs:
        name = S.texts[r.at]
        others = [n for n in read[(r.scope, r.qualifier)] if related_names(name, n)]
        if others:  # a column the expression already reads is no slip (`coalesce(x, x)`, `a - a`)
            beside = _beside(S, r, refs, spans)
            others = [n for n in others if n not in beside]
        if not others or _whole_item(S, r) or _in_grouping(S, r):
            continue
        best = max(others, key=lambda n: (difflib.SequenceMatcher(None, name, n).ratio(), n))
        if alias_gives_away(_item_alias(S, r.at, items), name, best):
            continue
        new = S.text(read[(r.scope, r.qualifier)][best])
        tok = S.toks[r.at]
        out.append(Candidate(r.at, [Edit(tok.start, tok.end, new)], f"column {S.text(r.at)} -> {new}"))
    return out
