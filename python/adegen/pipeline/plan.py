"""A bulk plan (`python -m adegen.bulk --plan PLAN.yaml`): many projects into one dataset.

    name: my_benchmark        # optional: the whole dataset's experiment set (default: the file's stem)
    output_dir: ../dataset    # optional (relative to the plan file); --output-dir overrides it
    seed: 1                   # optional: every project's seed unless it sets its own (default 0)
    projects:
      - path: ../integration_tests   # required (relative to the plan file)
        tasks: 20                    # required: proven tasks wanted from this project
        seed: 3                      # optional
        db_type: duckdb              # optional, each as bulk's option of the same name
        db_name: acme
        db_path: ../dbs
        profiles_dir: ../profiles
        target: dev
        patterns_dirs: [../my_patterns]

Everything is checked before anything is written: a bad plan is one InputError naming the plan
file and the field (`projects[1].tasks`), and each project's options go through the same checks as
bulk's command line (`cli_args.project_options`)."""
from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from adegen.pipeline.options import Options, project_options
from adegen.core.errors import InputError

TOP_KEYS = {"name", "output_dir", "seed", "projects"}
PROJECT_KEYS = {"path", "tasks", "seed", "db_type", "db_name", "db_path", "profiles_dir", "target", "patterns_dirs"}
# cli_args' field names -> the plan's
_ARG_FIELDS = {"PROJECT_DIR": "path", "--output-dir": "output_dir", "--db-type": "db_type", "--db-name": "db_name",
               "--db-path": "db_path", "--profiles-dir": "profiles_dir", "--target": "target",
               "--patterns-dir": "patterns_dirs", "--ade-bench-dir": "ade_bench_dir"}
_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


@dataclass
class PlanProject:
    index: int
    opts: Options  # checked project options (output_dir: the plan's)
    tasks: int
    seed: int

    @property
    def field(self) -> str:
        return f"projects[{self.index}]"


@dataclass(frozen=True)
class _Defaults:
    """What every project entry is read against."""

    path: Path         # the plan file (named in errors)
    base: Path         # the plan's directory: relative paths start there
    seed: int          # the plan's seed
    output_dir: Path
    ade_bench_dir: str | None


@dataclass
class Plan:
    path: Path
    name: str
    output_dir: Path
    projects: list[PlanProject] = field(default_factory=list)


def load_plan(path: Path, *, output_dir: str | None, ade_bench_dir: str | None = None) -> Plan:
    """The checked plan; `output_dir` (--output-dir) overrides the plan's."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise InputError("no such plan file", file=path, field="--plan")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputError(f"not a readable YAML file ({str(exc).splitlines()[0]})", file=path) from None
    if not isinstance(data, dict):
        raise InputError("expected a mapping with `projects:`", file=path)
    _unknown(path, data, TOP_KEYS, "")
    base = path.resolve().parent
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise InputError(f"expected a name of letters, digits, _ . - (an experiment set name), got {name!r}",
                         file=path, field="name")
    out = output_dir if output_dir is not None else data.get("output_dir")
    if out is None:
        raise InputError("no output directory: set output_dir in the plan or pass --output-dir", file=path,
                         field="output_dir")
    if not isinstance(out, str) or not out.strip():
        raise InputError(f"expected a directory path, got {out!r}", file=path, field="output_dir")
    out_dir = Path(out).expanduser() if output_dir is not None else _rel(base, out)
    seed = _int(path, data.get("seed", 0), "seed", 0)
    entries = data.get("projects")
    if not isinstance(entries, list) or not entries:
        raise InputError("expected a non-empty list of projects", file=path, field="projects")
    plan = Plan(path.resolve(), name, out_dir.resolve())
    defaults = _Defaults(path, base, seed, plan.output_dir, ade_bench_dir)
    seen: dict[tuple, int] = {}
    for i, entry in enumerate(entries):
        proj = _project(defaults, i, entry)
        key = (str(proj.opts.project_dir), proj.seed)
        if key in seen:
            raise InputError(f"the same project and seed as projects[{seen[key]}] (it would repeat its tasks)",
                             file=path, field=f"projects[{i}]")
        seen[key] = i
        plan.projects.append(proj)
    return plan


def _project(d: _Defaults, i: int, entry) -> PlanProject:
    path, base, where = d.path, d.base, f"projects[{i}]"
    if not isinstance(entry, dict):
        raise InputError("expected a mapping with path: and tasks:", file=path, field=where)
    _unknown(path, entry, PROJECT_KEYS, where + ".")
    for key in ("path", "tasks"):
        if key not in entry:
            raise InputError("missing", file=path, field=f"{where}.{key}")
    tasks = _int(path, entry["tasks"], f"{where}.tasks", 1)
    pseed = _int(path, entry.get("seed", d.seed), f"{where}.seed", 0)
    for key in ("path", "db_type", "db_name", "db_path", "profiles_dir", "target"):
        if key in entry and not isinstance(entry[key], str):
            raise InputError(f"expected a string, got {entry[key]!r}", file=path, field=f"{where}.{key}")
    pdirs = entry.get("patterns_dirs", [])
    if not isinstance(pdirs, list) or not all(isinstance(d, str) for d in pdirs):
        raise InputError(f"expected a list of directories, got {pdirs!r}", file=path, field=f"{where}.patterns_dirs")
    rel = {k: str(_rel(base, entry[k])) if entry.get(k) else None for k in ("db_path", "profiles_dir")}
    ns = argparse.Namespace(project_dir=str(_rel(base, entry["path"])), output_dir=str(d.output_dir),
                            db_type=entry.get("db_type"), db_name=entry.get("db_name"), db_path=rel["db_path"],
                            ade_bench_dir=d.ade_bench_dir, patterns_dir=[str(_rel(base, x)) for x in pdirs],
                            json=False, emulate_snowflake=False, no_report=False,
                            profiles_dir=rel["profiles_dir"], target=entry.get("target"))
    try:
        opts = project_options(ns)
    except InputError as exc:  # the same check as bulk's command line, named by the plan's field
        fld = _ARG_FIELDS.get(exc.field or "", exc.field or "path")
        shown = f"{exc.message} ({exc.file})" if exc.file else exc.message
        raise InputError(shown, file=path, field=f"{where}.{fld}" if fld != "output_dir" else "output_dir") from None
    return PlanProject(i, opts, tasks, pseed)


def _rel(base: Path, value: str) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() else base / p


def _int(path: Path, value, fld: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InputError(f"expected a whole number of at least {minimum}, got {value!r}", file=path, field=fld)
    return value


def _unknown(path: Path, data: dict, known: set, prefix: str) -> None:
    extra = sorted(str(k) for k in data if k not in known)
    if extra:
        raise InputError(f"unknown key (known: {', '.join(sorted(known))})", file=path, field=prefix + extra[0])
