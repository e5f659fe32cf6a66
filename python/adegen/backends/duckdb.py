"""DuckDB: a database file. ade-bench copies `<db_dir or shared/databases/duckdb>/<db_name>.duckdb`
to `/app/<db_name>.duckdb`; proofs run against the file the task will use; `--seed` works.

Which file a project's data comes from is decided here once (`find_database`: --db-path, the
profile's path, ade-bench's databases) for the input check, the validator and the next steps."""
from __future__ import annotations

from pathlib import Path

from adegen.adebench.install import AdeBench
from adegen.dbt.database_file import FROM_ADE_BENCH, FROM_DB_DIR, FROM_PROFILE, DatabaseFile
from adegen.dbt.profiles import duckdb_output
from adegen.core.errors import AdegenError, InputError
from adegen.backends.base import Backend, TargetFacts, ValidatorSetup, _q


def find_database(project, db_dir: Path | None, ade_databases) -> DatabaseFile:
    """The DuckDB file a project's data comes from: `<db_dir>/<db_name>.duckdb` (--db-path), else
    the profile's path, else `duckdb/<db_name>.duckdb` in ade-bench's databases directories
    (`ade_databases`, `AdeBench.databases`), first that exists."""
    name = f"{project.db_name}.duckdb"
    if db_dir is not None and (Path(db_dir) / name).is_file():
        found = Path(db_dir).resolve() / name
        return DatabaseFile(found, FROM_DB_DIR, f"database {found} (db_dir)")
    if project.db_path and Path(project.db_path).is_file():
        return DatabaseFile(Path(project.db_path).resolve(), FROM_PROFILE, f"database {project.db_path} (profile)")
    for d in (root / "duckdb" for root in ade_databases):
        if (d / name).is_file():
            return DatabaseFile((d / name).resolve(), FROM_ADE_BENCH, f"database {d / name} (ade-bench databases)")
    return DatabaseFile(None, "", f"no {name} found (db_dir, profile path, ADE_DATABASES_DIR, ade-bench)")


def check_database_file(project, db_dir: Path | None, ade_databases) -> Path | None:
    """The DuckDB file execution validation would read, opened read-only once: a file that is not a
    DuckDB database or is locked by another process is an InputError naming it. A missing file is
    one too, unless the project has seeds (validation then seeds a fresh database) or ade-bench's
    databases directory has it. Returns the file (None when there is none to check). Nothing is
    written."""
    tfield = f"{project.profile_name}.outputs.{project.target_name}.path"
    found = find_database(project, db_dir, ade_databases)
    if found.origin == FROM_ADE_BENCH:
        return None  # ade-bench's own database: not the user's to check
    if found.path is None:
        if project.db_path is None or project.has_seed_files():  # :memory: / MotherDuck, or seeds
            return None
        raise InputError(f"the DuckDB database {project.db_path} does not exist and the project has no seeds, "
                         "so there is no data to validate the tasks against: build it (dbt build), pass "
                         "--db-path DIR (a directory holding "
                         f"{project.db_name}.duckdb) or --no-validate", file=project.profiles_path, field=tfield)
    file, fld = (Path(db_dir), "--db-path") if found.origin == FROM_DB_DIR else (project.profiles_path, tfield)
    db_file = found.path
    import duckdb  # opened only here, once, before dbt runs

    try:
        duckdb.connect(str(db_file), read_only=True).close()
    except duckdb.Error as e:
        text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if "lock" in text.lower():
            raise InputError(f"the DuckDB database {db_file} is locked by another process ({text}); close that "
                             "connection (a running dbt, a notebook, the DuckDB CLI) and re-run",
                             file=file, field=fld) from None
        raise InputError(f"{db_file} cannot be opened as a DuckDB database ({text})", file=file,
                         field=fld) from None
    return db_file


class DuckDBBackend(Backend):
    name = "duckdb"
    dialect = "duckdb"
    seed_export = True
    file_based = True
    screens_pairs = True
    data_changes = True

    def title(self) -> str:
        return "DuckDB"

    def read_target(self, target: dict, project_dir: Path, profiles_path: Path, field: str) -> TargetFacts:
        path = str(target.get("path") or ":memory:")
        db_path = None
        if path == ":memory:" or path.startswith(("md:", "motherduck:")) or "://" in path:
            db_name = "memory" if path == ":memory:" else path.split(":", 1)[-1].split("?")[0]
        else:
            p = Path(path).expanduser()
            db_path = (p if p.is_absolute() else project_dir / p).resolve()
            db_name = db_path.stem
        return TargetFacts(db_name, db_path, str(target.get("schema") or "main"))

    def check_database(self, project, opts, ade: AdeBench) -> None:
        if opts.validate:  # missing, corrupt or locked database: exit 2 now
            check_database_file(project, opts.db_path, ade.databases)

    def ship_database(self, project, opts) -> str | None:
        """--db-path names a file of a storage version ade-bench's image (duckdb 1.3.0) cannot open
        (DuckDB 2 writes v2.0.0): the tasks name a copy in <output>/databases instead, converted to
        the lowest storage version its objects need, with every table (model tables included),
        view, macro, sequence and type (adebench.procedure.dbcopy). `opts.db_path` then names the
        copy, so the validator, the proofs and the tasks' db_dir all use it. The user's file is
        only read."""
        from adegen.adebench.procedure import dbfiles

        if opts.db_path is None:
            return None
        src = Path(opts.db_path) / f"{project.db_name}.duckdb"
        out = (Path(opts.output_dir) / "databases").resolve()
        if not src.is_file() or Path(opts.db_path).resolve() == out:
            return None
        try:
            tag = dbfiles.storage_version(src)
        except Exception:  # noqa: BLE001 - an unreadable file is check_database's to report
            return None
        if not tag or dbfiles.harness_reads(tag):
            return None
        made = dbfiles.copy_database(src, out / src.name, storage_version=dbfiles.HARNESS_STORAGE_VERSION)
        opts.db_path = out
        readable = dbfiles.harness_reads(made.version)
        return (f"{src} has storage {tag}, which ade-bench's image (duckdb {dbfiles.HARNESS_DUCKDB}) cannot open: "
                f"the tasks use {made.path} (db_dir {out}), {made.describe()}"
                + ("" if readable else f"; the image still needs duckdb {made.version.lstrip('v').rsplit('.', 1)[0]} "
                                       "or newer for it"))

    def option_notes(self, opts) -> tuple[dict, list[str]]:
        return {}, (["--emulate-snowflake has no effect on a DuckDB project"] if opts.emulate_snowflake else [])

    def make_validator(self, project, setup: ValidatorSetup):
        # imported when the run starts its validator: the validator brings duckdb and dbt along
        from adegen.validate.duckdb.validator import Validator

        return Validator(project, database=find_database(project, setup.db_dir, setup.ade_databases()),
                         workdir=setup.workdir, jobs=setup.jobs, progress=setup.progress, prove_mode=setup.prove_mode,
                         **({"executor": setup.executor} if setup.executor is not None else {}))

    def profile_target(self, db_name: str, schema: str, target_config: dict | None = None) -> dict:
        # cwd is /app in ade-bench, where the database file is copied; extensions and settings kept
        return duckdb_output(_TargetFacts(target_config, schema), f"./{db_name}.duckdb", threads=1)

    def offline_target(self, project, db_file: Path) -> dict:
        return duckdb_output(project, str(db_file))

    def compiled_catalog(self, db_file: Path) -> str | None:
        return db_file.stem

    def variant_fields(self, opts) -> dict:
        return {"db_dir": str(opts.db_path)} if opts.db_path else {}

    def database(self, ctx) -> tuple[Path | None, str | None]:
        opts, project, ade, validator = ctx.opts, ctx.project, ctx.ade, ctx.validator
        if opts.db_path is not None:
            db_file = opts.db_path / f"{project.db_name}.duckdb"
            return db_file, (f"db_dir is set to {opts.db_path}; it must contain {project.db_name}.duckdb"
                             + ("" if db_file.is_file() else " (it does not yet)"))
        # where ade-bench will look: the first of its databases directories (`AdeBench.databases`)
        target = (str(ade.databases[0] / "duckdb" / f"{project.db_name}.duckdb") if ade.path and ade.databases
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

    def seed_steps(self, task_ids: list[str], tasks_dir: Path, keep: dict[str, list[str]] | None = None) -> list[str]:
        keep = keep or {}
        steps = ["3. Generate seeds (DuckDB only; tasks proven by adegen already carry seeds/ exported from the same "
                 "database, and --seed re-exports them inside ade-bench):"] + [
            f"   ade run {t} --db duckdb --project-type dbt --agent sage --seed --tasks-dir {_q(tasks_dir)}"
            for t in task_ids if t not in keep]
        if keep:
            # ade-bench's --seed COPYs each table_name unqualified (main.<table>), while its tests
            # grade ref('<table>'): a model in a custom schema or under an alias is exported wrongly
            steps.append("   Do not run --seed for " + "; ".join(f"{t} (grades {', '.join(keep[t])})" for t in keep)
                         + ": ade-bench's --seed reads each table as main.<table_name>, and dbt builds these "
                         "elsewhere; their seeds/ were exported where the tests compare")
        return steps


class _TargetFacts:
    """What the shared profile writer reads of a project: its target config and schema."""

    def __init__(self, target_config: dict | None, schema: str | None):
        self.target_config, self.schema = target_config or {}, schema or "main"
