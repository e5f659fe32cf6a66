"""The compile check of a proposal run: every candidate mutant (and the story each site is told in)
compiled in one dbt run, and the patterns' data preconditions measured on what compiled
(`proposals` re-exports both: the pipeline calls them through it)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from adegen import realism
from adegen.propose.candidate_sites import apply_site, tell_for

MAX_MUTANTS = 240


def compile_check(project, cands: list, *, workdir: Path | None = None,
                  progress: Callable[[str], None] = lambda s: None) -> int:
    """Compile all candidate mutants at once, and each candidate's model as it stands (the intact
    SQL a precondition locates the change in); returns how many mutants were rejected."""
    from adegen.propose.mutant_compile import compile_mutants

    mutants = []
    intact: dict[str, str] = {}  # model path -> key of its intact compile
    for ci, c in enumerate(cands):
        for si, site in enumerate(c.sites):
            if len(mutants) >= MAX_MUTANTS:
                break
            try:
                text = apply_site(c.raw, site)
            except Exception as exc:  # noqa: BLE001
                c.compile_results[si] = _Result(False, f"rewrite failed: {exc}")
                continue
            mutants.append((f"{ci}:{si}", c.model["path"], text))
            told, story = (text, None) if getattr(c, "origin", None) is not None else tell_for(c, site)
            if story is not None and story.files:  # the file the story adds holds the slip: it compiles
                mutants.append((f"story:{ci}:{si}", *story.files[0]))  # (the model only imports it)
            elif story is not None:  # the story's text compiles beside it (falls back to the plain slip)
                mutants.append((f"story:{ci}:{si}", c.model["path"], told))
        if c.compiled_intact is None and c.model["path"] not in intact and c.sites:
            intact[c.model["path"]] = f"intact:{ci}"
            mutants.append((f"intact:{ci}", c.model["path"], c.raw))
    told_count = sum(1 for k, _, _ in mutants if k.startswith("story:"))
    progress(f"Compiling {len(mutants) - len(intact) - told_count} candidate mutants in one dbt run...")
    res = compile_mutants(project, mutants, workdir=workdir)
    bad = 0
    for key, r in res.items():
        if key.startswith("intact:"):
            continue
        if key.startswith("story:"):
            ci, si = (int(x) for x in key.split(":")[1:])
            cands[ci].story_results[si] = r
            continue
        ci, si = (int(x) for x in key.split(":"))
        cands[ci].compile_results[si] = r
        if r.ok is False:
            bad += 1
    for c in cands:
        key = intact.get(c.model["path"])
        if c.compiled_intact is None and key is not None:
            c.compiled_intact = res.get(key)
    return bad


def measure_preconditions(cands: list, run) -> int:
    """The patterns' data preconditions of every compiled site (`realism.measure_candidates`, on
    `run`: a realism.MeasureRun); returns how many sites fail them."""
    return realism.measure_candidates(cands, run)


@dataclass
class _Result:
    ok: bool | None
    reason: str = ""
