"""Task folders as they are on disk: one `TaskFolder` per `<output_dir>/tasks/<id>/`.

Reading never fails the page: a file that cannot be read becomes a `problems` line of its task.
Seed files are previewed, never loaded whole (a solution seed can hold millions of rows)."""
from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

# libyaml's safe loader when present (ten times faster on hundreds of task.yaml files); both
# construct plain data only.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
PREVIEW_ROWS = 6  # rows shown per solution seed
MAX_TEXT = 200_000  # characters of one patch or test file shown (the rest is cut, with a note)


@dataclass
class SeedFile:
    table: str  # the graded table (`solution__<table>.csv`)
    file: str  # name inside seeds/
    columns: list[str]
    types: list[str]  # each column's type from seeds/_no-op.txt ("" when not given)
    rows: list[list[str]]  # the first PREVIEW_ROWS rows
    total_rows: int
    match: list[str] | None = None  # the row whose `match_column` equals `match_value`, when asked


@dataclass
class TaskFolder:
    path: Path
    task_id: str
    data: dict  # task.yaml ({} when unreadable)
    yaml_text: str
    setup_patch: str | None
    solution_patch: str | None
    tests: dict[str, str]  # tests/<name>.sql -> text
    seed_files: dict[str, Path]  # table -> seeds/solution__<table>.csv
    noop_text: str | None
    problems: list[str] = field(default_factory=list)

    def prompts(self) -> list[dict]:
        out = []
        for i, p in enumerate(self.data.get("prompts") or []):
            if isinstance(p, dict) and isinstance(p.get("prompt"), str):
                out.append({"key": str(p.get("key") or f"prompt {i + 1}"), "prompt": p["prompt"]})
        return out

    def graded_tables(self) -> list[str]:
        out = []
        for s in self.data.get("solution_seeds") or []:
            name = s.get("table_name") if isinstance(s, dict) else s
            if isinstance(name, str) and name:
                out.append(name)
        return out or sorted(self.seed_files)

    def column_types(self, table: str) -> dict[str, str]:
        """`+column_types` of `solution__<table>` in seeds/_no-op.txt (what the seed loads as)."""
        try:
            data = yaml.load(self.noop_text or "", Loader=SAFE_LOADER)
        except yaml.YAMLError:
            return {}
        seeds = data.get("seeds") if isinstance(data, dict) else None
        for project in (seeds or {}).values() if isinstance(seeds, dict) else ():
            conf = project.get(f"solution__{table}") if isinstance(project, dict) else None
            types = conf.get("+column_types") if isinstance(conf, dict) else None
            if isinstance(types, dict):
                return {str(k): str(v) for k, v in types.items()}
        return {}

    def variant(self) -> dict:
        v = self.data.get("variants")
        return v[0] if isinstance(v, list) and v and isinstance(v[0], dict) else {}


def _read_text(path: Path, problems: list[str]) -> str | None:
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        problems.append(f"{path.name}: cannot be read ({exc.strerror or exc})")
        return None
    if len(text) > MAX_TEXT:
        problems.append(f"{path.name}: only the first {MAX_TEXT:,} characters are shown")
        text = text[:MAX_TEXT]
    return text


def read_task_folder(path: Path) -> TaskFolder:
    problems: list[str] = []
    yaml_text = _read_text(path / "task.yaml", problems) or ""
    data: dict = {}
    if not (path / "task.yaml").is_file():
        problems.append("task.yaml is missing")
    else:
        try:
            loaded = yaml.load(yaml_text, Loader=SAFE_LOADER)  # plain data only, like the survey
            data = loaded if isinstance(loaded, dict) else {}
            if not isinstance(loaded, dict):
                problems.append("task.yaml: the top level is not a mapping")
        except yaml.YAMLError as exc:
            problems.append(f"task.yaml: not readable YAML ({str(exc).splitlines()[0]})")
    tests = {}
    tests_dir = path / "tests"
    if tests_dir.is_dir():
        for f in sorted(tests_dir.glob("*.sql")):
            text = _read_text(f, problems)
            if text is not None:
                tests[f.name] = text
    seeds = {}
    seeds_dir = path / "seeds"
    if seeds_dir.is_dir():
        for f in sorted(seeds_dir.glob("solution__*.csv")):
            seeds[f.stem[len("solution__"):]] = f
    return TaskFolder(
        path=path, task_id=str(data.get("task_id") or path.name), data=data, yaml_text=yaml_text,
        setup_patch=_read_text(path / "setup" / "changes.patch", problems),
        solution_patch=_read_text(path / "solutions" / "changes.patch", problems),
        tests=tests, seed_files=seeds, noop_text=_read_text(seeds_dir / "_no-op.txt", problems),
        problems=problems,
    )


def _id_sort_key(name: str) -> tuple:
    """acme2 < acme10: digit runs compare as numbers."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.findall(r"\d+|\D+", name))


def read_task_folders(output_dir: Path) -> list[TaskFolder]:
    """Every task folder under `<output_dir>/tasks/` (hidden and temporary `.adegen-tmp-*` dirs
    of a run in progress are skipped), in id order."""
    root = Path(output_dir) / "tasks"
    if not root.is_dir():
        return []
    dirs = [d for d in root.iterdir() if d.is_dir() and not d.name.startswith(".")]
    return [read_task_folder(d) for d in sorted(dirs, key=lambda d: _id_sort_key(d.name))]


def preview_seed(table: str, path: Path, types: dict[str, str], match_column: str | None = None,
                 match_value: str | None = None) -> SeedFile | str:
    """The header, the first rows, the row count, and the row whose `match_column` equals
    `match_value` (the impact's example row); a one-line problem instead when unreadable."""
    try:
        with path.open(newline="", encoding="utf-8", errors="replace") as fh:
            reader = csv.reader(fh)
            columns = next(reader, [])
            idx = columns.index(match_column) if match_column in columns else None
            rows: list[list[str]] = []
            match = None
            total = 0
            for row in reader:
                total += 1
                if len(rows) < PREVIEW_ROWS:
                    rows.append(row)
                if idx is not None and match is None and idx < len(row) and row[idx] == match_value:
                    match = row
    except (OSError, csv.Error) as exc:
        return f"{path.name}: cannot be read ({exc})"
    return SeedFile(table, path.name, columns, [types.get(c, "") for c in columns], rows, total, match)
