"""One module per database type holding everything adapter-specific on the build side (variant
fields, the standalone copy's profile, database checks, proof labels, next steps, pattern
preference, summary notes). `get(db_type)` / `for_project(project)` return its `Backend`."""
from __future__ import annotations

from adegen.core.errors import InputError
from adegen.backends.base import Backend, TargetFacts, ValidatorSetup
from adegen.backends.duckdb import DuckDBBackend
from adegen.backends.snowflake import SnowflakeBackend

BACKENDS: dict[str, Backend] = {b.name: b for b in (DuckDBBackend(), SnowflakeBackend())}
NAMES: tuple[str, ...] = tuple(BACKENDS)  # the supported database types


def get(db_type: str) -> Backend:
    try:
        return BACKENDS[db_type]
    except KeyError:
        raise InputError(f"database type {db_type!r} is not supported (only {' and '.join(NAMES)})",
                         field="type") from None


def make_validator(project, setup: ValidatorSetup):
    """The project's execution validator, made by its database's backend (tests, bench)."""
    return for_project(project).make_validator(project, setup)


def for_project(project) -> Backend:
    """The backend of a loaded project; an unsupported adapter names profiles.yml and `type`."""
    if project.adapter_type not in BACKENDS:
        raise InputError(f"database type {project.adapter_type!r} is not supported (only {' and '.join(NAMES)})",
                         file=project.profiles_path, field="type")
    return BACKENDS[project.adapter_type]


__all__ = ["BACKENDS", "NAMES", "Backend", "TargetFacts", "ValidatorSetup", "for_project", "get", "make_validator"]
