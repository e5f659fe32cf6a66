"""Execution validation without Docker (architecture.md, "Build <-> validation contract").

Four parts: `rules` (backend-neutral: the Validator contract, the screening verdict, the proof rule,
the inspector a verdict asks, ade-bench's equality oracle, the stand-in that says why tasks cannot be
proven), `duckdb` (the DuckDB validator and its proof strategies), `snowflake` (the fakesnow emulator
validator) and `workers` (the worker pool, the Dask executor, budgets). A project's
validator is made by its backend (`adegen.backends`, `Backend.make_validator`).
"""
from adegen.validate.rules.contract import Observation, Proof, RunFacts, StorageChoice, ValidatorProtocol
from adegen.validate.rules.unavailable import Unavailable
from adegen.validate.duckdb.validator import Validator

__all__ = ["Observation", "Proof", "RunFacts", "StorageChoice", "Unavailable", "Validator", "ValidatorProtocol"]
