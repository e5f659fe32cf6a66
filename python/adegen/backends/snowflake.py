"""Snowflake: no database file; ade-bench reaches the database with the SNOWFLAKE_* credentials
and clones it per task. Proofs only run on the local fakesnow emulator (`--emulate-snowflake`)
and are labelled "proven on emulator", never "proven on Snowflake"; `--seed` is DuckDB-only."""
from __future__ import annotations

import os

from .base import Backend

SNOWFLAKE_ENV = ("SNOWFLAKE_ACCOUNT", "SNOWFLAKE_USER", "SNOWFLAKE_PASSWORD", "SNOWFLAKE_ROLE",
                 "SNOWFLAKE_WAREHOUSE")
EMULATOR_LABEL = "proven on emulator"  # = adegen.validate.snowflake_prove.EMULATOR_LABEL (fakesnow, not Snowflake)
UNPROVEN_PREFIX = "Snowflake tasks are unproven: "  # how the validator factory words its reasons


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

    def option_notes(self, opts) -> tuple[dict, list[str]]:
        return {"snowflake_env_unset": snowflake_env_unset()}, []

    def profile_target(self, db_name: str, schema: str, target_config: dict | None = None) -> dict:
        # credentials from the SNOWFLAKE_* environment variables, as ade-bench's container has them
        from ..dbt.profiles import snowflake_env_output

        return snowflake_env_output(db_name, schema)

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
