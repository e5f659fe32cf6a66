"""Words that name how a slip works instead of what it does to the data: "should keep its decimals"
for a cast, "boundary records" for a comparison, "fan-out" for a join key. Blind reviewers read
them as the fix given away (issue 51); a stakeholder reports what they see ("the totals don't
reconcile"), not the construct. The classes, the slips they cover and their words are data
(banks/mechanisms.yaml); this module says which classes a slip is of and which of their words a
prompt uses. Pure functions.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from adegen.prompts import bank


@dataclass(frozen=True)
class Mechanism:
    """One class of slip: the pattern families and changed SQL tokens that make a slip of it, the
    words a prompt about it must not use, and the findings whose own symptom those words are."""
    name: str
    families: frozenset
    tokens: frozenset
    words: tuple
    symptom_of: frozenset

    @property
    def pattern(self) -> re.Pattern:
        return _word_pattern(self.words)


@lru_cache(maxsize=None)
def classes() -> tuple[Mechanism, ...]:
    """Every class of banks/mechanisms.yaml, in the bank's order."""
    doc = bank.load("mechanisms")
    return tuple(Mechanism(name, frozenset(c["families"]), frozenset(t.lower() for t in c["tokens"]),
                           tuple(w.lower() for w in c["words"]), frozenset(c["symptom_of"]))
                 for name, c in doc.items())


def slip_classes(family: str = "", tokens=frozenset()) -> tuple[Mechanism, ...]:
    """The classes of a slip: the ones its pattern family belongs to; for a slip whose family no
    class names (a diff from history or a bug command), the ones whose SQL tokens it changes."""
    fam = str(family or "").lower()
    by_family = tuple(c for c in classes() if fam in c.families)
    if by_family:
        return by_family
    toks = {str(t).lower() for t in tokens}
    return tuple(c for c in classes() if c.tokens & toks)


@lru_cache(maxsize=None)
def _word_pattern(words: tuple) -> re.Pattern:
    """One regex for a class's words: whole words, `*` for any ending, any run of spaces between
    the words of a phrase; a name (`round_trip_days`, `decimal_places`) is one word, not a match."""
    parts = []
    for w in sorted(words, key=len, reverse=True):
        stem = w[:-1] if w.endswith("*") else w
        body = r"\s+".join(re.escape(p) for p in stem.split())
        parts.append(body + (r"[^\W_]*" if w.endswith("*") else ""))
    return re.compile(r"(?<![\w`-])(?:" + "|".join(parts) + r")(?![\w`-])", re.I)


def mechanism_words(text: str, mechanisms, finding_kind: str = "", allowed=frozenset()) -> list[str]:
    """Reasons `text` names how the slip works (empty list = it reports a symptom). `allowed`: words
    that are names here (a column called `precision`, a table's own words), never refused."""
    allowed_l = {str(a).lower() for a in allowed}
    reasons = []
    for m in mechanisms:
        if finding_kind and finding_kind in m.symptom_of:
            continue
        hits = sorted({" ".join(h.lower().split()) for h in m.pattern.findall(text)} - allowed_l)
        if hits:
            reasons.append(f"names the mechanism of a {m.name} slip ({', '.join(hits)}), not what a reader sees")
    return reasons


def words_for(mechanisms, finding_kind: str = "") -> list[str]:
    """The words a prompt writer must avoid for these classes (--prompt-command's input)."""
    return sorted({w for m in mechanisms if finding_kind not in m.symptom_of for w in m.words})
