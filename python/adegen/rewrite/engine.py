"""find_sites / apply_site / changed_tokens (pure functions, no I/O)."""
from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass, field

from adegen.rewrite.context import ModelContext, requires_hold
from adegen.rewrite.names import comment_words, words
from adegen.rewrite.operators import OPERATORS
from adegen.rewrite.text import Edit, Struct, compose, touched_lines

# The most lines one site may touch: a pattern's `max_lines` (default MAX_LINES; its bounds are in
# schemas/pattern.schema.json). Most bugs are one small edit; a group of re-spelled labels spans its block.
MAX_LINES = 2


@dataclass(frozen=True)
class Site:
    pattern_id: str
    index: int  # 0-based, text order among this pattern's sites
    start: int
    end: int
    line: int  # 1-based line of `start`
    before: str  # raw[start:end]
    after: str
    note: str = ""
    placeholders: dict = field(default_factory=dict, compare=False, hash=False)
    # the same edit in sibling models (adegen.propose.siblings.Companion): one mistake made in several files
    companions: tuple = field(default=(), compare=False, hash=False)


def _seq_present(S: Struct, seq) -> bool:
    return bool(S.find(list(seq)))


def applies(raw: str, pattern, ctx: ModelContext, S: Struct | None = None) -> bool:
    """What the dbt macro decides: every applies_when sequence occurs and `requires` holds."""
    S = S or _struct(raw)
    return all(_seq_present(S, s) for s in pattern.applies_when) and requires_hold(pattern.requires, ctx)


def _edit_ok(S: Struct, e, cand) -> bool:
    """An edit may not cut into a comment or Jinja statement (it may delete a whole SQL comment);
    it may change a string literal or a Jinja expression only as a whole (or when the operator
    targets literals / Jinja)."""
    if cand.touches_jinja:  # dbt-level operators edit inside {{ ref() }} / config() on purpose
        return True
    for (a, b, g) in S.masked:
        overlap = (e.start < b and a < e.end) if e.end > e.start else (a < e.start < b)
        if not overlap:
            continue
        inside = e.start <= a and b <= e.end
        if S.raw.startswith("{{", a):
            if inside and (not e.text or S.raw[a:b] in e.text):
                continue
            return False
        if g == "'":
            if cand.touches_literal or inside:
                continue
            return False
        if inside and not e.text and S.raw.startswith(("--", "/*"), a):
            continue  # a whole SQL comment deleted (the note on a conversion dropped with it)
        return False
    return True


# a Jinja block opener (or a branch) followed by nothing but blanks and comments up to the next
# tag: an empty `{% if %}` / `{% for %}` body
_EMPTY_BLOCK = re.compile(r"\{%-?\s*(?:if|elif|else|for)\b[^%]*-?%\}(?:\s|--[^\n]*|\{#.*?#\})*"
                          r"\{%-?\s*(?:endif|endfor|elif|else)\b", re.S)


def _empties_a_block(raw: str, mutant: str) -> bool:
    """The edit leaves a Jinja `{% if %}` / `{% for %}` branch with nothing in it. Nobody commits
    an empty branch: a blind review read one as a pointer to the bug."""
    return len(_EMPTY_BLOCK.findall(mutant)) > len(_EMPTY_BLOCK.findall(raw))


# Words whose removal a comment beside the code can explain ("Distinct was necessary to ensure only
# one first/last value"). Plain connectives (and, or, on, where) are left out: comments use them anyway.
_EXPLAINED = frozenset("""
    distinct coalesce ifnull nullif lower upper trim ltrim rtrim qualify having union else desc asc
    left full outer round abs
""".split())
_COMMENT_REACH = 3  # lines above the edit whose comments speak for it


def _explaining_comments(raw: str, start: int, end: int, before: str, after: str) -> list[tuple[int, int]] | None:
    """The comment-only lines on or just above the edit that name a keyword or function it removes
    (`--Distinct was necessary to ensure only one ...` over `select distinct`), each span with its
    line break: [] when there is none. The mutant deletes them with the code, as an engineer who
    removes the code removes its stale explanation (and as a unit conversion's note goes with it):
    left standing, such a comment says nobody removed the code by mistake and points an agent at the
    fix (blind review: a removed DISTINCT under its comment rated realism 2.7, value 2.3). None: the
    comment shares a line with code, so it cannot go alone (no site)."""
    removed = ({w.lower() for w in words(before)} - {w.lower() for w in words(after)}) & _EXPLAINED
    if not removed:
        return []
    first, last = raw.count("\n", 0, start), raw.count("\n", 0, end)
    spans, pos = [], 0
    for k, text in enumerate(raw.split("\n")):
        if k > last:
            break
        if k >= first - _COMMENT_REACH and removed & {w.lower() for w in comment_words(text)}:
            if not text.strip().startswith("--"):
                return None
            spans.append((pos, min(pos + len(text) + 1, len(raw))))
        pos += len(text) + 1
    return spans


@functools.lru_cache(maxsize=16)
def _struct(raw_sql: str) -> Struct:
    return Struct(raw_sql)  # read-only after construction


def _widen(S: Struct, start: int, end: int, after: str) -> tuple[int, int, str]:
    """A pure insertion gets the neighbouring token into its span, so `before` is never blank
    (the leak check and the task summary need a visible anchor)."""
    raw = S.raw
    prev = [t for t in S.toks if t.end <= start and "\n" not in raw[t.end:start]]
    if prev:
        t = prev[-1]
        return t.start, end, raw[t.start:start] + after
    nxt = [t for t in S.toks if t.start >= end and "\n" not in raw[end:t.start]]
    if nxt:
        t = nxt[0]
        return start, t.end, after + raw[end:t.end]
    line_end = raw.find("\n", end)
    line_end = len(raw) if line_end == -1 else line_end
    if raw[line_end - 1:line_end] == "\r":
        line_end -= 1
    return start, line_end, after + raw[end:line_end]


def find_sites(raw_sql: str, pattern, ctx: ModelContext) -> list[Site]:
    """Every site of `pattern` in the model's raw SQL, in text order (empty unless `applies`)."""
    S = _struct(raw_sql)
    if not applies(raw_sql, pattern, ctx, S):
        return []
    op = OPERATORS[pattern.rewrite["operator"]]
    args = {k: v for k, v in pattern.rewrite.items() if k != "operator"}
    cands = op["fn"](S, args, ctx)
    groups: dict = {}
    order: list = []
    for c in cands:
        key = repr(c.group)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(c)
    chosen = []
    seen_text = set()
    for key in order:
        valid_primary, valid_fallback = [], []
        for c in groups[key]:
            if not c.edits or not all(_edit_ok(S, e, c) for e in c.edits):
                continue
            try:
                start, end, after = compose(raw_sql, c.edits)
            except ValueError:
                continue
            if not raw_sql[start:end].strip():
                start, end, after = _widen(S, start, end, after)
            before = raw_sql[start:end]
            if after == before:
                continue
            mutant = raw_sql[:start] + after + raw_sql[end:]
            if touched_lines(raw_sql, mutant) > pattern.max_lines or _empties_a_block(raw_sql, mutant):
                continue
            at = start  # the code's own line names the site, even when a comment above goes with it
            notes = _explaining_comments(raw_sql, start, end, before, after)
            if notes is None:
                continue
            if notes:
                gone = [Edit(a, b, "") for a, b in notes]
                if not all(_edit_ok(S, e, c) for e in gone):
                    continue
                try:
                    start, end, after = compose(raw_sql, list(c.edits) + gone)
                except ValueError:
                    continue
                before = raw_sql[start:end]
                mutant = raw_sql[:start] + after + raw_sql[end:]
                if touched_lines(raw_sql, mutant) > pattern.max_lines:
                    continue
            (valid_fallback if c.fallback else valid_primary).append((start, end, before, after, c, mutant, at))
        picked = valid_primary or valid_fallback[:1]
        for item in picked:
            if item[5] in seen_text:
                continue
            seen_text.add(item[5])
            chosen.append(item)
    chosen.sort(key=lambda x: (x[0], x[1], x[3]))
    sites = []
    for idx, (start, end, before, after, c, _m, at) in enumerate(chosen):
        line = raw_sql.count("\n", 0, at) + 1
        sites.append(Site(pattern.id, idx, start, end, line, before, after, c.note, dict(c.placeholders)))
    return sites


def apply_site(raw_sql: str, site: Site) -> str:
    if raw_sql[site.start : site.end] != site.before:
        raise ValueError(f"site {site.pattern_id}#{site.index} does not match the text at {site.start}")
    return raw_sql[: site.start] + site.after + raw_sql[site.end :]


def revert_site(mutant: str, site: Site) -> str:
    """The inverse replacement: restores the original text byte for byte."""
    s = site.start
    return mutant[:s] + site.before + mutant[s + len(site.after) :]


_WORD = re.compile(r"'(?:[^']|'')*'|[A-Za-z_][A-Za-z0-9_]*|[0-9]+(?:\.[0-9]+)?|<>|!=|>=|<=|\|\||//|[^\sA-Za-z0-9_]")


def changed_tokens(site: Site) -> tuple[set, set]:
    """Lower-cased words/operators and (verbatim) string literals removed from and added to the text by the site
    (positional token diff, so swapped values count on both sides)."""
    def norm(t):
        return t if t.startswith("'") else t.lower()  # literals keep their case ('Completed')

    a = [norm(t) for t in _WORD.findall(site.before)]
    b = [norm(t) for t in _WORD.findall(site.after)]
    removed, added = set(), set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            removed.update(a[i1:i2])
            added.update(b[j1:j2])
    return removed, added


def pattern_applies_to_db(pattern, db_type: str) -> bool:
    return pattern.db_types == "all" or db_type in pattern.db_types


def sites_for_model(raw: str, catalog, ctx: ModelContext, db_type: str) -> dict:
    out = {}
    for p in catalog.patterns:
        if not pattern_applies_to_db(p, db_type):
            continue
        sites = find_sites(raw, p, ctx)
        if sites:
            out[p.id] = sites
    return out


def check_parses(compiled_sql: str, dialect: str) -> str | None:
    """None when sqlglot parses the compiled SQL in `dialect`, else the error message."""
    import sqlglot
    from sqlglot.errors import ErrorLevel

    try:
        sqlglot.parse(compiled_sql, read=dialect, error_level=ErrorLevel.RAISE)
    except Exception as exc:  # ParseError, TokenError
        return re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip() or exc.__class__.__name__
    return None
