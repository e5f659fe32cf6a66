"""`--mix hard` (issue 52, item 6): a run that prefers the kinds of task that separate agents. A
strong agent fixed every default adegen task in a handful of commands; what real data work is hard
on is depth (a symptom two or more models below the slip), second runs (incremental models), two
slips at once (the compound task) and data changes (pipeline/datachange.py), reported with the
fewest hints (the hard prompt level as the base prompt).

Pure: which proposals a hard run keeps, and the prompt levels it writes. The stages ask the
proposal rounds for EXTRA more proposals than --count, then keep the hardest (`hardest`)."""
from __future__ import annotations

from collections import Counter
from typing import Iterable

from adegen.propose.model import PromptLevel

MIXES = ("default", "hard")
EXTRA = 2  # proposals asked beyond --count, so the hard ones have others to win over
DEEP = 2  # a symptom this many models below the changed one is deep


def depth(p) -> int:
    """How many models below the changed one the graded table is (0: the model itself)."""
    obs = getattr(p, "observation", None)
    changed = getattr(obs, "changed_tables", None) or {}
    return int(changed.get(p.compared_table, 0) or 0)


def kind(p) -> str:
    """The hard kind a proposal counts as (the first that holds), else `slip`."""
    if getattr(p, "compound", None):
        return "compound"
    if getattr(p, "family", "") == "incremental":
        return "incremental"
    if depth(p) >= DEEP:
        return "deep"
    return "slip"


RANK = {"compound": 0, "incremental": 1, "deep": 2, "slip": 3, "repeat": 4}


def _compound_slips(proposals: list) -> set[tuple[str, str]]:
    """(model, pattern id) of every slip the run's compound task holds."""
    return {(s.get("model"), s.get("pattern_id")) for p in proposals for s in (getattr(p, "compound", None) or [])
            if isinstance(s, dict)}


def hardest(proposals: list, count: int) -> list:
    """The `count` hardest proposals, in their run order: by kind (compound, incremental, deep, the
    rest), then the deeper symptom, then run order. One incremental task at most counts as hard
    (a second one ranks as a slip of its depth): the mix spreads over kinds. A proposal that is one
    of the compound task's slips comes last: the run would hold that slip twice."""
    seen: Counter = Counter()
    in_compound = _compound_slips(proposals)
    keys = []
    for i, p in enumerate(proposals):
        k = kind(p)
        if k == "incremental" and seen[k]:
            k = "deep" if depth(p) >= DEEP else "slip"
        if k != "compound" and (getattr(p, "model", None), getattr(p, "pattern_id", None)) in in_compound:
            k = "repeat"
        seen[k] += 1
        keys.append((RANK[k], -depth(p), i))
    keep = sorted(sorted(range(len(proposals)), key=lambda i: keys[i])[:count])
    return [proposals[i] for i in keep]


def hard_first(levels: Iterable[PromptLevel]) -> list[PromptLevel]:
    """The levels a hard run writes: the hard text under the `base` key (ade-bench's default
    trial), the medium kept; the easier base text is left out. No hard level: unchanged."""
    levels = list(levels)
    hard = next((lv for lv in levels if lv.key == "hard"), None)
    if hard is None:
        return levels
    return [PromptLevel("base", hard.text, hard.tables)] + [lv for lv in levels if lv.key not in ("base", "hard")]


def hard_texts(texts: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """hard_first for a data change's (key, template) pairs."""
    return tuple((lv.key, lv.text) for lv in hard_first(PromptLevel(k, t) for k, t in texts))


def summary(kinds: Iterable[str], name: str) -> dict:
    """The --json `mix`: its name and how many tasks of each kind the run wrote."""
    return {"name": name, "kinds": dict(Counter(kinds))}
