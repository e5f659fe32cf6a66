"""DuckDB: a database file. ade-bench copies `<db_dir or shared/databases/duckdb>/<db_name>.duckdb`
to `/app/<db_name>.duckdb`; proofs run against the file the task will use; `--seed` works."""
from __future__ import annotations

from pathlib import Path
from ..errors import AdegenError
from .base import Backend, _q


class DuckDBBackend(Backend):
    name = "duckdb"
    dialect = "duckdb"
    seed_export = True
    file_based = True

    def title(self) -> str:
        return "DuckDB"

    def check_database(self, project, opts) -> None:
        if opts.validate:
            from ..project import check_duckdb_database

            check_duckdb_database(project, opts.db_path)  # missing, corrupt or locked database: exit 2 now

    def option_notes(self, opts) -> tuple[dict, list[str]]:
        return {}, (["--emulate-snowflake has no effect on a DuckDB project"] if opts.emulate_snowflake else [])

    def profile_target(self, db_name: str, schema: str, target_config: dict | None = None) -> dict:
        # cwd is /app in ade-bench, where the database file is copied; extensions and settings kept
        from ..dbt.profiles import duckdb_output

        return duckdb_output(_TargetFacts(target_config, schema), f"./{db_name}.duckdb", threads=1)

    def variant_fields(self, opts) -> dict:
        return {"db_dir": str(opts.db_path)} if opts.db_path else {}

    def database(self, ctx) -> tuple[Path | None, str | None]:
        opts, project, ade, validator = ctx.opts, ctx.project, ctx.ade, ctx.validator
        if opts.db_path is not None:
            db_file = opts.db_path / f"{project.db_name}.duckdb"
            return db_file, (f"db_dir is set to {opts.db_path}; it must contain {project.db_name}.duckdb"
                             + ("" if db_file.is_file() else " (it does not yet)"))
        target = (f"{ade.path}/shared/databases/duckdb/{project.db_name}.duckdb" if ade.path
                  else f"<ade-bench>/shared/databases/duckdb/{project.db_name}.duckdb")
        if validator is not None:
            try:
                db_file = validator.prepare_database(opts.output_dir / "databases")
                return db_file, (f"copy {db_file} to {target} (db_dir is not set, so the harness looks there), "
                                 f"or re-run with --db-path {db_file.parent}")
            except AdegenError as exc:
                ctx.ui.warn(f"could not prepare the database: {exc}")
        src = project.db_path or f"{project.db_name}.duckdb"
        return None, (f"the harness expects {target}; build the project's database ({src}), save it with "
                      "DuckDB storage version v1.0.0 and copy it there, or re-run with --db-path DIR")

    def seed_steps(self, task_ids: list[str], tasks_dir: Path) -> list[str]:
        return ["3. Generate seeds (DuckDB only; tasks proven by adegen already carry seeds/ exported from the same "
                "database, and --seed re-exports them inside ade-bench):"] + [
            f"   ade run {t} --db duckdb --project-type dbt --agent sage --seed --tasks-dir {_q(tasks_dir)}"
            for t in task_ids]


class _TargetFacts:
    """What the shared profile writer reads of a project: its target config and schema."""

    def __init__(self, target_config: dict | None, schema: str | None):
        self.target_config, self.schema = target_config or {}, schema or "main"
