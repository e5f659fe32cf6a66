"""The bug-pattern catalog: patterns/*.yaml (+ --patterns-dir) -> validated `Pattern`s.

Pattern files are data, never code: `yaml.safe_load` only. Every problem is one
`errors.InputError` naming the file, the pattern id and the field.
"""
from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from adegen import backends, realism
from adegen.tasks import assertion_types
from adegen.sql import lexer
from adegen.core import paths
from adegen.catalog import symptoms
from adegen.core.errors import InputError
from adegen.rewrite.engine import MAX_LINES, MAX_LINES_LIMIT

FAMILIES = (
    "join", "aggregation", "filter", "comparison", "null-handling", "case-logic", "dedup-set-ops",
    "window", "arithmetic", "date-time", "string", "casting", "dag-ref", "config-materialization",
    "projection-column", "column-confusion", "incremental", "snowflake-specific",
)
SYMPTOMS = symptoms.IDS  # the one symptom vocabulary (adegen/catalog/symptoms.py)
DIFFICULTIES = ("easy", "medium", "hard")
DB_TYPES = backends.NAMES  # the databases adegen has a backend for
REQUIRED = ("id", "name", "family", "difficulty", "db_types", "applies_when", "mutation", "rewrite",
            "symptom", "symptom_template", "guidance", "realistic", "precondition")
OPTIONAL = ("requires", "assertion_tests", "tags", "max_lines", "rank_penalty")
REQUIRES_KEYS = ("materialized", "min_refs", "min_sources", "min_columns")
MATERIALIZATIONS = ("table", "view", "incremental", "ephemeral")
ASSERTION_TYPES = assertion_types.TYPES  # the one registry of assertion test types
# Placeholders a symptom_template or assertion arg may use (documented in patterns/_template.yaml).
PLACEHOLDERS = (
    "model", "table", "column", "project_name", "original_refs", "original_sources",
    "original_materialization", "original_ref", "wrong_ref", "original_source", "wrong_source",
    "wrong_materialization", "example",
)
ANY_TOKEN = "<any>"


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


def _placeholders(text: str) -> set:
    names = set()
    for _lit, name, _spec, _conv in string.Formatter().parse(text):
        if name is not None:
            names.add(name)
    return names


def _check_placeholders(value, file, pid, fld):
    if isinstance(value, str):
        try:
            names = _placeholders(value)
        except ValueError as exc:
            _fail(f"bad placeholder syntax ({exc}); use {{name}} and double braces for literal ones", file, pid, fld)
        for n in sorted(names):
            if n not in PLACEHOLDERS:
                _fail(f"unknown placeholder '{{{n}}}' (allowed: {', '.join('{%s}' % p for p in PLACEHOLDERS)})", file, pid, fld)
    elif isinstance(value, (list, tuple)):
        for k, v in enumerate(value):
            _check_placeholders(v, file, pid, f"{fld}[{k}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_placeholders(v, file, pid, f"{fld}.{k}")


def split_tokens(text: str) -> tuple:
    parts = text.split(ANY_TOKEN)
    out: list = []
    for k, part in enumerate(parts):
        if k:
            out.append(ANY_TOKEN)
        out.extend(lexer.split_sequence(part))
    return tuple(out)


def _validate_rewrite(rw, applies, file, pid):
    from adegen.rewrite.operators import LITERAL_KINDS, OPERATORS

    if not isinstance(rw, dict) or "operator" not in rw:
        _fail("must be a mapping with an `operator` key", file, pid, "rewrite")
    name = rw["operator"]
    if name not in OPERATORS:
        _fail(f"unknown rewrite operator '{name}' (known: {', '.join(sorted(OPERATORS))})", file, pid, "rewrite.operator")
    spec = OPERATORS[name]
    args = {k: v for k, v in rw.items() if k != "operator"}
    for req in sorted(spec["required"] - set(args)):
        _fail(f"operator '{name}' needs argument '{req}'", file, pid, f"rewrite.{req}")
    for k in sorted(set(args) - spec["required"] - spec["optional"]):
        _fail(f"operator '{name}' takes no argument '{k}' (takes: {', '.join(sorted(spec['required'] | spec['optional'])) or 'none'})", file, pid, f"rewrite.{k}")
    for k, v in args.items():
        if k in ("a", "b", "index", "offset"):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                _fail(f"operator '{name}' argument '{k}' must be a non-negative integer", file, pid, f"rewrite.{k}")
        elif not isinstance(v, str) or not v.strip():
            _fail(f"operator '{name}' argument '{k}' must be a non-empty string", file, pid, f"rewrite.{k}")
    if name in ("edit_literal", "edit_call_arg") and args.get("kind") not in LITERAL_KINDS:
        _fail(f"{name} kind must be one of {', '.join(LITERAL_KINDS)}", file, pid, "rewrite.kind")
    if name == "edit_literal" and "offset" in args and args["offset"] >= len(split_tokens(args["at"])):
        _fail("edit_literal offset is past the end of `at`", file, pid, "rewrite.offset")
    if name == "swap_args" and args.get("a") == args.get("b"):
        _fail("swap_args needs two different argument numbers", file, pid, "rewrite.b")
    if name == "swap_division" and args["to"] not in ("multiply", "integer"):
        _fail("to must be multiply or integer", file, pid, "rewrite.to")
    if name == "drop_predicate" or name == "negate_predicate":
        if args["clause"] not in ("where", "having", "qualify"):
            _fail("clause must be where, having or qualify", file, pid, "rewrite.clause")
    # the operator's anchor must be an applies_when sequence (find_sites <-> macro invariant)
    if spec.get("fixed_anchor"):
        anchor = split_tokens(spec["fixed_anchor"])
        if anchor not in applies:
            _fail(f"operator '{name}' always starts from {spec['fixed_anchor']!r}: list it in applies_when",
                  file, pid, "applies_when")
    anchor_arg = spec.get("anchor_arg")
    if anchor_arg:
        anchor = split_tokens(args[anchor_arg])
        if anchor_arg == "function":
            anchor = anchor + ("(",)
        if anchor not in applies:
            _fail(f"the operator anchor {' '.join(anchor)!r} (from `{anchor_arg}`) must also be an applies_when entry",
                  file, pid, "applies_when")


def _max_lines(raw: dict, file, pid) -> int:
    """The pattern's `max_lines` (default MAX_LINES): an edit spanning a block (a group of labels)
    may touch more lines than one small edit, within a bound that keeps a site one readable change."""
    value = raw.get("max_lines", MAX_LINES)
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_LINES_LIMIT:
        _fail(f"max_lines must be an integer from 1 to {MAX_LINES_LIMIT} (got {value!r})", file, pid, "max_lines")
    return value


RANK_PENALTY_LIMIT = 10


def _rank_penalty(raw: dict, file, pid) -> int:
    value = raw.get("rank_penalty", 0)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= RANK_PENALTY_LIMIT:
        _fail(f"rank_penalty must be an integer from 0 to {RANK_PENALTY_LIMIT} (got {value!r})", file, pid,
              "rank_penalty")
    return value


def _validate(raw: dict, file: Path, pos: int) -> Pattern:
    if not isinstance(raw, dict):
        _fail(f"pattern #{pos + 1} must be a mapping", file, None, f"patterns[{pos}]")
    pid = raw.get("id")
    if not isinstance(pid, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", pid or ""):
        _fail(f"pattern #{pos + 1}: `id` must be a snake_case string", file, pid if isinstance(pid, str) else f"#{pos + 1}", "id")
    for f in REQUIRED:
        if f not in raw or raw[f] is None or (isinstance(raw[f], str) and not raw[f].strip() and f != "applies_when"):
            _fail("missing required field", file, pid, f)
    for f in sorted(set(raw) - set(REQUIRED) - set(OPTIONAL)):
        _fail(f"unknown field (known: {', '.join(REQUIRED + OPTIONAL)})", file, pid, f)
    for f in ("name", "mutation", "guidance", "symptom_template", "realistic"):
        if not isinstance(raw[f], str):
            _fail("must be a string", file, pid, f)
    if "{" in raw["realistic"] or "}" in raw["realistic"]:
        _fail("must not contain braces: realistic is shown as written (no placeholders are filled in)",
              file, pid, "realistic")
    if raw["family"] not in FAMILIES:
        _fail(f"unknown family '{raw['family']}' (known: {', '.join(FAMILIES)})", file, pid, "family")
    if raw["symptom"] not in SYMPTOMS:
        _fail(f"unknown symptom '{raw['symptom']}' (known: {', '.join(SYMPTOMS)})", file, pid, "symptom")
    if raw["difficulty"] not in DIFFICULTIES:
        _fail(f"difficulty must be one of {', '.join(DIFFICULTIES)}", file, pid, "difficulty")
    db = raw["db_types"]
    if db == "all":
        db_types = "all"
    elif isinstance(db, list) and db and all(isinstance(x, str) for x in db) and all(x in DB_TYPES or x == "all" for x in db):
        db_types = "all" if "all" in db else tuple(db)
    else:
        _fail(f"db_types must be `all` or a non-empty list of {', '.join(DB_TYPES)}", file, pid, "db_types")
    aw = raw["applies_when"]
    if not isinstance(aw, list) or not all(isinstance(x, str) and x.strip() for x in aw):
        _fail("applies_when must be a list of token-sequence strings", file, pid, "applies_when")
    applies = tuple(split_tokens(x) for x in aw)
    for k, s in enumerate(applies):
        if not s or ANY_TOKEN in s:
            _fail("each applies_when entry must be a plain token sequence (no <any>)", file, pid, f"applies_when[{k}]")
    req = raw.get("requires") or {}
    if not isinstance(req, dict):
        _fail("requires must be a mapping", file, pid, "requires")
    for k, v in req.items():
        if k not in REQUIRES_KEYS:
            _fail(f"unknown requires key '{k}' (known: {', '.join(REQUIRES_KEYS)})", file, pid, f"requires.{k}")
        if k == "materialized":
            vals = [v] if isinstance(v, str) else v
            if not isinstance(vals, list) or not vals or any(x not in MATERIALIZATIONS for x in vals):
                _fail(f"materialized must list some of {', '.join(MATERIALIZATIONS)}", file, pid, "requires.materialized")
        elif not isinstance(v, int) or isinstance(v, bool) or v < 0:
            _fail("must be a non-negative integer", file, pid, f"requires.{k}")
    _validate_rewrite(raw["rewrite"], applies, file, pid)
    pre = raw["precondition"]
    if not isinstance(pre, list) or not pre:
        _fail("precondition must be a non-empty list of checks ({check: name, ...})", file, pid, "precondition")
    for k, entry in enumerate(pre):
        why = realism.validate_entry(entry)
        if why:
            _fail(why, file, pid, f"precondition[{k}]")
    _check_placeholders(raw["symptom_template"], file, pid, "symptom_template")
    tests = raw.get("assertion_tests") or []
    if not isinstance(tests, list):
        _fail("assertion_tests must be a list", file, pid, "assertion_tests")
    for k, t in enumerate(tests):
        fld = f"assertion_tests[{k}]"
        if not isinstance(t, dict) or "type" not in t:
            _fail("each assertion test needs `type` and `args`", file, pid, fld)
        if t["type"] not in ASSERTION_TYPES:
            _fail(f"unknown assertion type '{t['type']}' (known: {', '.join(ASSERTION_TYPES)})", file, pid, f"{fld}.type")
        args = t.get("args") or {}
        if not isinstance(args, dict):
            _fail("args must be a mapping", file, pid, f"{fld}.args")
        need = set(ASSERTION_TYPES[t["type"]].args)  # every arg of a type is required
        for a in sorted(need - set(args)):
            _fail(f"assertion '{t['type']}' needs argument '{a}'", file, pid, f"{fld}.args.{a}")
        for a in sorted(set(args) - need):
            _fail(f"assertion '{t['type']}' takes no argument '{a}'", file, pid, f"{fld}.args.{a}")
        _check_placeholders(args, file, pid, f"{fld}.args")
    rw = dict(raw["rewrite"])
    return Pattern(
        id=pid, name=raw["name"].strip(), family=raw["family"], difficulty=raw["difficulty"], db_types=db_types,
        applies_when=applies, mutation=raw["mutation"].strip(), rewrite=rw, symptom=raw["symptom"],
        symptom_template=raw["symptom_template"].strip(), guidance=raw["guidance"].strip(),
        realistic=" ".join(raw["realistic"].split()), requires=dict(req),
        precondition=tuple(dict(e) for e in raw["precondition"]),
        assertion_tests=tuple({"type": t["type"], "args": dict(t.get("args") or {})} for t in tests),
        source_file=file, max_lines=_max_lines(raw, file, pid), rank_penalty=_rank_penalty(raw, file, pid),
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
    if not isinstance(data, dict) or "patterns" not in data:
        raise InputError("expected a mapping with a top-level `patterns:` list", file=file, field="patterns")
    extra = set(data) - {"patterns"}
    if extra:
        raise InputError(f"unknown top-level keys {sorted(extra)}", file=file, field="patterns")
    items = data["patterns"]
    if not isinstance(items, list) or not items:
        raise InputError("`patterns` must be a non-empty list", file=file, field="patterns")
    return [_validate(p, file, k) for k, p in enumerate(items)]


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
