"""The bug-pattern catalog: patterns/*.yaml (+ --patterns-dir) -> validated `Pattern`s.

Pattern files are data, never code: `yaml.safe_load` only. A file is checked against
schemas/pattern.schema.json (`pattern_schema`), then each pattern through the checks a schema
cannot state (`pattern_rules`). Every problem is one `errors.InputError` naming the file, the
pattern id and the field; the first one found stops the load.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from adegen import backends
from adegen.catalog import pattern_rules as rules
from adegen.catalog import pattern_schema, symptoms
from adegen.catalog.pattern_rules import ANY_TOKEN, PLACEHOLDERS, split_tokens  # noqa: F401 (the catalog's API)
from adegen.core import paths
from adegen.core.errors import InputError
from adegen.rewrite.engine import MAX_LINES
from adegen.tasks import assertion_types

# The vocabularies a pattern file uses: the schema's (schemas/pattern.schema.json) and the registries'.
_SHAPE = pattern_schema.pattern_schema()
FAMILIES = tuple(_SHAPE["properties"]["family"]["enum"])
DIFFICULTIES = tuple(_SHAPE["properties"]["difficulty"]["enum"])
REQUIRED = tuple(_SHAPE["required"])
OPTIONAL = tuple(f for f in _SHAPE["properties"] if f not in REQUIRED)
REQUIRES_KEYS = tuple(_SHAPE["properties"]["requires"]["properties"])  # what the dbt macro understands
MATERIALIZATIONS = tuple(pattern_schema.schema()["$defs"]["materialization"]["enum"])
SYMPTOMS = symptoms.IDS  # the one symptom vocabulary (adegen/catalog/symptoms.py)
DB_TYPES = backends.NAMES  # the databases adegen has a backend for
ASSERTION_TYPES = assertion_types.TYPES  # the one registry of assertion test types


@dataclass(frozen=True)
class Pattern:
    id: str
    name: str
    family: str
    difficulty: str
    db_types: object  # "all" or tuple of db types
    applies_when: tuple  # tuple[tuple[str, ...], ...]
    mutation: str
    rewrite: dict
    symptom: str
    symptom_template: str
    guidance: str
    realistic: str  # how a real analytics engineer ends up shipping this bug (the proposal's "why realistic")
    requires: dict = field(default_factory=dict)
    # the data conditions that make the edit a real mistake (adegen.realism checks), measured on the
    # intact build before screening: ({"check": name, param: value, ...}, ...)
    precondition: tuple = ()
    assertion_tests: tuple = ()  # ({"type": ..., "args": {...}}, ...)
    source_file: Path = Path()
    max_lines: int = MAX_LINES  # the most lines one site may touch (find_sites)
    # units the pattern's candidates lose in the build's ranking (proposals.score): a form blind
    # reviewers rate least realistic is tried after the others, still taken when nothing else is left
    rank_penalty: int = 0

    def to_macro_dict(self) -> dict:
        return {
            "id": self.id,
            "family": self.family,
            "difficulty": self.difficulty,
            "db_types": self.db_types if self.db_types == "all" else list(self.db_types),
            "applies_when": [list(s) for s in self.applies_when],
            "requires": dict(self.requires),
        }

    def applies_to_db(self, db_type: str) -> bool:
        return self.db_types == "all" or db_type in self.db_types


@dataclass
class Catalog:
    patterns: list
    by_id: dict
    files: list

    def for_db(self, db_type: str) -> list:
        return [p for p in self.patterns if p.applies_to_db(db_type)]


def _fail(msg, file, pid=None, fld=None):
    where = f"pattern '{pid}'" if pid else None
    field_txt = ".".join(x for x in (where, fld) if x) or None
    raise InputError(msg, file=file, field=field_txt)


def _check_shape(data, file: Path) -> dict:
    """The file against schemas/pattern.schema.json: raises on the file's own problem (field
    `patterns`), returns {pattern index: its first problem} for the patterns'."""
    problems = pattern_schema.first_problems(data)
    top = problems.pop(None, None)
    if top is not None:
        raise InputError(top.message, file=file, field=top.field_text() or "patterns")
    return problems


def _raise_problem(problem: pattern_schema.Problem, raw, file: Path) -> None:
    if not problem.path:  # not a mapping
        _fail(problem.message, file, None, f"patterns[{problem.index}]")
    pid = raw.get("id")
    _fail(problem.message, file, pid if isinstance(pid, str) else f"#{problem.index + 1}", problem.field_text())


def _pattern(raw: dict, file: Path) -> Pattern:
    """A pattern the schema accepted, through the checks it cannot state (pattern_rules)."""
    at = rules.Where(file, raw["id"])
    rules.check_symptom(raw["symptom"], at)
    db_types = rules.db_types(raw["db_types"], at)
    applies = rules.applies_when(raw["applies_when"], at)
    rules.check_rewrite(raw["rewrite"], applies, at)
    rules.check_precondition(raw["precondition"], at)
    rules.check_placeholders(raw["symptom_template"], at, "symptom_template")
    tests = raw.get("assertion_tests") or []
    rules.check_assertion_tests(tests, at)
    return Pattern(
        id=raw["id"], name=raw["name"].strip(), family=raw["family"], difficulty=raw["difficulty"],
        db_types=db_types, applies_when=applies, mutation=raw["mutation"].strip(), rewrite=dict(raw["rewrite"]),
        symptom=raw["symptom"], symptom_template=raw["symptom_template"].strip(), guidance=raw["guidance"].strip(),
        realistic=" ".join(raw["realistic"].split()), requires=dict(raw.get("requires") or {}),
        precondition=tuple(dict(e) for e in raw["precondition"]),
        assertion_tests=tuple({"type": t["type"], "args": dict(t.get("args") or {})} for t in tests),
        source_file=file, max_lines=raw.get("max_lines", MAX_LINES), rank_penalty=raw.get("rank_penalty", 0),
    )


_CACHE: dict = {}


def load_file(file: Path) -> list:
    """The validated patterns of one file (memoised on path, size and mtime)."""
    file = Path(file)
    try:
        st = file.stat()
        key = (str(file.resolve()), st.st_size, st.st_mtime_ns)
    except OSError:
        key = None
    if key in _CACHE:
        return list(_CACHE[key])
    result = _load_file(file)
    if key is not None:
        _CACHE[key] = tuple(result)
    return result


def _load_file(file: Path) -> list:
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read pattern file: {exc}", file=file) from None
    if not text.strip():
        raise InputError("pattern file is empty (expected a top-level `patterns:` list)", file=file, field="patterns")
    try:
        data = yaml.safe_load(text)
    except yaml.constructor.ConstructorError as exc:
        raise InputError(f"unsupported YAML tag (pattern files are plain data; tags such as !!python/object are refused): {exc.problem}",
                         file=file, field="patterns") from None
    except yaml.YAMLError as exc:
        raise InputError(f"invalid YAML: {exc}", file=file) from None
    problems = _check_shape(data, file)
    out = []
    for k, raw in enumerate(data["patterns"]):  # in file order: the first pattern's problem first
        if k in problems:
            _raise_problem(problems[k], raw, file)
        out.append(_pattern(raw, file))
    return out


def _dir_files(d: Path, *, shipped: bool) -> list:
    d = Path(d)
    if not d.is_dir():
        raise InputError("patterns directory does not exist", file=d, field="--patterns-dir")
    files = sorted(p for p in d.glob("*.yaml") if p.name != "_template.yaml")
    if not files:
        raise InputError("no pattern files (*.yaml) in this directory", file=d, field="--patterns-dir")
    if shipped:  # base first, then the others alphabetically
        files.sort(key=lambda p: (p.name != "base.yaml", p.name))
    return files


def load_catalog(extra_dirs=()) -> Catalog:
    files = _dir_files(paths.patterns_dir(), shipped=True)
    for d in extra_dirs:
        for f in _dir_files(Path(d), shipped=False):
            if f.resolve() not in {x.resolve() for x in files}:
                files.append(f)
    patterns, by_id = [], {}
    for f in files:
        for p in load_file(f):
            if p.id in by_id:
                raise InputError(f"duplicate pattern id (first defined in {by_id[p.id].source_file})",
                                 file=f, field=f"pattern '{p.id}'.id")
            by_id[p.id] = p
            patterns.append(p)
    return Catalog(patterns=patterns, by_id=by_id, files=files)
