"""The shifted-clock check (issue 30): the determinism build of the intact project runs 40 days ahead.

A task's solved state is the intact project, so "the solved state fails when ade-bench grades the
task next month" is "the intact table changes when the clock moves". The validator already builds
the intact project a second time (the shadow build of validate.intact, compared table by table by
validate.determinism); where Debian's `faketime` is on PATH, that build runs in a child process
under libfaketime 40 days ahead, which moves Python's datetime (dbt's `run_started_at`) and
DuckDB's `current_date` / `now()` alike. A table that then differs from the baseline and that
adegen.dbt.clock's lineage did not name (a hook-made database macro, a source view, a clock word dbt
renders away) is excluded from grading as found by execution, unless it still differs when built
again with today's clock: then it is nondeterministic (validator). No build costs more where
nothing differs.

Without `faketime`, or with ADEGEN_SHIFTED_CLOCK=0, the shadow build runs with today's clock, and
the run summary says the check was skipped and why.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from adegen.dbt import harness_env
from adegen.core.settings import get_settings

SHIFT_DAYS = 40
FOUND = f"changes when the clock moves {SHIFT_DAYS} days (found by execution)"
ONLY = "only its clock column(s)"  # a table graded without its clock columns changed in them alone
WINDOW = "rows grow; graded on"     # a table whose rows grow with the clock, graded through a date
_PYTHONPATH = str(Path(__file__).resolve().parents[3])  # the directory holding the adegen package


def faketime_path() -> str | None:
    """Debian's faketime; None where it is missing or ADEGEN_SHIFTED_CLOCK=0 turned the check off."""
    return shutil.which("faketime") if get_settings().shifted_clock else None


def shift_argv(faketime: str, code: str, *args: str, days: int = SHIFT_DAYS) -> list[str]:
    """This interpreter running `code` (with `args`) under libfaketime `days` ahead."""
    return [faketime, "-f", f"+{days}d", sys.executable, "-c", code, *args]


def shift_env() -> dict:
    """The worker's environment for the child (adegen.core.settings via harness_env), this adegen first."""
    env = harness_env()
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PYTHONPATH, env.get("PYTHONPATH")) if p)
    return env


def beyond_clock(diff: dict[str, list[str]], clocked: dict[str, list[str]]
                 ) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """A determinism diff ({relation: differing columns, [] when the rows differ}) without what the
    tables graded without their clock columns (`clocked`, {relation: columns}) may change: (the
    rest, {relation: clock columns that changed} of those whose only difference is there)."""
    rest, only = {}, {}
    for rel, cols in diff.items():
        drop = {c.lower() for c in clocked.get(rel) or []}
        left = [c for c in cols if c.lower() not in drop]
        if cols and drop and not left:
            only[rel] = cols
        else:
            rest[rel] = left if cols else cols
    return rest, only


def unchecked(clock: dict[str, str], columns: dict[str, dict]) -> dict[str, str]:
    """Without the shifted-clock check (no faketime, or the build 40 days ahead failed), column
    lineage alone grades nothing that reads the clock (a Jinja value computed from today may decide
    its rows, which only execution sees): `clock` with every table of `columns` back in it."""
    back = {u: f"{c.get('why', '')}; graded without its clock columns only where the shifted-clock check runs"
            for u, c in columns.items()}
    return {**clock, **back}


def label(why: str) -> str:
    """How the summary line names why a table changed."""
    if why.startswith(FOUND):
        return "found by execution"
    return why if why.startswith((ONLY, WINDOW)) else "lineage names it"


def line(faketime: str | None, changed: dict[str, str] | None = None, days: int = SHIFT_DAYS) -> str:
    """The summary's line: {table: why} of the clock-dependent tables the shifted build changed
    (None: it did not run)."""
    if faketime is None:
        why = ("ADEGEN_SHIFTED_CLOCK=0 turned it off" if not get_settings().shifted_clock
               else "faketime is not installed (Debian/Ubuntu: apt-get install faketime)")
        return (f"skipped: {why}, so the determinism build ran with today's clock and only lineage finds the "
                "tables that read the clock")
    if changed is None:
        return f"not run: the determinism build {days} days ahead (faketime) failed"
    head = f"the determinism build ran {days} days ahead (faketime): "
    if not changed:
        return head + "no table changed"
    return head + f"{len(changed)} table(s) changed: " + ", ".join(
        f"{t} ({label(why)})" for t, why in sorted(changed.items()))
