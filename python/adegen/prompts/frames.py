"""What two prompts of a run may not share: a frame (a run of the same words around the names) or an
opening (the same first words). Blind reviewers on real projects read stock frames repeated across
tasks ("Not sure it's related, but also: ...", "X, for one, has N rows", "it had A last week, now
B") as a program's (issue 51); ade-bench's own prompts share none. Pure functions over the text:
names (`fct_orders`, `order 10`, "Summit Foods") are masked, so two reports that differ only in
their names share everything else.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# a frame: FRAME_WORDS words in a row, at most one of them a name; an opening: the first
# OPENING_WORDS words. Five words is where a shared stretch stops being ordinary English ("is too
# high for the") and becomes a sentence someone wrote once ("it's off by a little for")
FRAME_WORDS = 5
OPENING_WORDS = 3
NAME = "#"
_TOKEN = re.compile(r"[A-Za-z0-9_'`’.-]+")
# words that start a sentence are capitalised anyway; elsewhere a capital marks a name ("Summit Foods")
_SENTENCE_END = re.compile(r"[.?!:]$")
# words so common that a stretch made only of them and names is no frame ("it is in the #")
_COMMON = frozenset("a an the in on of for to and or is are it its it's was be by at as with from this that".split())


def _is_name(word: str, first: bool, names: frozenset) -> bool:
    w = word.strip("`'’.-").lower()
    return (not w or "_" in w or any(ch.isdigit() for ch in w) or "`" in word or w in names
            or (not first and word[:1].isupper() and w not in ("i", "i'm", "i've", "i'd")))


@lru_cache(maxsize=4096)
def skeleton(text: str, names: frozenset = frozenset()) -> tuple[str, ...]:
    """The words of `text` lowercased, each name as NAME (a run of names as one). A capitalised
    word that starts a sentence is a name when the next word is one too ("Summit Foods is ...")."""
    out: list[str] = []
    first = True
    raws = _TOKEN.findall(str(text))
    for i, raw in enumerate(raws):
        word = raw.rstrip(".")
        nxt = raws[i + 1] if i + 1 < len(raws) and not _SENTENCE_END.search(raw) else ""
        name = _is_name(word, first, names) or (first and word[:1].isupper() and nxt[:1].isupper()
                                                and nxt.lower() not in ("i", "i'm", "i've", "i'd"))
        tok = NAME if name else word.strip("`'’-").lower().replace("’", "'")
        first = bool(_SENTENCE_END.search(raw))
        if tok and not (tok == NAME and out and out[-1] == NAME):
            out.append(tok)
    return tuple(out)


@lru_cache(maxsize=4096)
def frames(text: str, names: frozenset = frozenset()) -> frozenset:
    """The frames of `text`: every FRAME_WORDS-word stretch with at most one name and at least
    two words that are not common ones, and every short sentence whole ("Look at Summit Foods.",
    "It was fine last week.": a stock follow-up is shorter than a stretch)."""
    sk = skeleton(text, names)
    grams = (sk[i:i + FRAME_WORDS] for i in range(len(sk) - FRAME_WORDS + 1))
    out = {g for g in grams if g.count(NAME) <= 1 and sum(w not in _COMMON and w != NAME for w in g) >= 2}
    for sentence in re.split(r"(?<=[.?!:])\s+", str(text).strip()):
        ss = skeleton(sentence, names)
        if 2 <= len(ss) < FRAME_WORDS and sum(w != NAME for w in ss) >= 2:
            out.add(("sentence", *ss))
    return frozenset(out)


def opening(text: str, names: frozenset = frozenset()) -> tuple[str, ...]:
    """The first OPENING_WORDS words of `text` (names masked)."""
    return skeleton(text, names)[:OPENING_WORDS]


@dataclass(frozen=True)
class Shared:
    """Two texts of a run (by index) and what they share."""
    first: int
    second: int
    what: str


def shared(texts, names=frozenset()) -> list[Shared]:
    """Every pair of `texts` that shares a frame or an opening (empty list = none shares)."""
    names = frozenset(str(n).lower() for n in names)
    out = []
    texts = list(texts)
    for j, b in enumerate(texts):
        for i, a in enumerate(texts[:j]):
            common = frames(a, names) & frames(b, names)
            if common:
                out.append(Shared(i, j, "frame '" + " ".join(w for w in sorted(common)[0] if w != "sentence") + "'"))
            elif opening(a, names) == opening(b, names) and len(opening(a, names)) == OPENING_WORDS:
                out.append(Shared(i, j, "opening '" + " ".join(opening(a, names)) + "'"))
    return out


class Used:
    """The frames and openings a run's earlier texts used, asked about for every candidate text of
    a task (`Used.of`: one per run state)."""

    def __init__(self, texts: tuple, names: frozenset):
        self.names = names
        self.frames = frozenset().union(*(frames(t, names) for t in texts)) if texts else frozenset()
        self.openings = frozenset(opening(t, names) for t in texts)

    @staticmethod
    @lru_cache(maxsize=16)
    def of(texts: tuple, names: frozenset) -> "Used":
        return Used(texts, names)

    def frame(self, text: str) -> bool:
        """Whether `text` repeats a frame an earlier text used."""
        return bool(self.frames & frames(text, self.names))

    def opens(self, text: str) -> bool:
        """Whether `text` starts the way an earlier text did."""
        return opening(text, self.names) in self.openings
