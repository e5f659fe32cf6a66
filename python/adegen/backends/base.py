"""What the build needs to know about one database type: one subclass per database in this package
(as sqlglot keeps one module per dialect). The dbt side of the same differences lives in
`macros/cross_db/` (adapter.dispatch); the validator internals live in `adegen.validate`.

Adding a database: a module here with a `Backend` subclass (how its profile target reads, its
profiles, its validator, ...), its name in `backends.BACKENDS`, and its macros in
`macros/cross_db/`. The database type is branched on here and nowhere else: the rest of adegen asks
the project's backend (`backends.for_project`)."""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from adegen.adebench.install import AdeBench, databases_dirs
from adegen.dbt.profiles import profiles_text
from adegen.core.errors import InputError


@dataclass(frozen=True)
class TargetFacts:
    """What a profile target says about the database (`Backend.read_target`)."""

    db_name: str  # duckdb: the file's stem; snowflake: `database`
    db_path: Path | None  # duckdb: absolute path of the database file (may not exist yet)
    schema: str


@dataclass(frozen=True)
class ValidatorSetup:
    """What a validator is made with (`Backend.make_validator`), besides the project."""

    workdir: Path
    jobs: int = 2
    progress: Callable[[str], None] | None = None
    prove_mode: str = "inprocess"
    emulate_snowflake: bool = False  # Snowflake: prove on the local fakesnow emulator
    db_dir: Path | None = None  # DuckDB: --db-path
    ade: AdeBench | None = None  # the run's ade-bench (its databases); None: the usual places
    data_file: Path | None = None  # Snowflake on the emulator: a DuckDB file with the raw data
    dbt_timeout: float | None = None  # Snowflake on the emulator: seconds per dbt call
    executor: object = None  # DuckDB: where the jobs run (validate.executor.ExecutorSpec; None: local)

    def ade_databases(self) -> tuple[Path, ...]:
        """ade-bench's databases directories (`AdeBench.databases`)."""
        return self.ade.databases if self.ade is not None else databases_dirs(None)


class Backend:
    name: str = ""  # the dbt adapter type (profiles.yml `type:`), task.yaml variants[].db_type
    dialect: str = ""  # sqlglot dialect of the compiled SQL
    prefer_db_specific: bool = False  # at least half the proposals use this database's own patterns
    seed_export: bool = False  # ade-bench's `ade run --seed` can export solution seeds
    file_based: bool = False  # the database is a file: --db-path/db_dir, prepare_database, proofs need it
    screens_pairs: bool = False  # its screen builds one mistake in several model files (adegen.propose.siblings)
    data_changes: bool = False  # a task's setup may change its raw data with SQL (adegen.pipeline.datachange)
    reached_how: str = "ade-bench reaches the database"  # said when --db-path is refused
    reached_with: str = "through its own connection"
    proof_label: str = "proven"  # the summary's word for a proven task
    proof_fields: dict = {}  # extra keys of a task's --json `proof`

    # -- inputs ---------------------------------------------------------------------------------

    def check_options(self, project, opts) -> None:
        """Refuse options this database cannot use (exit 2)."""
        if opts.db_path is not None and not self.file_based:
            raise InputError(f"--db-path is for DuckDB only: {project.profiles_path.name} gives type: {self.name} "
                             f"for {project.name}, and {self.title()} variants have no db_dir ({self.reached_how} "
                             f"{project.db_name} {self.reached_with}); drop --db-path", field="--db-path")

    def read_target(self, target: dict, project_dir: Path, profiles_path: Path, field: str) -> TargetFacts:
        """The database facts of a rendered profile target (`field`: its place in profiles.yml,
        for the error naming a missing key)."""
        raise NotImplementedError

    def check_database(self, project, opts, ade: AdeBench) -> None:
        """With validation on: refuse a database the run cannot read (exit 2, before dbt runs)."""

    def ship_database(self, project, opts) -> str | None:
        """Make the database the tasks name (--db-path) one ade-bench can open, before anything
        reads it; what was done, for the run record (None: nothing)."""
        return None

    def option_notes(self, opts) -> tuple[dict, list[str]]:
        """(extra top-level --json fields, warnings) about the options given for this database."""
        return {}, []

    def title(self) -> str:
        return self.name.capitalize()

    # -- validation -----------------------------------------------------------------------------

    def make_validator(self, project, setup: ValidatorSetup):
        """This database's execution validator (the Validator protocol, validate/contract.py), or a
        `validate.Unavailable` that says why the tasks cannot be proven."""
        raise NotImplementedError

    def unproven_reason(self, why: str) -> str:
        """The validator's reason as the tail of a task's "unproven: ..." line."""
        return why

    def summary_note(self, tasks: list[dict], reason: str, validating: bool) -> str | None:
        """A closing word on the run's proofs for this database (None: nothing to add)."""
        return None

    # -- output ---------------------------------------------------------------------------------

    def profile_target(self, db_name: str, schema: str, target_config: dict | None = None) -> dict:
        """The profiles.yml target of the standalone copy (what ade-bench's container uses)."""
        raise NotImplementedError

    def copy_profile(self, project) -> str:
        """The standalone copy's profiles.yml: the project's profile with one target, this
        database's `profile_target`."""
        return profiles_text(project.profile_name, project.target_name,
                             self.profile_target(project.db_name, project.schema, project.target_config))

    def offline_target(self, project, db_file: Path) -> dict:
        """The profiles.yml target discovery and the mutant compile run dbt with: never the user's
        database (`db_file`: a scratch file a file-based database may use)."""
        raise NotImplementedError

    def compiled_catalog(self, db_file: Path) -> str | None:
        """The catalog compiled SQL names when compiled against `offline_target(..., db_file)`
        (None: it names the project's own database)."""
        return None

    def variant_fields(self, opts) -> dict:
        """task.yaml variant keys beyond db_type/db_name/project_*, in order."""
        return {}

    def database(self, ctx) -> tuple[Path | None, str | None]:
        """(the database file proofs run against, what the user must do so ade-bench finds it);
        `ctx` is the run's RunContext (options, project, ade-bench, validator, console)."""
        return None, None

    # -- next steps -----------------------------------------------------------------------------

    def access_steps(self, project, db_note: str | None) -> list[str]:
        """Step 1 of the spec's next steps: verify database access."""
        return ["1. Verify database access: " + (db_note or "")]

    def seed_steps(self, task_ids: list[str], tasks_dir: Path, keep: dict[str, list[str]] | None = None) -> list[str]:
        """Step 3 of the spec's next steps: the solution seeds. `keep`: task -> the graded relations
        ade-bench's `--seed` cannot read (not `main.<table>`), whose seeds must stay adegen's."""
        return [f"3. --seed export is DuckDB-only: run without --seed and write test SQL by hand, or seed "
                "from a DuckDB extract:"] + [
            f"   ade run {t} --db {self.name} --project-type dbt --agent sage --tasks-dir {_q(tasks_dir)}"
            for t in task_ids]

    def harness_commands(self, task_id: str, tasks_dir: Path, seed: bool = True) -> list[list[str]]:
        """Phase 5 `ade run ... --agent sage` commands for one task (with --seed first when it works
        and `seed`: False for a task whose seeds --seed cannot re-export)."""
        base = ["ade", "run", task_id, "--db", self.name, "--project-type", "dbt", "--agent", "sage"]
        tail = ["--tasks-dir", str(tasks_dir)]
        return ([base + ["--seed"] + tail] if self.seed_export and seed else []) + [base + tail]

    def install_extras(self, location: str) -> list[str]:
        """Commands beyond ade-bench's clone/install/databases that this database needs."""
        return []


def _q(path: Any) -> str:
    return shlex.quote(str(path))
