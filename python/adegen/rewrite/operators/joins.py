"""Operators on outer joins: a condition moved out of a LEFT JOIN's ON into the WHERE (the refactor
slip that silently turns the left join into an inner one), and the join key read from the joined
side (NULL on every row the left join keeps without a match)."""
from __future__ import annotations

from adegen.rewrite.text import SQL_WORDS, Candidate, Edit, case_like
from adegen.rewrite.operators.predicates import drop_operand_edit
from adegen.rewrite.operators.registry import operator
from adegen.rewrite.operators.select_lists import every_select

# Clause keywords that end a SELECT's FROM/JOIN chain (a new WHERE goes right before them).
_AFTER_JOINS = frozenset({"where", "group", "having", "qualify", "window", "order", "limit", "offset",
                          "fetch", "union", "intersect", "except", ";"})


def _left_joins(S) -> list[int]:
    """The JOIN token of every LEFT [OUTER] JOIN."""
    return [i + 1 for i in S.find(["left", "join"])] + [i + 2 for i in S.find(["left", "outer", "join"])]


def _joined_alias(S, j: int) -> tuple[str, int] | None:
    """(the name the joined relation goes by, index of its ON) for the JOIN token j, or None (no ON,
    a relation without a name to qualify columns with)."""
    k, name = j + 1, None
    if k < S.n and S.texts[k] == "(" and k in S.close:
        k = S.close[k] + 1
    elif k < S.n and S.toks[k].kind == "jinja":
        k += 1
    elif S.ident(k):
        while S.texts[k + 1:k + 2] == ["."] and S.ident(k + 2):
            k += 2
        name, k = S.texts[k], k + 1
    else:
        return None
    if S.texts[k:k + 1] == ["as"]:
        k += 1
    if S.ident(k) and S.texts[k] not in ("on", "using"):
        name, k = S.texts[k], k + 1
    if name is None or S.texts[k:k + 1] != ["on"]:
        return None
    return name, k


def _reads_only(S, a: int, b: int, alias: str) -> bool:
    """Tokens a..b read columns of `alias` and of nothing else (x.status = 'active', x.deleted_at is
    null): not a key equality between the two sides, no unqualified column of unknown side."""
    qualifiers = set()
    for k in range(a, b + 1):
        if not S.ident(k) or (k > a and S.texts[k - 1] in (".", "::", "as")):
            continue
        nxt = S.texts[k + 1] if k < b else ""
        if nxt == ".":
            qualifiers.add(S.texts[k])
        elif (nxt != "(" and S.texts[k] not in SQL_WORDS) or S.texts[k] == "select":
            return False  # an unqualified column (its side is unknown) or a subquery
    return qualifiers == {alias}


def from_indent(S, j: int) -> str:
    """The indentation of the FROM line of the SELECT that holds JOIN token j (else of the JOIN's)."""
    k = next((k for k in range(j - 1, -1, -1) if S.texts[k] == "from" and S.depth[k] == S.depth[j]), j)
    start, _end = S.line_of(S.toks[k].start)
    line = S.raw[start:]
    return line[: len(line) - len(line.lstrip(" \t"))]


def chain_end(S, on: int) -> int:
    """The first token after the FROM/JOIN chain that holds ON token `on`: a clause keyword at its
    depth, the parenthesis closing its SELECT, or S.n."""
    d = S.depth[on]
    for k in range(on + 1, S.n):
        if S.depth[k] < d or (S.depth[k] == d and S.texts[k] in _AFTER_JOINS):
            return k
    return S.n


def append_to_where(S, w: int, pred: str) -> Edit | None:
    """` and <pred>` at the end of the WHERE clause at token w (none when it has a top-level OR,
    which the new condition would bind to one side of)."""
    end = S.clause_end(w)
    if any(S.texts[c] == "or" for _a, _b, c in S.operands(w + 1, end) if c is not None):
        return None
    pos = S.toks[end].end
    return Edit(pos, pos, f" {case_like(S.text(w), 'and')} {pred}")


def _new_where(S, j: int, last: int, stop: int, moved: tuple) -> Edit | None:
    """A `where <condition>` after token `last` (the end of the FROM/JOIN chain once the condition
    `moved` (first, last token) has left it): on a line of its own with the FROM line's
    indentation, or inline when the next clause follows on the same line."""
    kw, pred = case_like(S.text(j), "where"), S.span(moved[0], moved[1])
    pos = S.toks[last].end
    _start, line_end = S.line_of(pos)
    if stop < S.n and "\n" not in S.raw[pos:S.toks[stop].start]:
        return Edit(pos, pos, f" {kw} {pred}")
    gone = S.toks[moved[1]].end  # the moved condition may end the line: it is not in the way
    rest = S.raw[gone if pos <= gone <= line_end else pos:line_end]
    if rest.strip() and not rest.strip().startswith("--"):
        return None  # a block comment or Jinja after the chain: no clean place for the line
    nl = "\r\n" if "\r\n" in S.raw else "\n"
    return Edit(line_end, line_end, f"{nl}{from_indent(S, j)}{kw} {pred}")


def _where_edit(S, j: int, on: int, moved: tuple) -> Edit | None:
    """Where the ON condition `moved` (first, last, connective before it) of the JOIN at token j
    goes: the SELECT's WHERE, or a new one. None when a Jinja statement sits between (the WHERE
    might not render with the join)."""
    a, b, conn = moved
    pred = S.span(a, b)
    stop = chain_end(S, on)
    if stop < S.n and S.texts[stop] == "where":
        edit = append_to_where(S, stop, pred)
    else:
        last = stop - 1
        if a <= last <= b:  # the condition ended the chain: it now ends before its AND
            last = conn - 1
        edit = _new_where(S, j, last, stop, (a, b))
    if edit is None or "{%" in S.raw[S.toks[j].start:edit.start]:
        return None
    return edit


@operator("move_join_filter", fixed_anchor="join")
def move_join_filter(S, args, ctx):
    """In `left join t as x on a.k = x.k and x.status = 'active'`, an ON condition that reads only
    the joined relation moves to the same SELECT's WHERE (`and ...` at its end, or a new `where`
    line before GROUP BY / ORDER BY / the end of the select). ON clauses with an OR, conditions on
    both sides or unqualified columns, and a WHERE that would have to cross a Jinja statement give
    no site."""
    out = []
    for j in _left_joins(S):
        found = _joined_alias(S, j)
        if found is None:
            continue
        alias, on = found
        ops = S.operands(on + 1, S.clause_end(on))
        if len(ops) < 2 or any(S.texts[c] != "and" for _a, _b, c in ops if c is not None):
            continue
        for k, (a, b, conn) in enumerate(ops):
            if not _reads_only(S, a, b, alias):
                continue
            moved = _where_edit(S, j, on, (a, b, conn))
            if moved is not None:
                out.append(Candidate((on, k), [drop_operand_edit(S, ops, k), moved],
                                     f"join condition {S.span(a, b)} moved to WHERE"))
    return out


def _key_pairs(S, on: int, alias: str) -> list[tuple[str, int, int]]:
    """(the other side's qualifier, its key column's token, the joined side's key column's token)
    of every `x.k = alias.k2` equality of the ON clause at token `on` (an ON with an OR: none)."""
    ops = S.operands(on + 1, S.clause_end(on))
    if any(S.texts[c] == "or" for _a, _b, c in ops if c is not None):
        return []
    out = []
    for a, b, _conn in ops:
        t = S.texts[a:b + 1]
        if b - a != 6 or t[1] != "." or t[3] != "=" or t[5] != "." or not all(S.ident(k) for k in (a, a + 2, a + 4, a + 6)):
            continue
        if t[4] == alias and t[0] != alias:
            out.append((t[0], a + 2, a + 6))
        elif t[0] == alias and t[4] != alias:
            out.append((t[4], a + 6, a + 2))
    return out


def _select_end(S, select: int, frm: int) -> int:
    """The last token of the SELECT at token `select` whose FROM is token `frm` (before a closing
    parenthesis, a set operation or the end)."""
    d, k = S.depth[select], frm + 1
    while k < S.n and S.depth[k] >= d and not (S.texts[k] == ")" and S.open.get(k, S.n) < select) \
            and not (S.depth[k] == d and S.texts[k] in ("union", "intersect", "except", ";")):
        k += 1
    return k - 1


def _grouped(S, frm: int, end: int) -> bool:
    """Tokens frm..end (a SELECT's clauses) hold a GROUP BY of that SELECT."""
    d = S.depth[frm]
    return any(S.texts[k] == "group" and S.texts[k + 1:k + 2] == ["by"] and S.depth[k] == d for k in range(frm, end))


@operator("key_from_joined_side", fixed_anchor="left join")
def key_from_joined_side(S, args, ctx):
    """In `select c.customer_id, ... from customers c left join orders o on c.customer_id =
    o.customer_id`, the select item that reads the key from the preserved side reads the joined
    side's key instead (`o.customer_id`): equal on every matched row, NULL on every row the left
    join keeps without a match. Only a whole select item (`c.k` or `c.k as name`) of the SELECT
    that holds the join, not in a grouped SELECT (its GROUP BY names the other column)."""
    out = []
    for sel, items, frm in every_select(S):
        if frm is None:
            continue
        end = _select_end(S, sel, frm)
        joins = [j for j in _left_joins(S) if frm < j <= end and S.depth[j] == S.depth[sel]]
        if not joins or _grouped(S, frm, end):
            continue
        for j in joins:
            found = _joined_alias(S, j)
            if found is None:
                continue
            alias, on = found
            for other, left_key, right_key in _key_pairs(S, on, alias):
                for a, b in items:
                    if b - a not in (2, 4) or S.texts[a:a + 3] != [other, ".", S.texts[left_key]]:
                        continue
                    if b - a == 4 and S.texts[a + 3] != "as":
                        continue
                    if b - a == 2 and S.texts[left_key] != S.texts[right_key]:
                        continue  # the bare item would be renamed after the other key
                    new = f"{S.text(on - 1) if S.texts[on - 1] == alias else alias}.{S.text(right_key)}"
                    out.append(Candidate((a, j), [Edit(S.toks[a].start, S.toks[a + 2].end, new)],
                                         f"{S.span(a, a + 2)} -> {new}"))
    return out


@operator("count_rows_of_left_join", fixed_anchor="left join")
def count_rows_of_left_join(S, args, ctx):
    """In a grouped SELECT with `left join orders as o on c.id = o.customer_id`, `count(o.k)` of a
    column the joined side always has on a match (its join key, or an id) becomes `count(*)`: 0 for
    an entity the join found nothing for becomes 1 (the left join keeps it as one row of NULLs)."""
    out = []
    for sel, items, frm in every_select(S):
        if frm is None:
            continue
        end = _select_end(S, sel, frm)
        if not _grouped(S, frm, end):
            continue
        keys: dict[str, tuple[int, set]] = {}  # joined alias -> (its JOIN token, its key columns)
        for j in _left_joins(S):
            found = _joined_alias(S, j) if frm < j <= end and S.depth[j] == S.depth[sel] else None
            if found is not None:
                alias, on = found
                keys[alias] = (j, {S.texts[right] for _o, _l, right in _key_pairs(S, on, alias)})
        for a, b in items:
            for k in range(a, b - 4):
                t = S.texts[k:k + 6]
                if t[:2] != ["count", "("] or t[2] not in keys or t[3] != "." or t[5] != ")" or not S.ident(k + 4):
                    continue
                col = t[4]
                # a column NULL on some matched rows too (count(o.shipped_at)) counts something else
                if col not in keys[t[2]][1] and col != "id" and not col.endswith("_id"):
                    continue
                out.append(Candidate((k, keys[t[2]][0]), [Edit(S.toks[k + 2].start, S.toks[k + 4].end, "*")],
                                     f"count({S.span(k + 2, k + 4)}) -> count(*)"))
    return out
