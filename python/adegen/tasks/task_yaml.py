"""The one writer of task.yaml: a typed document (`TaskYaml`) rendered to text, parsed back, and
every later change (status, exclude_columns, exclude_tests, max_test_timeout_sec, prompts, seeds)
made by re-rendering the updated document (`update_task_yaml`), written atomically.

The rendering is ade-bench's own layout (harness notes section 1): prompts as `|-` blocks, one
`- key:` item per prompt level (each key is its own trial), dict items in `solution_seeds`
(ade-bench's `--seed` skips bare strings), variants as a list. Keys ade-bench knows but adegen does
not set (notes, alternates, ...) are kept as they were read. A render is checked by parsing it
back; a value the block layout cannot carry exactly is written quoted instead."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import yaml

from adegen.tasks import stand_in_tests
from adegen.core.atomic import write_text_atomic
from adegen.core.errors import InputError

AUTHOR_NAME = "ade-bench-plugin"
# YAML 1.1 words safe_load would not read back as the same string
_YAML_WORDS = {"y", "yes", "n", "no", "true", "false", "on", "off", "null", "none", "~"}
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_TOP_KEYS = ("task_id", "status", "description", "prompts", "author_name", "author_email", "difficulty",
             "tags", "test_setup", "solution_seeds", "max_test_timeout_sec", "variants")
_VARIANT_KEYS = ("db_type", "db_name", "project_type", "project_name", "project_dir")


@dataclass
class PromptEntry:
    key: str  # base | medium | hard (ade-bench runs each key as its own trial)
    prompt: str


@dataclass
class SeedEntry:
    """One `solution_seeds` item: the harness grades `table_name` with AUTO equality/existence
    tests against `seeds/solution__<table_name>.csv`, unless `exclude_tests` names them."""

    table_name: str
    exclude_columns: list[str] = field(default_factory=list)
    exclude_tests: list[str] = field(default_factory=list)  # equality_test, existence_test
    extra: dict = field(default_factory=dict)  # keys adegen does not set (alternates, ...), kept as read


@dataclass
class Variant:
    db_type: str
    db_name: str
    project_name: str
    project_dir: str | None  # the directory holding <project_name>/ (None: ade-bench's shared projects)
    project_type: str = "dbt"
    extra: dict = field(default_factory=dict)  # database-specific keys (DuckDB: db_dir), in order


@dataclass
class TaskYaml:
    task_id: str
    status: str
    description: str
    prompts: list[PromptEntry]
    difficulty: str
    tags: list[str]
    variants: list[Variant]
    test_setup: str | None = None
    solution_seeds: list[SeedEntry] = field(default_factory=list)
    max_test_timeout_sec: int | None = None
    author_name: str = AUTHOR_NAME
    author_email: str = ""
    extra: dict = field(default_factory=dict)  # other top-level keys, kept as read

    # -- text --------------------------------------------------------------------------------

    def render(self) -> str:
        text = _render(self, blocks=True)
        if _parsed_equal(text, self):
            return text
        return _render(self, blocks=False)  # a value the block layout cannot carry exactly

    def to_data(self) -> dict:
        """The document as ade-bench reads it (what yaml.safe_load of the render gives)."""
        data: dict[str, Any] = {
            "task_id": self.task_id, "status": self.status, "description": self.description,
            "prompts": [{"key": p.key, "prompt": p.prompt} for p in self.prompts],
            "author_name": self.author_name, "author_email": self.author_email,
            "difficulty": self.difficulty, "tags": list(self.tags),
        }
        if self.test_setup is not None:
            data["test_setup"] = self.test_setup
        data["solution_seeds"] = [_seed_data(s) for s in self.solution_seeds]
        if self.max_test_timeout_sec is not None:
            data["max_test_timeout_sec"] = int(self.max_test_timeout_sec)
        data["variants"] = [_variant_data(v) for v in self.variants]
        data.update(self.extra)
        return data

    @classmethod
    def parse(cls, text: str, path: Path | None = None) -> "TaskYaml":
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise InputError(f"not valid YAML ({str(exc).splitlines()[0]})", file=path) from None
        if not isinstance(data, dict):
            raise InputError("task.yaml must be a mapping", file=path)
        try:
            return cls._from_data(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"unexpected task.yaml layout ({exc})", file=path) from None

    @classmethod
    def _from_data(cls, data: dict) -> "TaskYaml":
        prompts = [PromptEntry(str(p["key"]), str(p["prompt"])) for p in data.get("prompts") or []]
        seeds = [_seed_from(item) for item in data.get("solution_seeds") or []]
        variants = [_variant_from(v) for v in data.get("variants") or []]
        timeout = data.get("max_test_timeout_sec")
        return cls(
            task_id=str(data["task_id"]), status=str(data.get("status", "dev")),
            description=str(data.get("description", "")), prompts=prompts,
            difficulty=str(data.get("difficulty", "")), tags=[str(t) for t in data.get("tags") or []],
            variants=variants, test_setup=data.get("test_setup"), solution_seeds=seeds,
            max_test_timeout_sec=None if timeout is None else int(timeout),
            author_name=str(data.get("author_name", AUTHOR_NAME)), author_email=str(data.get("author_email", "")),
            extra={k: v for k, v in data.items() if k not in _TOP_KEYS},
        )

    # -- changes -----------------------------------------------------------------------------

    def changed(self, **changes) -> "TaskYaml":
        """A copy with `changes` applied. `exclude_columns` / `exclude_tests` are {table: [...]}
        and replace that seed entry's list; `prompts` may be [(key, text)]; any other name is a
        field of TaskYaml (status, max_test_timeout_sec, solution_seeds, description, tags...)."""
        doc = replace(self, solution_seeds=[replace(s) for s in self.solution_seeds])
        for name, value in changes.items():
            if name in ("exclude_columns", "exclude_tests"):
                for table, items in (value or {}).items():
                    seed = next((s for s in doc.solution_seeds if s.table_name == table), None)
                    if seed is not None:
                        setattr(seed, name, list(items))
            elif name == "prompts":
                doc.prompts = [p if isinstance(p, PromptEntry) else PromptEntry(*p) for p in value]
            elif name in {f.name for f in fields(TaskYaml)}:
                setattr(doc, name, value)
            else:
                raise TypeError(f"task.yaml has no field {name!r}")
        if doc.max_test_timeout_sec is not None:
            doc.max_test_timeout_sec = int(doc.max_test_timeout_sec)
        return doc


# ---------------------------------------------------------------------------------------------
# reading and writing files


def read_task_yaml(path: Path) -> TaskYaml:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read task.yaml: {exc}", file=path) from None
    return TaskYaml.parse(text, path)


def write_task_yaml(path: Path, doc: TaskYaml) -> None:
    """Write `doc` to `path` and the files derived from it (the short-named stand-in tests of
    graded tables with long names, `stand_in_tests`) next to it, each atomically."""
    path = Path(path)
    write_text_atomic(path, doc.render())
    for rel, text in stand_in_tests.render_all(doc.solution_seeds).items():
        (path.parent / rel).parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path.parent / rel, text)


def update_task_yaml(path: Path, **changes) -> TaskYaml:
    """Re-render the task.yaml at `path` with `changes` (see TaskYaml.changed); the new document."""
    doc = read_task_yaml(path).changed(**changes)
    write_task_yaml(path, doc)
    return doc


# ---------------------------------------------------------------------------------------------
# rendering


def _q(s: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(s, ensure_ascii=False)


def _scalar(s: str) -> str:
    """A plain scalar when it reads back as the same string, else double-quoted."""
    s = str(s)
    return s if _PLAIN.fullmatch(s) and s.lower() not in _YAML_WORDS else _q(s)


def _block(text: str, indent: str) -> str:
    return "\n".join((indent + line) if line.strip() else "" for line in text.splitlines())


def _render(doc: TaskYaml, *, blocks: bool) -> str:
    lines = [f"task_id: {_scalar(doc.task_id)}", f"status: {_scalar(doc.status)}",
             f"description: {_q(doc.description)}", "prompts:"]
    for p in doc.prompts:
        lines.append(f"  - key: {_scalar(p.key)}")
        if blocks:
            lines += ["    prompt: |-", _block(p.prompt.strip("\n"), "      ")]
        else:
            lines.append(f"    prompt: {_q(p.prompt)}")
    lines += [f"author_name: {_scalar(doc.author_name)}", f"author_email: {_q(doc.author_email)}",
              f"difficulty: {_scalar(doc.difficulty)}", "tags:"]
    lines += [f"  - {_scalar(t)}" for t in doc.tags]
    if doc.test_setup is not None:
        lines.append("")
        if blocks:
            lines += ["test_setup: |-", _block(doc.test_setup, "  ")]
        else:
            lines.append(f"test_setup: {_q(doc.test_setup)}")
    lines.append("")
    lines.append("solution_seeds:" if doc.solution_seeds else "solution_seeds: []")
    for s in doc.solution_seeds:
        lines.append(f"  - table_name: {_scalar(s.table_name)}")
        for key in ("exclude_columns", "exclude_tests"):
            items = getattr(s, key)
            if items:
                lines.append(f"    {key}:")
                lines += [f"      - {_scalar(c)}" for c in items]
        lines += _dump_extra(s.extra, "    ")
    if doc.max_test_timeout_sec is not None:
        lines += ["", f"max_test_timeout_sec: {int(doc.max_test_timeout_sec)}"]
    lines += ["", "variants:"]
    for v in doc.variants:
        lines += [f"- db_type: {_scalar(v.db_type)}", f"  db_name: {_scalar(v.db_name)}",
                  f"  project_type: {_scalar(v.project_type)}", f"  project_name: {_scalar(v.project_name)}"]
        if v.project_dir is not None:
            lines.append(f"  project_dir: {_q(v.project_dir)}")
        lines += [f"  {k}: {json.dumps(val, ensure_ascii=False)}" for k, val in v.extra.items()]
    if doc.extra:
        lines.append("")
        lines += _dump_extra(doc.extra, "")
    return "\n".join(lines) + "\n"


def _dump_extra(extra: dict, indent: str) -> list[str]:
    if not extra:
        return []
    text = yaml.safe_dump(extra, sort_keys=False, default_flow_style=False, allow_unicode=True)
    return [indent + line for line in text.rstrip("\n").splitlines()]


def _parsed_equal(text: str, doc: TaskYaml) -> bool:
    try:
        return yaml.safe_load(text) == doc.to_data()
    except yaml.YAMLError:
        return False


def _seed_data(s: SeedEntry) -> dict:
    out: dict[str, Any] = {"table_name": s.table_name}
    if s.exclude_columns:
        out["exclude_columns"] = list(s.exclude_columns)
    if s.exclude_tests:
        out["exclude_tests"] = list(s.exclude_tests)
    out.update(s.extra)
    return out


def _seed_from(item: Any) -> SeedEntry:
    if isinstance(item, str):
        return SeedEntry(item)
    return SeedEntry(table_name=str(item["table_name"]),
                     exclude_columns=[str(c) for c in item.get("exclude_columns") or []],
                     exclude_tests=[str(c) for c in item.get("exclude_tests") or []],
                     extra={k: v for k, v in item.items()
                            if k not in ("table_name", "exclude_columns", "exclude_tests")})


def _variant_data(v: Variant) -> dict:
    out = {"db_type": v.db_type, "db_name": v.db_name, "project_type": v.project_type,
           "project_name": v.project_name}
    if v.project_dir is not None:
        out["project_dir"] = v.project_dir
    out.update(v.extra)
    return out


def _variant_from(v: dict) -> Variant:
    return Variant(db_type=str(v["db_type"]), db_name=str(v["db_name"]), project_name=str(v["project_name"]),
                   project_dir=None if v.get("project_dir") is None else str(v["project_dir"]), project_type=str(v.get("project_type", "dbt")),
                   extra={k: val for k, val in v.items() if k not in _VARIANT_KEYS})
