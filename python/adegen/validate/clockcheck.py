"""The shifted-clock check (issue 30): the determinism build of the intact project runs 40 days ahead.

A task's solved state is the intact project, so "the solved state fails when ade-bench grades the
task next month" is "the intact table changes when the clock moves". The validator already builds
the intact project a second time (the shadow build of validate.intact, compared table by table by
validate.determinism); where Debian's `faketime` is on PATH, that build runs in a child process
under libfaketime 40 days ahead, which moves Python's datetime (dbt's `run_started_at`) and
DuckDB's `current_date` / `now()` alike. A table that then differs from the baseline and that
adegen.clock's lineage did not name (a hook-made database macro, a source view, a clock word dbt
renders away) is excluded from grading as found by execution, unless it still differs when built
again with today's clock: then it is nondeterministic (validator). No build costs more where
nothing differs.

Without `faketime` the shadow build runs with today's clock, and the run summary says the check
was skipped.
"""
from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

from ..dbt import harness_env

SHIFT_DAYS = 40
FOUND = f"changes when the clock moves {SHIFT_DAYS} days (found by execution)"
_PYTHONPATH = str(Path(__file__).resolve().parents[2])  # the directory holding the adegen package


def faketime_path() -> str | None:
    return shutil.which("faketime")


def shifted_build(cfg, faketime: str, days: int = SHIFT_DAYS):
    """The shadow build (intact.build) in a child process under `faketime -f +<days>d` (worker side).
    The child stays in the worker's process group (a job over its deadline is killed with it) and
    dies with the worker (PR_SET_PDEATHSIG)."""
    from .jobs import Baseline

    work = Path(cfg.root) / "shadow-io"
    work.mkdir(parents=True, exist_ok=True)
    src, dst = work / "cfg.pickle", work / "baseline.pickle"
    src.write_bytes(pickle.dumps(cfg))
    dst.unlink(missing_ok=True)
    env = harness_env()  # the child imports this adegen first, whatever PYTHONPATH held
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PYTHONPATH, env.get("PYTHONPATH")) if p)
    argv = [faketime, "-f", f"+{days}d", sys.executable, "-c",
            "import sys; from adegen.validate.clockcheck import main; sys.exit(main(sys.argv[1:]))", str(src), str(dst)]
    try:
        p = subprocess.run(argv, cwd=str(work), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, check=False)
        if p.returncode == 0 and dst.is_file():
            base = pickle.loads(dst.read_bytes())
            base.shifted_days = days
            return base
        out = p.stdout.decode("utf-8", "replace").strip()
        return Baseline(reason=f"the build {days} days ahead (faketime) exited {p.returncode}: {out[-1500:]}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def line(faketime: str | None, changed: dict[str, str] | None = None, days: int = SHIFT_DAYS) -> str:
    """The summary's line: {table: why} of the clock-dependent tables the shifted build changed
    (None: it did not run)."""
    if faketime is None:
        return ("skipped: faketime is not installed (Debian/Ubuntu: apt-get install faketime), so the determinism "
                f"build ran with today's clock and only lineage finds the tables that read the clock")
    if changed is None:
        return f"not run: the determinism build {days} days ahead (faketime) failed"
    head = f"the determinism build ran {days} days ahead (faketime): "
    if not changed:
        return head + "no table changed"
    return head + f"{len(changed)} table(s) changed: " + ", ".join(
        f"{t} ({'found by execution' if why == FOUND else 'lineage names it'})" for t, why in sorted(changed.items()))


def main(argv: list[str]) -> int:
    """The child under faketime: unpickle the WorkerConfig, run the shadow build, pickle the Baseline."""
    from .pool import _die_with_parent

    _die_with_parent()
    from . import intact

    cfg = pickle.loads(Path(argv[0]).read_bytes())
    Path(argv[1]).write_bytes(pickle.dumps(intact.build(cfg, shadow=True)))
    return 0
