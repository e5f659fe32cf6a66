"""Scratch profiles.yml pointing a Snowflake project's profile at a fakesnow server, and scratch
project copies whose relative `local:` packages still resolve."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from adegen.dbt import copy_tree, snowflake_emulator_output
from adegen.dbt.packages import localize_outside_paths
from adegen.dbt.profiles import EMULATOR_CREDENTIALS, profiles_doc, write_profiles_doc
from adegen.core.errors import InputError
from adegen.snowflake_emulator.compat import install_compat_macros

DUMMY_CREDENTIALS = EMULATOR_CREDENTIALS


def snowflake_target(project: Any) -> tuple[str, str, dict]:
    """(profile_name, target_name, rendered target config) of a loaded project (a ProjectInfo, or
    an object with its profile_name, target_name and target_config)."""
    cfg, tname, pname = dict(project.target_config), project.target_name, project.profile_name
    if str(cfg.get("type", "")).lower() != "snowflake":
        raise InputError(f"profile {pname!r} target {tname!r} is type {cfg.get('type')!r}, not snowflake",
                         field=f"{pname}.outputs.{tname}.type")
    for key in ("database", "schema"):
        if not cfg.get(key):
            raise InputError(f"snowflake target needs `{key}:`", field=f"{pname}.outputs.{tname}.{key}")
    return pname, tname, cfg


def emulator_profiles(project: Any, *, host: str, port: int, database: str | None = None, schema: str | None = None,
                      threads: int | None = None) -> dict:
    """The profiles.yml content (dict) for running a loaded `project` against fakesnow at host:port."""
    pname, tname, cfg = snowflake_target(project)
    out = snowflake_emulator_output(cfg, host=host, port=port,
                                    overrides={"database": database, "schema": schema, "threads": threads})
    return profiles_doc(pname, tname, out)


def write_profiles_yml(content: dict, out_dir: str | Path) -> Path:
    return write_profiles_doc(Path(out_dir), content)


def copy_project(src: str | Path, dest: str | Path, *, compat_macros: bool = True) -> Path:
    """Copy a dbt project to `dest` for emulator runs (the shared copy policy: no target/,
    dbt_packages/, logs/, databases). `local:` packages outside the project are made absolute so
    `dbt deps` in the copy still finds them. With `compat_macros`, the fakesnow compat macros are
    installed into the copy."""
    src, dest = Path(src).resolve(), Path(dest)
    if not (src / "dbt_project.yml").is_file():
        raise InputError("not a dbt project (no dbt_project.yml)", file=src)
    if dest.exists():
        raise InputError("scratch destination already exists", file=dest)
    copy_tree(src, dest)
    localize_outside_paths(dest, src)
    if compat_macros:
        install_compat_macros(dest)
    return dest
