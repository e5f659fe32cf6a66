"""The full refresh a solution needs when a broken run left its rows in an incremental table
(issues 52, 53).

setup.sh's `dbt run` builds the project with the slip, incremental models included. An ordinary
`dbt run` after the fix only adds (or merges) the rows past the table's high-water mark, so the
rows the broken code wrote before it stay. Where a slip sits upstream of (or in) an incremental
model, the solved state may need that table rebuilt: `dbt run --full-refresh`, as a person fixing
it would (ade-bench's airbnb013 tests the same: a latent bug plus an incremental rerun).

Pure text: which models the refresh selects, the solution's refresh lines, and the solution an
agent that fixes only the code runs (the same script without them), which the proof grades as its
third state."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable

from adegen.core.graph import ProjectGraph

TAG = "dbt-incremental"
# a line of solution.sh that rebuilds incremental tables in full; `without_full_refresh` drops it
# with the comment above it
_REFRESH = re.compile(r"^\s*dbt\s+run\s+--full-refresh\b")
NOTE = ("# {names} incremental: an ordinary run keeps the rows the broken runs wrote, so rebuild in full"
        " (with the models that read it)")


@dataclass(frozen=True)
class Refresh:
    """The incremental models a task rebuilds in full (`incremental`) and what the refresh selects:
    them and the models of the task's rebuild that read them (`select`), in the rebuild's order."""

    incremental: tuple[str, ...] = ()
    select: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.incremental)


def refresh_for(rebuild: Iterable[str], models: Iterable[dict]) -> Refresh:
    """The Refresh of a task whose test_setup runs `rebuild` (model names, every one downstream of
    or equal to a changed model); `models`: the discovery payload's. Empty when none is
    incremental (an ordinary task)."""
    rebuild = list(dict.fromkeys(rebuild))
    by_name = {m.get("name"): m for m in models if isinstance(m, dict) and m.get("unique_id")}
    incremental = [n for n in rebuild if (by_name.get(n) or {}).get("materialized") == "incremental"]
    if not incremental:
        return Refresh()
    graph = ProjectGraph.from_models(by_name.values())
    below: set[str] = set()
    for n in incremental:
        below |= graph.descendants(by_name[n]["unique_id"])
    return Refresh(tuple(incremental),
                   tuple(n for n in rebuild if n in incremental or (by_name.get(n) or {}).get("unique_id") in below))


def refresh_lines(refresh: Refresh, quote: Callable[[str], str]) -> list[str]:
    """The solution's lines after its ordinary run: why, then the full refresh (`quote`: the shell
    quoting of a model name)."""
    if not refresh:
        return []
    names = " and ".join(refresh.incremental) + (" are" if len(refresh.incremental) > 1 else " is")
    return ["", NOTE.format(names=names),
            "dbt run --full-refresh --select " + " ".join(quote(m) for m in refresh.select)]


def without_full_refresh(solution: str) -> str | None:
    """The solution an agent runs that fixes the code but never rebuilds the incremental tables:
    `solution` without its full-refresh lines (and the comment and blank line before each). None
    when it has none (an ordinary task: nothing to grade besides the solution)."""
    lines = solution.splitlines(keepends=True)
    if not any(_REFRESH.match(x) for x in lines):
        return None
    out: list[str] = []
    for line in lines:
        if _REFRESH.match(line):
            while out and (not out[-1].strip() or out[-1].lstrip().startswith("# ")):
                out.pop()
            continue
        out.append(line)
    return "".join(out)
