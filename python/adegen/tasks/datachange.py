"""The files of an upstream-data-change task (propose/datachange.py): setup.sh changes the data with
SQL through ade-bench's `/scripts/run_sql.sh "$@"` (as analytics_engineering007 does) and patches
no file; solution.sh applies the adaptation of the models. Pure: returns file contents."""
from __future__ import annotations

from adegen.tasks import stand_in_tests
from adegen.tasks.taskgen import SAME_MTIME, TaskFiles, TaskPlan, render_solution_sh

# ade-bench copies run_sql.sh and run_sql.py to /scripts before setup.sh runs; the quoted
# delimiter keeps the shell from expanding anything in the SQL
RUN_SQL = "/scripts/run_sql.sh \"$@\" << 'SQL'\n{sql}SQL"


def render_setup_sh(sql: str, seed_based: bool) -> str:
    """Seeds first (a seed-based project's raw tables exist only after `dbt seed`), then the data
    change, then the build, which fails at the models that read the changed table. ade-bench's
    test phase runs `dbt seed` again after test_setup: dbt-duckdb loads a seed into its existing
    table by column position, so the renamed table keeps its new names; the graded tables are
    rebuilt by test_setup before that."""
    body = ["#!/bin/bash", "dbt deps"]
    if seed_based:
        body.append("dbt seed")
    body += ["", "# The upstream data changes", RUN_SQL.format(sql=sql), "",
             "# Run dbt on the changed data", "dbt run || true", "",
             "# One modification time for every file, as in every task adegen writes", SAME_MTIME]
    return "\n".join(body) + "\n"


def build_files(spec: TaskPlan, sql: str, solution_patch: bytes) -> TaskFiles:
    """task.yaml, setup.sh, solution.sh, solutions/changes.patch (and stand-in tests when a graded
    table's AUTO test names would be too long). No setup/ folder: nothing is patched."""
    doc = spec.task_yaml()
    files = {
        "task.yaml": doc.render().encode(),
        "setup.sh": render_setup_sh(sql, spec.seed_based).encode(),
        "solution.sh": render_solution_sh(spec.solution_rebuild, spec.full_refresh).encode(),
        "solutions/changes.patch": solution_patch,
    }
    for rel, text in stand_in_tests.render_all(doc.solution_seeds).items():
        files[rel] = text.encode()
    return TaskFiles(files)
