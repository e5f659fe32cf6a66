"""Execution validation without Docker (architecture.md, "Build <-> validation contract").

Modules: `contract` (the Validator protocol, Observation, Proof, RunFacts), `verdict` (the
screening verdict, once for every backend), `proof` (the proof rule, once for every backend and
speed path; its strategies are `fastprove`, `fullprove` and `snowflake_prove`), `validator` (DuckDB
backend; `intact`, `screening`, `proving`, `determinism` are its parts, `jobs` the dataclasses its
worker processes get, `pool` the worker pool that stops a job over budget, `budget` the budgets),
`snowflake` (fakesnow emulator backend; `snowflake_io`, `snowflake_trial`), `unavailable` (the
stand-in that says why tasks cannot be proven), `oracle` (ade-bench's equality oracle), `evidence`
(the measured facts), `inspector` (what the verdict asks of a backend), `taskyaml`. A project's
validator is made by its backend (`adegen.backends`, `Backend.make_validator`).
"""
from .contract import Observation, Proof, RunFacts, StorageChoice, ValidatorProtocol
from .unavailable import Unavailable
from .validator import Validator

__all__ = ["Observation", "Proof", "RunFacts", "StorageChoice", "Unavailable", "Validator", "ValidatorProtocol"]
