"""adegen's stand-in for ade-bench's /scripts/run_sql.py (written for adegen, not a copy), doing
what the harness notes say the original does, so a task's setup.sh runs its SQL in the emulation
as it would in ade-bench's container:

- arguments `--db-type=duckdb|snowflake` (required), `--project-type`, `--sql-file`,
  `--profiles-path` (default /app/profiles.yml); the SQL comes from --sql-file or stdin;
- the profile is dbt_project.yml's `profile:` when profiles.yml has it, else `<name>-<db type>`;
  its output `dev` is used (not the profile's `target`), a relative DuckDB path is joined to /app;
- the text is split at every `;` (a `;` inside a string literal splits it too) and each
  statement runs in order; the last one's rows are printed; any error prints
  `Error executing SQL: ...` and exits 1.

Only DuckDB runs here: the emulation has no Snowflake account."""
import argparse
import os
import sys

import yaml

APP = "/app"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db-type", required=True, choices=["duckdb", "snowflake"])
    ap.add_argument("--project-type", default="dbt")
    ap.add_argument("--sql-file")
    ap.add_argument("--profiles-path", default=APP + "/profiles.yml")
    args = ap.parse_args()
    if args.db_type != "duckdb":
        print("Error: the emulation runs SQL on DuckDB only", file=sys.stderr)
        return 1
    with open(args.profiles_path) as f:
        profiles = yaml.safe_load(f) or {}
    name = None
    project_yml = os.path.join(APP, "dbt_project.yml")
    if os.path.exists(project_yml):
        with open(project_yml) as f:
            project = yaml.safe_load(f) or {}
        if project.get("profile") in profiles:
            name = project["profile"]
        elif project.get("name"):
            name = f"{project['name']}-{args.db_type}"
    if name not in profiles:
        print(f"Error: Profile '{name}' not found in profiles.yml", file=sys.stderr)
        return 1
    path = profiles[name]["outputs"]["dev"].get("path", "./database.duckdb")
    if not os.path.isabs(path):
        path = os.path.join(APP, path)
    if args.sql_file:
        with open(args.sql_file) as f:
            sql = f.read()
    else:
        sql = sys.stdin.read()
    statements = [s.strip() for s in sql.split(";") if s.strip()]
    if not statements:
        print("Error: No SQL statements found", file=sys.stderr)
        return 1
    import duckdb

    conn = duckdb.connect(path)
    try:
        cur = conn.cursor()
        for statement in statements:
            cur.execute(statement)
        try:
            for row in cur.fetchall():
                print(row)
        except Exception:  # noqa: BLE001 - a statement without rows
            pass
    except Exception as exc:  # noqa: BLE001 - reported as the original reports it
        print(f"Error executing SQL: {exc}", file=sys.stderr)
        return 1
    finally:
        conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
