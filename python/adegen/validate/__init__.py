"""Execution validation without Docker (architecture.md, "Build <-> validation contract").

Modules: `contract` (the Validator protocol, Observation, Proof, RunFacts), `verdict` (the
screening verdict, once for every backend), `proof` (the proof rule, once for every backend and
speed path; its strategies are `fastprove`, `fullprove` and `snowflake_prove`), `validator` (DuckDB
backend; `intact`, `screening`, `proving`, `determinism` are its parts, `jobs` the dataclasses its
worker processes get, `pool` the worker pool that stops a job over budget, `budget` the budgets),
`snowflake` (fakesnow emulator backend; `snowflake_io`, `snowflake_trial`), `factory`
(`make_validator`, `Unavailable`), `oracle` (ade-bench's equality oracle), `evidence` (the measured
facts), `inspector` (what the verdict asks of a backend), `taskyaml`.
"""
from .contract import Observation, Proof, RunFacts, StorageChoice, ValidatorProtocol
from .factory import Unavailable, make_validator
from .validator import Validator, ade_bench_database_dirs

__all__ = ["Observation", "Proof", "RunFacts", "StorageChoice", "Unavailable", "Validator", "ValidatorProtocol",
           "ade_bench_database_dirs", "make_validator"]
