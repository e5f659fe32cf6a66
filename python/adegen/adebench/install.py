"""Where ade-bench is installed: found once per run (`detect_ade_bench`, honouring
`--ade-bench-dir`) and passed down in the run's `AdeBench` - the survey reads its `tasks/`, the
DuckDB backend finds databases in its `databases` directories, the next steps name its paths. Nothing here
installs anything: the install offer prints the commands (`install_commands`)."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from adegen.core.atomic import write_text_atomic
from adegen.core.settings import get_settings

INSTALL_MESSAGE = ("ade-bench isn't installed. I can install it now at ~/.ade-bench (default), pick a "
                   "different location, or skip and install it later — task generation works either way.")


@dataclass(frozen=True)
class AdeBench:
    found: bool
    path: Path | None  # root of the checkout (holds tasks/, shared/) when known
    how: str  # how it was found, or why not
    # where ade-bench keeps the databases of tasks without db_dir (a subdirectory per database
    # type, e.g. duckdb/<db_name>.duckdb), first match wins
    databases: tuple[Path, ...] = ()

    @property
    def tasks_dir(self) -> Path | None:
        return self.path / "tasks" if self.path else None


def databases_dirs(root: Path | None, *, home: Path | None = None) -> tuple[Path, ...]:
    """Where ade-bench looks for a task's database: `$ADE_DATABASES_DIR` (its own variable), else
    its checkout's `shared/databases` - the one found (`root`), the installed `ade_bench`
    package's, `~/.ade-bench`'s."""
    dirs = [get_settings().ade_databases_dir] if get_settings().ade_databases_dir else []
    roots = [root, _package_root(), (home or Path.home()) / ".ade-bench"]
    dirs += [r / "shared" / "databases" for r in roots if r is not None]
    return tuple(dict.fromkeys(dirs))


def detect_ade_bench(explicit: Path | None = None, *, home: Path | None = None) -> AdeBench:
    """The spec's order: `--ade-bench-dir`, then `command -v ade` + `ade --help`, then
    ~/.ade-bench/pyproject.toml."""
    home = home or Path.home()
    if explicit is not None:
        return AdeBench(True, explicit, "--ade-bench-dir", databases_dirs(explicit, home=home))
    ade = shutil.which("ade")
    if ade:
        if _ade_works(Path(ade)):
            root = _root_from_command(ade)
            return AdeBench(True, root, f"`ade` on PATH ({ade})", databases_dirs(root, home=home))
    home_dir = home / ".ade-bench"
    if _pyproject_is_ade_bench(home_dir / "pyproject.toml"):
        return AdeBench(True, home_dir, f"{home_dir}/pyproject.toml", databases_dirs(home_dir, home=home))
    return AdeBench(False, None, "no working `ade` command and no ~/.ade-bench checkout",
                    databases_dirs(None, home=home))


ADE_FAILED_MEMO_SECONDS = 600  # a failing `ade` is asked again after this long (the user may fix it)


def _ade_works(ade: Path) -> bool:
    """`ade --help` exits 0. The answer is kept in the cache directory for this very command file
    (path, size, mtime, content), a failure only for ADE_FAILED_MEMO_SECONDS: starting ade-bench's CLI costs
    about a CPU second, on every build."""
    try:
        real = ade.resolve()
        st, digest = real.stat(), hashlib.sha256(real.read_bytes()).hexdigest()
    except OSError:
        return False
    key = f"{real}|{st.st_size}|{st.st_mtime_ns}|{digest}"
    memo = get_settings().cache_dir / "ade-help.json"
    try:
        known = json.loads(memo.read_text(encoding="utf-8"))
        if isinstance(known, dict) and known.get("key") == key and isinstance(known.get("ok"), bool) \
                and (known["ok"] or 0 <= time.time() - float(known.get("at", 0)) < ADE_FAILED_MEMO_SECONDS):
            return known["ok"]
    except (OSError, ValueError, TypeError):
        pass
    try:
        ok = subprocess.run([str(ade), "--help"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False  # a timeout may be a loaded machine: not remembered
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(memo, json.dumps({"key": key, "ok": ok, "at": time.time()}))
    except OSError:
        pass  # a read-only cache only costs the check next time
    return ok


def install_commands(location: str = "~/.ade-bench") -> list[str]:
    """What the setup skill does, for every database (`Backend.install_extras` adds a database's
    own); printed for the user (installing needs the internet)."""
    return [
        f"git clone https://github.com/dbt-labs/ade-bench.git {location}",
        f"cd {location} && uv venv && uv pip install -e .",
        f"cd {location} && gh release download databases --repo dbt-labs/ade-bench "
        "--pattern '*.duckdb' --dir shared/databases/duckdb",
    ]


def _pyproject_is_ade_bench(p: Path) -> bool:
    try:
        return 'name = "ade-bench"' in p.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def _package_root() -> Path | None:
    """The checkout (or site-packages dir) holding the installed `ade_bench` package."""
    try:
        spec = importlib.util.find_spec("ade_bench")
    except (ImportError, ValueError):
        return None
    return Path(spec.origin).resolve().parent.parent if spec and spec.origin else None


def _root_from_command(ade: str) -> Path | None:
    """The checkout behind an `ade` on PATH: ~/.ade-bench, or an editable checkout's root."""
    home = Path.home() / ".ade-bench"
    if _pyproject_is_ade_bench(home / "pyproject.toml"):
        return home
    root = _package_root()
    if root is not None and (_pyproject_is_ade_bench(root / "pyproject.toml") or (root / "tasks").is_dir()):
        return root
    real = Path(ade).resolve()
    for parent in list(real.parents)[:5]:
        if _pyproject_is_ade_bench(parent / "pyproject.toml"):
            return parent
    return None
