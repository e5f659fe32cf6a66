"""An exclusion filter added where it does not belong: a model drops the rows of one code
(`where status != 'returned'`, `where not is_test`) that the models reading it still count.

The story: a report should not show returned orders (or test accounts), and the engineer filters
them out in the staging model it reads, the one place that looked right, without seeing that
other marts count those rows. The codes come from what the project says a column holds: the
values its accepted_values test lists, and the values models downstream compare it with
(`case when status = 'returned'`), so the filter names a code that exists."""
from __future__ import annotations

import re

from adegen.rewrite.operators.joins import append_to_where, chain_end, from_indent
from adegen.rewrite.operators.registry import operator
from adegen.rewrite.operators.select_lists import final_chain, item_name
from adegen.rewrite.text import Candidate, Edit, Struct, case_like

# words of a code that people filter out of reports (the rows a report "should not show"), the
# plainest first: a column with several such codes gets the plainest one filtered
EXCLUDED_WORDS = tuple("""
    test testing deleted cancelled canceled cancel void voided spam fraud duplicate junk trash
    trashed internal sandbox demo dummy returned refunded removed archived inactive deactivated
    draft failed expired churned rejected declined suspended disabled abandoned bounced lost
    trial return refund pending
""".split())
# boolean columns whose true rows people filter out (`where not is_test`), and the one whose
# false rows they do (`where _fivetran_active`: only the current version of a history table)
_FLAG = re.compile(r"is_(\w+_)?(deleted|test|internal|archived|spam|sandbox|demo|fraud|duplicate|trashed|"
                   r"disabled|inactive|removed|cancell?ed|void|voided|refunded|returned)(_\w+)?|_fivetran_active")
_COMPARE = frozenset({"=", "!=", "<>", "in"})


def _rank(value: str) -> int | None:
    """The place of the value's plainest EXCLUDED_WORDS word (None: it has none)."""
    found = [EXCLUDED_WORDS.index(w) for w in re.split(r"[^a-z]+", value.lower()) if w in EXCLUDED_WORDS]
    return min(found) if found else None


def excludable(value: str) -> bool:
    """A code people filter out of a report: one of its words is an EXCLUDED_WORDS word
    ('returned', 'return_pending', 'Test Account'), never a code that is only a number."""
    return _rank(value) is not None


def _literal(S, k: int) -> str | None:
    if not (0 <= k < S.n and S.toks[k].kind == "string"):
        return None
    return S.text(k)[1:-1].replace("''", "'")


def _reads(S, k: int, column: str) -> bool:
    """Token k reads `column` (bare or qualified), not an alias being defined."""
    return S.texts[k] == column and S.texts[k - 1:k] != ["as"] and S.texts[k + 1:k + 2] != ["."]


def compared_values(sql: str, column: str) -> list[str]:
    """The string values `column` is compared with in `sql`: `status = 'returned'`, `'x' <> status`,
    `status in ('a', 'b')`, `case status when 'a'`, in text order, each once."""
    S, col, out = Struct(sql), column.lower(), []
    for k in S.find([col]):
        if not _reads(S, k, col):
            continue
        nxt = S.texts[k + 1] if k + 1 < S.n else ""
        if nxt == "not" and S.texts[k + 2:k + 3] == ["in"]:
            nxt, k = "in", k + 1
        if nxt in ("=", "!=", "<>"):
            out.append(_literal(S, k + 2))
        elif nxt == "in" and S.texts[k + 2:k + 3] == ["("]:
            out.extend(_literal(S, a) for a, b in S.call_args(k + 2) if a == b)
        elif S.texts[k - 1:k] == ["case"]:
            end = S.close.get(k - 1, k)
            out.extend(_literal(S, w + 1) for w in range(k, end) if S.texts[w] == "when" and S.depth[w] == S.depth[k])
        if k >= 2 and S.texts[k - 1] in _COMPARE - {"in"}:
            out.append(_literal(S, k - 2))
    return list(dict.fromkeys(v for v in out if v))


def _output_columns(S, chain, known: tuple) -> dict[str, str]:
    """Output name -> the column text the outermost SELECT of the chain filters it by: the name
    itself when that SELECT reads `*` (the names the chain's SELECT gives, else `known`: the
    documented and tested columns), else the plain column an item renames (`o.status as
    order_status` -> `o.status`). Items that compute a value are left out."""
    sel, items, _f = chain[0]
    deepest = chain[-1][1]
    if len(items) == 1 and S.texts[items[0][1]] == "*":
        names = [item_name(S, a, b) for a, b in deepest if not (a == b and S.texts[b] == "*")]
        return {n.lower(): n for n in (names if any(names) else known) if n}
    out = {}
    for a, b in items:
        named = b - 1 > a and S.texts[b - 1] == "as"
        last = b - 2 if named else b
        plain = all(S.ident(k) or S.texts[k] == "." for k in range(a, last + 1)) and S.gap_plain(a, last)
        name = item_name(S, a, b)
        if plain and name and S.ident(last):
            out[name.lower()] = S.span(a, last)
    return out


def _condition(column: str, ref: str, value: str | None, S) -> str:
    if value is None:  # a flag
        return ref if column.lower() == "_fivetran_active" else f"not {ref}"
    op = "<>" if "<>" in S.texts and "!=" not in S.texts else "!="
    return f"{ref} {op} '{value.replace(chr(39), chr(39) * 2)}'"


def _where_edit(S, sel: int, frm: int, pred: str) -> Edit | None:
    """` and <pred>` at the end of the SELECT's WHERE, or a `where <pred>` line after its FROM
    chain (the FROM line's indentation). None when a Jinja statement sits between the FROM and
    the edit (the condition might render only on some runs) or no clean place exists."""
    stop = chain_end(S, frm)
    if stop < S.n and S.texts[stop] == "where":
        edit = append_to_where(S, stop, pred)
    else:
        last = stop - 1
        pos = S.toks[last].end
        kw = case_like(S.text(sel), "where")
        _start, line_end = S.line_of(pos)
        if stop < S.n and "\n" not in S.raw[pos:S.toks[stop].start]:
            edit = Edit(pos, pos, f" {kw} {pred}")
        else:
            rest = S.raw[pos:line_end].strip()
            if rest and not rest.startswith("--"):
                return None
            nl = "\r\n" if "\r\n" in S.raw else "\n"
            edit = Edit(line_end, line_end, f"{nl}{from_indent(S, frm)}{kw} {pred}")
    if edit is None or "{%" in S.raw[S.toks[frm].start:edit.start]:
        return None
    return edit


@operator("add_exclusion")
def add_exclusion(S, args, ctx):
    """The model's outermost SELECT gets a filter that drops the rows of one code of an output
    column: `where status != 'returned'` (or ` and ...` on its WHERE), for a code its
    accepted_values test lists or a model downstream compares the column with, when the code is
    one people filter out (EXCLUDED_WORDS); or `where not is_test` / `where _fivetran_active` on
    such a flag. Needs the model's context (accepted values, the downstream models' SQL)."""
    chain = final_chain(S)
    if not chain or chain[0][2] is None:
        return []
    accepted = tuple(getattr(ctx, "accepted_values", ()) or ())
    outputs = _output_columns(S, chain, tuple(getattr(ctx, "columns", ())) + tuple(c for c, _v in accepted))
    if not outputs:
        return []
    values: dict[str, list] = {}
    for column, vals in accepted:
        values.setdefault(column.lower(), []).extend(vals)
    read = getattr(ctx, "model_sql", None)
    for name in getattr(ctx, "downstream_models", ()) if read is not None else ():
        sql = read(name)
        for column in outputs if sql else ():
            values.setdefault(column, []).extend(compared_values(sql, column))
    sel, _items, frm = chain[0]
    out = []
    wanted = []
    for c in outputs:  # one code per column: the plainest to filter out (returned before return_pending)
        codes = sorted((_rank(v), k, v) for k, v in enumerate(dict.fromkeys(values.get(c, []))) if excludable(v))
        if codes:
            wanted.append((c, codes[0][2]))
    wanted += [(c, None) for c in outputs if _FLAG.fullmatch(c)]
    for column, value in wanted:
        pred = _condition(column, outputs[column], value, S)
        edit = _where_edit(S, sel, frm, pred)
        if edit is None:
            continue
        what = f"{column} = '{value}'" if value is not None else (
            "inactive versions" if column == "_fivetran_active" else f"{column} rows")
        out.append(Candidate(("exclude", column, value), [edit], f"{what} filtered out",
                             placeholders={"column": column, "value": value if value is not None else ""}))
    return out
