"""Operators on conditions: WHERE/HAVING/QUALIFY operands, JOIN ... ON keys, CASE branches and
window PARTITION BY / ORDER BY keys."""
from __future__ import annotations

import re

from adegen.rewrite.text import Candidate, Edit, case_like
from adegen.rewrite.operators.registry import operator, seq


def _keyword_occurrences(S, kw):
    return [i for i in S.find(seq(kw))]


def _negate(S, a, b, group, note):
    kwcase = S.text(a)
    return Candidate(group, [Edit(S.toks[a].start, S.toks[a].start, case_like(kwcase, "not") + " ("),
                             Edit(S.toks[b].end, S.toks[b].end, ")")], note, fallback=True)


def drop_operand_edit(S, ops, k):
    """The edit that removes boolean operand k of `ops` (S.operands) with its connective."""
    a, b, conn = ops[k]
    if conn is not None:
        return S.delete(conn, b)
    # first operand: take the following connective with it
    nxt = ops[k + 1][2]
    return S.delete(a, nxt)


@operator("drop_predicate", required=("clause",), anchor_arg="clause")
def drop_predicate(S, args, ctx):
    """Drop one top-level AND/OR operand of a WHERE/HAVING/QUALIFY clause (the whole clause when
    it has one). An operand that cannot be dropped within two lines gives no site (wrapping it in
    NOT ( ... ) instead is an edit nobody makes by mistake)."""
    out = []
    for i in _keyword_occurrences(S, args["clause"]):
        end = S.clause_end(i)
        ops = S.operands(i + 1, end)
        if not ops:
            continue
        for k, (a, b, _c) in enumerate(ops):
            g = (i, k)
            if len(ops) == 1:
                # FILTER (WHERE x) cannot lose its only condition
                if not (i >= 2 and S.texts[i - 1] == "(" and S.texts[i - 2] == "filter"):
                    out.append(Candidate(g, [S.delete(i, end)], f"{args['clause']} clause removed"))
            else:
                out.append(Candidate(g, [drop_operand_edit(S, ops, k)], f"{args['clause']} operand {k + 1} removed"))
    return out


@operator("negate_predicate", required=("clause",), anchor_arg="clause")
def negate_predicate(S, args, ctx):
    """Wrap one top-level operand of a WHERE/HAVING clause in NOT (...)."""
    out = []
    for i in _keyword_occurrences(S, args["clause"]):
        ops = S.operands(i + 1, S.clause_end(i))
        for k, (a, b, _c) in enumerate(ops):
            c = _negate(S, a, b, (i, k), f"{args['clause']} operand {k + 1} negated")
            c.fallback = False
            out.append(c)
    return out


@operator("join_key", fixed_anchor="on")
def join_key(S, args, ctx):
    """In each JOIN ... ON clause with several conditions, drop one of them (a composite key loses
    a part). A condition comparing a table with itself is never written: no such form."""
    out = []
    for i in S.find(["on"]):
        if i > 0 and S.texts[i - 1] == "distinct":
            continue
        end = S.clause_end(i)
        ops = S.operands(i + 1, end)
        if len(ops) < 2:
            continue
        for k, (a, b, _c) in enumerate(ops):
            out.append(Candidate((i, k), [drop_operand_edit(S, ops, k)], f"join condition {k + 1} dropped"))
    return out


def _case_parts(S, i_else):
    """For an ELSE token: (then_index, end_index) of its CASE, or None."""
    d = S.depth[i_else]
    j = i_else + 1
    while j < S.n and not (S.texts[j] == "end" and S.depth[j] == d - 1):
        j += 1
    k = i_else - 1
    while k >= 0 and not (S.texts[k] == "then" and S.depth[k] == d):
        k -= 1
    if j >= S.n or k < 0:
        return None
    return k, j


@operator("then_else_swap", fixed_anchor="else")
def then_else_swap(S, args, ctx):
    """CASE ... WHEN c THEN a ELSE b END -> ... THEN b ELSE a END (last WHEN branch)."""
    out = []
    for i in S.find(["else"]):
        parts = _case_parts(S, i)
        if not parts:
            continue
        t, e = parts
        if t + 1 > i - 1 or i + 1 > e - 1:
            continue
        a, b = S.span(t + 1, i - 1), S.span(i + 1, e - 1)
        if a == b:
            continue
        out.append(Candidate(i, [S.replace(t + 1, i - 1, b), S.replace(i + 1, e - 1, a)], "THEN and ELSE values swapped"))
    return out


@operator("drop_else", fixed_anchor="else")
def drop_else(S, args, ctx):
    """CASE ... ELSE b END -> CASE ... END (unmatched rows become NULL)."""
    out = []
    for i in S.find(["else"]):
        parts = _case_parts(S, i)
        if not parts or parts[1] - 1 < i + 1:
            continue
        out.append(Candidate(i, [S.delete(i, parts[1] - 1)], "ELSE branch removed"))
    return out


@operator("drop_partition_key", fixed_anchor="partition by")
def drop_partition_key(S, args, ctx):
    """OVER (PARTITION BY a, b ...) -> drops the last key (dedupe or ranking on too few keys); a
    window with one partition key gives no site."""
    out = []
    for i in S.find(["partition", "by"]):
        end = S.clause_end(i + 1, extra_stop=("rows", "range", "groups"))
        keys = S.split_top(i + 2, end)
        if not keys or keys[-1][0] > keys[-1][1]:
            continue
        if len(keys) == 1:
            continue  # a window with no PARTITION BY at all is not a slip anyone makes; a key too few is
        a, b = keys[-1]
        out.append(Candidate(i, [S.delete(a - 1, b)], f"partition key {S.span(a, b)} removed"))
    return out


def _order_by_in(S, o, c):
    """The ORDER token of the ORDER BY directly inside parentheses o..c, or None."""
    return next((k for k in range(o + 1, c) if S.texts[k] == "order" and S.texts[k + 1] == "by"
                 and S.depth[k] == S.depth[o] + 1), None)


@operator("flip_order", required=("within",), anchor_arg="within")
def flip_order(S, args, ctx):
    """Inside the parentheses that end token sequence `within` (e.g. `row_number ( ) over (`), or
    the OVER ( ... ) right after them (`first_value (`), flip the direction of each ORDER BY key
    (one site per key)."""
    w = seq(args["within"])
    out = []
    for i in S.find(w):
        # the last "(" of the anchor, or the first "(" after it
        o = i + len(w) - 1
        if S.texts[o] != "(":
            o = next((k for k in range(o, S.n) if S.texts[k] == "("), None)
            if o is None:
                continue
        c = S.close.get(o)
        if c is None:
            continue
        ob = _order_by_in(S, o, c)
        if ob is None and c + 2 < S.n and S.texts[c + 1] == "over" and S.texts[c + 2] == "(":
            # a value function's window follows its arguments: `first_value ( x ) over ( ... )`
            o = c + 2
            c = S.close.get(o)
            ob = None if c is None else _order_by_in(S, o, c)
        if ob is None:
            continue
        end = c - 1
        for k in range(ob + 2, c):
            if S.depth[k] == S.depth[o] + 1 and S.texts[k] in ("rows", "range", "groups"):
                end = k - 1
                break
        for n, (a, b) in enumerate(S.split_top(ob + 2, end)):
            if a > b:
                continue
            last = b
            while last > a and S.texts[last] in ("nulls", "first", "last"):
                last -= 1
            # only a DESC that goes missing: the "latest record" dedupe copied into one that keeps
            # the earliest. Adding DESC or turning ASC around is not an edit people make by mistake.
            if S.texts[last] == "desc":
                out.append(Candidate((i, n), [S.delete(last, last)], "DESC removed"))
    return out


# Clauses whose condition is a boolean expression an OR can sit in.
_BOOLEAN_CLAUSES = ("where", "having", "qualify", "on", "when")


def _or_groups(S, a, b):
    """(open, close) of every parenthesised OR that sits beside an AND among the boolean operands
    of tokens a..b, nested groups included (`x and (y or z)`, `(y or z) and x`)."""
    ops = S.operands(a, b)
    found = []
    for k, (x, y, conn) in enumerate(ops):
        if S.texts[x] != "(" or S.close.get(x) != y or y - x < 2 or S.texts[x + 1] in ("select", "with"):
            continue
        inner = S.operands(x + 1, y - 1)
        beside = [c for c in (conn, ops[k + 1][2] if k + 1 < len(ops) else None) if c is not None]
        has_or = any(S.texts[c] == "or" for _p, _q, c in inner if c is not None)
        if has_or and any(S.texts[c] == "and" for c in beside):
            found.append((x, y))
        found.extend(_or_groups(S, x + 1, y - 1))
    return found


def _drop_paren(S, k):
    """Delete the parenthesis token k; a space stays where two words would otherwise meet."""
    e = S.delete(k, k)
    glue = re.compile(r"[\w'\"]")
    if 0 < e.start and e.end < len(S.raw) and glue.match(S.raw[e.start - 1]) and glue.match(S.raw[e.end]):
        return Edit(e.start, e.end, " ")
    return e


@operator("drop_or_parens", fixed_anchor="or")
def drop_or_parens(S, args, ctx):
    """`a and (b or c)` -> `a and b or c` in a WHERE / ON / HAVING / QUALIFY / CASE WHEN condition:
    the parentheses around an OR beside an AND are dropped, so the AND binds first. A group on its
    own (`where (a or b)`), beside another OR or negated gives no site."""
    out = []
    for kw in _BOOLEAN_CLAUSES:
        for i in S.find([kw]):
            if kw == "on" and i > 0 and S.texts[i - 1] == "distinct":
                continue
            for x, y in _or_groups(S, i + 1, S.clause_end(i, extra_stop=("then",))):
                out.append(Candidate(x, [_drop_paren(S, x), _drop_paren(S, y)], "parentheses around an OR dropped"))
    return out


def _when_branches(S, i_case, i_end):
    """(first, last) token of every WHEN ... THEN ... branch of the CASE at i_case..i_end."""
    d = S.depth[i_case] + 1
    marks = [k for k in range(i_case + 1, i_end) if S.depth[k] == d and S.texts[k] in ("when", "else")]
    marks.append(i_end)
    return [(a, nxt - 1) for a, nxt in zip(marks, marks[1:]) if S.texts[a] == "when"]


@operator("drop_when", fixed_anchor="case")
def drop_when(S, args, ctx):
    """Drop one WHEN ... THEN ... branch of a CASE that has two or more (a code mapping loses a
    branch: its rows fall through to a later WHEN or the ELSE). A CASE that Jinja statements build
    (a loop over codes) gives no site."""
    out = []
    for i, end in S.case_blocks(plain=True):
        branches = _when_branches(S, i, end)
        if len(branches) < 2:
            continue
        for k, (a, b) in enumerate(branches):
            out.append(Candidate((i, k), [S.delete(a, b)], f"CASE branch {k + 1} of {len(branches)} dropped"))
    return out
