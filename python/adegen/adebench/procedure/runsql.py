"""ade-bench's `/scripts/run_sql.sh` (its `run_sql.py`) as the emulation runs it: a task's setup.sh or
solution.sh pipes or names SQL for the project's DuckDB database (`/scripts/run_sql.sh "$@"
--sql-file=/app/setup/x.sql`, or the SQL on stdin).

What it does, as the harness's script does it (ade-bench d739fc3, shared/scripts/run_sql.py; this
is adegen's own code): the profile is dbt_project.yml's `profile:` (else `<name>-<db type>`), its
output **`dev`** (whatever the profile's target says), its `path` joined onto /app when relative;
the SQL is split on every `;` (a `;` inside a string literal splits it too) and the statements run
in order on one connection; the first error prints "Error executing SQL: ..." and exits 1.

The emulator writes `stand_in_script` as `<root>/scripts/run_sql.sh`: it calls this module with the
scratch root's app directory in place of /app. DuckDB only (a Snowflake emulation has no file)."""
from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import yaml


def statements(sql: str) -> list[str]:
    """The statements run_sql.py runs: split on every `;`, blank ones dropped."""
    return [s.strip() for s in sql.split(";") if s.strip()]


def database_path(app: Path, profiles: dict, project: dict, db_type: str) -> Path:
    """The DuckDB file run_sql.py connects to (its profile lookup, output `dev`)."""
    name = project.get("profile")
    if name not in profiles:
        name = f"{project.get('name')}-{db_type}"
    if name not in profiles:
        raise KeyError(f"Profile '{name}' not found in profiles.yml")
    path = str(profiles[name]["outputs"]["dev"].get("path", "./database.duckdb"))
    return Path(path) if Path(path).is_absolute() else app / path


def run(app: Path, sql: str, db_type: str = "duckdb") -> tuple[int, str]:
    """(exit code, message) of run_sql.py on `sql` in the project at `app`."""
    import duckdb

    if db_type != "duckdb":
        return 1, f"Error: the emulation runs SQL on DuckDB only, not {db_type}"
    parts = statements(sql)
    if not parts:
        return 1, "Error: No SQL statements found"
    try:
        profiles = yaml.safe_load((app / "profiles.yml").read_text()) or {}
        project = yaml.safe_load((app / "dbt_project.yml").read_text()) or {}
        con = duckdb.connect(str(database_path(app, profiles, project, db_type)))
    except Exception as exc:  # noqa: BLE001 - run_sql.py prints and exits 1
        return 1, f"Error connecting to DuckDB: {exc}"
    try:
        cur = con.cursor()
        for s in parts:
            cur.execute(s)
        rows = []
        try:
            rows = cur.fetchall()
        except duckdb.Error:
            pass
        return 0, "".join(f"{r}\n" for r in rows)
    except duckdb.Error as exc:
        return 1, f"Error executing SQL: {exc}"
    finally:
        con.close()


def stand_in_script(app: Path) -> str:
    """The `run_sql.sh` the emulator puts in the scratch root's scripts/ (this interpreter, this
    package, the scratch app for /app)."""
    package_root = Path(__file__).resolve().parents[3]
    return ("#!/bin/bash\n# adegen's stand-in for ade-bench's run_sql.sh (adegen.adebench.procedure.runsql)\n"
            f"PYTHONPATH={shlex.quote(str(package_root))}${{PYTHONPATH:+:$PYTHONPATH}} exec "
            f"{shlex.quote(sys.executable)} -m adegen.adebench.procedure.runsql --app {shlex.quote(str(app))} \"$@\"\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="run_sql.sh")
    p.add_argument("--app", required=True)
    p.add_argument("--db-type", required=True, choices=["duckdb", "snowflake"])
    p.add_argument("--project-type", default="dbt")
    p.add_argument("--sql-file")
    a = p.parse_args(argv)
    if a.sql_file:
        f = Path(a.sql_file)
        if not f.exists():
            print(f"Error: SQL file not found: {a.sql_file}", file=sys.stderr)
            return 1
        sql = f.read_text()
    else:
        sql = sys.stdin.read()
    if not sql.strip():
        print("Error: No SQL provided", file=sys.stderr)
        return 1
    code, message = run(Path(a.app), sql, a.db_type)
    print(message, end="", file=sys.stderr if code else sys.stdout)
    return code


if __name__ == "__main__":
    sys.exit(main())
