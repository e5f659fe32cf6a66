"""Structural assertion tests (a pattern's `assertion_tests`) rendered as singular dbt tests.

The text comes from the dbt macros in `macros/assertions/` (one renderer per type, the spec's
templates with placeholders resolved and loops unrolled); this module validates the entries,
runs `dbt run-operation adegen.ade_render_assertions` once for all of them and returns
`(purpose, sql)` pairs. The SQL is itself Jinja (`{{ ref(...) }}`, `graph.nodes` lookups) and is
written as-is into the task's `tests/` directory (file names: `taskgen.test_file_name`).

The run happens on a scratch copy of the project (the given project is never written to) with
the adegen package linked in, scratch profiles (DuckDB `:memory:`) and target/log paths inside the
scratch directory.

Placeholders (`{model}`, `{column}`, `{original_refs}`, ...) in a pattern's args are resolved
with `resolve_placeholders` before rendering; `render_assertions` expects concrete values.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from adegen import assertion_types, dbt_runner, paths
from adegen.errors import DbtError, InputError

OPERATION = "ade_render_assertions"

TYPES = assertion_types.TYPES  # the one registry: type -> AssertionType(purpose, args, purpose_arg)

# Characters that cannot sit inside the rendered SQL/Jinja string literals (the macro checks the same).
_BAD_CHARS = re.compile(r"""['"\\{}%<>\r\n]""")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_WHOLE_PLACEHOLDER = re.compile(r"^\s*\{(\w+)\}\s*$")

# Left out of the scratch copy: build output, installed packages, databases, VCS, caches.
_IGNORE_DIRS = {"target", "dbt_packages", "dbt_modules", "logs", ".git", ".venv", "venv",
                "node_modules", "__pycache__", ".pytest_cache"}
_IGNORE_SUFFIXES = (".duckdb", ".duckdb.wal", ".db", ".db.wal")

SCRATCH_PROFILE = "adegen_scratch"
SCRATCH_TARGET = "scratch"


# ---------------------------------------------------------------------------------------------
# placeholders and validation


def resolve_placeholders(args: Mapping[str, Any], context: Mapping[str, Any]) -> dict[str, Any]:
    """Fill a pattern's `{placeholder}`s from `context` (model, column, project_name,
    original_refs, original_sources, original_materialization, ...).

    A string that is exactly one placeholder takes the context value as is (so
    `expected: "{original_refs}"` becomes a list); inside a list such an item is spliced in when
    its value is a list. Placeholders inside longer strings are substituted as text. An unknown
    placeholder is an InputError."""

    def one(value: Any, where: str) -> Any:
        if isinstance(value, str):
            m = _WHOLE_PLACEHOLDER.match(value)
            if m:
                return _lookup(m.group(1), where)
            return _PLACEHOLDER.sub(lambda mm: str(_lookup(mm.group(1), where)), value)
        if isinstance(value, (list, tuple)):
            out: list[Any] = []
            for i, item in enumerate(value):
                resolved = one(item, f"{where}[{i}]")
                if isinstance(item, str) and _WHOLE_PLACEHOLDER.match(item) and isinstance(resolved, (list, tuple)):
                    out.extend(resolved)
                else:
                    out.append(resolved)
            return out
        if isinstance(value, Mapping):
            return {k: one(v, f"{where}.{k}") for k, v in value.items()}
        return value

    def _lookup(name: str, where: str) -> Any:
        if name not in context:
            raise InputError(f"unknown placeholder {{{name}}} (known: {', '.join(sorted(context)) or 'none'})",
                             field=where)
        value = context[name]
        if isinstance(value, tuple):
            value = list(value)
        return value

    if not isinstance(args, Mapping):
        raise InputError(f"args must be a mapping, got {type(args).__name__}", field="args")
    return {k: one(v, f"args.{k}") for k, v in args.items()}


def _check_name(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"must be a non-empty string, got {value!r}", field=field)
    if _BAD_CHARS.search(value):
        raise InputError(f"contains a character that cannot be quoted in a test "
                         f"(quotes, backslash, braces, %, <, >, line breaks): {value!r}", field=field)
    return value


def _check_list(value: Any, field: str) -> list[Any]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise InputError(f"must be a list, got {type(value).__name__} {value!r}", field=field)
    if not value:
        raise InputError("must be a non-empty list", field=field)
    return list(value)


def validate_entry(entry: Any, index: int = 0, project_name: str | None = None) -> dict[str, Any]:
    """One `{type, args[, project_name]}` entry, checked and normalised (InputError otherwise)."""
    where = f"assertion_tests[{index}]"
    if not isinstance(entry, Mapping):
        raise InputError(f"must be a mapping with type and args, got {entry!r}", field=where)
    kind = entry.get("type")
    if kind not in TYPES:
        raise InputError(f"unknown type {kind!r} (known: {', '.join(TYPES)})", field=f"{where}.type")
    unknown_keys = set(entry) - {"type", "args", "project_name"}
    if unknown_keys:
        raise InputError(f"unknown keys {sorted(unknown_keys)}", field=where)
    args = entry.get("args")
    if not isinstance(args, Mapping):
        raise InputError(f"must be a mapping, got {args!r}", field=f"{where}.args")
    spec = TYPES[kind].args
    extra = set(args) - set(spec)
    if extra:
        raise InputError(f"unexpected args {sorted(extra)} for {kind} (takes {', '.join(spec)})",
                         field=f"{where}.args")
    out: dict[str, Any] = {}
    for name, how in spec.items():
        field = f"{where}.args.{name}"
        if name not in args or args[name] is None:
            raise InputError(f"missing (required for {kind})", field=field)
        value = args[name]
        if how == "name":
            out[name] = _check_name(value, field)
        elif how == "names":
            out[name] = [_check_name(v, f"{field}[{i}]") for i, v in enumerate(_check_list(value, field))]
        else:  # pairs
            pairs = []
            for i, pair in enumerate(_check_list(value, field)):
                if isinstance(pair, (str, bytes, Mapping)) or not isinstance(pair, Sequence) or len(pair) != 2:
                    raise InputError(f"must be a [source, table] pair, got {pair!r}", field=f"{field}[{i}]")
                pairs.append([_check_name(pair[0], f"{field}[{i}][0]"), _check_name(pair[1], f"{field}[{i}][1]")])
            out[name] = pairs
    pname = entry.get("project_name", project_name)
    return {"type": kind, "args": out, "project_name": _check_name(pname, f"{where}.project_name")}


def purpose_of(entry: Mapping[str, Any]) -> str:
    """Short slug for the test file name (the registry's purpose, e.g. refs, column_<col>)."""
    return TYPES[entry["type"]].purpose_of(entry["args"])


# ---------------------------------------------------------------------------------------------
# rendering through dbt


def render_assertions(project_dir: Path, project_name: str, entries: list[dict]) -> list[tuple[str, str]]:
    """(purpose, sql) per entry, in order, rendered by the adegen macros in one run-operation.

    `entries`: `[{type, args[, project_name]}]` with concrete args (see `resolve_placeholders`);
    `project_name` is the dbt project that owns the models (an entry may override it)."""
    if isinstance(entries, (str, bytes, Mapping)) or not isinstance(entries, Sequence):
        raise InputError(f"entries must be a list, got {type(entries).__name__}", field="assertion_tests")
    checked = [validate_entry(e, i, project_name) for i, e in enumerate(entries)]
    if not checked:
        return []
    project_dir = Path(project_dir).resolve()
    if not (project_dir / "dbt_project.yml").is_file():
        raise InputError("not a dbt project (no dbt_project.yml)", file=project_dir)
    payload = run_render_operation(project_dir, checked)
    if not isinstance(payload, list) or len(payload) != len(checked):
        raise DbtError(f"{OPERATION} returned {len(payload) if isinstance(payload, list) else payload!r} "
                       f"results for {len(checked)} entries")
    out: list[tuple[str, str]] = []
    for entry, item in zip(checked, payload):
        sql = item.get("sql") if isinstance(item, Mapping) else None
        if not isinstance(sql, str) or item.get("type") != entry["type"]:
            raise DbtError(f"{OPERATION} returned an unexpected item {item!r} for {entry['type']}")
        out.append((purpose_of(entry), sql))
    return out


def run_render_operation(project_dir: Path, entries: list[dict]) -> Any:
    """Run `adegen.ade_render_assertions` on a scratch copy of `project_dir`; the payload."""
    with tempfile.TemporaryDirectory(prefix="adegen-assert-") as tmp:
        scratch = Path(tmp)
        proj = prepare_scratch_project(project_dir, scratch / "project")
        profiles = scratch / "profiles"
        write_scratch_profiles(profiles)
        return _run_operation(proj, profiles, scratch, f"adegen.{OPERATION}", {"entries": entries})


def prepare_scratch_project(project_dir: Path, dest: Path) -> Path:
    """Copy the project to `dest` (without build output, installed packages or databases) and
    link the adegen package in.

    packages.yml (or dependencies.yml) gets a `local:` entry with the absolute path of
    `paths.package_root()`, and relative `local:` paths are made absolute. `dbt deps` is not run
    (it needs the network for hub/git packages): the packages the project already installed and
    the local ones are linked into the scratch install directory, which is what deps does for
    local packages."""
    project_dir = Path(project_dir).resolve()
    root = paths.package_root()

    def ignore(directory: str, names: list[str]) -> set[str]:
        skip = set()
        for n in names:
            if n in _IGNORE_DIRS and Path(directory, n).is_dir():
                skip.add(n)
            elif n.endswith(_IGNORE_SUFFIXES):
                skip.add(n)
        return skip

    shutil.copytree(project_dir, dest, ignore=ignore, symlinks=True)
    cfg = _load_yaml(project_dir / "dbt_project.yml")
    install = str(cfg.get("packages-install-path") or "dbt_packages")
    src_install = (project_dir / install) if not os.path.isabs(install) else Path(install)
    dst_install = dest / "dbt_packages"
    if install != "dbt_packages":  # keep the copy's config pointing at the scratch install dir
        cfg["packages-install-path"] = "dbt_packages"
        (dest / "dbt_project.yml").write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    dst_install.mkdir(parents=True, exist_ok=True)

    links: dict[str, Path] = {}
    if src_install.is_dir():
        for child in sorted(src_install.iterdir()):
            if child.is_dir():
                links[child.name] = child.resolve()

    deps_file = None
    for name in ("packages.yml", "dependencies.yml"):
        if (dest / name).is_file():
            deps_file = dest / name
            break
    data = _load_yaml(deps_file) if deps_file else {}
    packages = data.get("packages") if isinstance(data.get("packages"), list) else []
    new_packages: list[Any] = []
    for pkg in packages:
        if isinstance(pkg, Mapping) and isinstance(pkg.get("local"), str) and "{{" not in pkg["local"]:
            target = (project_dir / pkg["local"]).resolve()
            if target == root:
                continue  # re-added below, once
            pkg = {**pkg, "local": str(target)}
            pname = _package_name(target)
            if pname:
                links[pname] = target
        new_packages.append(pkg)
    new_packages.append({"local": str(root)})
    links["adegen"] = root
    data["packages"] = new_packages
    (deps_file or dest / "packages.yml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    for name, target in links.items():
        link = dst_install / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target, target_is_directory=True)
    return dest


def write_scratch_profiles(profiles_dir: Path) -> Path:
    profiles_dir.mkdir(parents=True, exist_ok=True)
    profile = {SCRATCH_PROFILE: {"target": SCRATCH_TARGET, "outputs": {
        SCRATCH_TARGET: {"type": "duckdb", "path": ":memory:", "schema": "main", "threads": 1}}}}
    path = profiles_dir / "profiles.yml"
    path.write_text(yaml.safe_dump(profile, sort_keys=False), encoding="utf-8")
    return path


def _package_name(package_dir: Path) -> str | None:
    try:
        name = _load_yaml(package_dir / "dbt_project.yml").get("name")
    except InputError:
        return None
    return str(name) if name else None


def _load_yaml(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"cannot read: {exc}", file=path) from exc
    return data if isinstance(data, dict) else {}


def _run_operation(project: Path, profiles: Path, scratch: Path, macro: str, args: dict) -> Any:
    """`dbt run-operation` through the shared runner; the payload of the one marked line."""
    run = dbt_runner.run_operation(
        macro, args, project_dir=project, profiles_dir=profiles, target=SCRATCH_TARGET,
        target_path=scratch / "target", log_path=scratch / "logs",
        extra_flags=["--profile", SCRATCH_PROFILE, "--no-partial-parse"])
    return dbt_runner.capture_payload(run, macro)
