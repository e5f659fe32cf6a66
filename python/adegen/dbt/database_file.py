"""Which DuckDB file a project's data comes from: found by the DuckDB backend
(`backends.duckdb.find_database`, the one lookup) and handed to the validator, which reads a copy."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

FROM_DB_DIR, FROM_PROFILE, FROM_ADE_BENCH = "db_dir", "profile", "ade-bench"


@dataclass(frozen=True)
class DatabaseFile:
    path: Path | None  # None: no file (a seed-based project, an in-memory or MotherDuck target)
    origin: str  # FROM_DB_DIR (--db-path) | FROM_PROFILE | FROM_ADE_BENCH (its databases dir) | "" (none)
    reason: str  # where it was found, or where it was looked for (the validator's usable() says it)

    @property
    def explicit(self) -> bool:
        """ade-bench finds this very file too (db_dir, its databases dir): the raw data comes from it
        even when the project has seeds."""
        return self.origin in (FROM_DB_DIR, FROM_ADE_BENCH)
