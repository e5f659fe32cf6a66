"""`Unavailable`: the validator of a run whose tasks cannot be proven, saying why (a backend's
`make_validator` returns it: Snowflake without the emulator, for example)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from adegen.core.errors import InputError
from adegen.validate.rules.contract import Observation, Proof, RunFacts


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
