"""Operators on expressions: token replacement, function calls and their arguments, signs,
division, unit conversions, casts and time zones."""
from __future__ import annotations

import difflib
import math
import re

from adegen.rewrite.names import UNITS, comment_words, parts, units_in, words
from adegen.rewrite.text import SQL_WORDS, Candidate, Edit, case_like
from adegen.rewrite.operators.registry import calls, operator, seq
from adegen.rewrite.operators.select_lists import item_note, item_places, item_text, note_spans


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


@operator("unwrap_call", required=("function",), optional=("fallback",), anchor_arg="function")
def unwrap_call(S, args, ctx):
    """f(x, ...) -> x (fallback `null_last_arg`: f(x, d) -> f(x, null) when unwrapping would
    touch more than 2 lines)."""
    out = []
    for i in calls(S, args["function"]):
        o = i + 1
        c = S.close.get(o)
        argl = S.call_args(o)
        if c is None or not argl:
            continue
        a0, b0 = argl[0]
        edits = [Edit(S.toks[i].start, S.toks[a0].start, "") if S.gap_plain(o, a0) else None,
                 Edit(S.toks[b0].end, S.toks[_same_alias_end(S, a0, c, first=i) if a0 == b0 else c].end, "")]
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
    for i in calls(S, args["function"]):
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
    for i in calls(S, args["function"]):
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
    for i in calls(S, args["function"]):
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


@operator("call_to_division", required=("function",), anchor_arg="function")
def call_to_division(S, args, ctx):
    """f(a, b) -> (a / b) (e.g. DIV0 removed)."""
    out = []
    for i in calls(S, args["function"]):
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
    for i in calls(S, args["function"]):
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


# Factors a unit conversion uses besides powers of ten: a minute, an hour, a day in seconds; a KiB.
_OTHER_FACTORS = frozenset({60.0, 3600.0, 86400.0, 1024.0})
# {{ macro('column expression', ...) }}: a conversion macro called on a quoted column expression
MACRO_CALL = re.compile(r"""(?s)^\{\{-?\s*([A-Za-z_][\w.]*)\s*\(\s*(['"])([^'"{}]+)\2"""
                         r"""\s*(?:,[^{}]*)?\)\s*-?\}\}$""")
_ARITHMETIC = frozenset({"*", "/", "+", "-", "%", "||", "^"})


def conversion_factor(text: str) -> bool:
    """A number a unit conversion multiplies or divides by: a power of ten from 100 up or 0.01
    down (100, 1000.0, 0.01; not 10), or 60, 3600, 86400, 1024."""
    try:
        v = float(text)
    except ValueError:
        return False
    if v <= 0 or not math.isfinite(v):
        return False
    e = math.log10(v)
    return v in _OTHER_FACTORS or (abs(e - round(e)) < 1e-9 and abs(round(e)) >= 2)


def _operand_end(S, k) -> bool:
    """Token k can end the operand left of an operator (a column, a number, a call, a Jinja value)."""
    t = S.toks[k]
    return t.kind == "jinja" or S.texts[k] == ")" or re.fullmatch(r"[0-9.]+", S.texts[k]) is not None \
        or (S.ident(k) and S.texts[k] not in SQL_WORDS)


def _factor_edit(S, i) -> Edit | None:
    """The edit dropping the conversion factor of operator token i (`x / 100`, `x // 60`,
    `x * 0.01`, `100.0 * x`), or None when i is no such operator."""
    pair = S.texts[i:i + 2] == ["/", "/"] and S.toks[i].end == S.toks[i + 1].start  # `//`
    f = i + 2 if pair else i + 1
    if f < S.n and conversion_factor(S.texts[f]) and _operand_end(S, i - 1) and S.gap_plain(i - 1, f) \
            and S.texts[f + 1:f + 2] not in (["("], ["."], ["::"], ["^"]):
        return Edit(S.toks[i - 1].end, S.toks[_same_alias_end(S, i - 1, f)].end, "")
    if S.texts[i] == "*" and conversion_factor(S.texts[i - 1]) and i + 1 < S.n and S.gap_plain(i - 1, i + 1) \
            and (S.ident(i + 1) or S.texts[i + 1] == "(" or S.toks[i + 1].kind == "jinja") \
            and S.texts[i - 2:i - 1] not in (["/"], ["*"], ["%"], ["^"], ["::"], ["."]):
        return Edit(S.toks[i - 1].start, S.toks[i + 1].start, "")
    return None


def _same_alias_end(S, operand: int, last: int, first: int | None = None) -> int:
    """The last token the edit removes: `last`, or the alias after it when the item (from token
    `first`, by default the operand) was a bare column converted into a name of its own (`amount /
    100 as amount`, `lower(event_type) as event_type`): without the conversion the item reads
    `amount`, the way someone who never converted it writes it, not `amount as amount`."""
    # token texts are lower-cased (lexer): `Amount ... AS amount` compares equal
    first = operand if first is None else first
    whole_item = S.ident(operand) and (first == 0 or S.texts[first - 1] in (",", "select"))
    alias = S.texts[last + 1:last + 3]
    if whole_item and alias[:1] == ["as"] and S.ident(last + 2) and alias[1] == S.texts[operand] \
            and S.gap_plain(last, last + 2):
        return last + 2
    return last


def _unit_notes(S, i) -> list[Edit]:
    """Deletions of the comments on the item of token i that name a unit (`-- amount is stored in
    cents, so we convert it to dollars`): whoever drops a conversion believing the values already
    in the target unit drops its explanation too, and a note left beside the bare column would
    hand the fix over (reviewers rated such a task difficulty 1)."""
    return [Edit(a, b, "") for a, b in note_spans(S, i) if units_in(comment_words(S.raw[a:b]))]


def _factor_sites(S) -> list:
    out = []
    for i in range(1, S.n - 1):
        if S.texts[i] not in ("/", "*") or (S.texts[i - 1] == "/" and S.toks[i - 1].end == S.toks[i].start):
            continue  # the second half of a `//` was seen with the first
        edit = _factor_edit(S, i)
        if edit is not None and units_in(words(item_text(S, i)) + comment_words(item_note(S, i))):
            out.append(Candidate(i, [edit, *_unit_notes(S, i)], f"conversion {S.raw[edit.start:edit.end].strip()} dropped"))
    return out


def _macro_sites(S) -> list:
    out = []
    for k, tok in enumerate(S.toks):
        m = MACRO_CALL.match(S.raw[tok.start:tok.end]) if tok.kind == "jinja" else None
        if m is None or not any(p in UNITS for p in parts(m.group(1).split(".")[-1])):
            continue
        arg = m.group(3).strip()
        beside = {S.texts[x] for x in (k - 1, k + 1) if 0 <= x < S.n}
        if beside & _ARITHMETIC and not re.fullmatch(r"[\w.]+", arg):
            arg = f"({arg})"  # `a + b` stays one operand of the expression around it
        out.append(Candidate(k, [Edit(tok.start, tok.end, arg)], f"{m.group(1)}() unwrapped", touches_jinja=True))
    return out


def conversion_sites(S) -> list:
    """Every unit conversion of the model (drop_conversion's sites; `group` is the operator token
    of a factor, the Jinja token of a macro)."""
    return _factor_sites(S) + _macro_sites(S)


@operator("drop_conversion")
def drop_conversion(S, args, ctx):
    """A unit conversion left out: `x / 100`, `x // 100`, `x / 60`, `x * 0.01`, `100.0 * x` -> `x`
    where a name of the select item (a column, its alias) says a unit (cents, dollars, usd, ms,
    seconds, minutes, pct, ...); and `{{ cents_to_dollars('amount') }}` -> `amount`, a macro
    whose name says a unit called on a quoted column expression. Not where another item of the
    same select list converts the same way: `unit_price_cents as unit_price` above
    `{{ cents_to_dollars('unit_cost_cents') }} as unit_cost` is a slip nobody ships unseen, and
    the line below it gives the fix away (blind reviews: value 2.0-3.0 in three rounds)."""
    sites = conversion_sites(S)
    places = item_places(S, [c.group for c in sites])  # (select list, item) of each site
    kinds = {c.group: _conversion_kind(S, c) for c in sites}

    def beside_sibling(c) -> bool:
        here = places[c.group]
        return here is not None and any(
            kinds[o.group] == kinds[c.group] and places[o.group] is not None
            and places[o.group][0] == here[0] and places[o.group][1] != here[1] for o in sites)

    return [c for c in sites if not beside_sibling(c)]


def _conversion_kind(S, c) -> str:
    """What a conversion site does: the macro it calls, or the factor it applies (" / 100")."""
    if S.toks[c.group].kind == "jinja":
        return MACRO_CALL.match(S.text(c.group)).group(1)
    i = c.group
    factor = next((S.texts[k] for k in (i + 1, i + 2, i - 1) if 0 <= k < S.n and conversion_factor(S.texts[k])), "")
    return f"{S.texts[i]} {factor}"
