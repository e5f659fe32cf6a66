"""Checks every prompt passes: no leak of the fix, no tool words, and every table it names really
differs in the broken state.

A prompt names tables and what looks wrong, never the fix, the pattern, the changed line, the file
or the SQL keywords of the mutation (`leaks`); it never reads like program output (`tool_words`);
and every model it mentions is one whose table the diff shows changed (`unchanged_tables_named`).
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import PurePosixPath

from adegen.sql import lexer

# SQL words that are also ordinary English: not a leak on their own.
ENGLISH_SAFE = {
    "a", "an", "the", "and", "or", "not", "in", "on", "is", "as", "by", "all", "when", "then", "else",
    "with", "from", "to", "at", "of", "order", "group", "end", "if", "no", "null", "be", "it", "for",
    "select", "first", "last", "date", "day", "month", "year", "value", "values", "true", "false",
    "any", "some", "between", "count", "number", "total", "current",
    "0", "1",  # values every table holds: quoting one as an observed value reveals nothing
}

GIVEAWAYS = ("bug", "mutation", "patch", "injected", "left join", "inner join", "group by", "where clause",
             "sql", "the fix is")
# words and shapes of program output: a person does not write them in a bug report
TOOL_WORDS = (
    (r"\bintact\b", "intact"), (r"\boracle\b", "oracle"), (r"\(s\)", "a plural written as (s)"),
    (r"(?<![\d.,])1 (rows|records|columns|tables|entries|values)\b", "'1' with a plural"),
    (r"\bmutant\b|\bmutat", "mutation"), (r"\bbaseline\b", "baseline"), (r"\bscreen(ed|ing)\b", "screening"),
    (r"\badegen\b", "adegen"), (r"\(expected\b", "'(expected'"), (r"\bNULL\b", "NULL"),
    (r"\bunder the equality\b|\bequality (test|oracle)\b", "equality test"), (r"\bsolution seed", "solution seed"),
    (r"\bthe (set )?oracle\b", "oracle"), (r"\bcolumns? set\b", "column set"), (r"\bdiff(ers)? from the\b", "diff"),
    (r"\b[a-z_]+ = [^ ]+ has [a-z_]+ = ", "key = value has column = value"),
)


def changed_tokens(site) -> tuple[set[str], set[str]]:
    """The tokens a site removes and adds, lowercased (string literals keep their quotes)."""
    try:
        from adegen.rewrite import changed_tokens

        rem, add = changed_tokens(site)
        return {str(t).lower() for t in rem}, {str(t).lower() for t in add}
    except (ImportError, AttributeError, TypeError):
        b, a = Counter(lexer.token_texts(site.before)), Counter(lexer.token_texts(site.after))
        return set((b - a).keys()), set((a - b).keys())


def added_literals(site) -> set[str]:
    """The text of every string literal the mutation writes, lowercased and without quotes."""
    _removed, added = changed_tokens(site)
    return {t[1:-1].strip() for t in added if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\""}


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
        changed = changed_tokens(site)
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
            # a whole fragment, not a piece of a longer name: "created_at" swapped in the code is
            # not quoted by a report about the conversation_created_at column
            if len(frag) >= 6 and re.search(rf"(?<![a-z0-9_]){re.escape(frag)}(?![a-z0-9_])", " ".join(low.split())):
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
    for kw in GIVEAWAYS:
        if re.search(rf"\b{re.escape(kw)}\b", low):
            reasons.append(f"uses the giveaway {kw!r}")
    return reasons


# how a model is built: a report of a configuration change that names it states the fix ("X is a
# view now, it used to be a table" tells the agent exactly what to change back)
_BUILD_WORDS = re.compile(r"\b(views?|tables?|materiali[sz]\w*|incremental\w*|config\w*|ephemeral)\b", re.I)


def states_fix(prompt: str, site=None, pattern=None) -> list[str]:
    """Reasons the prompt states the fix instead of a symptom (empty list = it reports a symptom).
    A configuration change is reported by what users notice (slow dashboards), never by the object
    kind; every other leak of the change is `leaks`'."""
    config = (str(getattr(pattern, "family", "")) == "config-materialization"
              or "wrong_materialization" in (getattr(site, "placeholders", None) or {}))
    if not config:
        return []
    hits = sorted({m.group(1).lower() for m in _BUILD_WORDS.finditer(prompt)})
    return [f"states the fix: names how the model is built ({', '.join(hits)})"] if hits else []


def tool_words(prompt: str) -> list[str]:
    """Reasons the prompt reads like program output (empty list = reads like a person)."""
    return [f"tool words: {why}" for rx, why in TOOL_WORDS if re.search(rx, prompt)]


def names_in(prompt: str, names) -> list[str]:
    """The names (models, tables) the prompt mentions as whole words, case-insensitive."""
    low = prompt.lower()
    return [n for n in names if re.search(rf"(?<![a-z0-9_]){re.escape(str(n).lower())}(?![a-z0-9_])", low)]


def unchanged_tables_named(prompt: str, changed, project_models) -> list[str]:
    """Reasons: models of the project the prompt names whose table does not differ in the broken
    state (a prompt may only point at tables the diff shows changed)."""
    changed_l = {str(c).lower() for c in changed}
    return [f"names {n}, which does not differ in the broken state"
            for n in names_in(prompt, project_models) if str(n).lower() not in changed_l]


def forbidden_tokens(*, site=None, pattern=None, model_path: str | None = None,
                     allowed=frozenset()) -> list[str]:
    """What `leaks` rejects, as a list a prompt writer can avoid: tokens the change adds or removes
    (minus ordinary English and `allowed`), the model's file name, the pattern's names, giveaways."""
    out: set[str] = set(GIVEAWAYS)
    allowed_l = {a.lower() for a in allowed}
    if site is not None:
        removed, added = changed_tokens(site)
        for t in removed | added:
            t = t.strip()
            if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
                t = t[1:-1].strip()
            if t and t not in ENGLISH_SAFE and t not in allowed_l and t not in ("{{", "''"):
                out.add(t)
    if model_path:
        out.add(PurePosixPath(model_path).name)
    if pattern is not None:
        out |= {str(x) for x in (getattr(pattern, "id", ""), getattr(pattern, "name", "")) if x}
    return sorted(out)


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
