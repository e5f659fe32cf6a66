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


def ensure_scripts_on_path() -> None:
    """Put this interpreter's scripts directory (where pip installed `dbt`) first on PATH.

    adegen runs `dbt` as a subprocess and runs generated setup.sh/solution.sh scripts that call
    `dbt`; `python -m pip install` into a pyenv or un-activated venv Python does not put `dbt` on
    PATH, so without this those calls would find no dbt or another installation's."""
    import sysconfig

    scripts = sysconfig.get_path("scripts")
    if not scripts or not (Path(scripts) / "dbt").exists():
        return
    parts = os.environ.get("PATH", "").split(os.pathsep)
    if parts and parts[0] == scripts:
        return
    os.environ["PATH"] = os.pathsep.join([scripts, *[p for p in parts if p != scripts]])
