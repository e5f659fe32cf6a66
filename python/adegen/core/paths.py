"""Where adegen's own dbt package (macros, patterns) lives."""
from __future__ import annotations

import contextlib
import os
from pathlib import Path

from adegen.core import owners
from adegen.core.settings import get_settings


def package_root() -> Path:
    """The adegen dbt package: the repository root holding dbt_project.yml, macros/ and patterns/.

    `ADEGEN_PACKAGE_DIR` overrides it (for installs that are not editable checkouts)."""
    return get_settings().package_dir or Path(__file__).resolve().parents[3]


def patterns_dir() -> Path:
    return package_root() / "patterns"


def optional_patterns_dir() -> Path:
    """Patterns not in the shipped catalog (`--patterns-dir` loads them); the survey still knows
    their families, so an existing task that drops a column is recognised as one."""
    return patterns_dir() / "optional"


def schemas_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "schemas"


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


# --- run work directories: removed on every exit the run survives; the next run removes those of
# dead runs (never a live one's) ---------------------------------------------------------------

OWNER_FILE = ".adegen-owner"  # the owning run's record (`owners`)


def clean_dead_run_dirs(prefix: str = "adegen-build-", root: Path | None = None) -> list[Path]:
    """Remove `<tmp>/<prefix>*` work directories whose owner process is dead (pid file written by
    `claim_run_dir`); directories without an owner file or of a live run are left alone."""
    import shutil
    import tempfile

    removed = []
    base = Path(root or tempfile.gettempdir())
    for d in base.glob(prefix + "*"):
        owner = d / OWNER_FILE
        try:
            text = owner.read_text()
        except OSError:
            continue
        if d.is_dir() and not d.is_symlink() and not owners.alive(text):  # None: no record, dead
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d)
    return removed


def claim_run_dir(prefix: str = "adegen-build-", root: Path | None = None) -> Path:
    """A fresh work directory for this run, owned by this process (pid file), after removing the
    work directories that dead runs left. The caller removes it when the run ends."""
    import tempfile

    clean_dead_run_dirs(prefix, root)
    d = Path(tempfile.mkdtemp(prefix=prefix, dir=root))
    (d / OWNER_FILE).write_text(owners.record() + "\n")
    return d


@contextlib.contextmanager
def owned_run_dir(prefix: str = "adegen-build-", root: Path | None = None):
    """`claim_run_dir` for the length of a `with` block, removed when the block ends; a run killed
    inside it (SIGKILL: no cleanup) leaves the directory to the next run's `clean_dead_run_dirs`."""
    import shutil

    d = claim_run_dir(prefix, root)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)
