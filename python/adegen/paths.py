"""Where adegen's own dbt package (macros, patterns) lives."""
from __future__ import annotations

import os
from pathlib import Path


def package_root() -> Path:
    """The adegen dbt package: the repository root holding dbt_project.yml, macros/ and patterns/.

    `ADEGEN_PACKAGE_DIR` overrides it (for installs that are not editable checkouts)."""
    override = os.environ.get("ADEGEN_PACKAGE_DIR")
    if override:
        return Path(override).resolve()
    return Path(__file__).resolve().parents[2]


def patterns_dir() -> Path:
    return package_root() / "patterns"


def schemas_dir() -> Path:
    return Path(__file__).resolve().parent / "schemas"
