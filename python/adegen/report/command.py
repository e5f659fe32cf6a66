"""`python -m adegen.report OUTPUT_DIR`: (re)build OUTPUT_DIR/report.html from what is on disk.

Exit codes: 0 written, 2 bad input (one message naming the path or argument, nothing written)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from adegen.core.errors import AdegenError, InputError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise InputError(message, field="command line")


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="python -m adegen.report",
                 description="Write OUTPUT_DIR/report.html: a self-contained review page of the tasks in "
                             "OUTPUT_DIR/tasks/ and the run records in OUTPUT_DIR/.adegen/runs/.")
    ap.add_argument("output_dir", metavar="OUTPUT_DIR", help="a build's or bulk run's output directory")
    ap.add_argument("--project", metavar="DIR", type=Path,
                    help="draw the DAGs from a fresh discovery of this dbt project (runs dbt on a scratch "
                         "copy; by default the DAGs come from the run records)")
    ap.add_argument("--profiles-dir", metavar="DIR", help="with --project: the directory holding profiles.yml")
    return ap


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        out = Path(args.output_dir)
        if not out.is_dir():
            raise InputError("is not a directory", file=out)
        graph = None
        if args.project is not None:
            from adegen.discover.payload import run_discovery
            from adegen.report.records import graph_from_discovery

            graph = graph_from_discovery(run_discovery(args.project, profiles_dir=args.profiles_dir, top_n=0))
        from adegen.report.render import write_report

        path = write_report(out, graph=graph)
    except AdegenError as e:
        print(f"adegen.report: error: {e}", file=sys.stderr)
        return e.exit_code
    print(f"Review page: {path}")
    return 0
