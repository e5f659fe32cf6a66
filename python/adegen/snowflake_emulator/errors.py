"""Errors of the Snowflake emulator layer (all `adegen.core.errors.AdegenError` subclasses)."""
from __future__ import annotations

from adegen.core.errors import AdegenError


class EmulatorError(AdegenError):
    """The local Snowflake emulator (fakesnow) could not be used (exit 1: nothing could be proven)."""

    exit_code = 1


class EmulatorUnavailableError(EmulatorError):
    """fakesnow (or its server extra) is not installed for the python that would run it."""


class EmulatorStartError(EmulatorError):
    """The fakesnow server did not come up: port taken, bad data dir, crash or start-up timeout."""


class EmulatorTimeoutError(EmulatorError):
    """A dbt call against the emulator exceeded its timeout (its process group was killed)."""


class EmulatorUnsupportedError(EmulatorError):
    """dbt failed only because of features the emulator cannot run (not a project bug)."""
