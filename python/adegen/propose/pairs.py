"""Candidates for one mistake in two sibling models (adegen.propose.siblings): one per pair of models that
take the same edit, built from the run's single-model candidates (their models' rewrite sites)."""
from __future__ import annotations

from collections import Counter

from adegen.core.graph import ProjectGraph
from adegen.propose import siblings
from adegen.propose.proposals import Candidate, Scope, is_config_only, is_last_resort, own_models, pattern_ok_for_db


def sibling_candidates(scope: Scope, catalog, cands: list[Candidate]) -> list[Candidate]:
    """The pair candidates: the first model's, with the pair-site as its only site. Neither model
    may repeat a surveyed task's family (so both have candidates of their own in `cands`); at most
    siblings.MAX_PAIRS, none on a project too large to pair every model."""
    lazies = {c.name: (c.lazy, c.raw_bytes) for c in cands if c.lazy is not None}
    models = [m for m in own_models(scope.discovery, scope.project_name) if m["name"] in lazies]
    if len(models) > siblings.MAX_MODELS:
        return []
    covered = scope.survey.covered_pairs
    matched = Counter(pid for m in models for pid in m.get("matched_patterns", []))
    graph = ProjectGraph.from_discovery(scope.discovery)
    out: list[Candidate] = []
    for p in catalog.patterns:
        if (not siblings.eligible(p) or is_last_resort(p) or is_config_only(p)
                or not pattern_ok_for_db(p, scope.db_type) or matched[p.id] < 2):
            continue
        fam = str(getattr(p, "family", "") or p.id)
        entries = [(m, lazies[m["name"]][0].raw, lazies[m["name"]][0].all(p.id)) for m in models
                   if p.id in m.get("matched_patterns", []) and (m["name"], fam) not in covered]
        if len(entries) < 2:
            continue
        for m, _raw, site in siblings.pair_sites(p, entries, graph):
            out.append(Candidate(m, p, lazies[m["name"]][1], [site],
                                 covered_by=scope.survey.covered_models.get(m["name"])))
            if len(out) >= siblings.MAX_PAIRS:
                return out
    return out
