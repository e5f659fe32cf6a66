"""Realism: the data preconditions that make a candidate mutation a mistake worth a task.

`registry` holds the checks a pattern's `precondition:` names (the check modules register
themselves on import), `locate` finds the change in the compiled SQL, `probe` queries the intact
build, `measure` runs a candidate's checks before it is screened."""
from adegen.realism import checks_aggregates, checks_meaning, checks_rows  # noqa: F401 - they register their checks
from adegen.realism.measure import Measured, MeasureRun, measure_candidates
from adegen.realism.probe import ProbeDB
from adegen.realism.registry import CHECKS, Verdict, validate_entry

__all__ = ["CHECKS", "Measured", "MeasureRun", "ProbeDB", "Verdict", "measure_candidates", "validate_entry"]
