"""`--mix hard` (issue 52, item 6): a run that prefers the kinds of task that separate agents. A
strong agent fixed every default adegen task in a handful of commands; what real data work is hard
on is depth (a symptom two or more models below the slip), second runs (incremental models), two
slips at once (the compound task), a fix that needs the incremental tables rebuilt in full, a real
purpose with the slip inside it (purposeful changes) and data changes (pipeline/datachange.py),
reported with the fewest hints (the hard prompt level as the base prompt).

Pure: which proposals a hard run keeps, how many purposeful tasks it takes, and the prompt levels
it writes. The stages ask the proposal rounds for EXTRA more proposals than --count, then keep the
hardest (`hardest`); the purposeful stage asks `purposeful_slots`."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

from adegen.propose.model import PromptLevel

MIXES = ("default", "hard")
EXTRA = 2  # proposals asked beyond --count, so the hard ones have others to win over
DEEP = 2  # a symptom this many models below the changed one is deep

# the kinds a hard run counts, hardest first. full-refresh: a slip upstream of an incremental model
# (the broken run's rows stay in its table, tasks/rebuild.py); purposeful: a multi-line commit with a
# real purpose and the slip inside it (pipeline/purpose.py); data-change: the data the project reads
# changed (pipeline/datachange.py). One of each kind counts as hard; a second one ranks by its depth
RANK = {"compound": 0, "incremental": 1, "full-refresh": 2, "data-change": 3, "purposeful": 4, "deep": 5,
        "slip": 6, "repeat": 7}


@dataclass(frozen=True)
class Entry:
    """One task of a run as the hard ranking sees it: its kind, how deep its symptom is, and the
    (model, pattern id) a compound task's slip is known by."""

    kind: str
    depth: int = 0
    slip: tuple = ()


def depth(p) -> int:
    """How many models below the changed one the graded table is (0: the model itself)."""
    obs = getattr(p, "observation", None)
    changed = getattr(obs, "changed_tables", None) or {}
    return int(changed.get(p.compared_table, 0) or 0)


def incremental_models(models: Iterable[dict]) -> frozenset[str]:
    """The names of the incremental models of a discovery payload's `models`."""
    return frozenset(m.get("name") for m in models if isinstance(m, dict) and m.get("materialized") == "incremental")


def kind(p, incremental: frozenset[str] = frozenset()) -> str:
    """The hard kind a proposal counts as (the first that holds), else `slip`. `incremental`: the
    project's incremental models; a slip whose rebuild runs one of them is a full-refresh task
    (the proof settles whether the refresh is needed: `written_kind`)."""
    if getattr(p, "compound", None):
        return "compound"
    if getattr(p, "family", "") == "incremental":
        return "incremental"
    if incremental & set(getattr(p, "test_setup_models", None) or ()):
        return "full-refresh"
    return by_depth(depth(p))


def by_depth(d: int) -> str:
    return "deep" if d >= DEEP else "slip"


def entry(p, incremental: frozenset[str] = frozenset()) -> Entry:
    """The Entry of a proposal (a compound task's: its slips as (model, pattern id) pairs)."""
    if getattr(p, "compound", None):
        return Entry("compound", depth(p),
                     tuple((s.get("model"), s.get("pattern_id")) for s in p.compound if isinstance(s, dict)))
    return Entry(kind(p, incremental), depth(p), (getattr(p, "model", None), getattr(p, "pattern_id", None)))


def ranked(entries: Sequence[Entry], count: int) -> list[int]:
    """The indices of the `count` hardest entries, in run order: by kind (RANK), then the deeper
    symptom, then run order. One entry of each hard kind counts as hard, the deepest (the first of
    equal depth); the others of that kind rank as slips of their depth (the mix spreads over
    kinds). An entry that is one of the compound task's slips comes last: the run would hold that
    slip twice."""
    in_compound = {s for e in entries if e.kind == "compound" for s in e.slip if isinstance(s, tuple)}
    first: dict[str, int] = {}  # hard kind -> the entry that counts as it
    for i in sorted(range(len(entries)), key=lambda i: (-entries[i].depth, i)):
        first.setdefault(entries[i].kind, i)
    keys = []
    for i, e in enumerate(entries):
        k = e.kind if e.kind in ("deep", "slip") or first[e.kind] == i else by_depth(e.depth)
        if e.kind != "compound" and e.slip in in_compound:
            k = "repeat"
        keys.append((RANK[k], -e.depth, i))
    return sorted(sorted(range(len(entries)), key=lambda i: keys[i])[:count])


def entries(proposals: Sequence, incremental: frozenset[str] = frozenset()) -> list[Entry]:
    return [entry(p, incremental) for p in proposals]


def hardest(proposals: list, count: int, incremental: frozenset[str] = frozenset()) -> list:
    """The `count` hardest proposals, in their run order (`ranked`)."""
    return [proposals[i] for i in ranked(entries(proposals, incremental), count)]


def purposeful_slots(proposals: Sequence, count: int, available: int,
                     incremental: frozenset[str] = frozenset(), depths: Sequence[int] = ()) -> int:
    """How many of `available` purposeful tasks a hard run of `count` tasks keeps beside its picked
    `proposals`: as many as the ranking keeps when they join the run after the proposals (the
    first one ranks as a hard kind, a second as a slip of its depth; `depths`: each one's, 0 when
    not known)."""
    extra = [Entry("purposeful", (list(depths) + [0] * available)[i]) for i in range(available)]
    run = entries(proposals, incremental) + extra
    return sum(1 for i in ranked(run, count) if i >= len(proposals))


def written_kind(task: dict, p, incremental: frozenset[str] = frozenset()) -> str:
    """The kind a written proposal's task counts as in --json `mix`: a predicted full-refresh task
    whose proof found the refresh not needed (no `full_refresh` in its entry) counts by its depth."""
    k = kind(p, incremental)
    if k == "full-refresh" and not task.get("full_refresh"):
        return by_depth(depth(p))
    return k


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
