"""Atomic output: the run lock, task-id reservation, task directories built in a temp dir and
renamed into place, and the standalone project copy (`<output_dir>/projects/<dbt name>`)."""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import yaml

from adegen.core import owners
from adegen.core.atomic import TMP_PREFIX
from adegen.dbt import copy_tree, ignore_for
from adegen.dbt.gradable import make_copy_gradable
from adegen.core.errors import InputError

LOCK_NAME = ".adegen.lock"
EMPTY_LOCK_GRACE_SEC = 5


# ---------------------------------------------------------------------------------------------
# lock


class RunLock:
    """`<output_dir>/.adegen.lock`, created with O_EXCL, holding an owner record (`owners`); a lock
    left by a dead process (or by one whose pid another process has since got) is taken over."""

    def __init__(self, output_dir: Path):
        self.output_dir = output_dir
        self.path = output_dir / LOCK_NAME
        self.held = False

    def acquire(self) -> None:
        self.output_dir.mkdir(parents=True, exist_ok=True)
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if self._stale():
                    with contextlib.suppress(FileNotFoundError):
                        self.path.unlink()
                    continue
                raise InputError(f"another run is writing to {self.output_dir} (lock file {self.path}; "
                                 "delete it if no adegen run is active)", field="--output-dir") from None
            with os.fdopen(fd, "w") as fh:
                fh.write(owners.record() + "\n")
            self.held = True
            return
        raise InputError(f"another run is writing to {self.output_dir}", field="--output-dir")

    def _stale(self) -> bool:
        try:
            running = owners.alive(self.path.read_text())
        except OSError:
            return False
        if running is None:
            # no owner written: the owner writes its record right after creating the file, so an
            # empty lock that is more than a few seconds old was left by a run killed in between
            try:
                return time.time() - self.path.stat().st_mtime > EMPTY_LOCK_GRACE_SEC
            except OSError:
                return False
        return not running

    def release(self) -> None:
        if self.held:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            self.held = False

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc):
        self.release()


# ---------------------------------------------------------------------------------------------
# task ids and atomic task directories


def highest_task_number(tasks_dir: Path, project_name: str) -> int:
    """Highest NNN of `<project_name>NNN` among task dirs and in-progress temp dirs."""
    best = 0
    if not tasks_dir.is_dir():
        return 0
    pat = re.compile(re.escape(project_name) + r"(\d{3,})")
    for d in tasks_dir.iterdir():
        name = d.name[len(TMP_PREFIX):] if d.name.startswith(TMP_PREFIX) else d.name
        m = pat.match(name)
        if m and (name == m.group(0) or name[m.end():].startswith("-")):
            best = max(best, int(m.group(1)))
    return best


def format_task_id(project_name: str, number: int) -> str:
    return f"{project_name}{number:03d}"


class TaskWriter:
    """Builds one task dir as `<tasks_dir>/.adegen-tmp-<id>-XXXX/<id>` (so its name is already the
    task id, which the harness relies on) and renames it into place; `discard` removes it."""

    def __init__(self, tasks_dir: Path, task_id: str):
        self.tasks_dir = tasks_dir
        self.task_id = task_id
        self.final = tasks_dir / task_id
        tasks_dir.mkdir(parents=True, exist_ok=True)
        if self.final.exists():
            raise FileExistsError(f"{self.final} already exists; task directories are never overwritten")
        self.tmp = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{task_id}-", dir=tasks_dir))
        self.dir = self.tmp / task_id
        self.dir.mkdir()

    def write(self, files: dict[str, bytes], executables: tuple[str, ...] = ("setup.sh", "solution.sh")) -> None:
        for rel, data in files.items():
            p = self.dir / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
            if rel in executables:
                p.chmod(0o755)
        for sub in ("tests", "seeds"):
            (self.dir / sub).mkdir(exist_ok=True)

    def commit(self) -> Path:
        if self.final.exists():
            raise FileExistsError(f"{self.final} appeared while writing; not overwriting it")
        os.rename(self.dir, self.final)
        shutil.rmtree(self.tmp, ignore_errors=True)
        return self.final

    def discard(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def clean_stale_temp(tasks_dir: Path) -> None:
    """Temp dirs of interrupted runs in `tasks/` and the sibling `projects/` (half-copied projects);
    only called while holding the lock, so no live run owns them."""
    for d in (tasks_dir, tasks_dir.parent / "projects"):
        if d.is_dir():
            for x in d.iterdir():
                if x.name.startswith(TMP_PREFIX) and x.is_dir() and not x.is_symlink():
                    shutil.rmtree(x, ignore_errors=True)


def remove_task(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)




# ---------------------------------------------------------------------------------------------
# project copy


copy_ignore = ignore_for  # the shared copy policy (adegen.dbt.scratch)


def _is_adegen_package(entry: dict, project_dir: Path, adegen_root: Path) -> bool:
    for key in ("local", "git", "package", "tarball", "private"):
        v = entry.get(key)
        if not isinstance(v, str):
            continue
        if key == "local":
            try:
                if (project_dir / v).resolve() == adegen_root.resolve():
                    return True
            except OSError:
                pass
            continue
        if "adegen" in v.lower():
            return True
    return False


def rewrite_packages(project_dir: Path, copy_dir: Path, adegen_root: Path) -> list[str]:
    """Drop adegen itself from packages.yml / dependencies.yml / package-lock.yml in the copy;
    refuse `local:` packages outside the project. Returns notes for the user."""
    notes: list[str] = []
    for fname in ("packages.yml", "dependencies.yml"):
        src = project_dir / fname
        if not src.is_file():
            continue
        try:
            data = yaml.safe_load(src.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise InputError(f"not valid YAML ({str(exc).splitlines()[0]})", file=src, field="packages") from None
        pkgs = data.get("packages") if isinstance(data, dict) else None
        if not isinstance(pkgs, list):
            continue
        kept = []
        for entry in pkgs:
            if isinstance(entry, dict) and _is_adegen_package(entry, project_dir, adegen_root):
                notes.append(f"left adegen out of {fname} in the copy")
                continue
            if isinstance(entry, dict) and isinstance(entry.get("local"), str):
                target = (project_dir / entry["local"]).resolve()
                try:
                    target.relative_to(project_dir.resolve())
                except ValueError:
                    raise InputError(
                        f"local package {entry['local']!r} points outside the project; the copy could not "
                        "run inside ade-bench (vendor it into the project or use a hub/git package)",
                        file=src, field="packages") from None
            kept.append(entry)
        if len(kept) != len(pkgs):
            dst = copy_dir / fname
            if kept or len(data) > 1:
                data = dict(data)
                data["packages"] = kept
                dst.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
            else:
                dst.unlink(missing_ok=True)
            lock = copy_dir / "package-lock.yml"
            if lock.is_file():
                try:
                    ldata = yaml.safe_load(lock.read_text(encoding="utf-8")) or {}
                except yaml.YAMLError:
                    ldata = None
                if isinstance(ldata, dict) and isinstance(ldata.get("packages"), list):
                    lp = [e for e in ldata["packages"]
                          if not (isinstance(e, dict) and _is_adegen_package(e, project_dir, adegen_root))]
                    if kept:
                        ldata["packages"] = lp
                        ldata.pop("sha1_hash", None)
                        lock.write_text(yaml.safe_dump(ldata, sort_keys=False), encoding="utf-8")
                    else:
                        lock.unlink()
                else:
                    lock.unlink()
    return notes


def copy_project(project_dir: Path, dest: Path, *, profiles_yml: str, adegen_root: Path) -> tuple[bool, list[str]]:
    """Copy the project to `dest` atomically (temp + rename). (created, notes); an existing copy
    is never overwritten (it belongs to earlier tasks)."""
    if dest.exists():
        return False, [f"kept the existing project copy {dest}"]
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX + dest.name + "-", dir=dest.parent))
    try:
        work = tmp / dest.name
        copy_tree(project_dir, work)
        notes = rewrite_packages(project_dir, work, adegen_root)
        gradable = make_copy_gradable(work)  # tests/, seeds/, macros/ where ade-bench's scripts put them
        notes += gradable.changes + [f"ade-bench cannot grade this copy until: {x}" for x in gradable.problems]
        (work / "profiles.yml").write_text(profiles_yml, encoding="utf-8")
        if dest.exists():
            return False, [f"kept the existing project copy {dest}"]
        os.rename(work, dest)
        return True, notes
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
