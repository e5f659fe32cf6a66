"""Scratch copies of a dbt project: ONE copy policy for every place a project is copied or compared.

The policy (what a copy leaves out): dbt's build output and state (`target/`, `logs/`, the package
install directory, `dbt_modules/`) at the top of the project and of every nested dbt project
(vendored packages), version control and tool caches anywhere (`.git`, `.venv`, `__pycache__`,
...), database files (`*.duckdb`, `*.db`, WALs, ...), and symlinks that lead outside the project
(nothing outside the project is read). Everything else is copied byte for byte, symlinks inside
the project stay links.

Used by the task output's project copy, discovery's cached copy, the validator's baseline and
worker apps, the harness emulation, the emulator, assertion rendering, the mutant compile, the
patch check and the validator's project-copy comparison.
"""
from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path

from adegen.dbt import packages as pk
from adegen.dbt.gradable import make_copy_gradable
from adegen.dbt.packages import PackagePlan
from adegen.dbt.profiles import write_profiles

SKIP_ANYWHERE = frozenset({".git", ".hg", ".svn", ".venv", "venv", "__pycache__", ".pytest_cache",
                           "node_modules", ".DS_Store", ".user.yml", ".ipynb_checkpoints", ".mypy_cache"})
# at the top of a dbt project (the root, or a vendored package holding its own dbt_project.yml)
SKIP_PROJECT_TOP = frozenset({"target", "logs", "dbt_packages", "dbt_modules"})
SKIP_SUFFIXES = (".duckdb", ".duckdb.wal", ".duckdb.tmp", ".db", ".db.wal", ".wal", ".tmp", ".pyc",
                 ".sqlite", ".sqlite3")
ADEGEN_MARK = ".adegen"  # adegen's own markers and temp dirs (".adegen-tmp-*", ".adegen-dirty")


def is_skipped(name: str, at_project_top: bool) -> bool:
    """Does the copy policy leave out an entry called `name` (at the top of a dbt project or not)?"""
    return _skipped(name, at_project_top)


def _skipped(name: str, at_project_top: bool, extra_top: frozenset = frozenset()) -> bool:
    if name in SKIP_ANYWHERE or name.startswith(ADEGEN_MARK):
        return True
    if at_project_top and (name in SKIP_PROJECT_TOP or name in extra_top):
        return True
    return name.lower().endswith(SKIP_SUFFIXES)


def _configured_top(root: Path) -> frozenset:
    """The root project's own names for its target/log/install directories, when configured."""
    try:
        return _configured_top_of((root / "dbt_project.yml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return frozenset()


@functools.lru_cache(maxsize=64)
def _configured_top_of(text: str) -> frozenset:
    """_configured_top for a dbt_project.yml text (a pure function of it: every sync reads the
    same file)."""
    import yaml

    try:
        cfg = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}  # noqa: S506 - safe
    except yaml.YAMLError:
        return frozenset()
    if not isinstance(cfg, dict):
        return frozenset()
    out = set()
    for key in ("target-path", "log-path", "packages-install-path"):
        v = cfg.get(key)
        if isinstance(v, str) and "{{" not in v and "/" not in v.strip("./"):
            out.add(v.strip("./"))
    return frozenset(out)


def _walk(root: Path):
    """(dirpath, kept dir names, kept file names) under `root` following the copy policy; kept
    directory symlinks are returned with the files (they are copied as links, not entered)."""
    root = Path(root)
    real_root = root.resolve()
    extra = _configured_top(root)
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        at_top = here == root or (here / "dbt_project.yml").is_file()
        top_extra = extra if here == root else frozenset()
        keep_dirs, keep_files = [], []
        for n in sorted(dirnames):
            if _skipped(n, at_top, top_extra) or _leaves(here / n, real_root):
                continue
            (keep_files if (here / n).is_symlink() else keep_dirs).append(n)
        for n in sorted(filenames):
            if not _skipped(n, at_top, top_extra) and not _leaves(here / n, real_root):
                keep_files.append(n)
        dirnames[:] = keep_dirs
        yield here, keep_dirs, keep_files


def _leaves(p: Path, real_root: Path) -> bool:
    """A symlink pointing outside the project (or dangling)."""
    if not p.is_symlink():
        return False
    try:
        return not p.resolve().is_relative_to(real_root)
    except (OSError, RuntimeError):
        return True


def ignore_for(root: Path):
    """A `shutil.copytree` ignore callable applying the policy to a copy of `root`."""
    root = Path(root)
    real_root = root.resolve()
    extra = _configured_top(root)

    def ignore(dirname: str, names: list[str]) -> set[str]:
        here = Path(dirname)
        at_top = here.resolve() == real_root or (here / "dbt_project.yml").is_file()
        top_extra = extra if here.resolve() == real_root else frozenset()
        return {n for n in names if _skipped(n, at_top, top_extra) or _leaves(here / n, real_root)}

    return ignore


def copy_tree(src: Path, dst: Path) -> Path:
    """Copy the project `src` to `dst` (which must not exist) following the policy."""
    shutil.copytree(src, dst, symlinks=True, ignore=ignore_for(src))
    return Path(dst)


def project_files(root: Path) -> dict[str, bytes]:
    """The policy's files of `root`: relative posix path -> content (symlinked files are read)."""
    out: dict[str, bytes] = {}
    root = Path(root)
    for here, _dirs, files in _walk(root):
        for f in files:
            p = here / f
            if p.is_file():
                out[(p.relative_to(root)).as_posix()] = p.read_bytes()
    return out


def tree_stats(root: Path) -> dict[str, os.stat_result]:
    """relative path -> lstat of every file the policy keeps (for quick change detection)."""
    root = Path(root)
    return {(here / f).relative_to(root).as_posix(): (here / f).lstat()
            for here, _dirs, files in _walk(root) for f in files}


def differing_files(copy: Path, original: Path, *, allowed: frozenset = frozenset()) -> list[str]:
    """Files (policy-kept, outside `allowed`) of `copy` whose bytes differ from `original`'s or
    that `original` lacks."""
    copy, original = Path(copy), Path(original)
    theirs = tree_stats(original)
    out = []
    for rel in tree_stats(copy):
        if rel in allowed:
            continue
        if rel not in theirs or (copy / rel).read_bytes() != (original / rel).read_bytes():
            out.append(rel)
    return out


def sync_tree(src: Path, dst: Path) -> int:
    """Make `dst` hold exactly the policy's files of `src` (bytes and symlinks); what the policy
    leaves out (dbt's target/, logs/, installed packages, database files) stays as it is in `dst`.
    Returns the number of paths changed."""
    src, dst = Path(src), Path(dst)
    dst.mkdir(parents=True, exist_ok=True)
    changed = 0
    extra = _configured_top(src)
    for here, dirs, files in _walk(src):
        rel = here.relative_to(src)
        out_dir = dst / rel
        if out_dir.is_symlink() or (out_dir.exists() and not out_dir.is_dir()):
            out_dir.unlink()
            changed += 1
        out_dir.mkdir(parents=True, exist_ok=True)
        at_top = rel == Path(".") or (here / "dbt_project.yml").is_file()
        wanted = set(dirs) | set(files)
        for name in os.listdir(out_dir):
            if name in wanted or _skipped(name, at_top, extra if rel == Path(".") else frozenset()):
                continue
            p = out_dir / name
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
            changed += 1
        for f in files:
            sp, dp = here / f, out_dir / f
            if sp.is_symlink():
                changed += _sync_link(sp, dp)
                continue
            data = sp.read_bytes()
            if dp.is_symlink() or dp.is_dir():
                shutil.rmtree(dp) if dp.is_dir() and not dp.is_symlink() else dp.unlink()
            elif dp.exists() and dp.stat().st_size == len(data) and dp.read_bytes() == data:
                continue
            dp.write_bytes(data)
            changed += 1
    return changed


def _sync_link(sp: Path, dp: Path) -> int:
    target = os.readlink(sp)
    if dp.is_symlink() and os.readlink(dp) == target:
        return 0
    if dp.is_dir() and not dp.is_symlink():
        shutil.rmtree(dp)
    elif dp.exists() or dp.is_symlink():
        dp.unlink()
    os.symlink(target, dp)
    return 1


class ScratchProject:
    """A copy of `source` at `dir` that dbt can run in: the policy's files, packages installed
    offline the way the user has them, and a scratch profiles.yml."""

    def __init__(self, source: Path, dest: Path):
        self.source = Path(source).resolve()
        self.dir = Path(dest)

    def copy(self) -> "ScratchProject":
        """A fresh copy (an existing `dir` is replaced), made gradable like the task's project copy."""
        if self.dir.exists():
            shutil.rmtree(self.dir)
        copy_tree(self.source, self.dir)
        make_copy_gradable(self.dir)
        return self

    def sync(self) -> int:
        """Sync with the source (only changed files are written), made gradable like `copy()`."""
        n = sync_tree(self.source, self.dir)
        make_copy_gradable(self.dir)
        return n

    def install_packages(self, *, store: Path | None = None, extra: dict[str, Path] | None = None
                         ) -> PackagePlan:
        """What `dbt deps` would install, offline (see `adegen.dbt.packages`). Local packages
        resolve inside the copy; hub/git ones come from `store` (default: the source project's
        installed packages)."""
        if store is None:
            store = self.source / pk.install_path(self.source)
        plan = pk.plan_packages(self.dir, store=store, origin=self.source)
        if plan.links or extra:
            pk.install(plan, self.dir / pk.install_path(self.dir), extra=extra)
        return plan

    def write_profiles(self, profile: str, target: str, output: dict, directory: Path | None = None) -> Path:
        return write_profiles(directory or self.dir, profile, target, output)
