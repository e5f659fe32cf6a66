"""The fourth purposeful kind (issue 51): "simplify: the input is unique now, the dedup goes". The
commit removes a model's deduplication as a cleanup: a ranked CTE (`row_number() over (partition
by k order by ...) as rn`) and the `where rn = 1` that reads it go and the model reads the ranked
CTE's input directly; a `qualify row_number() over (...) = 1` goes; a `select distinct` loses its
DISTINCT. The slip is the belief: the input still repeats the key, so the copies come back. Right:
the dedup as it was (the task's solution restores the original text).

Pure functions: SQL text in, SQL text out. A site is found by name (its form and its scope), so
the one found in a model's raw SQL is found again in its compiled SQL (`drop` re-reads the text
it is given). Only shapes whose removal changes nothing but the dedup are taken: the ranked CTE
adds no column but the rank (`select *, row_number() ...`, no WHERE, JOIN or GROUP BY), the rank
is read nowhere but in its `= 1` filter, and that filter is ANDed with the rest of its WHERE."""
from __future__ import annotations

import re
from dataclasses import dataclass

from adegen.rewrite.purposes import scopes as sc
from adegen.rewrite.stories.base import Model
from adegen.rewrite.stories.ctes import Cte, top_ctes

DEDUP = "dedup_dropped"
ROW_NUMBER, QUALIFY, DISTINCT = "row_number", "qualify", "distinct"
_IDENT = re.compile(r"[a-z_][a-z0-9_]*\Z")


@dataclass(frozen=True)
class DedupSite:
    """One deduplication of a model: its form, the scope it sits in (the ranked CTE, the scope with
    the QUALIFY or the DISTINCT), the key it is unique on as written ("" for a whole row: DISTINCT)
    and, for a ranked CTE, the relation the model reads instead (as the text names it)."""

    form: str
    scope: str
    key: str = ""
    source: str = ""

    @property
    def kind(self) -> str:
        return DEDUP

    @property
    def column(self) -> str:   # the run record's `column`: the key
        return self.key or "the whole row"


def _closing(toks: list, k: int) -> int | None:
    depth = 0
    for j in range(k, len(toks)):
        depth += (toks[j].text == "(") - (toks[j].text == ")")
        if depth == 0 and toks[j].text == ")":
            return j
    return None


def _window(raw: str, toks: list, k: int) -> tuple[int, str] | None:
    """At `row_number ( ) over (`: (the index after the OVER's closing parenthesis, the partition key
    as written), or None when it is no ranking by a partition."""
    if [t.text for t in toks[k:k + 4]] != ["row_number", "(", ")", "over"] or k + 4 >= len(toks) \
            or toks[k + 4].text != "(":
        return None
    close = _closing(toks, k + 4)
    if close is None or [t.text for t in toks[k + 5:k + 7]] != ["partition", "by"]:
        return None
    order = next((j for j in range(k + 7, close) if toks[j].text == "order"), close)
    if order == k + 7:
        return None
    return close + 1, " ".join(raw[toks[k + 7].start:toks[order - 1].end].split())


def _ranked(raw: str, body: list) -> tuple[str, str, str] | None:
    """A ranked CTE's body `select [q.]*, row_number() over (partition by k ...) as rn from SRC [q]`
    and nothing else: (rn, k, SRC as written), else None."""
    if len(body) < 8 or body[0].text != "select":
        return None
    k = 1
    if body[k].text == "*":
        k += 1
    elif [t.text for t in body[k + 1:k + 3]] == [".", "*"]:
        k += 3
    else:
        return None
    if k >= len(body) or body[k].text != ",":
        return None
    win = _window(raw, body, k + 1)
    if win is None or [t.text for t in body[win[0]:win[0] + 1]] != ["as"] or win[0] + 3 >= len(body):
        return None
    rn, frm = body[win[0] + 1], body[win[0] + 2]
    if not _IDENT.match(rn.text) or frm.text != "from":
        return None
    rest = body[win[0] + 3:]
    src = rest[0]
    alias = rest[1:]
    if alias and alias[0].text == "as":
        alias = alias[1:]
    if len(alias) > 1 or (alias and (not _IDENT.match(alias[0].text) or alias[0].text in sc.NOT_ALIAS)):
        return None
    if src.kind not in ("sql", "jinja") or (src.kind == "sql" and not _IDENT.match(src.text)):
        return None
    return rn.text, win[1], raw[src.start:src.end]


def _filter_span(toks: list, lo: int, hi: int, rn: str, qualifier: str = "") -> tuple[int, int] | None:
    """In tokens lo..hi (one SELECT), the WHERE's `[q.]rn = 1` condition at depth 0: the text span
    removing it deletes (with its AND, or the whole WHERE with the line break before it), else None."""
    depth, where = 0, None
    for j in range(lo, hi):
        t = toks[j].text
        depth += (t == "(") - (t == ")")
        if depth == 0 and t == "where":
            where = j
        elif depth == 0 and where is not None and t in sc.CLAUSES:
            hi = j
            break
    if where is None:
        return None
    conds, start, depth = [], where + 1, 0
    for j in range(where + 1, hi):
        t = toks[j].text
        depth += (t == "(") - (t == ")")
        if depth == 0 and t == "or":
            return None  # `a or b and c`: the condition binds to one side only
        if depth == 0 and t == "and":
            conds.append((start, j))
            start = j + 1
    conds.append((start, hi))
    for i, (a, b) in enumerate(conds):
        if [t.text for t in toks[a:b]] not in ([qualifier, ".", rn, "=", "1"], [rn, "=", "1"]):
            continue
        if len(conds) == 1:
            return toks[where - 1].end, toks[b - 1].end
        if i + 1 < len(conds):
            return toks[a].start, toks[conds[i + 1][0]].start
        return toks[conds[i - 1][1] - 1].end, toks[b - 1].end
    return None


def _refs(model: Model, name: str, skip: tuple[int, int]) -> list[tuple[int, str]]:
    """(token index, alias) of each `from name` / `join name` outside the span `skip`."""
    toks, out = model.toks, []
    for j in range(1, len(toks)):
        if toks[j].text == name and toks[j - 1].text in ("from", "join") and not skip[0] <= toks[j].start < skip[1]:
            nxt = toks[j + 1:j + 3]
            if nxt and nxt[0].text == "as":
                nxt = nxt[1:]
            alias = nxt[0].text if nxt and _IDENT.match(nxt[0].text) and nxt[0].text not in sc.NOT_ALIAS else ""
            out.append((j, alias))
    return out


def _cut(text: str, ctes: list[Cte], i: int, j: int | None = None) -> tuple[int, int]:
    """The span deleting CTEs i..j (consecutive) takes out of the WITH list, with their commas and
    their own comments; all of them: the WITH too."""
    j = i if j is None else j
    if i > 0:
        return ctes[i - 1].end, ctes[j].end
    if j + 1 < len(ctes):
        return ctes[0].start, ctes[j + 1].start
    after = len(text) - len(text[ctes[j].end:].lstrip())
    return text.rfind("with", 0, ctes[0].start), after


def _delete(text: str, spans: list[tuple[int, int]], swaps: list[tuple[int, int, str]] = ()) -> str:
    for a, b, new in sorted([*((a, b, "") for a, b in spans), *swaps], reverse=True):
        text = text[:a] + new + text[b:]
    return text


def _count(model: Model, word: str, lo: int = 0, hi: int | None = None) -> int:
    """How often `word` is a SQL word of the text between offsets lo and hi."""
    hi = len(model.raw) if hi is None else hi
    return sum(1 for t in model.toks if t.kind == "sql" and t.text == word and lo <= t.start < hi)


def _row_number_edits(text: str, model: Model, ctes: list[Cte], i: int):
    """(spans to delete, (start, end, new) swaps, key, input) that drop the ranked CTE `i` (and a CTE
    that only filters it), or None."""
    c, toks = ctes[i], model.toks
    body = c.body_tokens(model)
    inline = _inline_ranked(text, body)
    ranked = inline or _ranked(text, body)
    if ranked is None:
        return None
    rn, key, src = ranked
    refs = _refs(model, c.name, (c.start, c.end))
    if len(refs) != 1 or _count(model, c.name) != 1 + len(refs):
        return None  # read twice, or its name used as a qualifier
    j, alias = refs[0]
    if inline:  # the CTE filters itself: its reader reads the input now
        if _read_elsewhere(model, ctes, rn, (i,)):
            return None
        return [_cut(text, ctes, i)], [(toks[j].start, toks[j].end, src)], key, src
    reader = next((k for k, r in enumerate(ctes) if r.first < j < r.last), None)
    lo = ctes[reader].first + 3 if reader is not None else (ctes[-1].last + 1)
    hi = ctes[reader].last if reader is not None else len(toks)
    start, end = toks[lo].start, toks[hi - 1].end
    filt = _filter_span(toks, lo, hi, rn, alias or c.name)
    if filt is None or _count(model, rn, start, end) != 1 or _read_elsewhere(model, ctes, rn, (i, reader)):
        return None  # the rank is read elsewhere: it is more than a dedup
    if reader is not None and _passes(toks, lo, hi, c.name):  # `select * from ranked where rn = 1`: both go
        name = ctes[reader].name
        outer = _refs(model, name, (ctes[reader].start, ctes[reader].end))
        if not outer or _count(model, name) != 1 + len(outer):
            return None
        spans = [_cut(text, ctes, i, reader)] if reader == i + 1 else [_cut(text, ctes, i), _cut(text, ctes, reader)]
        return spans, [(toks[k].start, toks[k].end, src) for k, _ in outer], key, src
    return [_cut(text, ctes, i), filt], [(toks[j].start, toks[j].end, src)], key, src


def _read_elsewhere(model: Model, ctes: list[Cte], rn: str, own: tuple) -> bool:
    """The rank's name is a word of a SELECT other than the ranked CTE and its filter (`own`: their
    indices, None for the final SELECT) that reads one of them: another CTE ranking by its own `rn`
    (a second dedup in the model) is not a reader."""
    names = [ctes[k].name for k in own if k is not None]
    spans = [(c.start, c.end) for k, c in enumerate(ctes) if k not in own]
    if None not in own:
        spans.append((ctes[-1].end if ctes else 0, len(model.raw)))
    reads = [model.toks[j].start for n in names for j, _ in _refs(model, n, (0, 0))]
    return any(_count(model, rn, lo, hi) and any(lo <= at < hi for at in reads) for lo, hi in spans)


def _passes(toks: list, lo: int, hi: int, name: str) -> bool:
    """The SELECT is `select * from <name> [alias] where <one condition>` (a CTE that only filters)."""
    words = [t.text for t in toks[lo:hi]]
    if words[:4] != ["select", "*", "from", name]:
        return False
    rest = words[4:]
    if rest and rest[0] not in ("where",):
        rest = rest[1:] if rest[0] != "as" else rest[2:]
    return len(rest) == 4 and rest[0] == "where"


def _inline_ranked(raw: str, body: list) -> tuple[str, str, str] | None:
    """`select * from ( <ranked select> ) [alias] where rn = 1` as a whole CTE body: (rn, k, SRC)."""
    if [t.text for t in body[:4]] != ["select", "*", "from", "("]:
        return None
    close = _closing(body, 3)
    if close is None:
        return None
    ranked = _ranked(raw, body[4:close])
    if ranked is None:
        return None
    rest = [t.text for t in body[close + 1:]]
    if rest and rest[0] != "where":
        rest = rest[1:] if rest[0] != "as" else rest[2:]
    return ranked if rest == ["where", ranked[0], "=", "1"] else None


def _qualify(model: Model, s: sc.Scope) -> tuple[int, int, str] | None:
    """A scope's `qualify row_number() over (partition by k ...) = 1` clause: (start, end, k)."""
    toks = [t for t in model.toks if s.start <= t.start < s.end]
    depth = 0
    for j, t in enumerate(toks):
        depth += (t.text == "(") - (t.text == ")")
        if depth == 0 and t.text == "qualify":
            win = _window(model.raw, toks, j + 1)
            if win is None or [x.text for x in toks[win[0]:win[0] + 2]] != ["=", "1"]:
                return None
            end = win[0] + 2
            if end < len(toks) and toks[end].text not in sc.CLAUSES:
                return None  # `= 1 and ...`: more than the dedup
            before = model.raw.rfind("\n", 0, t.start)
            start = before if model.raw[before:t.start].strip() == "" else t.start - 1
            return start, toks[end - 1].end, win[1]
    return None


def sites(text: str) -> list[DedupSite]:
    """Every deduplication of the model that can be dropped as a cleanup, in text order."""
    model = Model(text, "")
    ctes = top_ctes(model)
    out = []
    for i, c in enumerate(ctes):
        got = _row_number_edits(text, model, ctes, i)
        if got is not None:
            out.append(DedupSite(ROW_NUMBER, c.name, got[2], got[3]))
    for name, s in sc.scopes(text).items():
        q = _qualify(model, s)
        if q is not None:
            out.append(DedupSite(QUALIFY, name, q[2]))
        if re.match(r"\s*distinct\s", text[s.list_start:s.list_end + 1], re.I) and \
                not re.match(r"\s*distinct\s+on\b", text[s.list_start:s.list_end], re.I):
            out.append(DedupSite(DISTINCT, name))
    return out


def drop(text: str, site: DedupSite) -> str | None:
    """The model's text with the dedup `site` removed (found again by form and scope), or None."""
    model = Model(text, "")
    if site.form == ROW_NUMBER:
        ctes = top_ctes(model)
        i = next((k for k, c in enumerate(ctes) if c.name == site.scope), None)
        got = None if i is None else _row_number_edits(text, model, ctes, i)
        return None if got is None else _delete(text, got[0], got[1])
    s = sc.scopes(text).get(site.scope)
    if s is None:
        return None
    if site.form == QUALIFY:
        q = _qualify(model, s)
        return None if q is None else _delete(text, [q[:2]])
    m = re.match(r"\s*distinct(?=\s)", text[s.list_start:s.list_end], re.I)
    return None if m is None else _delete(text, [(s.list_start, s.list_start + m.end())])
