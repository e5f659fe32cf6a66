"""One throwaway environment per supported dbt-core minor version, for test_dbt_versions.py.

`constraints/dbt-<minor>.txt` (repository root) is a complete pin set for one dbt-core minor version
(dbt-core, the matching dbt-duckdb and dbt-snowflake, duckdb and the rest of adegen's dependencies).
`ensure_env` installs it with `pip install -r` into a venv made from the interpreter running the tests,
cached in a directory keyed by the file's hash and that interpreter, so a re-run costs nothing and an
edited pin set gets a fresh venv. adegen is not installed there: it runs from this source tree
(PYTHONPATH), so the cached venv stays valid while the code changes.

The cache lives in $ADEGEN_TEST_VENVS, default ~/.cache/adegen/test-venvs ($XDG_CACHE_HOME honoured).
A lock serialises concurrent builders; a venv counts only once its `.complete` marker exists (venvs
are not relocatable, so it is built in place rather than renamed into place)."""
from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONSTRAINTS_DIR = REPO / "constraints"
MARKER = ".complete"
# What the tests compare against the pins: the distributions adegen depends on for dbt and DuckDB.
PINNED = ("dbt-core", "dbt-duckdb", "dbt-snowflake", "duckdb")


@dataclass(frozen=True)
class DbtEnv:
    """A ready venv for one dbt-core minor version."""

    name: str              # "dbt-1.9", the constraints file's stem
    minor: tuple[int, int]  # (1, 9)
    constraints: Path
    venv: Path
    fresh: bool            # built by this call (False: the cached venv was reused)

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def pins(self) -> dict[str, str]:
        return read_pins(self.constraints)

    def env(self, home: Path, cache: Path) -> dict:
        """Environment for running adegen and dbt from this venv: the venv's bin first on PATH, adegen
        from the source tree, a private HOME (no ade-bench, no ~/.dbt) and its own adegen cache."""
        home.mkdir(parents=True, exist_ok=True)
        system = [d for d in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
                  if Path(d).is_dir() and not (Path(d) / "ade").exists()]
        env = {k: v for k, v in os.environ.items()
               if k not in ("DBT_PROFILES_DIR", "ADE_DATABASES_DIR", "ADEGEN_DEBUG", "VIRTUAL_ENV",
                            "PYTHONHOME", "CONDA_PREFIX") and not k.startswith("SNOWFLAKE_")}
        env.update(HOME=str(home), PATH=os.pathsep.join([str(self.venv / "bin"), *system]),
                   PYTHONPATH=str(REPO / "python"), PYTHONUNBUFFERED="1", ADEGEN_CACHE_DIR=str(cache),
                   DBT_SEND_ANONYMOUS_USAGE_STATS="false", DO_NOT_TRACK="1")
        return env


def smoke_constraints() -> list[Path]:
    """constraints/dbt-<minor>.txt files, lowest version first."""
    files = [p for p in CONSTRAINTS_DIR.glob("dbt-*.txt") if minor_of(p)]
    return sorted(files, key=minor_of)


def minor_of(constraints: Path) -> tuple[int, int] | None:
    m = re.fullmatch(r"dbt-(\d+)\.(\d+)\.txt", constraints.name)
    return (int(m.group(1)), int(m.group(2))) if m else None


def read_pins(constraints: Path) -> dict[str, str]:
    """Normalised distribution name -> pinned version (`name==version` lines)."""
    pins = {}
    for line in constraints.read_text().splitlines():
        m = re.fullmatch(r"\s*([A-Za-z0-9._-]+)\s*==\s*([^\s;#]+)\s*(?:#.*)?", line)
        if m:
            pins[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = m.group(2)
    return pins


def cache_root() -> Path:
    if os.environ.get("ADEGEN_TEST_VENVS"):
        return Path(os.environ["ADEGEN_TEST_VENVS"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "adegen" / "test-venvs"


def env_key(constraints: Path) -> str:
    """Changes with the pin set and with the interpreter the venv is made from."""
    h = hashlib.sha256(constraints.read_bytes())
    h.update(f"{sys.implementation.name}-{platform.python_version()}-{sys.platform}-{platform.machine()}".encode())
    h.update(str(Path(sys.base_prefix).resolve()).encode())
    return h.hexdigest()[:16]


def ensure_env(constraints: Path) -> DbtEnv:
    """The cached venv for `constraints`, built first when missing (network: PyPI through pip)."""
    minor = minor_of(constraints)
    assert minor, f"not a constraints/dbt-<minor>.txt file: {constraints}"
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    venv = root / f"{constraints.stem}-{env_key(constraints)}"
    made = DbtEnv(constraints.stem, minor, constraints, venv, False)
    if (venv / MARKER).is_file():
        return made
    with open(root / f"{constraints.stem}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (venv / MARKER).is_file():  # another run built it while we waited
            return made
        for old in root.glob(f"{constraints.stem}-*"):  # stale pin sets and half-built venvs
            shutil.rmtree(old, ignore_errors=True)
        _run([sys.executable, "-m", "venv", str(venv)], "create the venv")
        _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check",
              "--no-input", "--progress-bar", "off", "-r", str(constraints)], f"pip install -r {constraints.name}")
        (venv / MARKER).write_text(constraints.read_text())
        return DbtEnv(constraints.stem, minor, constraints, venv, True)


def _run(cmd: list[str], what: str) -> None:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise RuntimeError(f"could not {what} (exit {p.returncode}):\n{(p.stdout + p.stderr)[-4000:]}")
