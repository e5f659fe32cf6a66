"""Build a Snowflake dbt project on the local fakesnow emulator.

    adegen emulator PROJECT [--duckdb FILE [--duckdb-schema SRC=DST]...] [--database DB]
                              [--timeout SEC] [--keep DIR] [-- DBT ARGS...]

Copies PROJECT to a scratch dir (the project itself is never written to), installs the fakesnow
compat macros there, starts a hardened fakesnow server on a free 127.0.0.1 port, then runs
`dbt deps`, loads raw data (`dbt seed`, or the DuckDB file table by table) and `dbt build` (or the
DBT ARGS given after `--`). Exit codes: 0 green, 1 dbt failed or emulator problem, 2 bad input,
3 only features the emulator cannot run failed.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from adegen.core.errors import AdegenError
from adegen.discover.project import load_project
from adegen.snowflake_emulator.profiles import copy_project, emulator_profiles, snowflake_target
from adegen.snowflake_emulator.server import FakesnowServer


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    dbt_args = ["build"]
    if "--" in argv:
        i = argv.index("--")
        argv, dbt_args = argv[:i], argv[i + 1:] or ["build"]
    ap = argparse.ArgumentParser(prog="adegen emulator", description=__doc__.splitlines()[0])
    ap.add_argument("project", type=Path)
    ap.add_argument("--duckdb", type=Path, help="load raw data from this DuckDB file instead of dbt seed")
    ap.add_argument("--duckdb-schema", action="append", default=[], metavar="SRC=DST",
                    help="schema mapping for --duckdb (default main=<profile schema>)")
    ap.add_argument("--database", help="database name on the emulator (default: the profile's)")
    ap.add_argument("--timeout", type=float, default=600.0, help="timeout per dbt call, seconds")
    ap.add_argument("--keep", type=Path, help="scratch dir to use and keep (default: a temp dir, removed)")
    ns = ap.parse_args(argv)

    scratch = ns.keep or Path(tempfile.mkdtemp(prefix="adegen-emulator-"))
    try:
        proj = copy_project(ns.project, scratch / "project")
        info = load_project(proj)
        snowflake_target(info)                     # bad profile: fail before starting a server
        with FakesnowServer(scratch / "fakesnow") as srv:
            print(f"fakesnow {srv.version} on {srv.url} (log {srv.log_path})", flush=True)
            profiles = srv.write_profiles(info, database=ns.database)
            srv.run_dbt(["deps"], proj, profiles, timeout=ns.timeout, check=True)
            if ns.duckdb:
                (pname, prof), = emulator_profiles(info, host=srv.host, port=srv.port,
                                                   database=ns.database).items()
                out = prof["outputs"][prof["target"]]
                schemas = dict(s.split("=", 1) for s in ns.duckdb_schema) or {"main": out["schema"]}
                for t in srv.load_duckdb(ns.duckdb, database=out["database"], schemas=schemas):
                    print(f"loaded {t['table']}: {t['rows']} rows", flush=True)
            else:
                print(srv.seed(proj, profiles, timeout=ns.timeout).summary(), flush=True)
            r = srv.run_dbt(dbt_args, proj, profiles, timeout=ns.timeout)
            print(r.tail(25))
            print(r.summary())
            for u in r.unsupported:
                print("  unsupported on emulator:", u.render())
            return {"ok": 0, "unsupported": 3}.get(r.status, 1)
    except AdegenError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    finally:
        if ns.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)
