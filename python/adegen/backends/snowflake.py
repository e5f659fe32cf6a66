"""Snowflake: no database file; ade-bench reaches the database with the SNOWFLAKE_* credentials
and clones it per task. Proofs only run on the local fakesnow emulator (`--emulate-snowflake`)
and are labelled "proven on emulator", never "proven on Snowflake"; `--seed` is DuckDB-only."""
from __future__ import annotations

import os
from pathlib import Path

from adegen.dbt.profiles import snowflake_env_output, snowflake_offline_output
from adegen.core.errors import InputError
from adegen.backends.base import Backend, TargetFacts, ValidatorSetup

SNOWFLAKE_ENV = ("SNOWFLAKE_ACCOUNT", "SNOWFLAKE_USER", "SNOWFLAKE_PASSWORD", "SNOWFLAKE_ROLE",
                 "SNOWFLAKE_WAREHOUSE")
EMULATOR_LABEL = "proven on emulator"  # = adegen.validate.snowflake.prove.EMULATOR_LABEL (fakesnow, not Snowflake)
UNPROVEN_PREFIX = "Snowflake tasks are unproven: "  # how make_validator words its reasons
NO_FLAG = (UNPROVEN_PREFIX + "no Snowflake connection; pass --emulate-snowflake to prove them on the local "
           "fakesnow emulator")
NO_EXTRA = UNPROVEN_PREFIX + "install adegen[snowflake-emulator] and pass --emulate-snowflake"


def snowflake_env_unset(environ=None) -> list[str]:
    """The spec's five SNOWFLAKE_* variables that are unset (or empty) in the environment."""
    env = os.environ if environ is None else environ
    return [v for v in SNOWFLAKE_ENV if not str(env.get(v, "") or "").strip()]


class SnowflakeBackend(Backend):
    name = "snowflake"
    dialect = "snowflake"
    prefer_db_specific = True  # the spec: prefer Snowflake-specific SQL bugs, with some ANSI ones
    proof_label = EMULATOR_LABEL
    proof_fields = {"on": "emulator"}
    reached_with = "with the SNOWFLAKE_* credentials"

    def read_target(self, target: dict, project_dir: Path, profiles_path: Path, field: str) -> TargetFacts:
        for key in ("database", "schema"):
            if not target.get(key):
                raise InputError("required for snowflake", file=profiles_path, field=f"{field}.{key}")
        return TargetFacts(str(target["database"]), None, str(target["schema"]))

    def option_notes(self, opts) -> tuple[dict, list[str]]:
        return {"snowflake_env_unset": snowflake_env_unset()}, []

    def make_validator(self, project, setup: ValidatorSetup):
        """Without a Snowflake account: the fakesnow emulator when asked for and installed, else an
        `Unavailable` saying how to get the tasks proven (they are written status: dev)."""
        # imported when the run makes its validator: the emulator and validator packages bring
        # duckdb, dbt and the Snowflake connector along
        from adegen.snowflake_emulator.install import emulator_missing
        from adegen.validate.rules.unavailable import Unavailable

        if getattr(setup.executor, "remote", False):  # the emulator runs beside this process only
            raise InputError("a Dask executor proves DuckDB projects only; use --executor local for Snowflake",
                             field="--executor")
        if not setup.emulate_snowflake:
            return Unavailable(NO_FLAG)
        missing = emulator_missing()
        if missing:
            return Unavailable(f"{NO_EXTRA} ({missing})")
        from adegen.validate.snowflake.validator import EmulatorValidator

        kw = {"dbt_timeout": setup.dbt_timeout} if setup.dbt_timeout else {}
        return EmulatorValidator(project, workdir=setup.workdir, data_file=setup.data_file, jobs=setup.jobs,
                                 progress=setup.progress, prove_mode=setup.prove_mode, **kw)

    def profile_target(self, db_name: str, schema: str, target_config: dict | None = None) -> dict:
        # credentials from the SNOWFLAKE_* environment variables, as ade-bench's container has them
        return snowflake_env_output(db_name, schema)

    def offline_target(self, project, db_file: Path) -> dict:
        return snowflake_offline_output(project)  # dummy credentials: compiling runs no query

    def unproven_reason(self, why: str) -> str:
        return why[len(UNPROVEN_PREFIX):] if why.startswith(UNPROVEN_PREFIX) else why

    def summary_note(self, tasks: list[dict], reason: str, validating: bool) -> str | None:
        """Proven on the emulator (never "on Snowflake"), or unproven and why."""
        proven = [t["task_id"] for t in tasks if t.get("proven")]
        unproven = [t["task_id"] for t in tasks if not t.get("proven")]
        parts = []
        if proven:
            parts.append(f"{len(proven)} Snowflake task(s) {EMULATOR_LABEL} (fakesnow, not a Snowflake account): "
                         f"{', '.join(proven)}; re-check them with `ade run --db snowflake` before relying on them.")
        if unproven:
            why = f"{UNPROVEN_PREFIX}{reason}" if not validating else "see each task's status line above"
            parts.append(f"{len(unproven)} Snowflake task(s) written with status: dev and UNPROVEN "
                         f"({', '.join(unproven)}): {why}.")
        return " ".join(parts)

    def access_steps(self, project, db_note: str | None) -> list[str]:
        unset = snowflake_env_unset()
        state = (f"NOT SET in this environment: {', '.join(unset)}" if unset
                 else "all five are set in this environment")
        steps = ["1. Verify database access: confirm these environment variables are set (" + state + "):"]
        steps += [f"   export {v}=...{'   # unset' if v in unset else ''}" for v in SNOWFLAKE_ENV]
        steps.append(f"   The source database {project.db_name} must exist and be accessible with these "
                     "credentials; ade-bench clones it per task.")
        return steps

    def install_extras(self, location: str) -> list[str]:
        return [f"cd {location} && cp .env.example .env   # then fill in the SNOWFLAKE_* credentials"]
