"""The tasks of an output directory, as calibration needs them: the task folder, its prompts, the
project it names and the DuckDB file it starts from (found the way the proof and ade-bench find
them). Bad input is one InputError naming the file and the field."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from adegen.adebench.install import databases_dirs
from adegen.core.errors import InputError

PROMPT_KEYS = ("base", "medium", "hard")


@dataclass(frozen=True)
class TaskRef:
    task_id: str
    task_dir: Path
    project_dir: Path  # the intact project the task's setup patch applies to
    db_file: Path  # <db_name>.duckdb
    prompts: dict[str, str]  # key -> prompt text
    graded_tables: tuple[str, ...]  # solution_seeds' tables: the tables the tests compare
    difficulty: str  # the build's guess (task.yaml)

    def prompt(self, key: str) -> str:
        if key not in self.prompts:
            raise InputError(f"no prompt with key {key!r} (has: {', '.join(self.prompts) or 'none'})",
                             file=self.task_dir / "task.yaml", field="prompts")
        return self.prompts[key]


def _variant(raw: dict, path: Path) -> dict:
    for v in raw.get("variants") or []:
        if isinstance(v, dict) and v.get("db_type") == "duckdb" and v.get("project_type", "dbt") == "dbt":
            return v
    raise InputError("no variant with db_type duckdb and project_type dbt (calibration runs DuckDB tasks)",
                     file=path, field="variants")


def _project(v: dict, task_dir: Path, output_dir: Path, path: Path) -> Path:
    name = str(v.get("project_name") or "")
    if not name:
        raise InputError("missing", file=path, field="variants[].project_name")
    bases = [Path(v["project_dir"]) if v.get("project_dir") else None, output_dir / "projects"]
    for base in bases:
        if base is None:
            continue
        cand = (base if base.is_absolute() else task_dir / base) / name
        if (cand / "dbt_project.yml").is_file():
            return cand.resolve()
    raise InputError(f"project {name!r} not found (looked in "
                     + ", ".join(str(b) for b in bases if b is not None) + ")", file=path,
                     field="variants[].project_dir")


def _database(v: dict, task_dir: Path, output_dir: Path, path: Path) -> Path:
    name = f"{v.get('db_name')}.duckdb"
    dirs = [Path(v["db_dir"]) if v.get("db_dir") else None, output_dir / "databases",
            *(d / "duckdb" for d in databases_dirs(None))]
    for d in dirs:
        if d is None:
            continue
        cand = (d if d.is_absolute() else task_dir / d) / name
        if cand.is_file():
            return cand.resolve()
    raise InputError(f"database {name} not found (db_dir, {output_dir / 'databases'}, ADE_DATABASES_DIR, "
                     "ade-bench's shared/databases)", file=path, field="variants[].db_name")


def load_task(task_dir: Path, output_dir: Path) -> TaskRef:
    path = task_dir / "task.yaml"
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"cannot read it ({exc})", file=path) from None
    if not isinstance(raw, dict):
        raise InputError("not a mapping", file=path)
    v = _variant(raw, path)
    prompts = {str(p.get("key")): str(p.get("prompt")) for p in raw.get("prompts") or []
               if isinstance(p, dict) and p.get("prompt")}
    graded = tuple(str(s.get("table_name")) for s in raw.get("solution_seeds") or []
                   if isinstance(s, dict) and s.get("table_name"))
    return TaskRef(str(raw.get("task_id") or task_dir.name), task_dir.resolve(),
                   _project(v, task_dir, output_dir, path), _database(v, task_dir, output_dir, path),
                   prompts, graded, str(raw.get("difficulty") or "unknown"))


def load_tasks(output_dir: Path, only: list[str] | None = None) -> list[TaskRef]:
    """The tasks under `<output_dir>/tasks/` (sorted by id), or only the ids in `only`."""
    tasks_dir = output_dir / "tasks"
    if not tasks_dir.is_dir():
        raise InputError("no tasks/ directory here", file=output_dir, field="OUTPUT_DIR")
    ids = sorted(p.name for p in tasks_dir.iterdir() if (p / "task.yaml").is_file())
    if only:
        missing = [t for t in only if t not in ids]
        if missing:
            raise InputError(f"no task {missing[0]!r} in {tasks_dir}", field="--tasks")
        ids = [t for t in ids if t in only]
    return [load_task(tasks_dir / t, output_dir) for t in ids]
