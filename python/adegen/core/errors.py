"""Errors that end a command with a clear message instead of a traceback."""
from __future__ import annotations

from pathlib import Path


class AdegenError(Exception):
    """A problem the user can fix. `exit_code` 2 = bad input or usage, 1 = nothing could be produced."""

    exit_code = 2

    def __init__(self, message: str, *, file: str | Path | None = None, field: str | None = None):
        self.message = message
        self.file = str(file) if file is not None else None
        self.field = field
        super().__init__(self.render())

    def render(self) -> str:
        where = ""
        if self.file and self.field:
            where = f"{self.file}: {self.field}: "
        elif self.file:
            where = f"{self.file}: "
        elif self.field:
            where = f"{self.field}: "
        return f"{where}{self.message}"


class InputError(AdegenError):
    """Bad input: a path, a project file, a profile, a pattern file or an argument (exit 2)."""

    exit_code = 2


class NothingProducedError(AdegenError):
    """The run was valid but no task could be produced or proven (exit 1)."""

    exit_code = 1


class DbtError(AdegenError):
    """dbt itself failed; the message carries dbt's own error text (exit 2: the project is at fault)."""

    exit_code = 2
