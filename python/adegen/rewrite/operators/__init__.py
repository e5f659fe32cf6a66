"""Rewrite operators: each turns one model's tokens into candidate edits (pure).

An operator is `fn(S, args, ctx) -> list[Candidate]`. Candidates sharing a `group` (one anchor
occurrence) are alternatives: every valid primary candidate is a site; a fallback is used only
when no primary of its group survives the engine's checks (<= the pattern's max_lines, no
Jinja/comment damage).

Operators live in modules by what they edit; importing them registers them in the one
`OPERATORS` registry (`registry.operator`). A new operator goes in the module of its kind.
"""
from adegen.rewrite.operators import (  # noqa: F401  (registers)
    columns, conversions, dbt_level, expressions, filters, joins, labels, literals, predicates, select_lists,
)
from adegen.rewrite.operators.literals import LITERAL_KINDS
from adegen.rewrite.operators.registry import OPERATORS, operator

__all__ = ["OPERATORS", "LITERAL_KINDS", "operator"]
