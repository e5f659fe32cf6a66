"""The checks of a pattern that its schema (schemas/pattern.schema.json) cannot state.

Names that adegen's registries define (symptoms, database types, rewrite operators and their
arguments, precondition checks, assertion types), the tokens of `applies_when`, the operator's
anchor and the placeholders of the templates. Each runs on a pattern the schema accepted, so the
shapes are known here (a string is a string, `rewrite` a mapping with an `operator`); each problem
is one `InputError` naming the file, the pattern and the field.
"""
from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from adegen import backends, realism
from adegen.catalog import symptoms
from adegen.core.errors import InputError
from adegen.sql import lexer
from adegen.tasks import assertion_types

# Placeholders a symptom_template or assertion arg may use (documented in patterns/_template.yaml).
PLACEHOLDERS = (
    "model", "table", "column", "project_name", "original_refs", "original_sources",
    "original_materialization", "original_ref", "wrong_ref", "original_source", "wrong_source",
    "wrong_materialization", "example",
)
ANY_TOKEN = "<any>"


@dataclass(frozen=True)
class Where:
    """The pattern being checked: its file and id, for the error."""

    file: Path
    pid: str

    def fail(self, message: str, fld: str) -> NoReturn:
        raise InputError(message, file=self.file, field=f"pattern '{self.pid}'.{fld}")


def split_tokens(text: str) -> tuple:
    parts = text.split(ANY_TOKEN)
    out: list = []
    for k, part in enumerate(parts):
        if k:
            out.append(ANY_TOKEN)
        out.extend(lexer.split_sequence(part))
    return tuple(out)


def check_symptom(symptom: str, at: Where) -> None:
    if symptom not in symptoms.IDS:
        at.fail(f"unknown symptom '{symptom}' (known: {', '.join(symptoms.IDS)})", "symptom")


def db_types(value, at: Where):
    """"all", or the tuple of database types (a list naming `all` is "all")."""
    if value == "all":
        return "all"
    for k, name in enumerate(value):
        if name not in backends.NAMES and name != "all":
            at.fail(f"unknown database type '{name}': db_types must be `all` or a non-empty list of "
                    f"{', '.join(backends.NAMES)}", f"db_types[{k}]")
    return "all" if "all" in value else tuple(value)


def applies_when(entries: list, at: Where) -> tuple:
    """The entries as token sequences (adegen/sql/lexer.py)."""
    applies = tuple(split_tokens(x) for x in entries)
    for k, seq in enumerate(applies):
        if not seq or ANY_TOKEN in seq:
            at.fail("each applies_when entry must be a plain token sequence (no <any>)", f"applies_when[{k}]")
    return applies


def check_rewrite(rw: dict, applies: tuple, at: Where) -> None:
    """The operator exists and gets exactly its arguments, with values it can use, and its anchor is
    an applies_when entry (what makes find_sites agree with the dbt macro's match)."""
    from adegen.rewrite.operators import LITERAL_KINDS, OPERATORS

    name = rw["operator"]
    if name not in OPERATORS:
        at.fail(f"unknown rewrite operator '{name}' (known: {', '.join(sorted(OPERATORS))})", "rewrite.operator")
    spec = OPERATORS[name]
    args = {k: v for k, v in rw.items() if k != "operator"}
    for req in sorted(spec["required"] - set(args)):
        at.fail(f"operator '{name}' needs argument '{req}'", f"rewrite.{req}")
    for k in sorted(set(args) - spec["required"] - spec["optional"]):
        takes = ", ".join(sorted(spec["required"] | spec["optional"])) or "none"
        at.fail(f"operator '{name}' takes no argument '{k}' (takes: {takes})", f"rewrite.{k}")
    _check_operator_values(name, args, at, LITERAL_KINDS)
    if spec.get("fixed_anchor") and split_tokens(spec["fixed_anchor"]) not in applies:
        at.fail(f"operator '{name}' always starts from {spec['fixed_anchor']!r}: list it in applies_when",
                "applies_when")
    anchor_arg = spec.get("anchor_arg")
    if anchor_arg:
        anchor = split_tokens(args[anchor_arg]) + (("(",) if anchor_arg == "function" else ())
        if anchor not in applies:
            at.fail(f"the operator anchor {' '.join(anchor)!r} (from `{anchor_arg}`) must also be an "
                    "applies_when entry", "applies_when")


def _check_operator_values(name: str, args: dict, at: Where, literal_kinds) -> None:
    """The values only some operators restrict (the schema states the types of every argument)."""
    if name in ("edit_literal", "edit_call_arg") and args.get("kind") not in literal_kinds:
        at.fail(f"{name} kind must be one of {', '.join(literal_kinds)}", "rewrite.kind")
    if name == "edit_literal" and "offset" in args and args["offset"] >= len(split_tokens(args["at"])):
        at.fail("edit_literal offset is past the end of `at`", "rewrite.offset")
    if name == "swap_args" and args.get("a") == args.get("b"):
        at.fail("swap_args needs two different argument numbers", "rewrite.b")
    if name == "swap_division" and args["to"] not in ("multiply", "integer"):
        at.fail("to must be multiply or integer", "rewrite.to")
    if name in ("drop_predicate", "negate_predicate") and args["clause"] not in ("where", "having", "qualify"):
        at.fail("clause must be where, having or qualify", "rewrite.clause")


def check_precondition(entries: list, at: Where) -> None:
    for k, entry in enumerate(entries):
        why = realism.validate_entry(entry)
        if why:
            at.fail(why, f"precondition[{k}]")


def check_placeholders(value, at: Where, fld: str) -> None:
    """Every {name} in a template string (or a list / mapping of them) is a known placeholder."""
    if isinstance(value, str):
        try:
            names = {name for _lit, name, _spec, _conv in string.Formatter().parse(value) if name is not None}
        except ValueError as exc:
            at.fail(f"bad placeholder syntax ({exc}); use {{name}} and double braces for literal ones", fld)
        for n in sorted(names):
            if n not in PLACEHOLDERS:
                at.fail(f"unknown placeholder '{{{n}}}' (allowed: {', '.join('{%s}' % p for p in PLACEHOLDERS)})", fld)
    elif isinstance(value, (list, tuple)):
        for k, v in enumerate(value):
            check_placeholders(v, at, f"{fld}[{k}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            check_placeholders(v, at, f"{fld}.{k}")


def check_assertion_tests(tests: list, at: Where) -> None:
    """Each test's type is in the registry and gets exactly its arguments (all required)."""
    types = assertion_types.TYPES
    for k, test in enumerate(tests):
        fld = f"assertion_tests[{k}]"
        if test["type"] not in types:
            at.fail(f"unknown assertion type '{test['type']}' (known: {', '.join(types)})", f"{fld}.type")
        args = test.get("args") or {}
        need = set(types[test["type"]].args)
        for a in sorted(need - set(args)):
            at.fail(f"assertion '{test['type']}' needs argument '{a}'", f"{fld}.args.{a}")
        for a in sorted(set(args) - need):
            at.fail(f"assertion '{test['type']}' takes no argument '{a}'", f"{fld}.args.{a}")
        check_placeholders(args, at, f"{fld}.args")
