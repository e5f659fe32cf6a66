"""Token-level helpers for the rewrite engine (no I/O). Built on adegen.sql.lexer, never a fork."""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from adegen.sql import lexer

ANY = "<any>"  # reserved; not used by the shipped catalog (the macro matches plain sequences)

CLAUSE_END = {
    "group", "order", "having", "qualify", "window", "limit", "union", "intersect", "except",
    "offset", "fetch", ";", "select", "from", "where", "join", "left", "right", "inner", "full",
    "cross", "on", "natural", "lateral",
}
_MASK = re.compile(lexer.MASK_RE)
_IDENT = re.compile(r"[a-z_][a-z0-9_$]*")
# Bare words that are SQL, never a column: a token of these is no column reference.
SQL_WORDS = frozenset("""
    select from where and or not null is in as on join left right inner outer full cross natural
    using group by order having limit offset qualify window over partition rows range groups
    between unbounded preceding following current row case when then else end distinct all any
    some union intersect except with recursive asc desc nulls first last true false like ilike glob
    similar escape exists interval cast try_cast date timestamp time filter within lateral values
    fetch next only extract epoch day days week weeks month months year years hour hours minute
    minutes second seconds quarter current_date current_timestamp current_time localtimestamp
    varchar char integer int bigint smallint decimal numeric double float real boolean text string
""".split())


def case_like(orig: str, new: str) -> str:
    letters = [c for c in orig if c.isalpha()]
    if letters and all(c.isupper() for c in letters):
        return new.upper()
    if len(letters) > 1 and letters[0].isupper() and all(c.islower() for c in letters[1:]):
        return new[:1].upper() + new[1:].lower()
    return new.lower()


@dataclass
class Edit:
    start: int
    end: int
    text: str


@dataclass
class Candidate:
    group: object
    edits: list
    note: str
    placeholders: dict = field(default_factory=dict)
    fallback: bool = False
    touches_jinja: bool = False
    touches_literal: bool = False


class Struct:
    """Tokens of one model plus paren/CASE nesting."""

    def __init__(self, raw: str):
        self.raw = raw
        self.toks = lexer.tokenize(raw)
        self.texts = [t.text for t in self.toks]
        self.n = len(self.toks)
        self.close: dict[int, int] = {}
        self.open: dict[int, int] = {}
        self.depth: list[int] = []  # parens + case/end nesting before the token
        stack: list[tuple[str, int]] = []
        for i, t in enumerate(self.texts):
            self.depth.append(len(stack))
            if t == "(" or t == "case":
                stack.append((t, i))
            elif t == ")" or t == "end":
                want = "(" if t == ")" else "case"
                # pop to the matching opener (tolerate unbalanced text)
                for k in range(len(stack) - 1, -1, -1):
                    if stack[k][0] == want:
                        opener = stack[k][1]
                        del stack[k:]
                        self.close[opener] = i
                        self.open[i] = opener
                        break
                self.depth[i] = len(stack)
        self.masked = [(m.start(), m.end(), m.group(1) or m.group(2) or "") for m in _MASK.finditer(raw)]

    # --- matching ---------------------------------------------------------------------------
    def find(self, seq) -> list[int]:
        k = len(seq)
        if not k:
            return []
        if not hasattr(self, "_at"):
            self._at: dict[str, list[int]] = {}
            for i, t in enumerate(self.texts):
                self._at.setdefault(t, []).append(i)
        starts = range(self.n - k + 1) if seq[0] == ANY else self._at.get(seq[0], [])
        return [i for i in starts if i + k <= self.n
                and all(s == ANY or self.texts[i + j] == s for j, s in enumerate(seq))]

    def text(self, i: int) -> str:
        t = self.toks[i]
        return self.raw[t.start : t.end]

    def span(self, i: int, j: int) -> str:
        return self.raw[self.toks[i].start : self.toks[j].end]

    # --- structure ----------------------------------------------------------------------------
    def opener(self, i: int) -> int:
        """The "(" (or CASE) whose parentheses hold token i: the nearest token before i at a lower
        depth, -1 at the top level. All of them in one pass (a stack of ever deeper tokens), so a
        model of tens of thousands of tokens costs no more than its length."""
        if not hasattr(self, "_openers"):
            openers, stack = [], []
            for k, d in enumerate(self.depth):
                while stack and self.depth[stack[-1]] >= d:
                    stack.pop()
                openers.append(stack[-1] if stack else -1)
                stack.append(k)
            self._openers: list[int] = openers
        return self._openers[i]

    def case_blocks(self, plain: bool = False) -> list[tuple[int, int]]:
        """(CASE, its END) token pairs; `plain`: only those no Jinja statement builds (a
        `{% for %}` over codes writes a CASE that is not one fixed mapping)."""
        out = []
        for i in self.find(["case"]):
            end = self.close.get(i)
            if end is None or self.texts[end] != "end":
                continue
            if plain and "{%" in self.raw[self.toks[i].start:self.toks[end].end]:
                continue
            out.append((i, end))
        return out

    def split_top(self, a: int, b: int, seps=(",",)) -> list[tuple[int, int]]:
        """Split tokens a..b (inclusive) on separators at the nesting depth of a."""
        if a > b:
            return []
        d = self.depth[a]
        parts, cur = [], a
        for i in range(a, b + 1):
            if self.texts[i] in seps and self.depth[i] == d and i not in self.open:
                parts.append((cur, i - 1))
                cur = i + 1
        parts.append((cur, b))
        return parts

    def call_args(self, i_open: int) -> list[tuple[int, int]]:
        c = self.close.get(i_open)
        if c is None or c == i_open + 1:
            return []
        return self.split_top(i_open + 1, c - 1)

    def clause_end(self, i_kw: int, extra_stop=()) -> int:
        """Last token index of the clause that starts after keyword i_kw."""
        d = self.depth[i_kw]
        j = i_kw + 1
        last = i_kw
        while j < self.n:
            t = self.texts[j]
            if self.depth[j] < d or (t in (")", "end") and self.open.get(j, -1) < i_kw):
                break
            if self.depth[j] == d and (t in CLAUSE_END or t in extra_stop):
                if not (t == "group" and self.texts[j - 1] == "within"):
                    break
            last = j
            j += 1
        return last

    def operands(self, a: int, b: int) -> list[tuple[int, int, int | None]]:
        """Boolean operands of tokens a..b split on top-level and/or (BETWEEN's `and` kept).
        Returns (first, last, connective_before_or_None)."""
        if a > b:
            return []
        d = self.depth[a]
        res = []
        cur, conn = a, None
        in_between = False
        for i in range(a, b + 1):
            t = self.texts[i]
            if self.depth[i] != d:
                continue
            if t == "between":
                in_between = True
            elif t in ("and", "or"):
                if t == "and" and in_between:
                    in_between = False
                    continue
                res.append((cur, i - 1, conn))
                cur, conn = i + 1, i
        res.append((cur, b, conn))
        return [r for r in res if r[0] <= r[1]]

    def expr_end(self, i: int, stops=(",",)) -> int:
        """Last token of the expression starting at i (stops at , ) and clause/boolean keywords)."""
        d = self.depth[i]
        stop = set(stops) | CLAUSE_END | {"and", "or", "then", "else", "when", "asc", "desc", "nulls", "rows", "range", "as"}
        last = i
        for j in range(i, self.n):
            t = self.texts[j]
            if j > i and (self.depth[j] < d or (t in (")", "end") and self.open.get(j, -1) < i)
                          or (self.depth[j] == d and j not in self.open and t in stop)):
                break
            last = j
        return last

    def gap_plain(self, i: int, j: int) -> bool:
        """True when the text between tokens i..j holds nothing but whitespace."""
        for k in range(i, j):
            if self.raw[self.toks[k].end : self.toks[k + 1].start].strip():
                return False
        return True

    def ident(self, i: int) -> bool:
        """Token i is a bare (unquoted) name: a column, table, alias, function or keyword."""
        return 0 <= i < self.n and self.toks[i].kind == "sql" and _IDENT.fullmatch(self.texts[i]) is not None

    def line_of(self, pos: int) -> tuple[int, int]:
        """(start, end) of the line holding offset `pos`; `end` is before its \\r\\n or \\n."""
        start = self.raw.rfind("\n", 0, pos) + 1
        end = self.raw.find("\n", pos)
        end = len(self.raw) if end == -1 else end
        if end > start and self.raw[end - 1] == "\r":
            end -= 1
        return start, end

    def has_jinja(self, i: int, j: int) -> bool:
        return any(self.toks[k].kind == "jinja" for k in range(i, j + 1))

    # --- edits --------------------------------------------------------------------------------
    def delete(self, i: int, j: int) -> Edit:
        """Delete tokens i..j with sensible whitespace (whole lines when they fill them)."""
        raw = self.raw
        s, e = self.toks[i].start, self.toks[j].end
        ls = raw.rfind("\n", 0, s) + 1
        le = raw.find("\n", e)
        le = len(raw) if le == -1 else le
        before_ws = raw[ls:s].strip() == ""
        after_ws = raw[e:le].strip() == ""
        if before_ws and after_ws:
            if le < len(raw):
                return Edit(ls, le + 1, "")
            if ls > 0:
                p = ls - 1
                if p > 0 and raw[p - 1] == "\r":
                    p -= 1
                return Edit(p, le, "")
            return Edit(ls, le, "")
        if after_ws:
            k = s
            while k > ls and raw[k - 1] in " \t":
                k -= 1
            return Edit(k, e, "")
        prev = raw[s - 1] if s > 0 else "\n"
        nxt = raw[e] if e < len(raw) else "\n"
        if nxt in " \t" and (prev in " \t\n(" ):
            k = e
            while k < le and raw[k] in " \t":
                k += 1
            return Edit(s, k, "")
        if prev in " \t":
            k = s
            while k > ls and raw[k - 1] in " \t":
                k -= 1
            return Edit(k, e, "")
        return Edit(s, e, "")

    def replace(self, i: int, j: int, text: str) -> Edit:
        return Edit(self.toks[i].start, self.toks[j].end, text)

    def kw(self, i: int, new: str) -> Edit:
        return Edit(self.toks[i].start, self.toks[i].end, case_like(self.text(i), new))


def compose(raw: str, edits: list[Edit]) -> tuple[int, int, str]:
    edits = sorted(edits, key=lambda e: (e.start, e.end))
    start, end = edits[0].start, max(e.end for e in edits)
    out, pos = [], start
    for e in edits:
        if e.start < pos:
            raise ValueError("overlapping edits")
        out.append(raw[pos : e.start])
        out.append(e.text)
        pos = e.end
    out.append(raw[pos:end])
    return start, end, "".join(out)


def touched_lines(a: str, b: str) -> int:
    la, lb = a.splitlines(keepends=True), b.splitlines(keepends=True)
    n = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, la, lb, autojunk=False).get_opcodes():
        if tag != "equal":
            n += max(i2 - i1, j2 - j1)
    return n
