"""The select-list operator: drop one column of the model's final SELECT (through `select * from
cte` and every UNION branch)."""
from __future__ import annotations

import re

from adegen.rewrite.text import Candidate
from adegen.rewrite.operators.registry import operator


def every_select(S):
    """[(select_index, [(a, b) items], from_index_or_None)] for every SELECT."""
    res = []
    for i in S.find(["select"]):
        d = S.depth[i]
        j = i + 1
        while j < S.n:
            if S.depth[j] < d or (S.texts[j] in (")", "end") and S.open.get(j, -1) < i):
                break
            if S.depth[j] == d and not (S.texts[j] == "group" and S.texts[j - 1] == "within") and S.texts[j] in ("from", "where", "group", "union", "order", "limit", "having", "qualify", "window", "except", "intersect"):
                break
            j += 1
        a = i + 1
        while a < j and S.texts[a] in ("distinct", "all"):
            a += 1
        if a <= j - 1:
            res.append((i, S.split_top(a, j - 1), j if j < S.n and S.texts[j] == "from" else None))
    return res


def final_chain(S, lists=None):
    """[(select_index, items, from_index)] from the model's last top-level SELECT down through
    `select * from cte` to the SELECT that names the columns (the model's output, outermost first)."""
    lists = every_select(S) if lists is None else lists
    top = [x for x in lists if S.depth[x[0]] == 0]
    if not top:
        return []
    chain, cur = [], top[-1]
    seen = set()
    while cur and cur[0] not in seen:
        seen.add(cur[0])
        chain.append(cur)
        items = cur[1]
        star = len(items) == 1 and S.texts[items[0][1]] == "*"
        if not star or cur[2] is None or cur[2] + 1 >= S.n:
            break
        name = S.texts[cur[2] + 1]
        cte = next((k for k in S.find([name, "as", "("]) if k < cur[0]), None)
        if cte is None:
            break
        nxt = [x for x in lists if x[0] > cte + 2 and S.close.get(cte + 2, -1) > x[0] and S.depth[x[0]] == S.depth[cte + 2] + 1]
        cur = nxt[-1] if nxt else None
    return chain


def item_name(S, a, b):
    """The name a select item a..b gives its value: its alias, or its last token when that is a bare name."""
    if b - 1 >= a and S.texts[b - 1] == "as":
        return S.text(b).strip('"')
    if S.toks[b].kind == "sql" and re.fullmatch(r"[a-z_][a-z0-9_$]*|\"[^\"]+\"", S.texts[b]):
        return S.text(b).strip('"')
    return None


def _branches(S, lists, sel):
    """(is_set_operation, [select lists of the same query scope]) for the SELECT at `sel`."""
    d = S.depth[sel]
    k = sel - 1
    while k >= 0 and not (S.texts[k] == "(" and S.depth[k] == d - 1 and S.close.get(k, -1) > sel):
        k -= 1
    lo, hi = (k, S.close[k]) if k >= 0 else (-1, S.n)
    setop = any(S.texts[j] in ("union", "intersect", "except") and S.depth[j] == d for j in range(lo + 1, hi))
    return setop, [x for x in lists if lo < x[0] < hi and S.depth[x[0]] == d]


def _drop_item_edit(S, items, k):
    a, b = items[k]
    return S.delete(a, b + 1) if k + 1 < len(items) else S.delete(a - 1, b)


@operator("drop_select_item")
def drop_select_item(S, args, ctx):
    """Drop one column of the model's final SELECT (following `select * from cte` to the CTE; in
    every branch of a UNION); when that is impossible, one column of another SELECT list with two
    or more columns that is not part of a set operation."""
    lists = every_select(S)
    chain = final_chain(S, lists)
    cands = []
    used = set()

    def add(branch_lists, fallback):
        n = len(branch_lists[0][1])
        if n < 2 or any(len(x[1]) != n for x in branch_lists):
            return
        for k in range(n):
            if any(x[1][k][0] > x[1][k][1] or S.texts[x[1][k][1]] == "*" for x in branch_lists):
                continue
            a, b = branch_lists[0][1][k]
            col = item_name(S, a, b)
            cands.append(Candidate("columns", [_drop_item_edit(S, x[1], k) for x in branch_lists],
                                   f"column {col or S.span(a, b)} dropped",
                                   placeholders={"column": col} if col else {}, fallback=fallback))

    for sel, items, _f in chain:
        setop, branches = _branches(S, lists, sel)
        used.update(x[0] for x in branches)
        add(branches if setop else [(sel, items, _f)], False)
    for sel, items, _f in lists:
        if sel in used:
            continue
        setop, _br = _branches(S, lists, sel)
        if not setop:
            add([(sel, items, _f)], True)
    return cands


def item_spans(S) -> list[tuple[int, int]]:
    """(first, last) token of every item of every select list."""
    return [(a, b) for _sel, items, _f in every_select(S) for a, b in items if a <= b]


def item_span(S, i) -> tuple[int, int]:
    """(first, last) token of the innermost select-list item holding token i, or of i's line when
    no select list holds it (a WHERE, a JOIN condition)."""
    spans = [(a, b) for a, b in item_spans(S) if a <= i <= b]
    if spans:
        return min(spans, key=lambda ab: ab[1] - ab[0])
    start, end = S.line_of(S.toks[i].start)
    on_line = [k for k, t in enumerate(S.toks) if start <= t.start < end]
    return on_line[0], on_line[-1]


def item_places(S, tokens) -> dict[int, tuple[int, tuple[int, int]] | None]:
    """For each token: (index of the select list, the span of its innermost item holding it), or
    None outside every select list. The select lists are found once for all the tokens."""
    lists = every_select(S)
    out = {}
    for t in tokens:
        held = [(b - a, li, (a, b)) for li, (_sel, items, _f) in enumerate(lists) for a, b in items if a <= t <= b]
        out[t] = min(held)[1:] if held else None
    return out


def item_text(S, i) -> str:
    """The raw text of `item_span` (a select item with its alias, or the line)."""
    a, b = item_span(S, i)
    return S.raw[S.toks[a].start:S.toks[b].end]


NOTE_LINES = 3  # comment-only lines right above an item that are read as its note


def _lines_above(S, first: int) -> list[tuple[int, int]]:
    """(start, end) of the comment-only lines right above the line starting at `first`, nearest
    first, at most NOTE_LINES (end: the position of the line's break)."""
    out, end = [], first - 1
    for _ in range(NOTE_LINES):
        if end <= 0:
            break
        start = S.raw.rfind("\n", 0, end) + 1
        line = S.raw[start:end].strip()
        if not line.startswith(("--", "/*", "{#")) and not line.endswith(("*/", "#}")):
            break
        out.append((start, end))
        end = start - 1
    return out


def note_spans(S, i) -> list[tuple[int, int]]:
    """The text spans of item_note's comments, each as an edit would delete it: a comment-only line
    right above the item with its line break, and a `--` comment ending the item's last line with
    the spaces before it (the item's comma stays)."""
    a, b = item_span(S, i)
    first, _ = S.line_of(S.toks[a].start)
    _, last_end = S.line_of(S.toks[b].end)
    spans = []
    rest = S.raw[S.toks[b].end:last_end]
    dash = rest.find("--")
    if dash >= 0 and "'" not in rest[:dash]:
        start = S.toks[b].end + dash
        while start > S.toks[b].end and S.raw[start - 1] in " \t":
            start -= 1
        spans.append((start, last_end))
    return spans + [(start, end + 1) for start, end in _lines_above(S, first)]


def item_note(S, i) -> str:
    """The comments that annotate the item holding token i: the rest of its last line and the
    comment-only lines right above its first line (`-- amount is stored in cents` over
    `amount / 100 as amount`)."""
    a, b = item_span(S, i)
    first, _ = S.line_of(S.toks[a].start)
    _, last_end = S.line_of(S.toks[b].end)
    notes = [S.raw[S.toks[b].end:last_end]] + [S.raw[start:end].strip() for start, end in _lines_above(S, first)]
    return "\n".join(notes)
