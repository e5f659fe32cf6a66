"""The bind check (issue 53 item 5): every compiled mutant is planned once on the intact build
before screening, so a mutant that cannot bind ("Binder Error: Column ... referenced that exists
in the SELECT clause", a column or function that does not exist) is a compile drop
(`DropCode.NOT_COMPILE`, the message naming the error) instead of a screening slot.

`dbt compile` (propose.mutant_compile) only renders Jinja and the parse check only reads the text;
the database's binder is what rejects these. The intact build holds every relation the compiled
SQL reads (realism.ProbeDB mirrors the compile database's catalog over it), and EXPLAIN plans
without running, so one pass costs a few milliseconds a mutant.

A mutant is dropped only where its model's own compiled SQL binds on the same connection: an
intact model that does not bind there (a temporary macro, an extension or an attached database
the probe lacks) says nothing about its mutants, which screening then judges. Left to screening
too: patterns whose intended outcome is a build error (symptom `build_error`), a mutant whose
compiled SQL names its own scratch relation (`{{ this }}` in an incremental model), and any error
other than a Binder, Catalog or Parser error. A story's text (adegen.rewrite.stories) that does
not bind falls back to the plain mutant, as one that does not compile does."""
from __future__ import annotations

from dataclasses import dataclass

SCRATCH_MARK = "__adegen_m"  # the compile check's mutant models are named <stem>__adegen_m<N>


@dataclass
class BindCount:
    checked: int = 0
    dropped: int = 0      # plain mutants that do not bind: compile drops
    stories: int = 0      # story texts that do not bind (the plain mutant is kept)
    undecided: int = 0    # the intact model itself does not bind, or another error


def _eligible(c) -> bool:
    return str(getattr(c.pattern, "symptom", "") or "") != "build_error"


def bind_check(cands: list, probe) -> BindCount:
    """Plan every compiled mutant of `cands` on `probe` (realism.ProbeDB on the intact build, None:
    nothing is checked); a mutant that does not bind gets `ok=False` and the binder's message."""
    count = BindCount()
    if probe is None:
        return count
    intact_ok: dict[str, bool | None] = {}
    for c in cands:
        intact = getattr(c, "compiled_intact", None)
        if not _eligible(c) or intact is None or not intact.compiled:
            continue
        if intact.catalog and not probe.catalog:
            probe.catalog = intact.catalog  # the compile database the compiled SQL names
        path = c.model.get("path") or c.model.get("name")
        if path not in intact_ok:
            intact_ok[path] = probe.binds(intact.compiled)[0]
        if intact_ok[path] is not True:
            count.undecided += len(c.compile_results)
            continue
        for results, is_story in ((c.compile_results, False), (c.story_results, True)):
            for r in results.values():
                if r is None or r.ok is not True or not r.compiled or SCRATCH_MARK in r.compiled:
                    continue
                count.checked += 1
                ok, why = probe.binds(r.compiled)
                if ok is False:
                    r.ok, r.reason = False, f"does not bind on the intact build: {why}"
                    count.dropped += not is_story
                    count.stories += is_story
                elif ok is None:
                    count.undecided += 1
    return count
