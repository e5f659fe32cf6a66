"""The one vocabulary of symptoms: what a user sees when a pattern's bug is in the project.

A pattern's `symptom` field must be one of these ids (pattern_rules.py checks it); prompts describe
the symptom in a user's words and the oracle's observation can be checked against it. Adding a
symptom = one entry here, plus the finding it stands for in prompts/levels.py (GUESS)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Symptom:
    id: str
    meaning: str  # plain words: what looks wrong in the graded table (never the cause)
    rows: bool  # shows in the row set (rows appear or disappear), not in values of kept rows


SYMPTOMS: dict[str, Symptom] = {s.id: s for s in (
    Symptom("rows_missing", "rows that should be in the table are not there (fewer rows than expected)", True),
    Symptom("extra_rows", "rows that should not be there appear, often duplicates (more rows than expected)", True),
    Symptom("values_too_high", "numbers in a column are larger than they should be", False),
    Symptom("values_too_low", "numbers in a column are smaller than they should be", False),
    Symptom("values_null", "a column is empty (NULL) in rows that should have a value", False),
    Symptom("values_wrong", "values in a column are wrong in some rows, in no single direction", False),
    Symptom("build_error", "`dbt run` fails on the model, so the table is not rebuilt", False),
    Symptom("structure_wrong", "the relation's shape is wrong: a column is missing or renamed, or the model is "
                               "materialized differently (view instead of table)", False),
)}
IDS: tuple[str, ...] = tuple(SYMPTOMS)


def meaning(symptom_id: str) -> str:
    """The plain meaning of a symptom id (KeyError for an unknown id)."""
    return SYMPTOMS[symptom_id].meaning
