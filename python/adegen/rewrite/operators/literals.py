"""Operators on literal values: strings, numbers, date parts, intervals, BETWEEN bounds and IN
lists (`LITERAL_KINDS` are the value changes a pattern may name)."""
from __future__ import annotations

import datetime as _dt
import re

from adegen.rewrite.text import Candidate, Edit, case_like
from adegen.rewrite.operators.registry import calls, operator, seq


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
    a literal lower bound moves up (the off-by-one of a hand-written range). Window frames and
    non-literal bounds give no site: nobody moves a frame start or swaps two bounds by mistake."""
    out = []
    for i in S.find(["between"]):
        d = S.depth[i]
        j = next((k for k in range(i + 1, S.n) if S.texts[k] == "and" and S.depth[k] == d), None)
        if j is None or (i > 0 and S.texts[i - 1] in ("rows", "range", "groups")):
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


@operator("change_part", required=("function",), optional=("index",), anchor_arg="function")
def change_part(S, args, ctx):
    """The date part argument `index` (default 0) of `function` moves to a neighbouring grain
    (day -> week, month -> week, ...); bare keywords and string literals both work."""
    out = []
    for i in calls(S, args["function"]):
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


@operator("edit_call_arg", required=("function", "kind"), optional=("index",), anchor_arg="function")
def edit_call_arg(S, args, ctx):
    """Like edit_literal, on argument `index` (default: the last) of every call of `function`
    when that argument is a single literal/keyword token."""
    fn = LITERAL_KINDS[args["kind"]]
    out = []
    for i in calls(S, args["function"]):
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


def _equality_value(pattern: str) -> str | None:
    """The fixed part of a prefix (`cancel%`) or contains (`%assignment%`) LIKE pattern, the text a
    person believes the column holds exactly; None for any other shape (a suffix match
    `%@acme.com` has no equality anyone would write, inner wildcards are a real pattern)."""
    if not pattern.endswith("%") or "{" in pattern:
        return None
    fixed = pattern[1:-1] if pattern.startswith("%") else pattern[:-1]
    return fixed if fixed and "%" not in fixed else None


@operator("like_to_equality", fixed_anchor="like <string>")
def like_to_equality(S, args, ctx):
    """`x like 'cancel%'` -> `x = 'cancel'` (also `'%assignment%'`): the LIKE is "tidied" into the
    equality its author believes the data allows. Inside `when ... then 'label'` whose label starts
    with the fixed part, the equality reads the label (`like 'cancel%' then 'cancelled'` ->
    `= 'cancelled'`): the source is assumed to send the final spelling already. Not after NOT
    (`not like` has no one-token equality)."""
    out = []
    for i in S.find(["like"]):
        k = i + 1
        if k >= S.n or S.toks[k].kind != "string" or (i > 0 and S.texts[i - 1] == "not"):
            continue
        txt = S.text(k)
        if not (txt.startswith("'") and txt.endswith("'")):
            continue
        fixed = _equality_value(txt[1:-1])
        if fixed is None or "'" in fixed.replace("''", ""):
            continue
        value, kept = fixed, []
        then = S.text(k + 2) if k + 2 < S.n and S.texts[k + 1] == "then" and S.toks[k + 2].kind == "string" else ""
        if len(then) >= 2 and then[0] == then[-1] == "'":
            label = then[1:-1]
            if label.lower().startswith(fixed.lower()) and "'" not in label.replace("''", ""):
                value, kept = label, [label]
        like, lit = S.toks[i], S.toks[k]
        # `intact_literals`: what the edit writes that the model already wrote there (the label):
        # a value its table shows, not a trace of the change (prompts may quote it)
        out.append(Candidate(i, [Edit(like.start, like.end, "="), Edit(lit.start, lit.end, f"'{value}'")],
                             f"like {txt} -> = '{value}'", placeholders={"intact_literals": kept},
                             touches_literal=True))
    return out
