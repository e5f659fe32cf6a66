"""The precondition registry: every check a pattern's `precondition:` may name.

A check answers one question about a candidate mutation before it is screened: does the data (or
the project's graph) make this a mistake an engineer would really ship and a user would notice?
It gets the located change (`SiteScope`, from the compiled intact model and the compiled mutant),
a probe database (the intact build, read-only), its parameters and the model's discovery entry,
and returns a `Verdict`: holds / fails / could not be measured, with the measured fact in words
(shown with the proposal, kept in the run record).

Checks register themselves with `@check(name, **default_params)`; pattern files are validated
against `CHECKS` (unknown names or parameters are refused with the file and field).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from adegen.realism.locate import SiteScope
from adegen.realism.probe import ProbeDB


@dataclass(frozen=True)
class Verdict:
    holds: bool | None           # None: could not be measured
    fact: str                    # what was measured, in plain words
    numbers: dict = field(default_factory=dict, compare=False)

    @classmethod
    def unmeasured(cls, why: str) -> "Verdict":
        return cls(None, why)

    def to_json(self) -> dict:
        return {"holds": self.holds, "fact": self.fact, "numbers": dict(self.numbers)}


@dataclass
class CheckInput:
    """What one check of one candidate site sees."""

    scope: SiteScope | None      # None when the compiled SQL could not be compared (graph checks still run)
    probe: ProbeDB | None        # None when there is no intact build to query
    params: dict
    model: dict                  # the mutated model's discovery entry
    discovery: dict
    site: Any                    # the rewrite Site (raw before/after text, placeholders)
    extra: dict = field(default_factory=dict)  # per-run facts (e.g. other models' raw SQL)


CheckFn = Callable[[CheckInput], Verdict]
CHECKS: dict[str, dict] = {}


def first_sentence(doc: str) -> str:
    """A docstring's first sentence on one line (what the catalog table of docs/patterns.md shows)."""
    text = " ".join(doc.split())
    end = re.search(r"(?<=\.)\s(?=[A-Z`])", text)
    return text[:end.start()] if end else text


def check(name: str, *, needs_sql: bool = True, **defaults):
    """Register a precondition check. `needs_sql`: it reads the located change (compiled SQL); a
    graph check (False) reads only the discovery facts. `defaults`: its parameters."""
    def deco(fn: CheckFn) -> CheckFn:
        CHECKS[name] = {"fn": fn, "defaults": dict(defaults), "needs_sql": needs_sql,
                        "doc": first_sentence(fn.__doc__ or "")}
        return fn
    return deco


def run_check(entry: dict, inp: CheckInput) -> Verdict:
    """One `precondition:` entry ({check: name, param: value, ...}) on one site."""
    spec = CHECKS[entry["check"]]
    if spec["needs_sql"] and inp.scope is None:
        return Verdict.unmeasured("the change could not be located in the compiled SQL")
    if spec["needs_sql"] and inp.probe is None:
        return Verdict.unmeasured("no intact build to measure on")
    params = dict(spec["defaults"])
    params.update({k: v for k, v in entry.items() if k != "check"})
    inp.params = params
    try:
        return spec["fn"](inp)
    except Exception as exc:  # noqa: BLE001 - one check's bug must not end the run; it just measures nothing
        return Verdict.unmeasured(f"check {entry['check']} failed: {type(exc).__name__}: {exc}")


def validate_entry(entry: Any) -> str | None:
    """Why a `precondition:` entry is invalid (None when it is valid)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("check"), str):
        return "each precondition entry is a mapping with a `check:` name"
    name = entry["check"]
    if name not in CHECKS:
        return f"unknown check '{name}' (known: {', '.join(sorted(CHECKS))})"
    extra = sorted(set(entry) - {"check"} - set(CHECKS[name]["defaults"]))
    if extra:
        known = ", ".join(sorted(CHECKS[name]["defaults"])) or "none"
        return f"check '{name}' takes no parameter '{extra[0]}' (takes: {known})"
    for k, v in entry.items():
        if k == "check":
            continue
        default = CHECKS[name]["defaults"][k]
        if isinstance(default, (int, float)) and not isinstance(default, bool):
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                return f"check '{name}' parameter '{k}' must be a number"
        elif isinstance(default, (list, tuple)):
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                return f"check '{name}' parameter '{k}' must be a list of strings"
    return None
