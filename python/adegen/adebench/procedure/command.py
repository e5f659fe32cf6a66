"""Grade one task locally like `ade run TASK --db duckdb --project-type dbt --agent none|sage`.

    adegen harness TASK_DIR --project PROJECT_DIR --db DB_FILE [--agent both]
                             [--mode script|inprocess] [--keep] [--workdir DIR] [--packages-from PROJECT]

Exit code 0 when every requested agent behaves as ade-bench's CI expects (none fails, sage
passes), 1 otherwise, 2 on bad input.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from adegen.core.errors import AdegenError
from adegen.adebench.procedure.emulate import run_harness


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="adegen harness", description=__doc__.split("\n\n")[0])
    ap.add_argument("task_dir", type=Path)
    ap.add_argument("--project", type=Path, required=True, help="the project directory the task names")
    ap.add_argument("--db", type=Path, required=True, help="the <db_name>.duckdb file the task uses")
    ap.add_argument("--agent", choices=["none", "sage", "both"], default="both")
    ap.add_argument("--mode", choices=["script", "inprocess"], default="script")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--keep", action="store_true", help="keep the scratch directories")
    ap.add_argument("--packages-from", type=Path, default=None, metavar="PROJECT",
                    help="stand in for the task's `dbt deps` with this project's installed packages "
                         "(offline; needed when the copy lists hub/git packages)")
    args = ap.parse_args(argv)
    agents = ["none", "sage"] if args.agent == "both" else [args.agent]
    ok = True
    with tempfile.TemporaryDirectory(prefix="adegen-harness-") as tmp:
        work = args.workdir or (Path(tempfile.mkdtemp(prefix="adegen-harness-")) if args.keep
                                else Path(tmp))
        for agent in agents:
            try:
                res = run_harness(args.task_dir, args.project, args.db, agent, workdir=work,
                                  mode=args.mode, keep=args.keep, packages_from=args.packages_from)
            except AdegenError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            expected = agent == "sage"
            good = res.resolved == expected
            ok = ok and good
            print(("OK   " if good else "BAD  ") + res.summary()
                  + f"  [{res.seconds.get('total', 0):.1f}s]")
            if not good:
                print(res.output_tail(3000))
            if args.keep and res.root:
                print(f"     scratch: {res.root}")
    return 0 if ok else 1
