"""Why a candidate is dropped: a code for each kind of drop, with the label DATASET.md, the bulk
progress line and the run record's `dropped_by_reason` count it under.

Every drop carries its code beside its message (`Drop`, `Observation.code`): the message says what
happened to this candidate, the code which kind of drop it is, so rewording a message never moves
a count. Counts are kept by code and shown by label; codes that share a label are one row.

A new kind of drop is one line below: `NAME = "id", "label"` (the id goes into the ledger and the
run record and must never change; the label is a row of DATASET.md, an existing one or a new one).
"""
from __future__ import annotations

from enum import Enum
from typing import NamedTuple


class Coded(Enum):
    """An enum whose members are `NAME = "id", "label"`: the id goes into files and never changes,
    the label is what people read (validate.contract.ProofOutcome is one too)."""

    def __init__(self, code_id: str, label: str):
        self.id, self.label = code_id, label

    @classmethod
    def of(cls, key: str):
        """The member of an id; a label gives the first member with that label (drop counts in
        ledgers written before the codes are keyed by label)."""
        return next((c for c in cls if c.id == key), None) or next(c for c in cls if c.label == key)


class DropCode(Coded):
    NOT_COMPILE = "not_compile", "mutant does not compile"
    PRECONDITION = "precondition", "data precondition not met"
    FAMILY_CAP = "family_cap", "family over a fifth of the dataset"
    KEPT_BACK = "kept_back", "kept back for tasks traced upstream"
    # kept back because its report names the very column it converts (the fix sits on the symptom's line)
    OWN_CONVERSION = "own_conversion", "kept back for tasks traced upstream"
    LAST_RESORT = "last_resort", "made-up looking edit, not needed to fill the run"
    SAME_MISTAKE = "same_mistake", "the same mistake as another task"
    REWRITE_FAILED = "rewrite_failed", "rewrite failed"
    REWRITE_NO_CHANGE = "rewrite_no_change", "rewrite failed"
    NO_TABLE = "no_table", "no table to compare"
    NO_PROMPT = "no_prompt", "no distinct, safe prompt"
    PROMPT_ERROR = "prompt_error", "no distinct, safe prompt"
    PROMPT_REPEATS = "prompt_repeats", "no distinct, safe prompt"
    RUNAWAY = "runaway", "runaway build"
    DUPLICATES_ONLY = "duplicates_only", "duplicate rows only"
    TYPE_ONLY = "type_only", "column types only"  # equal values (0 vs 0.0): ade-bench's test passes
    NO_BUILD_ERROR = "no_build_error", "no build error as the pattern expects"
    UNEXPECTED_BUILD_ERROR = "unexpected_build_error", "unexpected build error"
    NONDETERMINISTIC_ONLY = "nondeterministic_only", "nondeterministic tables only"
    CLOCK_DEPENDENT = "clock_dependent", "clock-dependent tables only"  # adegen.dbt.clock: never graded
    EQUIVALENT = "equivalent", "equivalent on this data"
    NO_LATE_ROWS = "no_late_rows", "no late rows an incremental run shows"
    SCREENING_FAILED = "screening_failed", "screening failed"
    NOT_SCREENABLE = "not_screenable", "not observable"  # the emulator cannot run the mutant
    UNKNOWN_MODEL = "unknown_model", "not observable"
    NOT_PROPOSED = "not_proposed", "not observable"
    ROUND_TRIP_FAILED = "round_trip_failed", "patch round trip failed"
    UNPROVEN = "unproven", "unproven"
    # candidates that come as a diff (adegen.propose.diffs): a fix undone, a --bug-command diff
    DIFF_NOT_APPLYING = "diff_not_applying", "diff does not apply"
    DIFF_NO_CHANGE = "diff_no_change", "diff changes nothing"
    DIFF_OUTSIDE_MODELS = "diff_outside_models", "diff touches files outside the models"
    DIFF_TOO_BIG = "diff_too_big", "diff too big"
    COMPOUND_UNFAIR = "compound_unfair", "compound: a slip does not show or one fix passes"
    COMPOUND_PLACE = "compound_place", "gave its place to the compound task"
    MIX_EASIER = "mix_easier", "an easier kind than the hard mix keeps"
    BUG_COMMAND_FAILED = "bug_command_failed", "bug command failed"
    TEST_NOT_RENDERED = "test_not_rendered", "its grading test could not be rendered"  # bulk: a grain change's


class Drop(NamedTuple):
    """One dropped candidate: the model, the pattern, the message and the code."""

    model: str
    pattern_id: str
    reason: str
    code: DropCode


def regroup(counts: dict[str, int], by: str = "label") -> dict[str, int]:
    """Drop counts kept by code id (or by label, in a ledger written before the codes) regrouped
    by the codes' `by` ("label": as DATASET.md shows them; "id")."""
    out: dict[str, int] = {}
    for key, n in counts.items():
        group = getattr(DropCode.of(key), by)
        out[group] = out.get(group, 0) + n
    return out
