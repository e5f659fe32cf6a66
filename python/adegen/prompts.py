"""Agent prompts: the symptom a real user would report, plus an automatic leak check.

A prompt names the table and what looks wrong, never the fix, the pattern, the changed line, the
file/line or the SQL keywords of the mutation. `make_prompt` tries, in order, the pattern's
`symptom_template` (with the observed example when there is one), the same without the example, a
generic symptom for the pattern's direction, and a minimal one; the first that passes `leaks()` wins.
"""
from __future__ import annotations

import re
import string
from collections import Counter
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from . import lexer

# SQL words that are also ordinary English: not a leak on their own.
ENGLISH_SAFE = {
    "a", "an", "the", "and", "or", "not", "in", "on", "is", "as", "by", "all", "when", "then", "else",
    "with", "from", "to", "at", "of", "order", "group", "end", "if", "no", "null", "be", "it", "for",
    "select", "first", "last", "date", "day", "month", "year", "value", "values", "true", "false",
    "any", "some", "between", "count", "number", "total", "current",
}

GENERIC = {
    "rows_missing": "Some records seem to be missing from {model}{col_clause}. The row count is lower than "
                    "what we see upstream. Can you figure out what's going on and fix it?",
    "extra_rows": "{model} has more rows than it should{col_clause} - it looks like some records are "
                  "duplicated or shouldn't be there at all. Can you track it down and fix it?",
    "values_too_high": "The {column} numbers in {model} look too high compared to what we expect. Can you "
                       "find out why and fix it?",
    "values_too_low": "The {column} numbers in {model} look too low compared to what we expect. Can you "
                      "find out why and fix it?",
    "values_null": "{column} in {model} is empty for rows that should have a value. Can you find out why "
                   "and fix it?",
    "values_wrong": "Some {column} values in {model} don't look right. Can you investigate and fix it?",
    "build_error": "dbt run is failing on {model}. Can you get it building again?",
}
GENERIC_NOCOL = {
    "values_too_high": "Some of the numbers in {model} look too high compared to what we expect. Can you find "
                       "out why and fix it?",
    "values_too_low": "Some of the numbers in {model} look too low compared to what we expect. Can you find "
                      "out why and fix it?",
    "values_null": "Some columns in {model} are empty for rows that should have a value. Can you find out "
                   "why and fix it?",
    "values_wrong": "Some values in {model} don't look right. Can you investigate and fix it?",
    "rows_missing": GENERIC["rows_missing"].replace("{col_clause}", ""),
    "extra_rows": GENERIC["extra_rows"].replace("{col_clause}", ""),
    "build_error": GENERIC["build_error"],
}
MINIMAL = "The data in {model} doesn't look right since the last change. Can you investigate and fix it?"


@dataclass
class PromptResult:
    prompt: str | None
    source: str  # template | template_no_example | generic | minimal | dropped
    rejected: list[tuple[str, list[str]]] = field(default_factory=list)


def _changed_tokens(site) -> tuple[set[str], set[str]]:
    try:
        from .rewrite import changed_tokens  # type: ignore

        rem, add = changed_tokens(site)
        return {str(t).lower() for t in rem}, {str(t).lower() for t in add}
    except ImportError:
        b, a = Counter(lexer.token_texts(site.before)), Counter(lexer.token_texts(site.after))
        return set((b - a).keys()), set((a - b).keys())


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?", text)}


def leaks(prompt: str, *, site=None, pattern=None, model_path: str | None = None,
          allowed: set[str] = frozenset(), changed: tuple[set[str], set[str]] | None = None) -> list[str]:
    """Reasons the prompt reveals the bug (empty list = safe)."""
    reasons: list[str] = []
    low = prompt.lower()
    words = _words(prompt)
    allowed_l = {a.lower() for a in allowed}
    if changed is None and site is not None:
        changed = _changed_tokens(site)
    if changed:
        removed, added = changed
        for tok in sorted(removed | added):
            t = tok.lower()
            if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
                # a string literal: its text (a label, a status) gives the fix away
                inner = t[1:-1].strip()
                if inner and inner not in ENGLISH_SAFE and inner not in allowed_l and (
                        re.search(rf"(?<![a-z0-9_]){re.escape(inner)}(?![a-z0-9_])", low)):
                    reasons.append(f"mentions {inner!r}, a literal the mutation changes")
                continue
            if t in ("{{", "''") or t in ENGLISH_SAFE or t in allowed_l:
                continue
            if not re.fullmatch(r"[a-z_][a-z0-9_]*|\d+(?:\.\d+)?", t):
                # operators: only multi-character ones written in the prompt count
                if len(t) > 1 and t in low and t not in ("--",):
                    reasons.append(f"mentions operator {t!r} from the mutation")
                continue
            if t in words:
                reasons.append(f"mentions {t!r}, a token the mutation changes")
    if site is not None:
        for side in (getattr(site, "before", ""), getattr(site, "after", "")):
            frag = " ".join(str(side).split()).lower()
            if len(frag) >= 6 and frag in " ".join(low.split()):
                reasons.append("quotes the changed code")
        line = getattr(site, "line", None)
        if line and re.search(rf"\b(line|l)\s*{int(line)}\b", low):
            reasons.append("mentions the changed line number")
    if model_path:
        fname = PurePosixPath(model_path).name.lower()
        if fname in low or model_path.lower() in low:
            reasons.append(f"mentions the file {fname}")
    if pattern is not None:
        for label in (getattr(pattern, "id", ""), getattr(pattern, "name", "")):
            lab = str(label or "").lower()
            if lab and (lab in low or lab.replace("_", " ") in low):
                reasons.append(f"names the pattern {label!r}")
        fam = str(getattr(pattern, "family", "") or "").lower()
        if fam and len(fam) > 3 and fam not in allowed_l and re.search(rf"\b{re.escape(fam)}\b", low):
            reasons.append(f"names the bug family {fam!r}")
    for kw in ("bug", "mutation", "patch", "injected", "left join", "inner join", "group by", "where clause",
               "sql", "the fix is"):
        if kw in low:
            reasons.append(f"uses the giveaway {kw!r}")
    return reasons


class _Safe(dict):
    def __missing__(self, key):
        raise KeyError(key)


def _fill(template: str, values: dict[str, str]) -> str | None:
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f]
        if any(f not in values for f in fields):
            return None
        return template.format_map(_Safe(values))
    except (KeyError, ValueError, IndexError):
        return None


def _with_example(text: str, example: str) -> str:
    """Put "For example, ..." before a closing question ("Can you fix it?"), else at the end."""
    ex = f"For example, {example.strip().rstrip('.')}."
    text = text.rstrip()
    if text.endswith("?"):
        cut = max(text.rfind(". ", 0, len(text) - 1), text.rfind("! ", 0, len(text) - 1))
        if cut != -1:
            return f"{text[:cut + 1]} {ex} {text[cut + 2:]}"
    return f"{text} {ex}"


ASKS = ("Can you look into it and fix it?", "Can you find out what's going on and fix it?",
        "Could you track this down and fix it?")


def _tidy(text: str) -> str:
    """One space between words; a capital first letter unless the text starts with a name
    (`line_count in ...` stays as it is)."""
    text = re.sub(r"[ \t]+", " ", text.strip())
    first = text.split(" ", 1)[0] if text else ""
    if first and re.fullmatch(r"[a-z][a-z'’]*[.,:;]?", first):
        text = text[:1].upper() + text[1:]
    return text


def _ask(text: str, seed: str) -> str:
    """A user report ends with a request; templates are only the symptom."""
    text = text.rstrip()
    if text.endswith("?"):
        return text
    if not text.endswith((".", "!")):
        text += "."
    return f"{text} {ASKS[sum(map(ord, seed)) % len(ASKS)]}"


def make_prompt(pattern, *, model: str, column: str | None, project_name: str, site=None,
                model_path: str | None = None, example: str | None = None, table: str | None = None,
                extra: dict[str, str] | None = None) -> PromptResult:
    """The first non-leaking prompt among template (+example), template, generic, minimal."""
    table = table or model
    col = column or "the key metric"
    values = {"model": table, "table": table, "project_name": project_name,
              "mutated_model": model, "downstream_model": table}
    if column:
        values["column"] = column
    if example:
        example = example.replace("the intact build has", "it used to have")
        values["example"] = example
    values.update(extra or {})
    allowed = {model, table, project_name} | ({column} if column else set())
    changed = _changed_tokens(site) if site is not None else None
    res = PromptResult(None, "dropped")
    candidates: list[tuple[str, str]] = []
    tmpl = getattr(pattern, "symptom_template", None)
    if tmpl:
        base = _fill(str(tmpl), values)
        if base:
            base = _ask(base, table)
            if example and "{example}" not in str(tmpl):
                candidates.append(("template", _with_example(base, example)))
            candidates.append(("template_no_example" if example else "template", base))
    direction = str(getattr(pattern, "symptom", "") or "values_wrong")
    gen = GENERIC.get(direction, GENERIC["values_wrong"])
    col_clause = f" (look at {column})" if column and direction in ("rows_missing", "extra_rows") else ""
    g = gen.format(model=table, column=col, col_clause=col_clause)
    if example:
        candidates.append(("generic", _with_example(g, example)))
    candidates.append(("generic", g))
    if column:
        candidates.append(("generic", GENERIC_NOCOL.get(direction, GENERIC_NOCOL["values_wrong"])
                           .format(model=table)))
    candidates.append(("minimal", MINIMAL.format(model=table)))
    for source, text in candidates:
        text = _tidy(text)
        why = leaks(text, site=site, pattern=pattern, model_path=model_path, allowed=allowed, changed=changed)
        if not why:
            res.prompt, res.source = text, source
            return res
        res.rejected.append((text, why))
    return res


def description_for(pattern, model: str, site=None) -> str:
    """task.yaml `description`: one line saying what the bug is (not shown to the agent)."""
    name = str(getattr(pattern, "name", None) or getattr(pattern, "id", "bug"))
    where = f" in {model}"
    if site is not None:
        b = " ".join(str(site.before).split())
        a = " ".join(str(site.after).split())
        if len(b) + len(a) <= 90:
            change = f"`{b}` -> `{a}`" if b and a else (f"added `{a}`" if a else f"removed `{b}`")
            return f"{name}{where}: {change} (line {site.line})"
        return f"{name}{where} (line {site.line})"
    return f"{name}{where}"
