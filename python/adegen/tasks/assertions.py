"""Structural assertion tests (a pattern's `assertion_tests`) rendered as singular dbt tests.

The text comes from the dbt macros in `macros/assertions/` (one renderer per type, the spec's
templates with placeholders resolved and loops unrolled); this module validates the entries,
runs `dbt run-operation adegen.ade_render_assertions` once for all of them and returns
`(purpose, sql)` pairs. The SQL is itself Jinja (`{{ ref(...) }}`, `graph.nodes` lookups) and is
written as-is into the task's `tests/` directory (file names: `taskgen.test_file_name`).

The run happens on a scratch copy of the project (`adegen.dbt.ScratchProject`; the given project
is never written to) with the adegen package linked in, scratch profiles (DuckDB `:memory:`) and
target/log paths inside the scratch directory.

Placeholders (`{model}`, `{column}`, `{original_refs}`, ...) in a pattern's args are resolved
with `resolve_placeholders` before rendering; `render_assertions` expects concrete values.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from adegen.tasks import assertion_types
from adegen.core import paths
from adegen.dbt import DbtDirs, ScratchProject, capture_payload, run_operation, write_profiles
from adegen.dbt.packages import localize_outside_paths
from adegen.core.errors import DbtError, InputError

OPERATION = "ade_render_assertions"

TYPES = assertion_types.TYPES  # the one registry: type -> AssertionType(purpose, args, purpose_arg)

# Characters that cannot sit inside the rendered SQL/Jinja string literals (the macro checks the same).
_BAD_CHARS = re.compile(r"""['"\\{}%<>\r\n]""")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_WHOLE_PLACEHOLDER = re.compile(r"^\s*\{(\w+)\}\s*$")

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
    # an owned run dir, not a TemporaryDirectory: a run killed with SIGKILL cannot clean up, and
    # the next run removes what dead runs left
    with paths.owned_run_dir("adegen-assert-") as scratch:
        proj = prepare_scratch_project(project_dir, scratch / "project")
        profiles = scratch / "profiles"
        write_scratch_profiles(profiles)
        return _run_operation(proj, profiles, scratch, f"adegen.{OPERATION}", {"entries": entries})


def prepare_scratch_project(project_dir: Path, dest: Path) -> Path:
    """Copy the project to `dest` (the shared copy policy of `adegen.dbt.scratch`) and install its
    packages offline the way the user has them (`adegen.dbt.packages`: no `dbt deps`, no network),
    with the adegen package linked in; `local:` paths outside the project are made absolute in the
    copy's packages.yml."""
    project_dir = Path(project_dir).resolve()
    scratch = ScratchProject(project_dir, dest).copy()
    localize_outside_paths(scratch.dir, project_dir)
    scratch.install_packages(extra={"adegen": paths.package_root()})
    return scratch.dir


def write_scratch_profiles(profiles_dir: Path) -> Path:
    out = {"type": "duckdb", "path": ":memory:", "schema": "main", "threads": 1}
    return write_profiles(profiles_dir, SCRATCH_PROFILE, SCRATCH_TARGET, out) / "profiles.yml"


def _load_yaml(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"cannot read: {exc}", file=path) from exc
    return data if isinstance(data, dict) else {}


def _run_operation(project: Path, profiles: Path, scratch: Path, macro: str, args: dict) -> Any:
    """`dbt run-operation` through the shared runner; the payload of the one marked line."""
    dirs = DbtDirs(project, profiles, SCRATCH_TARGET, (scratch / "target", scratch / "logs"))
    run = run_operation(macro, args, dirs, extra_flags=["--profile", SCRATCH_PROFILE, "--no-partial-parse"])
    return capture_payload(run, macro)
