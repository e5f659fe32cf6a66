"""Whether a closing request says again what its report already said ("... should be a table.
Can you change it back to a table?", "It should be one row per day. It needs to be one row per
day again."): such a request is left off."""
from __future__ import annotations

import re

_PLAIN = {"please", "could", "would", "table", "model", "rebuild", "again", "right", "cause", "whatever",
          "fixed", "fixing", "track", "sort", "refresh", "update", "rerun", "check"}


# what a relation should be, said as "a table" / "a view": a request saying it again after the
# report did reads like a form ("..., and it should be a table. Can you change it back to a table?")
_KIND_SAID = re.compile(r"\ban? (table|view|incremental|ephemeral|snapshot)\b")


def _trigrams(text: str) -> set[tuple[str, ...]]:
    w = re.findall(r"[a-z0-9_']+", text.lower())
    return set(zip(w, w[1:], w[2:]))


def echoes(ask: str, body: str) -> bool:
    """Whether a request repeats a word of the report ("... is pushing X up. Can you find what's
    pushing it up?", "X is wrong. Can you get the X right again?", "... should be a table. Can
    you change it back to a table?")."""
    low = body.lower()
    said = set(re.findall(r"[a-z0-9_]{5,}", low))
    if set(_KIND_SAID.findall(ask.lower())) & set(_KIND_SAID.findall(low)):
        return True
    if _trigrams(ask) & _trigrams(body):  # "It should be one row per day. It needs to be one row per day again."
        return True
    return any(w in said for w in re.findall(r"[a-z0-9_]{5,}", ask.lower()) if w not in _PLAIN)
