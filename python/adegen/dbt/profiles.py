"""profiles.yml: the one lookup (which file a project uses) and the one writer of scratch profiles.

Lookup precedence, as dbt resolves it for a user in the project directory: the `profiles_dir`
argument (`--profiles-dir`), else `$DBT_PROFILES_DIR`, else the project directory, then `~/.dbt`.

Writers return the `outputs.<target>` mapping; `write_profiles` wraps it in the profile and writes
`<dir>/profiles.yml`:
- `duckdb_output`: DuckDB at a given path, the project's `extensions`/`settings` kept, extra
  DuckDB settings (resource budgets) merged over them;
- `snowflake_offline_output`: dummy credentials with bounded timeouts (compiling needs no query);
- `snowflake_env_output`: the shipped copy's credentials from SNOWFLAKE_* variables;
- `snowflake_emulator_output`: a fakesnow server on host:port.
"""
from __future__ import annotations

import os
from pathlib import Path

import yaml

from adegen.core.errors import InputError

EMULATOR_CREDENTIALS = {"account": "fakesnow", "user": "fakesnow", "password": "fakesnow"}
EMULATOR_ROLE, EMULATOR_WAREHOUSE = "SYSADMIN", "FAKE_WH"


def find_profiles(project_dir: Path, profiles_dir: str | Path | None = None) -> Path:
    """The profiles.yml dbt would read for `project_dir`; InputError naming where it looked."""
    candidates: list[tuple[str, Path]] = []
    if profiles_dir is not None:
        candidates.append(("--profiles-dir", Path(profiles_dir).expanduser()))
    elif os.environ.get("DBT_PROFILES_DIR"):
        candidates.append(("$DBT_PROFILES_DIR", Path(os.environ["DBT_PROFILES_DIR"]).expanduser()))
    else:
        candidates.append(("project dir", Path(project_dir)))
        candidates.append(("~/.dbt", Path.home() / ".dbt"))
    for _, d in candidates:
        p = d / "profiles.yml"
        if p.is_file():
            return p.resolve()
    where = ", ".join(f"{label} ({d})" for label, d in candidates)
    raise InputError(f"profiles.yml not found; looked in: {where}")


def duckdb_output(info, path: str, *, threads: int | None = None, settings: dict | None = None,
                  full_target: bool = False) -> dict:
    """DuckDB at `path`. `full_target`: start from the project's whole target config (minus its
    `database`), else only its extensions/settings. `settings` are merged over the project's."""
    tc = dict(getattr(info, "target_config", None) or {})
    if full_target:
        out = {k: v for k, v in tc.items() if k != "database"}
    else:
        out = {k: tc[k] for k in ("extensions", "settings") if tc.get(k)}
    out.update(type="duckdb", path=str(path))
    out.setdefault("schema", getattr(info, "schema", None) or "main")
    if threads is not None:
        out["threads"] = threads
    out.setdefault("threads", 1)
    if settings:
        out["settings"] = {**(out.get("settings") or {}), **settings}
    return out


def snowflake_offline_output(info) -> dict:
    """Dummy credentials: compiling and discovery run no query, so dbt never logs in; short
    timeouts so nothing waits on a login if it tried."""
    return {"type": "snowflake", "account": "adegen-offline", "user": "adegen", "password": "adegen-offline",
            "database": info.db_name, "schema": getattr(info, "schema", None) or "public",
            "warehouse": "ADEGEN_OFFLINE", "threads": 1, "connect_timeout": 5, "connect_retries": 0}


def snowflake_env_output(db_name: str, schema: str | None) -> dict:
    out = {"type": "snowflake"}
    for key in ("account", "user", "password", "role", "warehouse"):
        out[key] = "{{ env_var('SNOWFLAKE_%s') }}" % key.upper()
    out.update({"database": db_name, "schema": schema or "public", "threads": 4})
    return out


def snowflake_emulator_output(cfg: dict, *, host: str, port, overrides: dict | None = None) -> dict:
    """A Snowflake target (`cfg`, rendered) pointed at a fakesnow server; `overrides` may set
    database, schema and threads."""
    o = overrides or {}
    database, schema, threads = o.get("database"), o.get("schema"), o.get("threads")
    return {
        "type": "snowflake", **EMULATOR_CREDENTIALS,
        "role": cfg.get("role") or EMULATOR_ROLE,
        "warehouse": cfg.get("warehouse") or EMULATOR_WAREHOUSE,
        "database": database or cfg["database"], "schema": schema or cfg["schema"],
        "host": host, "port": port if isinstance(port, str) else int(port), "protocol": "http",
        "threads": int(threads or cfg.get("threads") or 4),
        "connect_retries": 0, "connect_timeout": 10, "client_session_keep_alive": False,
        "retry_on_database_errors": False,
    }


def profiles_doc(profile: str, target: str, output: dict) -> dict:
    return {profile: {"target": target, "outputs": {target: output}}}


def profiles_text(profile: str, target: str, output: dict) -> str:
    return yaml.safe_dump(profiles_doc(profile, target, output), sort_keys=False, default_flow_style=False)


def write_profiles(directory: Path, profile: str, target: str, output: dict) -> Path:
    """`<directory>/profiles.yml` holding one profile/target (rewritten only when it changes, so
    dbt's partial parse stays valid); returns the directory."""
    return write_profiles_doc(directory, profiles_doc(profile, target, output))


def write_profiles_doc(directory: Path, doc: dict) -> Path:
    """`<directory>/profiles.yml` holding `doc`, rewritten only when it changes; the directory."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)
    p = directory / "profiles.yml"
    if not p.is_file() or p.read_text(encoding="utf-8") != text:
        p.write_text(text, encoding="utf-8")
    return directory
