"""Execution validation without Docker: baseline build, mutant screening with ade-bench's
equality oracle, database preparation (STORAGE_VERSION v1.0.0), and proving tasks through the
harness emulation in `adegen.harness`. Snowflake projects: `make_validator(...,
emulate_snowflake=True)` gives the fakesnow-backed `snowflake.EmulatorValidator`."""
from .factory import Unavailable, make_validator
from .validator import Observation, Proof, Validator, ade_bench_database_dirs

__all__ = ["Observation", "Proof", "Unavailable", "Validator", "ade_bench_database_dirs", "make_validator"]
