"""Measure the preconditions of candidate sites, after their compile check and before screening.

For every site whose mutant compiled, the change is located in the compiled SQL (the intact model
is compiled in the same dbt call) and each entry of the pattern's `precondition:` is run on the
intact build. The verdicts are kept on the candidate (`Candidate.preconditions[site index]`); the
selection drops a site whose precondition fails or cannot be measured, before any screening.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from adegen.realism.locate import locate
from adegen.realism.probe import ProbeDB
from adegen.realism.registry import CheckInput, Verdict, run_check


@dataclass(frozen=True)
class Measured:
    """The verdicts of one site, in the order the pattern lists its checks."""

    verdicts: tuple[Verdict, ...]

    @property
    def failed(self) -> Verdict | None:
        """The first verdict that fails, else the first that could not be measured, else None."""
        return (next((v for v in self.verdicts if v.holds is False), None)
                or next((v for v in self.verdicts if v.holds is None), None))

    @property
    def facts(self) -> list[str]:
        return [v.fact for v in self.verdicts]

    def drop_reason(self) -> str | None:
        bad = self.failed
        if bad is None:
            return None
        return ("precondition not met: " if bad.holds is False else "precondition not measurable: ") + bad.fact

    def to_json(self) -> list[dict]:
        return [v.to_json() for v in self.verdicts]


@dataclass
class MeasureRun:
    """What measuring needs besides the candidates: the intact build to probe (None: no DuckDB
    intact build, e.g. --no-validate or the Snowflake emulator: nothing is measured), the
    discovery payload and the raw SQL of any model by unique id."""

    probe: ProbeDB | None
    discovery: dict
    raw_sql: Callable[[str], str | None]
    dialect: str = "duckdb"


def measure_candidates(cands: list, run: MeasureRun) -> int:
    """Fill `c.preconditions` for every compiled site of `cands`; returns how many sites fail."""
    if run.probe is None:
        return 0
    failing = 0
    for c in cands:
        checks = tuple(getattr(c.pattern, "precondition", ()) or ())
        if not checks:
            continue
        intact = getattr(c, "compiled_intact", None)
        for si, site in enumerate(c.sites):
            if si in c.preconditions:
                continue
            result = c.compile_results.get(si)
            if result is None or result.ok is False:
                continue
            if result.catalog and not run.probe.catalog:
                run.probe.catalog = result.catalog  # the compile database the compiled SQL names
            scope = None
            if intact is not None and intact.compiled and result.compiled:
                scope = locate(intact.compiled, result.compiled, run.dialect)
            inp = CheckInput(scope, run.probe, {}, c.model, run.discovery, site, {"raw_sql": run.raw_sql})
            measured = Measured(tuple(run_check(entry, inp) for entry in checks))
            c.preconditions[si] = measured
            failing += measured.failed is not None
    return failing
