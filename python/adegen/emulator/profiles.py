"""Scratch profiles.yml pointing a Snowflake project's profile at a fakesnow server, and scratch
project copies whose relative `local:` packages still resolve."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import jinja2
import yaml

from ..errors import InputError

DUMMY_CREDENTIALS = {"account": "fakesnow", "user": "fakesnow", "password": "fakesnow"}
DEFAULT_ROLE = "SYSADMIN"
DEFAULT_WAREHOUSE = "FAKE_WH"


def _render(obj: Any, env: jinja2.Environment) -> Any:
    if isinstance(obj, str) and ("{{" in obj or "{%" in obj):
        return env.from_string(obj).render()
    if isinstance(obj, dict):
        return {k: _render(v, env) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_render(v, env) for v in obj]
    return obj


def _jinja() -> jinja2.Environment:
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)

    def env_var(name: str, default: Any = None) -> Any:
        if name in os.environ:
            return os.environ[name]
        if default is None:
            raise InputError(f"env var {name} is not set and has no default", field="profiles.yml")
        return default

    env.globals["env_var"] = env_var
    return env


def _load_yaml(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(f"cannot read: {e}", file=path) from e
    except yaml.YAMLError as e:
        raise InputError(f"not valid YAML: {e}", file=path) from e
    if not isinstance(data, dict):
        raise InputError("expected a mapping", file=path)
    return data


def find_profiles_yml(project_dir: Path, profiles_dir: str | Path | None = None) -> Path:
    candidates = []
    if profiles_dir:
        candidates.append(Path(profiles_dir))
    if os.environ.get("DBT_PROFILES_DIR"):
        candidates.append(Path(os.environ["DBT_PROFILES_DIR"]))
    candidates += [project_dir, Path.home() / ".dbt"]
    for c in candidates:
        if (c / "profiles.yml").is_file():
            return c / "profiles.yml"
    raise InputError("no profiles.yml found (looked in: " + ", ".join(str(c) for c in candidates) + ")",
                     file=project_dir)


def snowflake_target(project: Any, *, profiles_dir: str | Path | None = None,
                     target: str | None = None) -> tuple[str, str, dict]:
    """(profile_name, target_name, rendered target config) of a project dir or a ProjectInfo-like
    object (attributes profile_name, target_name, target_config[, adapter_type])."""
    if hasattr(project, "target_config") and hasattr(project, "profile_name"):
        cfg = dict(project.target_config)
        tname = target or project.target_name
        pname = project.profile_name
    else:
        project_dir = Path(project).resolve()
        proj = _load_yaml(project_dir / "dbt_project.yml")
        pname = proj.get("profile")
        if not isinstance(pname, str) or not pname:
            raise InputError("missing `profile:`", file=project_dir / "dbt_project.yml", field="profile")
        ppath = find_profiles_yml(project_dir, profiles_dir)
        profiles = _load_yaml(ppath)
        prof = profiles.get(pname)
        if not isinstance(prof, dict) or not isinstance(prof.get("outputs"), dict):
            raise InputError(f"profile {pname!r} not found or has no outputs", file=ppath, field=pname)
        tname = target or _render(prof.get("target"), _jinja()) or "dev"
        if tname not in prof["outputs"]:
            raise InputError(f"target {tname!r} not in profile {pname!r}", file=ppath, field=f"{pname}.target")
        cfg = _render(prof["outputs"][tname], _jinja())
    if str(cfg.get("type", "")).lower() != "snowflake":
        raise InputError(f"profile {pname!r} target {tname!r} is type {cfg.get('type')!r}, not snowflake",
                         field=f"{pname}.outputs.{tname}.type")
    for key in ("database", "schema"):
        if not cfg.get(key):
            raise InputError(f"snowflake target needs `{key}:`", field=f"{pname}.outputs.{tname}.{key}")
    return pname, tname, cfg


def emulator_profiles(project: Any, *, host: str, port: int, profiles_dir: str | Path | None = None,
                      target: str | None = None, database: str | None = None, schema: str | None = None,
                      threads: int | None = None) -> dict:
    """The profiles.yml content (dict) for running `project` against fakesnow at host:port."""
    pname, tname, cfg = snowflake_target(project, profiles_dir=profiles_dir, target=target)
    out = {
        "type": "snowflake",
        **DUMMY_CREDENTIALS,
        "role": cfg.get("role") or DEFAULT_ROLE,
        "warehouse": cfg.get("warehouse") or DEFAULT_WAREHOUSE,
        "database": database or cfg["database"],
        "schema": schema or cfg["schema"],
        "host": host,
        "port": int(port),
        "protocol": "http",
        "threads": int(threads or cfg.get("threads") or 4),
        "connect_retries": 0,
        "connect_timeout": 10,
        "client_session_keep_alive": False,
        "retry_on_database_errors": False,
    }
    return {pname: {"target": tname, "outputs": {tname: out}}}


def write_profiles_yml(content: dict, out_dir: str | Path) -> Path:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "profiles.yml"
    path.write_text(yaml.safe_dump(content, sort_keys=False), encoding="utf-8")
    return out_dir


SCRATCH_IGNORE = shutil.ignore_patterns("target", "dbt_packages", "logs", ".user.yml", "__pycache__", ".git")


def copy_project(src: str | Path, dest: str | Path, *, compat_macros: bool = True) -> Path:
    """Copy a dbt project to `dest` (without target/, dbt_packages/, logs/) for emulator runs.

    Relative `local:` entries of packages.yml / dependencies.yml are rewritten to absolute paths
    (resolved against `src`) so `dbt deps` in the copy still finds them; package-lock.yml is dropped.
    With `compat_macros`, the fakesnow compat macros are installed into the copy."""
    from .compat import install_compat_macros

    src, dest = Path(src).resolve(), Path(dest)
    if not (src / "dbt_project.yml").is_file():
        raise InputError("not a dbt project (no dbt_project.yml)", file=src)
    if dest.exists():
        raise InputError("scratch destination already exists", file=dest)
    shutil.copytree(src, dest, ignore=SCRATCH_IGNORE, symlinks=True)
    (dest / "package-lock.yml").unlink(missing_ok=True)
    for name in ("packages.yml", "dependencies.yml"):
        p = dest / name
        if not p.is_file():
            continue
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        changed = False
        for entry in data.get("packages") or []:
            if isinstance(entry, dict) and isinstance(entry.get("local"), str) and "{{" not in entry["local"]:
                local = Path(entry["local"])
                if not local.is_absolute():
                    entry["local"] = str((src / local).resolve())
                    changed = True
        if changed:
            p.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    if compat_macros:
        install_compat_macros(dest)
    return dest
