"""The one registry of assertion test types (a pattern's `assertion_tests`).

Each type is rendered by the dbt macro `ade_render_<type>(<args...>, project_name)` in
macros/assertions/ (the dispatcher `ade_render_assertion` finds it by name; its parameters are the
type's args in the order listed here). Adding a type = one entry here + one renderer macro + its
case in python/tests/test_assertions.py. pattern_rules.py checks pattern files against this table,
assertions.py validates and names the rendered tests with it."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

KINDS = ("name", "names", "pairs")  # a name; a non-empty list of names; a list of [source, table]


@dataclass(frozen=True)
class AssertionType:
    name: str
    purpose: str  # slug in the test file name (<task_id>_<purpose>.sql)
    args: dict[str, str] = field(default_factory=dict)  # arg -> kind, every one required, macro order
    purpose_arg: str | None = None  # an arg whose value is appended to the slug (one test per value)

    def purpose_of(self, args: Mapping[str, Any]) -> str:
        if self.purpose_arg is None:
            return self.purpose
        value = re.sub(r"[^a-z0-9_]+", "_", str(args[self.purpose_arg]).lower()).strip("_") or self.purpose_arg
        return f"{self.purpose}_{value}"


TYPES: dict[str, AssertionType] = {t.name: t for t in (
    AssertionType("refs_must_include", "refs", {"model": "name", "expected": "names"}),
    AssertionType("refs_must_match_exactly", "refs_exact", {"model": "name", "expected": "names"}),
    AssertionType("refs_must_not_include", "refs_forbidden", {"model": "name", "forbidden": "names"}),
    AssertionType("sources_must_include", "sources", {"model": "name", "expected": "pairs"}),
    AssertionType("materialization_must_be", "materialization", {"model": "name", "expected": "name"}),
    AssertionType("column_must_exist", "column", {"model": "name", "column": "name"}, purpose_arg="column"),
    AssertionType("model_must_exist", "model_exists", {"model": "name"}),
    # not a pattern's: added by the screening verdict when a mutant shows only as duplicate rows
    AssertionType("columns_must_be_unique", "unique", {"model": "name", "columns": "names"}),
)}
