"""Bulk mode's candidates: every (model, pattern, site) the build's enumeration yields, one unit
each, in an order that depends only on the candidates and the seed.

The order spreads the units over models, families, layers, difficulty and patterns: a greedy
walk that always takes the unit whose model, family, ... have been used least so far, ties broken
by a seeded random draw. Costs only grow as the walk goes on, so a lazy heap (re-scored on pop)
keeps it O(n log n) for the tens of thousands of units of a big project."""
from __future__ import annotations

import hashlib
import heapq
import random
from collections import Counter
from dataclasses import dataclass

from adegen.pipeline import propose
from adegen.propose.siblings import key_suffix
from adegen.pipeline.context import RunContext

# cost of a unit = sum of weight x how often its value was already taken (then the seeded jitter)
SPREAD_WEIGHTS = {"model": 4.0, "family": 3.0, "pattern": 2.0, "layer": 1.5, "difficulty": 1.5}


@dataclass(frozen=True)
class Unit:
    """One candidate task: a single-site `proposals.Candidate` (what `proposals.select` realises)."""

    key: str  # unit_key: "<model unique_id>|<pattern id>|<site index>[+<sibling>#<index>]", stable across runs
    candidate: object  # proposals.Candidate with exactly one site

    @property
    def family(self) -> str:
        return self.candidate.family

    @property
    def name(self) -> str:
        return self.candidate.name

    @property
    def pattern(self) -> str:
        return str(self.candidate.pattern.id)

    def attrs(self) -> dict[str, str]:
        c = self.candidate
        return {"model": c.model["unique_id"], "family": c.family, "pattern": str(c.pattern.id),
                "layer": str(c.model.get("layer", "other")), "difficulty": str(getattr(c.pattern, "difficulty", ""))}

    def fingerprint_line(self) -> str:
        site = self.candidate.sites[0]
        return f"{self.key}:{site.line}:{site.before}->{site.after}"


def enumerate_units(ctx: RunContext) -> tuple[list[Unit], list]:
    """(units in enumeration order, excluded pairs that repeat a surveyed task): the build's
    candidates (`propose.enumerate_candidates`: same model + family as a surveyed task excluded)
    split into one unit per rewrite site."""
    cands, excluded = propose.enumerate_candidates(ctx)
    units: list[Unit] = []
    for c in cands:
        for site in c.sites:
            one = c.with_sites([site])
            units.append(Unit(unit_key(c, site), one))
    return units, excluded


def unit_key(c, site) -> str:
    """A candidate site's stable key (a pair-site's names its sibling too: adegen.propose.siblings)."""
    return f"{c.model['unique_id']}|{c.pattern.id}|{site.index}{key_suffix(site)}"


def order_units(units: list, seed: int) -> list:
    """The units in bulk order for `seed` (independent of the input order and of hash seeds): the
    catalog's Units and bulk_made's MadeUnits alike (a key, attrs())."""
    units = sorted(units, key=lambda u: u.key)
    rng = random.Random(_seed_int(seed))
    jitter = [rng.random() for _ in units]
    attrs = [u.attrs() for u in units]
    used: dict[str, Counter] = {k: Counter() for k in SPREAD_WEIGHTS}

    def cost(i: int) -> float:
        return sum(w * used[k][attrs[i][k]] for k, w in SPREAD_WEIGHTS.items())

    heap = [(0.0, jitter[i], i) for i in range(len(units))]
    heapq.heapify(heap)
    out: list[Unit] = []
    while heap:
        stored, jit, i = heapq.heappop(heap)
        now = cost(i)
        if now > stored:  # taken values made it dearer since it was pushed: re-queue
            heapq.heappush(heap, (now, jit, i))
            continue
        out.append(units[i])
        for k in SPREAD_WEIGHTS:
            used[k][attrs[i][k]] += 1
    return out


def units_fingerprint(units: list) -> str:
    """Identifies the ordered candidate list (a resumed run must see the same one)."""
    return hashlib.sha256("\n".join(u.fingerprint_line() for u in units).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _seed_int(seed: int) -> int:
    return int.from_bytes(hashlib.sha256(f"adegen-bulk:{seed}".encode()).digest()[:8], "big")
