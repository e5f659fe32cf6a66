"""Project facts: dbt_project.yml + profiles.yml + the chosen target -> ProjectInfo.

Read-only: nothing is written and no database is opened. What a target says about its database
is read by the database's backend (`Backend.read_target`). profiles.yml is found by
`adegen.dbt.profiles.find_profiles` (the `profiles_dir` argument, else `$DBT_PROFILES_DIR`, else the
project directory, then `~/.dbt`).
`{{ env_var('X') }}` / `{{ env_var('X', 'default') }}` (and `var('x', default)`, which renders its
default) are rendered in string values the way dbt does. Every problem is an `InputError` naming
the file and the field.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import jinja2
import yaml

from adegen import backends
from adegen.dbt.profiles import find_profiles
from adegen.dbt.scratch import is_skipped
from adegen.core.errors import InputError


@dataclass(frozen=True)
class ProjectInfo:
    project_dir: Path  # resolved
    name: str  # dbt `name:`
    profile_name: str
    target_name: str
    profiles_path: Path  # the profiles.yml that was used
    adapter_type: str  # "duckdb" | "snowflake"
    db_name: str  # duckdb: file stem of `path`; snowflake: `database`
    db_path: Path | None  # duckdb: absolute path of the database file (may not exist yet)
    schema: str
    target_config: dict = field(repr=False)  # the rendered profile target
    model_paths: list[str] = field(default_factory=list)
    seed_paths: list[str] = field(default_factory=list)
    macro_paths: list[str] = field(default_factory=list)
    test_paths: list[str] = field(default_factory=list)

    def target_facts(self) -> dict:
        """The real target's facts, as the discovery macro takes them (`target_facts`)."""
        return {
            "profile": self.profile_name,
            "target": self.target_name,
            "type": self.adapter_type,
            "path": str(self.db_path) if self.db_path else self.target_config.get("path"),
            "database": self.db_name,
            "schema": self.schema,
            "project_dir": str(self.project_dir),
        }

    def seed_files(self) -> Iterator[Path]:
        """The seed CSVs of the project (every `seed-paths` directory, recursively)."""
        for sp in self.seed_paths or ["seeds"]:
            d = self.project_dir / sp
            if d.is_dir():
                yield from d.rglob("*.csv")

    def has_seed_files(self) -> bool:
        return any(True for _ in self.seed_files())


# --- rendering -------------------------------------------------------------------------------

class _MissingEnv(Exception):
    def __init__(self, name: str):
        self.name = name


def _env_var(name: str, default: Any = None) -> str:
    if name in os.environ:
        return os.environ[name]
    if default is not None:
        return default
    raise _MissingEnv(name)


def _var(name: str, default: Any = None) -> Any:
    return default if default is not None else ""


_JINJA = jinja2.Environment(undefined=jinja2.ChainableUndefined, keep_trailing_newline=True)
_JINJA.globals.update(env_var=_env_var, var=_var)


def _render(value: Any, file: Path, field_path: str) -> Any:
    if isinstance(value, dict):
        return {k: _render(v, file, f"{field_path}.{k}" if field_path else str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v, file, f"{field_path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, str) and ("{{" in value or "{%" in value):
        try:
            out = _JINJA.from_string(value).render()
        except _MissingEnv as e:
            raise InputError(
                f"env var '{e.name}' is required (env_var without a default) but not set",
                file=file, field=field_path,
            ) from None
        except jinja2.TemplateError as e:
            raise InputError(f"cannot render {value!r}: {e}", file=file, field=field_path) from None
        # dbt converts rendered numbers/booleans for known fields; keep ints for threads/port.
        return int(out) if out.isdigit() else out
    return value


def _load_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", file=path) from None
    try:
        return yaml.safe_load(text)
    except yaml.constructor.ConstructorError as e:  # safe_load refuses code-running tags
        line = f"line {e.problem_mark.line + 1}" if e.problem_mark else None
        raise InputError(f"unsupported YAML tag ({e.problem}); only plain data is read, tags such as "
                         "!!python/object are refused", file=path, field=line) from None
    except yaml.YAMLError as e:
        raise InputError(f"invalid YAML: {e}", file=path) from None


def _str_list(value: Any, default: list[str], file: Path, field_name: str) -> list[str]:
    if value is None:
        return list(default)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise InputError("must be a list of paths", file=file, field=field_name)


def load_project(
    project_dir: str | Path,
    *,
    profiles_dir: str | Path | None = None,
    target: str | None = None,
    db_type: str | None = None,
    db_name: str | None = None,
) -> ProjectInfo:
    raw_dir = Path(project_dir).expanduser()
    if not raw_dir.exists():
        raise InputError("project path does not exist", file=raw_dir)
    if not raw_dir.is_dir():
        raise InputError("project path is not a directory", file=raw_dir)
    pdir = raw_dir.resolve()
    pfile = pdir / "dbt_project.yml"
    if not pfile.is_file():
        raise InputError("no dbt_project.yml: not a dbt project directory", file=pdir)
    proj = _load_yaml(pfile)
    if not isinstance(proj, dict):
        raise InputError("must be a YAML mapping", file=pfile)
    # Only the fields adegen reads are rendered (hooks etc. need dbt's full context).
    wanted = ("name", "profile", "model-paths", "source-paths", "seed-paths", "data-paths",
              "macro-paths", "test-paths")
    proj = {k: (_render(v, pfile, k) if k in wanted else v) for k, v in proj.items()}
    name = proj.get("name")
    if not isinstance(name, str) or not name:
        raise InputError("missing project name", file=pfile, field="name")
    profile_name = proj.get("profile")
    if not isinstance(profile_name, str) or not profile_name:
        raise InputError("missing profile name", file=pfile, field="profile")

    prof_path = find_profiles(pdir, profiles_dir)
    profiles = _load_yaml(prof_path)
    if not isinstance(profiles, dict):
        raise InputError("must be a YAML mapping", file=prof_path)
    if profile_name not in profiles or not isinstance(profiles[profile_name], dict):
        raise InputError(f"profile '{profile_name}' (from dbt_project.yml) not found", file=prof_path,
                         field=profile_name)
    prof = profiles[profile_name]
    outputs = prof.get("outputs")
    if not isinstance(outputs, dict) or not outputs:
        raise InputError("no outputs", file=prof_path, field=f"{profile_name}.outputs")
    target_name = target or _render(prof.get("target"), prof_path, f"{profile_name}.target")
    if not target_name:
        raise InputError("no default target and none given", file=prof_path, field=f"{profile_name}.target")
    if target_name not in outputs or not isinstance(outputs[target_name], dict):
        raise InputError(
            f"target '{target_name}' not found (have: {', '.join(sorted(outputs))})",
            file=prof_path, field=f"{profile_name}.outputs",
        )
    tfield = f"{profile_name}.outputs.{target_name}"
    tcfg = _render(outputs[target_name], prof_path, tfield)
    adapter = str(tcfg.get("type") or "").lower()
    if not adapter:
        raise InputError("missing adapter type", file=prof_path, field=f"{tfield}.type")
    if adapter not in backends.BACKENDS:
        raise InputError(
            f"adapter '{adapter}' is not supported: only {' and '.join(b.title() for b in backends.BACKENDS.values())} "
            "are supported", file=prof_path, field=f"{tfield}.type",
        )
    if db_type is not None and db_type.lower() != adapter:
        raise InputError(
            f"--db-type {db_type} contradicts the profile's adapter '{adapter}'",
            file=prof_path, field=f"{tfield}.type",
        )

    facts = backends.get(adapter).read_target(tcfg, pdir, prof_path, tfield)

    return ProjectInfo(
        project_dir=pdir,
        name=name,
        profile_name=profile_name,
        target_name=str(target_name),
        profiles_path=prof_path,
        adapter_type=adapter,
        db_name=db_name or facts.db_name,
        db_path=facts.db_path,
        schema=facts.schema,
        target_config=tcfg,
        model_paths=_str_list(proj.get("model-paths", proj.get("source-paths")), ["models"], pfile, "model-paths"),
        seed_paths=_str_list(proj.get("seed-paths", proj.get("data-paths")), ["seeds"], pfile, "seed-paths"),
        macro_paths=_str_list(proj.get("macro-paths"), ["macros"], pfile, "macro-paths"),
        test_paths=_str_list(proj.get("test-paths"), ["tests"], pfile, "test-paths"),
    )


# --- read-only sanity checks (before dbt runs) -----------------------------------------------

TEXT_SUFFIXES = (".sql", ".py", ".yml", ".yaml", ".md")


def check_project_files(info: ProjectInfo) -> int:
    """What dbt would otherwise die on with a traceback, or silently produce nothing from: every
    text file dbt parses (models, macros, tests, snapshots, analyses; seeds' YAML) must be UTF-8,
    and model-paths must hold at least one model. Returns the number of model files. Read-only."""
    pfile = info.project_dir / "dbt_project.yml"
    dirs = [*info.model_paths, *info.macro_paths, *info.test_paths, *info.seed_paths, "snapshots", "analyses"]
    models = 0
    seen: set[Path] = set()
    for rel in dirs:
        top = (info.project_dir / rel).resolve()
        if top in seen or not top.is_dir():
            continue
        seen.add(top)
        for root, dirnames, files in os.walk(top):
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and not is_skipped(d, True)]
            for f in files:
                p = Path(root) / f
                if not f.lower().endswith(TEXT_SUFFIXES):
                    continue
                if p.is_symlink() and not p.resolve().is_relative_to(info.project_dir):
                    continue  # never read outside the project (the copy leaves such links out too)
                if rel in info.model_paths and f.lower().endswith((".sql", ".py")):
                    models += 1
                try:
                    data = p.read_bytes()
                    data.decode("utf-8")
                except UnicodeDecodeError as e:
                    line = data[: e.start].count(b"\n") + 1
                    raise InputError(f"not UTF-8 (byte 0x{data[e.start]:02x} on line {line}); dbt reads "
                                     "project files as UTF-8: re-save the file as UTF-8",
                                     file=p, field="encoding") from None
                except OSError as e:
                    raise InputError(f"cannot read: {e.strerror}", file=p) from None
    if models == 0:
        where = ", ".join(info.model_paths)
        raise InputError(f"the project has no models: no .sql or .py file under {where}", file=pfile,
                         field="model-paths")
    return models
