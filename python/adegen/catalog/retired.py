"""Retired forms: rewrites blind reviewers on real projects never took for a person's mistake
(issue "Commits, not token edits"). A pattern whose rewrite uses one of these operators proposes no
task, wherever its file comes from: the enumeration skips it, and the task writer refuses one
(`check_task`), so no run and no test fixture can bring the form back by accident."""
from __future__ import annotations

RETIRED_OPERATORS: dict[str, str] = {
    "swap_source": "a source read from an unrelated table (lineitem -> nation)",
    "interval_shift": "an interval constant changed for no reason ('1 day' -> '2 day' in a date spine)",
    "respell_labels": "a block of labels re-spelled the way a program title-cases them",
    "collapse_case": "a code mapping collapsed into something nobody could recover",
}


def retired_reason(pattern) -> str | None:
    """Why the pattern's rewrite is retired, or None."""
    rewrite = getattr(pattern, "rewrite", None) or {}
    return RETIRED_OPERATORS.get(str(rewrite.get("operator", "")))


def check_task(pattern_id: str, operator: str) -> None:
    """The last guard before a task is written: a retired form never reaches a task folder."""
    if operator in RETIRED_OPERATORS:
        raise ValueError(f"pattern {pattern_id} uses the retired rewrite {operator}: {RETIRED_OPERATORS[operator]}")
