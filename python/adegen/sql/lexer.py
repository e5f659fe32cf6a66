"""The one lexer for dbt model SQL, shared by the dbt macros and the rewrite engine.

`applies_when` and SQL features mean "a case-insensitive token-sequence match outside Jinja,
comments and string literals". The dbt macros cannot import Python, so the two regular
expressions below are written verbatim into the generated catalog macro
(`macros/catalog/ade_pattern_catalog.sql`) and both sides tokenize with them:

1. MASK_RE finds Jinja blocks, comments and string literals. A Jinja expression (`{{ ... }}`)
   becomes the token `{{`, a string literal the token `''`, everything else masked vanishes.
2. TOKEN_RE splits what is left into lower-cased tokens.

The macro does `re.findall(TOKEN_RE, re.sub(MASK_RE, MASK_REPL, raw))`; `tokenize` here gives the
same token texts, with their positions in the raw text so rewrites can edit the exact site.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# Groups 1-3 survive the substitution (MASK_REPL); unmatched groups become "" (Python >= 3.5).
MASK_RE = (
    r"(?s)(\{\{)(?:.*?)\}\}"  # Jinja expression -> "{{"
    r"|(')(?:[^']|'')*(')"  # string literal -> "''"
    r"|\{#.*?#\}"  # Jinja comment
    r"|\{%.*?%\}"  # Jinja statement
    r"|--[^\n]*"  # line comment
    r"|/\*.*?\*/"  # block comment
)
MASK_REPL = r" \1\2\3 "

TOKEN_RE = (
    r"\{\{|''"
    r'|"(?:[^"]|"")*"'
    r"|[A-Za-z_][A-Za-z0-9_$]*"
    r"|[0-9]+(?:\.[0-9]+)?"
    r"|<=|>=|<>|!=|\|\||::|=>|->"
    r"|\S"
)

JINJA_TOKEN = "{{"
STRING_TOKEN = "''"
# Friendlier spellings accepted in pattern files.
TOKEN_ALIASES = {"<jinja>": JINJA_TOKEN, "<string>": STRING_TOKEN}

_MASK = re.compile(MASK_RE)
_TOKEN = re.compile(TOKEN_RE)


@dataclass(frozen=True)
class Token:
    text: str  # lower-cased, as matched by applies_when
    start: int  # offset in the raw text
    end: int
    kind: str  # "jinja", "string" or "sql"


def _masked_same_length(raw: str) -> tuple[str, dict[int, tuple[int, str]]]:
    """Raw text with masked regions blanked (newlines kept), plus where each placeholder sits."""
    out: list[str] = []
    placeholders: dict[int, tuple[int, str]] = {}
    last = 0
    for m in _MASK.finditer(raw):
        out.append(raw[last : m.start()])
        span = raw[m.start() : m.end()]
        blank = "".join("\n" if c == "\n" else ("\r" if c == "\r" else " ") for c in span)
        if m.group(1):
            placeholders[m.start()] = (m.end(), "jinja")
            blank = "{{" + blank[2:]
        elif m.group(2):
            placeholders[m.start()] = (m.end(), "string")
            blank = "''" + blank[2:]
        out.append(blank)
        last = m.end()
    out.append(raw[last:])
    return "".join(out), placeholders


def tokenize(raw: str) -> list[Token]:
    """Tokens of `raw` outside Jinja, comments and strings (placeholders for Jinja expressions
    and string literals), each with the span it covers in `raw`."""
    masked, placeholders = _masked_same_length(raw)
    tokens: list[Token] = []
    for m in _TOKEN.finditer(masked):
        start = m.start()
        if start in placeholders and m.group() in (JINJA_TOKEN, STRING_TOKEN):
            end, kind = placeholders[start]
            tokens.append(Token(m.group(), start, end, kind))
        else:
            tokens.append(Token(m.group().lower(), start, m.end(), "sql"))
    return tokens


def token_texts(raw: str) -> list[str]:
    """Exactly what the dbt macro computes (kept as the reference implementation)."""
    return [t.lower() for t in _TOKEN.findall(_MASK.sub(MASK_REPL, raw))]


def split_sequence(text: str) -> list[str]:
    """A pattern's token sequence ("LEFT JOIN", "= <string>") as lower-cased tokens."""
    for alias, token in TOKEN_ALIASES.items():
        text = text.replace(alias, f" {token} ")
    return [t.lower() for t in _TOKEN.findall(text)]


def find_sequence(tokens: list[Token], sequence: list[str]) -> list[int]:
    """Indexes in `tokens` where `sequence` starts (contiguous, case-insensitive)."""
    n = len(sequence)
    if n == 0:
        return []
    texts = [t.text for t in tokens]
    return [i for i in range(len(texts) - n + 1) if texts[i : i + n] == sequence]


_QUOTES = re.compile(r"[\"'`]")


def code_words(raw: str) -> list[str]:
    """Lower-cased tokens of `raw` outside comments (SQL and Jinja) and SQL string literals, with
    the inside of Jinja expressions and statements tokenized too (their quotes dropped).

    Unlike `tokenize`, Jinja is read, not masked: a question such as "does this model read the
    clock?" must see `{{ run_started_at }}` or `{{ dbt.dateadd('day', -7, 'current_date') }}`,
    whose Jinja strings are SQL once rendered; a SQL string literal ('current_date') is only data."""
    out: list[str] = []
    last = 0
    for m in _MASK.finditer(raw):
        out.append(raw[last:m.start()])
        span = m.group(0)
        if m.group(1) or span.startswith("{%"):  # a Jinja expression or statement: its inside is code
            out.append(" " + _QUOTES.sub(" ", span[2:-2]) + " ")
        else:
            out.append(" ")  # comments and SQL string literals say nothing about what the code reads
        last = m.end()
    out.append(raw[last:])
    return [t.lower() for t in _TOKEN.findall("".join(out))]
