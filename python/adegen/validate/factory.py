"""`make_validator`: the right execution validator for a project, or an `Unavailable` that says why.

- DuckDB projects: `Validator` (unchanged).
- Snowflake projects with `--emulate-snowflake` and the `snowflake-emulator` extra installed:
  `EmulatorValidator` (proofs are labelled "proven on emulator", never "proven on Snowflake").
- Snowflake projects otherwise: `Unavailable`, whose `usable()` is (False, reason) and whose reason
  tells the user how to get the tasks proven.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable, Iterable

from ..errors import InputError
from .contract import Observation, Proof, RunFacts

NO_FLAG = ("Snowflake tasks are unproven: no Snowflake connection; pass --emulate-snowflake to prove "
           "them on the local fakesnow emulator")
NO_EXTRA = "Snowflake tasks are unproven: install adegen[snowflake-emulator] and pass --emulate-snowflake"
EMULATOR_MODULES = ("fakesnow", "fakesnow.server", "uvicorn", "starlette", "snowflake.connector")

_import = importlib.import_module   # tests monkeypatch this to simulate a missing extra


class Unavailable:
    """Stands in for a validator that cannot run (implements the Validator protocol): usable()
    says why; close() and facts() work; every method that needs a database raises InputError(reason)."""

    def __init__(self, reason: str):
        self.reason = reason

    def usable(self) -> tuple[bool, str]:
        return False, self.reason

    def facts(self) -> RunFacts:
        return RunFacts()

    def close(self) -> None:
        return None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def baseline(self) -> None:
        raise InputError(self.reason)

    def baseline_info(self) -> dict:
        raise InputError(self.reason)

    def seed_based(self) -> bool:
        raise InputError(self.reason)

    def screen(self, model_unique_id: str, model_path: str, mutated_text: str, pattern) -> Observation:
        raise InputError(self.reason)

    def screen_many(self, items: Iterable[tuple], progress: Callable[[str], None] | None = None
                    ) -> list[Observation]:
        raise InputError(self.reason)

    def prepare_database(self, out_dir: Path) -> Path | None:
        raise InputError(self.reason)

    def prove(self, task_dir: Path, project_copy: Path, db_file: Path | None, *, mode: str | None = None) -> Proof:
        raise InputError(self.reason)


def emulator_missing() -> str | None:
    """None when the emulator's modules import, else what failed."""
    for mod in EMULATOR_MODULES:
        try:
            _import(mod)
        except Exception as exc:  # noqa: BLE001 - ImportError and anything a broken install raises
            return f"{mod}: {type(exc).__name__}: {exc}"
    return None


def make_validator(project, *, emulate_snowflake: bool = False, workdir: Path, db_dir: Path | None = None,
                   data_file: Path | None = None, jobs: int = 2,
                   progress: Callable[[str], None] | None = None, prove_mode: str = "inprocess",
                   dbt_timeout: float | None = None):
    """A `Validator` (DuckDB), an `EmulatorValidator` (Snowflake + emulate_snowflake + extra
    installed) or an `Unavailable` with the reason. `data_file`: a DuckDB file with the raw data
    for the emulator (Snowflake only; default: the project's seeds)."""
    adapter = getattr(project, "adapter_type", None)
    if adapter == "duckdb":
        from .validator import Validator

        return Validator(project, db_dir=db_dir, workdir=workdir, jobs=jobs, progress=progress,
                         prove_mode=prove_mode)
    if adapter != "snowflake":
        return Unavailable(f"execution validation supports duckdb and snowflake, not {adapter!r}")
    if not emulate_snowflake:
        return Unavailable(NO_FLAG)
    missing = emulator_missing()
    if missing:
        return Unavailable(f"{NO_EXTRA} ({missing})")
    from .snowflake import EmulatorValidator

    kw = {"dbt_timeout": dbt_timeout} if dbt_timeout else {}
    return EmulatorValidator(project, workdir=workdir, data_file=data_file, jobs=jobs, progress=progress,
                             prove_mode=prove_mode, **kw)
