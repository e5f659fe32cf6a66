"""Two independent slips on one lineage: a compound task (issue 52).

The story: two people (or one person on two days) each ship a small mistake in two models of one
lineage, of two different kinds (a filter that drops rows upstream, an aggregate changed in the
mart that reads it). A report shows a symptom; fixing the first mistake found makes the table
look closer to right but not right. Real bug hunts are often like this, and no single-slip task
asks an agent to keep looking once one fix "worked".

A compound is built from two proposals the run already screened and found observable (`parts`):
single-file, different models, different families, one model upstream of the other or both
upstream of one model. The combined mutant (both files changed) is screened by the caller
(`pipeline.compound`), and `verdict` decides from the three measurements (intact vs combined,
intact vs each slip alone) whether it makes a fair task:

1. the combined state differs from intact on a graded table;
2. each slip alone still leaves a graded table different from intact (so fixing one alone fails);
3. each slip shows in the combined state: on some graded table, the combined state's difference
   from intact is not the other slip's alone (otherwise the agent could not see it, yet must fix
   it). Equal difference facts (row counts, rows differing, columns differing) count as "not
   shown": the check errs towards dropping.

The graded tables are each slip's own reported table (its proposal's compared table). The task
is the upstream slip's proposal with the downstream slip as its sibling file (`Proposal.siblings`):
the task's patches, the proof and the grading take it as they take any multi-file task.

Pure functions: no screening, no files."""
from __future__ import annotations

from dataclasses import dataclass

from adegen.core.drops import DropCode
from adegen.core.graph import ProjectGraph

FAMILY = "compound"
# families whose change is configuration or a ref, not a slip in a line of logic another slip can
# sit beside; and the origins whose proposal is already more than one file (pairs, diffs)
EXCLUDED_FAMILIES = frozenset({"dag-ref", "config-materialization", "incremental", "reverted-fix", "external-diff"})
MAX_TRIES = 4  # combined mutants screened per build at most (each is one screening)


@dataclass(frozen=True)
class Slip:
    """One of the two slips as the run record shows it."""

    model: str
    path: str
    pattern_id: str
    family: str
    line: int
    before: str
    after: str
    table: str  # the graded table its symptom is reported on

    def to_json(self) -> dict:
        return {"model": self.model, "path": self.path, "pattern_id": self.pattern_id, "family": self.family,
                "line": self.line, "before": self.before, "after": self.after, "table": self.table}


def slip_of(p) -> Slip:
    return Slip(p.model, p.model_path, p.pattern_id, p.family, int(p.site.line), str(p.site.before),
                str(p.site.after), p.compared_table)


def spare(chosen: list, kept: list) -> list:
    """The proposals a compound may take its slips from: the ones the run screened and kept back
    (`kept`: (proposal, its drop)) that are no task of the run and make no task's slip again. A
    compound made of the run's own picks repeats them: blind reviewers read tasks 001 and 003
    inside task 005 of one run as a set that visibly repeats (issue 51)."""
    taken = {(p.model, p.pattern_id) for p in chosen} | {_where(p) for p in chosen}
    return [p for p, d in kept if all(p is not q for q in chosen) and getattr(d, "code", None) not in UNFIT
            and (p.model, p.pattern_id) not in taken and _where(p) not in taken]


# kept back for what the slip is, not for want of room: a made-up looking edit, a report naming the very
# column the change converts (the fix on the symptom's line); in a compound they read the same
UNFIT = (DropCode.LAST_RESORT, DropCode.OWN_CONVERSION)


def _where(p) -> tuple:
    site = getattr(p, "site", None)
    return (p.model_path, int(getattr(site, "line", 0) or 0), str(getattr(site, "before", "")),
            str(getattr(site, "after", "")))


def why_none(chosen: list, kept: list, discovery: dict) -> str:
    """Why the spare proposals (`spare`) make no pair, for the run record."""
    left = spare(chosen, kept)
    if pairs(list(chosen) + left, discovery):
        return (f"no compound: the pairs on one lineage all take a slip of a task of the run ({len(left)} "
                "unpicked proposal(s) make none), and a compound of the run's own slips repeats its tasks")
    return f"no compound: no two proposals of two families on one lineage ({len(left)} unpicked)"


def usable(p) -> bool:
    """Whether a proposal may be one slip of a compound: screened and observable, a data change of
    one file (no build error, no materialization change, no sibling pair, no diff, no story that
    adds a model file)."""
    obs = p.observation
    if obs is None or not getattr(obs, "observable", False) or p.build_error or p.siblings or getattr(p, "added_files", ()):
        return False
    if (getattr(obs, "details", None) or {}).get("relation_kind"):
        return False
    if getattr(getattr(p, "candidate", None), "origin", None) is not None:
        return False
    return str(p.family) not in EXCLUDED_FAMILIES and not str(p.family).startswith(FAMILY)


def on_one_lineage(a: dict, b: dict, graph: ProjectGraph) -> bool:
    """One model upstream of the other, or both upstream of one model."""
    da, db = graph.descendants(a["unique_id"]), graph.descendants(b["unique_id"])
    return b["unique_id"] in da or a["unique_id"] in db or bool(da & db)


def pairs(props: list, discovery: dict) -> list[tuple]:
    """(upstream proposal, other proposal) pairs that may make a compound, best first: different
    models and families, on one lineage; pairs whose slips report on two different tables first
    (two symptoms to follow), then the shallower upstream model (a longer trail)."""
    by_uid = {m["unique_id"]: m for m in discovery.get("models", [])}
    graph = ProjectGraph.from_discovery(discovery)
    ok = [p for p in props if usable(p) and p.model_unique_id in by_uid]
    out = []
    for i, p in enumerate(ok):
        for q in ok[i + 1:]:
            if p.model == q.model or p.family == q.family or p.model_path == q.model_path:
                continue
            a, b = by_uid[p.model_unique_id], by_uid[q.model_unique_id]
            if not on_one_lineage(a, b, graph):
                continue
            up, other = (p, q) if int(a.get("depth") or 0) <= int(b.get("depth") or 0) else (q, p)
            out.append(((up.compared_table == other.compared_table, int(by_uid[up.model_unique_id].get("depth") or 0),
                         i), up, other))
    return [(up, other) for _k, up, other in sorted(out, key=lambda x: x[0])]


def differing_tables(obs) -> set[str]:
    """The tables whose rows differ from intact (the screening's complete `changed_tables`)."""
    return {str(t) for t in (getattr(obs, "changed_tables", None) or {})}


def _facts(obs) -> dict[str, tuple]:
    """table -> what its difference from intact measured (rows intact/broken/differing, columns),
    for the tables the screening inspected (`details["tables"]`: not every changed table)."""
    out = {}
    for f in (getattr(obs, "details", None) or {}).get("tables") or []:
        cols = tuple(sorted(str(c.get("name")) for c in f.get("columns") or [] if isinstance(c, dict)))
        out[str(f["table"])] = (int(f.get("rows_intact") or 0), int(f.get("rows_broken") or 0),
                                int(f.get("rows_differing") or 0), cols, str(f.get("error") or ""),
                                tuple(f.get("columns_missing") or ()), tuple(f.get("columns_extra") or ()))
    return out


def _shows(both, alone_other, graded: list[str]) -> bool:
    """Whether fixing a slip changes the combined state on a graded table, i.e. the combined state
    differs there from the other slip's alone: one of them differs from intact and the other does
    not, or both do and their measured differences are not the same (unmeasured: not shown)."""
    bd, od, bf, of = differing_tables(both), differing_tables(alone_other), _facts(both), _facts(alone_other)
    for t in graded:
        if (t in bd) != (t in od):
            return True
        if t in bd and t in bf and t in of and bf[t] != of[t]:
            return True
    return False


def verdict(combined, alone_up, alone_other, graded: list[str]) -> str | None:
    """None when the compound makes a fair task, else why not (see the module docstring): `combined`,
    `alone_up`, `alone_other`: the screenings of both slips, of the upstream slip alone, of the
    other alone (Observations: `changed_tables`, `details["tables"]`)."""
    if combined is None or not getattr(combined, "observable", False):
        return "the combined mutant shows nothing: " + str(getattr(combined, "reason", "not screened"))
    if getattr(combined, "build_error", False):
        return "the combined mutant breaks the build"
    if not differing_tables(combined) & set(graded):
        return "the combined state equals intact on every graded table"
    if not differing_tables(alone_up) & set(graded):
        return "with the downstream slip fixed alone every graded table is intact (one fix would pass)"
    if not differing_tables(alone_other) & set(graded):
        return "with the upstream slip fixed alone every graded table is intact (one fix would pass)"
    if not _shows(combined, alone_other, graded):
        return "the upstream slip does not show in the combined state (the other one masks it)"
    if not _shows(combined, alone_up, graded):
        return "the downstream slip does not show in the combined state (the other one masks it)"
    return None
