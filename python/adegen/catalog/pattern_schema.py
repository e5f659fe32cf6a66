"""A pattern file's shape, checked against schemas/pattern.schema.json (the one description of it).

`first_problems(document)` runs jsonschema on a parsed pattern file and words what it finds the
way a person reading the file fixes it: one `Problem` for the file itself and at most one per
pattern, with the path of the field and the message the schema's `errorMessage` gives for it
(jsonschema's own words where it gives none). What a schema cannot state (names from adegen's
registries, tokens, placeholders) is checked afterwards, on the patterns it accepts
(`pattern_rules`).
"""
from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

import jsonschema

from adegen.core import paths

MISSING = "missing required field"


@functools.cache
def schema() -> dict:
    return json.loads((paths.schemas_dir() / "pattern.schema.json").read_text(encoding="utf-8"))


def pattern_schema() -> dict:
    """The schema of one pattern (the items of `patterns:`)."""
    return schema()["$defs"]["pattern"]


def _strict_integer(_checker, value) -> bool:
    # JSON Schema counts 3.0 as an integer; YAML reads `3.0` as a float, which a count never is
    return isinstance(value, int) and not isinstance(value, bool)


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    base = jsonschema.Draft202012Validator
    strict = jsonschema.validators.extend(base, type_checker=base.TYPE_CHECKER.redefine("integer", _strict_integer))
    return strict(schema())


@dataclass(frozen=True)
class Problem:
    index: int | None  # the pattern's position in `patterns:`; None: the file itself
    path: tuple  # the field, below the pattern (or the file): ("requires", "min_refs"), ("applies_when", 0)
    message: str

    def field_text(self) -> str:
        """`requires.min_refs`, `applies_when[0]`, `assertion_tests[1].args.model`."""
        out = ""
        for part in self.path:
            out += f"[{part}]" if isinstance(part, int) else f"{'.' if out else ''}{part}"
        return out


def first_problems(document) -> dict:
    """{None: the file's first problem, k: pattern k's first problem}, only where there is one.

    A pattern's problems come in the order its author would fix them: the id, then missing fields
    (absent, empty or blank), then unknown ones, then the others in the order of the schema's
    fields (the order patterns/_template.yaml documents them in)."""
    found = sorted((_problem(e) for e in _validator().iter_errors(document)), key=lambda x: x[0])
    out: dict = {}
    for _rank, problem in found:
        out.setdefault(problem.index, problem)
    return out


def _problem(err: jsonschema.ValidationError) -> tuple[tuple, Problem]:
    """The problem an error stands for, and its rank among the file's (see first_problems)."""
    index, where = _locate(err)
    shape = pattern_schema()
    blank = err.instance is None or (isinstance(err.instance, str) and not err.instance.strip())
    # `name:` with no value, or a blank one, is a missing field as much as an absent one
    missing = index is not None and len(where) == 1 and where[0] in shape["required"] and (
        err.validator == "required" or blank)
    head = where[0] if where else None
    kind = 0 if head == "id" else 1 if missing or err.validator == "required" else (
        2 if err.validator == "additionalProperties" else 3)
    fields = list(shape["properties"])
    order = fields.index(head) if head in fields else len(fields)
    rank = (-1 if index is None else index, kind, order, str(where))
    return rank, Problem(index, tuple(where), MISSING if missing else _message(err, where[-1] if where else ""))


def _locate(err: jsonschema.ValidationError) -> tuple[int | None, list]:
    """The pattern (None: the file) and the path of the field; for a missing or an unknown field
    the field itself (jsonschema names the mapping that holds it)."""
    where = list(err.absolute_path)
    index = None
    if len(where) >= 2 and where[0] == "patterns" and isinstance(where[1], int):
        index, where = where[1], where[2:]
    if err.validator == "required":
        where.append(next(f for f in err.validator_value if f not in err.instance))
    elif err.validator == "additionalProperties" and err.validator_value is False:
        where.append(sorted(set(err.instance) - set(err.schema.get("properties", {})), key=str)[0])
    return index, where


_SLOT = re.compile(r"\{(\w+)(!r)?\}")


def _message(err: jsonschema.ValidationError, name: object) -> str:
    """The subschema's `errorMessage` (one string, or one per keyword), its slots filled in."""
    text = err.schema.get("errorMessage") if isinstance(err.schema, dict) else None
    if isinstance(text, dict):
        text = text.get(err.validator)
    if not text:
        return err.message
    known = err.validator_value if err.validator == "enum" else list(err.schema.get("properties", {}))
    values = {"value": err.instance, "name": name, "known": ", ".join(map(str, known)),
              "minimum": err.schema.get("minimum"), "maximum": err.schema.get("maximum")}
    return _SLOT.sub(lambda m: (repr if m[2] else str)(values[m[1]]) if m[1] in values else m[0], text)
