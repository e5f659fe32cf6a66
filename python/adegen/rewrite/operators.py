"""Rewrite operators: each turns one model's tokens into candidate edits (pure).

An operator is `fn(S, args, ctx) -> list[Candidate]`. Candidates sharing a `group` (one anchor
occurrence) are alternatives: every valid primary candidate is a site; a fallback is used only
when no primary of its group survives the engine's checks (<= 2 lines, no Jinja/comment damage).
"""
from __future__ import annotations

import datetime as _dt
import difflib
import re

from adegen import lexer
from adegen.rewrite.text import Candidate, Edit, Struct, case_like

OPERATORS: dict[str, dict] = {}


def operator(name, required=(), optional=(), anchor_arg=None, fixed_anchor=None):
    """`anchor_arg`: the argument whose token sequence (plus "(" for `function`) the pattern's
    applies_when must list; `fixed_anchor`: the sequence the operator always starts from."""
    def deco(fn):
        OPERATORS[name] = {"fn": fn, "required": set(required), "optional": set(optional),
                           "anchor_arg": anchor_arg, "fixed_anchor": fixed_anchor,
                           "doc": (fn.__doc__ or "").strip()}
        return fn
    return deco


def seq(text: str) -> list[str]:
    return lexer.split_sequence(text)


def _anchor(S: Struct, text: str) -> list[int]:
    return S.find(seq(text))


# ---------------------------------------------------------------------------------------------
@operator("replace_tokens", required=("match", "replace"), anchor_arg="match")
def replace_tokens(S, args, ctx):
    """At every occurrence of token sequence `match`, turn it into `replace` (token diff; equal
    tokens keep their spelling, new keywords follow the case of the text)."""
    m, r = seq(args["match"]), seq(args["replace"])
    out = []
    for i in S.find(m):
        edits = []
        ref_text = next((S.text(i + k) for k in range(len(m)) if S.text(i + k)[:1].isalpha()), S.text(i))
        sm = difflib.SequenceMatcher(None, m, r, autojunk=False)
        for tag, a1, a2, b1, b2 in sm.get_opcodes():
            if tag == "equal":
                continue
            if tag == "replace":
                orig = S.text(i + a1)
                new = " ".join(r[b1:b2])
                edits.append(S.replace(i + a1, i + a2 - 1, case_like(orig if orig[:1].isalpha() else ref_text, new)))
            elif tag == "delete":
                edits.append(S.delete(i + a1, i + a2 - 1))
            else:  # insert
                new = case_like(ref_text, " ".join(r[b1:b2]))
                if a1 > 0:
                    pos = S.toks[i + a1 - 1].end
                    edits.append(Edit(pos, pos, " " + new))
                else:
                    pos = S.toks[i].start
                    edits.append(Edit(pos, pos, new + " "))
        out.append(Candidate(i, edits, f"{args['match']} -> {args['replace']}"))
    return out


def _keyword_occurrences(S, kw):
    return [i for i in S.find(seq(kw))]


def _negate(S, a, b, group, note):
    kwcase = S.text(a)
    return Candidate(group, [Edit(S.toks[a].start, S.toks[a].start, case_like(kwcase, "not") + " ("),
                             Edit(S.toks[b].end, S.toks[b].end, ")")], note, fallback=True)


def _drop_operand_edits(S, ops, k):
    a, b, conn = ops[k]
    if conn is not None:
        return S.delete(conn, b)
    # first operand: take the following connective with it
    nxt = ops[k + 1][2]
    return S.delete(a, nxt)


@operator("drop_predicate", required=("clause",), anchor_arg="clause")
def drop_predicate(S, args, ctx):
    """Drop one top-level AND/OR operand of a WHERE/HAVING/QUALIFY clause (the whole clause when
    it has one); when that would touch more than 2 lines the operand is negated instead."""
    out = []
    for i in _keyword_occurrences(S, args["clause"]):
        end = S.clause_end(i)
        ops = S.operands(i + 1, end)
        if not ops:
            continue
        for k, (a, b, _c) in enumerate(ops):
            g = (i, k)
            if len(ops) == 1:
                # FILTER (WHERE x) cannot lose its only condition: negation only
                if not (i >= 2 and S.texts[i - 1] == "(" and S.texts[i - 2] == "filter"):
                    out.append(Candidate(g, [S.delete(i, end)], f"{args['clause']} clause removed"))
            else:
                out.append(Candidate(g, [_drop_operand_edits(S, ops, k)], f"{args['clause']} operand {k + 1} removed"))
            out.append(_negate(S, a, b, g, f"{args['clause']} operand {k + 1} negated"))
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
    """In each JOIN ... ON clause: drop one conjunct of a multi-key condition, or point one side
    of a qualified equality (a.x = b.y) at the other table's alias (a.x = a.y)."""
    out = []
    for i in S.find(["on"]):
        if i > 0 and S.texts[i - 1] == "distinct":
            continue
        end = S.clause_end(i)
        ops = S.operands(i + 1, end)
        for k, (a, b, _c) in enumerate(ops):
            g = (i, k)
            if len(ops) > 1:
                out.append(Candidate(g, [_drop_operand_edits(S, ops, k)], f"join condition {k + 1} dropped"))
            t = S.texts[a : b + 1]
            if len(t) == 7 and t[1] == "." and t[3] == "=" and t[5] == "." and t[0] != t[4] \
                    and S.toks[a].kind == "sql" and S.toks[a + 4].kind == "sql":
                out.append(Candidate(g, [Edit(S.toks[a + 4].start, S.toks[a + 4].end, S.text(a))],
                                     f"join key {S.text(a + 4)}.{S.text(a + 6)} -> {S.text(a)}.{S.text(a + 6)}"))
    return out


def _calls(S, fn):
    return [i for i in S.find([fn.lower(), "("])]


@operator("unwrap_call", required=("function",), optional=("fallback",), anchor_arg="function")
def unwrap_call(S, args, ctx):
    """f(x, ...) -> x (fallback `null_last_arg`: f(x, d) -> f(x, null) when unwrapping would
    touch more than 2 lines)."""
    out = []
    for i in _calls(S, args["function"]):
        o = i + 1
        c = S.close.get(o)
        argl = S.call_args(o)
        if c is None or not argl:
            continue
        a0, b0 = argl[0]
        edits = [Edit(S.toks[i].start, S.toks[a0].start, "") if S.gap_plain(o, a0) else None,
                 Edit(S.toks[b0].end, S.toks[c].end, "")]
        if edits[0] is not None and all(S.toks[k].kind != "jinja" for k in range(b0 + 1, c)) and S.gap_plain(b0, c):
            out.append(Candidate(i, edits, f"{args['function']}() removed"))
        if args.get("fallback") == "null_last_arg" and len(argl) >= 2:
            a, b = argl[-1]
            if S.texts[a : b + 1] != ["null"]:
                out.append(Candidate(i, [S.replace(a, b, case_like(S.text(i), "null"))],
                                     f"{args['function']}() default -> null", fallback=True))
    return out


def _literal_alt(S, a, b):
    """A different value of the same kind for the expression a..b, or None."""
    if a != b:
        if b == a + 1 and S.texts[a] == "-" and re.fullmatch(r"[0-9.]+", S.texts[b]):
            return "0"
        return None
    t, txt = S.texts[a], S.text(a)
    if S.toks[a].kind == "string":
        if "{{" in txt or "{%" in txt:
            return None
        return "'unknown'" if txt == "''" else "''"
    if re.fullmatch(r"[0-9]+", t):
        return "1" if int(t) == 0 else "0"
    if re.fullmatch(r"[0-9]+\.[0-9]+", t):
        return "1.0" if float(t) == 0 else "0.0"
    if t in ("true", "false"):
        return case_like(txt, "false" if t == "true" else "true")
    return None


@operator("change_default", required=("function",), anchor_arg="function")
def change_default(S, args, ctx):
    """coalesce(x, d): a literal default gets another value (0 -> 1, 'x' -> ''); an expression
    default is swapped with the first argument."""
    out = []
    for i in _calls(S, args["function"]):
        argl = S.call_args(i + 1)
        if len(argl) < 2:
            continue
        a, b = argl[-1]
        alt = _literal_alt(S, a, b)
        if alt is not None:
            out.append(Candidate(i, [S.replace(a, b, alt)], f"default {S.span(a, b)} -> {alt}", touches_literal=True))
        else:
            x0, y0 = argl[0]
            if S.span(x0, y0) != S.span(a, b) and not S.has_jinja(a, b) and not S.has_jinja(x0, y0):
                out.append(Candidate(i, [S.replace(x0, y0, S.span(a, b)), S.replace(a, b, S.span(x0, y0))],
                                     "arguments swapped"))
    return out


@operator("swap_args", required=("function", "a", "b"), anchor_arg="function")
def swap_args(S, args, ctx):
    """Swap arguments number a and b (0-based) of every call of `function`."""
    out = []
    ia, ib = int(args["a"]), int(args["b"])
    for i in _calls(S, args["function"]):
        argl = S.call_args(i + 1)
        if len(argl) <= max(ia, ib):
            continue
        (x0, y0), (x1, y1) = argl[ia], argl[ib]
        if S.span(x0, y0) == S.span(x1, y1):
            continue
        out.append(Candidate(i, [S.replace(x0, y0, S.span(x1, y1)), S.replace(x1, y1, S.span(x0, y0))],
                             f"{args['function']} arguments {ia + 1} and {ib + 1} swapped",
                             touches_jinja=False))
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
    """OVER (PARTITION BY a, b ...) -> drops the last key, or the whole PARTITION BY when it has one."""
    out = []
    for i in S.find(["partition", "by"]):
        end = S.clause_end(i + 1, extra_stop=("rows", "range", "groups"))
        keys = S.split_top(i + 2, end)
        if not keys or keys[-1][0] > keys[-1][1]:
            continue
        if len(keys) == 1:
            out.append(Candidate(i, [S.delete(i, end)], "PARTITION BY removed"))
        else:
            a, b = keys[-1]
            out.append(Candidate(i, [S.delete(a - 1, b)], f"partition key {S.span(a, b)} removed"))
    return out


@operator("flip_order", required=("within",), anchor_arg="within")
def flip_order(S, args, ctx):
    """Inside the parentheses that end token sequence `within` (e.g. `row_number ( ) over (`),
    flip the direction of each ORDER BY key (one site per key)."""
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
        ob = next((k for k in range(o + 1, c) if S.texts[k] == "order" and S.texts[k + 1] == "by" and S.depth[k] == S.depth[o] + 1), None)
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
            if S.texts[last] == "desc":
                out.append(Candidate((i, n), [S.delete(last, last)], "DESC removed"))
            elif S.texts[last] == "asc":
                out.append(Candidate((i, n), [S.kw(last, "desc")], "ASC -> DESC"))
            else:
                pos = S.toks[last].end
                out.append(Candidate((i, n), [Edit(pos, pos, " " + case_like(S.text(ob), "desc"))], "DESC added"))
    return out


@operator("toggle_sign", fixed_anchor="-")
def toggle_sign(S, args, ctx):
    """Binary a - b -> a + b; unary -x -> x."""
    out = []
    for i in S.find(["-"]):
        prev = S.toks[i - 1] if i else None
        binary = prev is not None and (prev.kind != "sql" or prev.text == ")" or re.fullmatch(r"[a-z_0-9\"][a-z0-9_$.\"]*", prev.text)) \
            and prev.text not in ("select", "and", "or", "then", "else", "when", "by", "not", "case", "where", "on", "return", "is", "in", "between")
        if binary:
            out.append(Candidate(i, [Edit(S.toks[i].start, S.toks[i].end, "+")], "minus -> plus"))
        elif i + 1 < S.n:
            out.append(Candidate(i, [Edit(S.toks[i].start, S.toks[i + 1].start, "") if S.gap_plain(i, i + 1) else Edit(S.toks[i].start, S.toks[i].end, "")], "unary minus removed"))
    return out


GRAINS = {"year": "quarter", "quarter": "month", "month": "week", "week": "month", "day": "week",
          "hour": "day", "minute": "hour", "second": "minute", "millisecond": "second",
          "years": "quarters", "months": "weeks", "days": "weeks", "weeks": "days",
          "yy": "mm", "mm": "dd", "dd": "mm", "d": "w", "mon": "week", "hh": "dd"}


def _toggle_case(inner: str):
    # skip Jinja parts inside the literal
    jinja = [(m.start(), m.end()) for m in re.finditer(r"\{\{.*?\}\}|\{%.*?%\}", inner)]
    for k, ch in enumerate(inner):
        if ch.isalpha() and not any(a <= k < b for a, b in jinja):
            return inner[:k] + (ch.lower() if ch.isupper() else ch.upper()) + inner[k + 1:]
    return inner + " "


def _like(inner: str):
    if inner.startswith("%") and len(inner) > 1:
        return inner[1:]
    if inner.endswith("%") and len(inner) > 1:
        return inner[:-1]
    return inner + "%" if inner != "%" else "_%"


def _format(inner: str):
    u = inner.upper()
    mi, di = u.find("MM"), u.find("DD")
    if mi >= 0 and di >= 0:
        s = list(inner)
        s[mi:mi + 2], s[di:di + 2] = inner[di:di + 2], inner[mi:mi + 2]
        return "".join(s)
    if "YYYY" in u:
        k = u.find("YYYY")
        return inner[:k] + inner[k + 2:]
    return None


def _grain(word: str):
    new = GRAINS.get(word.lower())
    return case_like(word, new) if new else None


def _intshift(t: str):
    if re.fullmatch(r"[0-9]+", t):
        n = int(t)
        return str(n + 1) if n <= 1 else str(n - 1)
    return None


LITERAL_KINDS = {"case_toggle": _toggle_case, "like_wildcard": _like, "format_swap": _format,
                 "grain": _grain, "int_shift": _intshift}


@operator("edit_literal", required=("at", "kind"), optional=("offset",), anchor_arg="at")
def edit_literal(S, args, ctx):
    """Change the literal token number `offset` (default: last) of every occurrence of `at`:
    kind case_toggle ('completed' -> 'Completed'; no letters -> trailing space), like_wildcard
    (drop a leading/trailing %), grain ('month' -> 'week', also bare keywords), format_swap
    (MM <-> DD), int_shift (1 -> 2, n -> n-1)."""
    w = seq(args["at"])
    off = int(args.get("offset", len(w) - 1))
    fn = LITERAL_KINDS[args["kind"]]
    out = []
    for i in S.find(w):
        k = i + off
        if k >= S.n:
            continue
        tok, txt = S.toks[k], S.text(k)
        if tok.kind == "string":
            if not (txt.startswith("'") and txt.endswith("'")):
                continue
            new = fn(txt[1:-1])
            if new is None or "'" in new.replace("''", ""):
                continue
            new = f"'{new}'"
        elif tok.kind == "sql":
            new = fn(txt)
        else:
            continue
        if new is None or new == txt:
            continue
        out.append(Candidate(i, [Edit(tok.start, tok.end, new)], f"{txt} -> {new}", touches_literal=True))
    return out


@operator("interval_shift", fixed_anchor="interval")
def interval_shift(S, args, ctx):
    """interval 30 day -> 29 / 31 (also '30 days')."""
    out = []
    for i in S.find(["interval"]):
        if i + 1 >= S.n:
            continue
        tok, txt = S.toks[i + 1], S.text(i + 1)
        m = re.search(r"[0-9]+", txt) if tok.kind in ("sql", "string") else None
        if not m or (tok.kind == "sql" and not txt.isdigit()):
            continue
        n = int(m.group())
        for new in ([n - 1] if n > 1 else []) + [n + 1]:
            t = txt[: m.start()] + str(new) + txt[m.end():]
            out.append(Candidate((i, new), [Edit(tok.start, tok.end, t)], f"interval {n} -> {new}", touches_literal=True))
    return out


def _shift_value(S, a, b, delta):
    if a != b:
        return None
    tok, txt = S.toks[a], S.text(a)
    if tok.kind == "sql" and re.fullmatch(r"[0-9]+", txt):
        v = int(txt) + delta
        return str(v) if v >= 0 else None
    if tok.kind == "string":
        m = re.fullmatch(r"'(\d{4})-(\d{2})-(\d{2})(.*)'", txt)
        if m:
            try:
                d = _dt.date(int(m[1]), int(m[2]), int(m[3])) + _dt.timedelta(days=delta)
            except ValueError:
                return None
            return f"'{d.isoformat()}{m[4]}'"
    return None


@operator("between_shift", fixed_anchor="between")
def between_shift(S, args, ctx):
    """x BETWEEN a AND b: a literal upper bound moves one step in (b - 1 / one day earlier), else
    a literal lower bound moves up; non-literal bounds are swapped; a window frame's lower bound
    `unbounded preceding` becomes `1 preceding` (n preceding -> n + 1)."""
    out = []
    for i in S.find(["between"]):
        d = S.depth[i]
        j = next((k for k in range(i + 1, S.n) if S.texts[k] == "and" and S.depth[k] == d), None)
        if j is None:
            continue
        if i > 0 and S.texts[i - 1] in ("rows", "range", "groups"):
            lo = S.texts[i + 1 : j]
            if lo == ["unbounded", "preceding"]:
                out.append(Candidate(i, [S.replace(i + 1, i + 1, "1")], "frame start -> 1 preceding"))
            elif len(lo) == 2 and lo[0].isdigit():
                out.append(Candidate(i, [S.replace(i + 1, i + 1, str(int(lo[0]) + 1))], "frame start shifted"))
            else:
                hi_end = S.clause_end(j, extra_stop=("exclude",))
                hi = S.texts[j + 1 : hi_end + 1]
                if hi == ["unbounded", "following"]:
                    out.append(Candidate(i, [S.replace(j + 1, j + 1, "1")], "frame end -> 1 following"))
                elif len(hi) == 2 and hi[0].isdigit():
                    out.append(Candidate(i, [S.replace(j + 1, j + 1, str(int(hi[0]) + 1))], "frame end shifted"))
            continue
        a0, b0 = i + 1, j - 1
        a1 = j + 1
        b1 = S.expr_end(a1)
        if a0 > b0 or a1 >= S.n:
            continue
        new = _shift_value(S, a1, b1, -1)
        if new is not None:
            out.append(Candidate(i, [S.replace(a1, b1, new)], f"upper bound {S.span(a1, b1)} -> {new}", touches_literal=True))
            continue
        new = _shift_value(S, a0, b0, +1)
        if new is not None:
            out.append(Candidate(i, [S.replace(a0, b0, new)], f"lower bound {S.span(a0, b0)} -> {new}", touches_literal=True))
            continue
        if S.span(a0, b0) != S.span(a1, b1):
            out.append(Candidate(i, [S.replace(a0, b0, S.span(a1, b1)), S.replace(a1, b1, S.span(a0, b0))], "bounds swapped"))
    return out


@operator("drop_list_item", required=("at",), anchor_arg="at")
def drop_list_item(S, args, ctx):
    """In every list that starts at `at` (e.g. `in ( <string> , <string>`), drop one item (a site
    per item)."""
    w = seq(args["at"])
    out = []
    for i in S.find(w):
        o = i + w.index("(")
        items = S.call_args(o)
        if len(items) < 2:
            continue
        for k, (a, b) in enumerate(items):
            if a > b:
                continue
            if k + 1 < len(items):
                e = S.delete(a, b + 1)
            else:
                e = S.delete(a - 1, b)
            out.append(Candidate((i, k), [e], f"list item {S.span(a, b)} dropped", touches_literal=True))
    return out


@operator("retype_cast", required=("at", "to"), anchor_arg="at")
def retype_cast(S, args, ctx):
    """The type that ends `at` (e.g. `as decimal`, with its `(p, s)`) becomes `to`."""
    w = seq(args["at"])
    out = []
    for i in S.find(w):
        t = i + len(w) - 1
        end = S.close.get(t + 1, t) if t + 1 < S.n and S.texts[t + 1] == "(" else t
        out.append(Candidate(i, [S.replace(t, end, case_like(S.text(t), args["to"]))], f"{S.span(t, end)} -> {args['to']}"))
    return out


@operator("negate_arg", required=("function", "index"), anchor_arg="function")
def negate_arg(S, args, ctx):
    """f(..., n, ...) -> f(..., -n, ...) for argument `index` (0-based); -n -> n."""
    out = []
    for i in _calls(S, args["function"]):
        argl = S.call_args(i + 1)
        k = int(args["index"])
        if len(argl) <= k:
            continue
        a, b = argl[k]
        if S.texts[a] == "-" and a < b:
            out.append(Candidate(i, [Edit(S.toks[a].start, S.toks[a + 1].start, "")], "sign removed"))
        elif a == b:
            out.append(Candidate(i, [Edit(S.toks[a].start, S.toks[a].start, "-")], "sign flipped"))
        else:
            out.append(Candidate(i, [Edit(S.toks[a].start, S.toks[a].start, "-("), Edit(S.toks[b].end, S.toks[b].end, ")")], "sign flipped"))
    return out


@operator("change_part", required=("function",), optional=("index",), anchor_arg="function")
def change_part(S, args, ctx):
    """The date part argument `index` (default 0) of `function` moves to a neighbouring grain
    (day -> week, month -> week, ...); bare keywords and string literals both work."""
    out = []
    for i in _calls(S, args["function"]):
        argl = S.call_args(i + 1)
        k = int(args.get("index", 0))
        if len(argl) <= k or argl[k][0] != argl[k][1]:
            continue
        a = argl[k][0]
        tok, txt = S.toks[a], S.text(a)
        if tok.kind == "string":
            new = _grain(txt[1:-1])
            new = f"'{new}'" if new else None
        elif tok.kind == "sql":
            new = _grain(txt)
        else:
            new = None
        if new and new != txt:
            out.append(Candidate(i, [Edit(tok.start, tok.end, new)], f"date part {txt} -> {new}", touches_literal=True))
    return out


@operator("call_to_division", required=("function",), anchor_arg="function")
def call_to_division(S, args, ctx):
    """f(a, b) -> (a / b) (e.g. DIV0 removed)."""
    out = []
    for i in _calls(S, args["function"]):
        argl = S.call_args(i + 1)
        if len(argl) != 2:
            continue
        comma = argl[0][1] + 1
        out.append(Candidate(i, [Edit(S.toks[i].start, S.toks[i].end, ""),
                                 Edit(S.toks[comma].start, S.toks[comma].end, " /")], f"{args['function']} -> /"))
    return out


@operator("drop_named_arg", required=("at",), anchor_arg="at")
def drop_named_arg(S, args, ctx):
    """Remove `, name => value` (the sequence `at` plus its preceding comma)."""
    w = seq(args["at"])
    out = []
    for i in S.find(w):
        j = i + len(w) - 1
        if i > 0 and S.texts[i - 1] == ",":
            out.append(Candidate(i, [S.delete(i - 1, j)], f"{args['at']} removed"))
        elif j + 1 < S.n and S.texts[j + 1] == ",":
            out.append(Candidate(i, [S.delete(i, j + 1)], f"{args['at']} removed"))
    return out


# --- dbt-level ---------------------------------------------------------------------------------
_REF_RE = re.compile(r"\bref\(\s*(['\"])([^'\"\s]+)\1\s*\)")
_SRC_RE = re.compile(r"\bsource\(\s*(['\"])([^'\"\s]+)\1\s*,\s*(['\"])([^'\"\s]+)\3\s*\)")
_CFG_RE = re.compile(r"\bconfig\(")
_MAT_RE = re.compile(r"materialized\s*=\s*(['\"])([a-z_]+)\1")


_JINJA_BLOCK = re.compile(r"(?s)\{#.*?#\}|\{\{.*?\}\}|\{%.*?%\}")


def _jinja_blocks(S):
    """(start, end) of every Jinja expression and statement, also those inside SQL comments
    (dbt renders them: `-- depends_on: {{ ref('x') }}`), never Jinja comments."""
    return [(m.start(), m.end()) for m in _JINJA_BLOCK.finditer(S.raw) if not m.group().startswith("{#")]


def _similar(name, options, k=2):
    return sorted(options, key=lambda o: (-difflib.SequenceMatcher(None, name, o).ratio(), o))[:k]


@operator("swap_ref")
def swap_ref(S, args, ctx):
    """ref('a') -> ref('b'): b is another model of the project (not this model, not downstream of
    it), the most similar names first (up to 2 alternatives per ref)."""
    out = []
    for a, b in _jinja_blocks(S):
        for m in _REF_RE.finditer(S.raw, a, b):
            name = m.group(2)
            opts = [x for x in ctx.sibling_models if x not in (name, ctx.name)]
            for alt in _similar(name, opts):
                out.append(Candidate((m.start(), alt), [Edit(m.start(2), m.end(2), alt)], f"ref {name} -> {alt}",
                                     placeholders={"original_ref": name, "wrong_ref": alt}, touches_jinja=True))
    return out


@operator("swap_source")
def swap_source(S, args, ctx):
    """source('s', 't1') -> source('s', 't2') (another table of the same source; another source's
    table when the source has only one)."""
    out = []
    for a, b in _jinja_blocks(S):
        for m in _SRC_RE.finditer(S.raw, a, b):
            src, tbl = m.group(2), m.group(4)
            same = [t for s, t in ctx.source_tables if s == src and t != tbl]
            if same:
                for alt in _similar(tbl, same):
                    out.append(Candidate((m.start(), alt), [Edit(m.start(4), m.end(4), alt)], f"source {src}.{tbl} -> {src}.{alt}",
                                         placeholders={"original_source": f"{src}.{tbl}", "wrong_source": f"{src}.{alt}"}, touches_jinja=True))
            else:
                others = [(s, t) for s, t in ctx.source_tables if s != src]
                for s2, t2 in sorted(others, key=lambda st: (-difflib.SequenceMatcher(None, tbl, st[1]).ratio(), st))[:2]:
                    out.append(Candidate((m.start(), s2, t2), [Edit(m.start(2), m.end(2), s2), Edit(m.start(4), m.end(4), t2)],
                                         f"source {src}.{tbl} -> {s2}.{t2}",
                                         placeholders={"original_source": f"{src}.{tbl}", "wrong_source": f"{s2}.{t2}"}, touches_jinja=True))
    return out


MAT_SWAP = {"table": "view", "view": "table", "incremental": "table", "ephemeral": "view"}


@operator("set_materialization")
def set_materialization(S, args, ctx):
    """materialized='table' -> 'view' (view -> table, incremental -> table) in the model's
    config(); without one, a `{{ config(materialized=...) }}` line is added on top."""
    out = []
    cur = ctx.materialized
    for a, b in _jinja_blocks(S):
        for m in _CFG_RE.finditer(S.raw, a, b):
            mm = _MAT_RE.search(S.raw, m.end(), b)
            if mm:
                new = MAT_SWAP.get(mm.group(2))
                if new:
                    out.append(Candidate(m.start(), [Edit(mm.start(2), mm.end(2), new)], f"materialized {mm.group(2)} -> {new}",
                                         placeholders={"original_materialization": mm.group(2), "wrong_materialization": new}, touches_jinja=True))
            elif cur in MAT_SWAP:
                new = MAT_SWAP[cur]
                out.append(Candidate(m.start(), [Edit(m.end(), m.end(), f"materialized='{new}', " if S.raw[m.end():b].strip(" )}") else f"materialized='{new}'")],
                                     f"materialized {cur} -> {new}",
                                     placeholders={"original_materialization": cur, "wrong_materialization": new}, touches_jinja=True))
    if not out and cur in MAT_SWAP:
        new = MAT_SWAP[cur]
        nl = "\r\n" if "\r\n" in S.raw else "\n"
        out.append(Candidate("top", [Edit(0, 0, "{{ config(materialized='%s') }}%s" % (new, nl))], f"materialized {cur} -> {new}",
                             placeholders={"original_materialization": cur, "wrong_materialization": new}))
    return out


def _select_lists(S):
    """[(select_index, [(a, b) items], from_index_or_None)] for every SELECT."""
    res = []
    for i in S.find(["select"]):
        d = S.depth[i]
        j, end = i + 1, None
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


def _final_chain(S, lists):
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


def _item_name(S, a, b):
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
    lists = _select_lists(S)
    chain = _final_chain(S, lists)
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
            col = _item_name(S, a, b)
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


@operator("edit_call_arg", required=("function", "kind"), optional=("index",), anchor_arg="function")
def edit_call_arg(S, args, ctx):
    """Like edit_literal, on argument `index` (default: the last) of every call of `function`
    when that argument is a single literal/keyword token."""
    fn = LITERAL_KINDS[args["kind"]]
    out = []
    for i in _calls(S, args["function"]):
        argl = S.call_args(i + 1)
        if not argl:
            continue
        k = int(args["index"]) if "index" in args else len(argl) - 1
        if args["kind"] == "format_swap" and len(argl) == 1 and "index" not in args:
            # no format given: a day-first format is added (same bug, other spelling)
            pos = S.toks[argl[0][1]].end
            out.append(Candidate(i, [Edit(pos, pos, ", 'YYYY-DD-MM'")], "format 'YYYY-DD-MM' added"))
            continue
        if k >= len(argl) or argl[k][0] != argl[k][1]:
            continue
        a = argl[k][0]
        tok, txt = S.toks[a], S.text(a)
        if tok.kind == "string" and txt.startswith("'") and txt.endswith("'"):
            new = fn(txt[1:-1])
            new = f"'{new}'" if new is not None and "'" not in new else None
        elif tok.kind == "sql":
            new = fn(txt)
        else:
            new = None
        if new and new != txt:
            out.append(Candidate(i, [Edit(tok.start, tok.end, new)], f"{txt} -> {new}", touches_literal=True))
    return out


@operator("swap_division", required=("to",), fixed_anchor="/")
def swap_division(S, args, ctx):
    """`to: multiply`: a / b and a // b -> a * b. `to: integer` (DuckDB): a / b -> a // b and
    a // b -> a / b."""
    out = []
    skip = set()
    for i in S.find(["/"]):
        if i in skip:
            continue
        pair = i + 1 < S.n and S.texts[i + 1] == "/" and S.toks[i].end == S.toks[i + 1].start
        j = i + 1 if pair else i
        skip.add(j)
        if args["to"] == "multiply":
            new = "*"
        else:
            new = "/" if pair else "//"
        out.append(Candidate(i, [Edit(S.toks[i].start, S.toks[j].end, new)], f"{S.span(i, j)} -> {new}"))
    return out


@operator("swap_timezones", required=("function",), anchor_arg="function")
def swap_timezones(S, args, ctx):
    """convert_timezone(src, tgt, ts) -> convert_timezone(tgt, src, ts); the two-argument form
    convert_timezone(tgt, ts) gets another literal target ('UTC' <-> 'America/New_York')."""
    out = []
    for i in _calls(S, args["function"]):
        argl = S.call_args(i + 1)
        if len(argl) >= 3:
            (x0, y0), (x1, y1) = argl[0], argl[1]
            if S.span(x0, y0) != S.span(x1, y1):
                out.append(Candidate(i, [S.replace(x0, y0, S.span(x1, y1)), S.replace(x1, y1, S.span(x0, y0))],
                                     "time zones swapped"))
        elif len(argl) == 2 and argl[0][0] == argl[0][1] and S.toks[argl[0][0]].kind == "string":
            a = argl[0][0]
            new = "'America/New_York'" if S.text(a).strip("'").upper() == "UTC" else "'UTC'"
            out.append(Candidate(i, [S.replace(a, a, new)], f"target time zone {S.text(a)} -> {new}",
                                 touches_literal=True))
    return out
