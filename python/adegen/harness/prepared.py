"""The fast trial: the in-process harness emulation on a persistent scratch root, starting from a
database that already holds what setup.sh's dbt commands produce.

`Validator.prove` (fast path) uses it for tasks adegen wrote itself, whose setup.sh is `patch`
+ `dbt deps` / `dbt seed` / `dbt run` and whose patches touch model files only. The caller derives
the broken database (the intact build, the mutated model and everything downstream of it dropped
and rebuilt from the mutant) and passes it as `db_file`; everything after setup runs as in
`TrialRunner` ("inprocess" mode), with these differences, none of which changes the graded state:

- the scratch root persists between trials: the project copy is synced file by file (`sync_tree`)
  instead of copied, and dbt partial-parses (target/ is kept; run-dbt-test.sh's
  DBT_PARTIAL_PARSE=False only disables a cache, the manifest is the same);
- setup.sh's `patch` lines run with bash as usual, its dbt lines are skipped (their effect is in
  `db_file`);
- a bare `dbt seed` (test_setup, test phase) loads only the seeds that are not in `loaded_seeds`
  (the project's own seeds, already loaded from byte-identical CSVs): in the test phase that is the
  solution seeds, with the `_no-op.txt` column types merged exactly as seed-schema.sh does;
- `premerge`: the task's `_no-op.txt` is merged into dbt_project.yml before setup (the merge is
  idempotent, so the test phase's own merge writes the same text), which saves dbt a full re-parse
  per phase; the merged keys only configure `solution__*` seeds.

The independent check stays `run_harness(..., mode="script")`.
"""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import yaml

from . import dbfiles
from .emulate import TrialRunner, merge_no_op, plan_script

# never synced (dbt state, installed packages, databases) - kept in the persistent app
_KEEP = {"target", "logs", "dbt_packages", ".user.yml", "__pycache__", ".git"}


def _kept(name: str) -> bool:
    return name in _KEEP or name.endswith((".duckdb", ".duckdb.wal"))


def sync_tree(src: Path, dst: Path) -> int:
    """Make `dst` hold exactly the files of `src` (bytes and symlinks), leaving dbt's target/,
    logs/, dbt_packages/ and database files of `dst` alone. Returns the number of paths changed."""
    src, dst = Path(src), Path(dst)
    changed = 0
    dst.mkdir(parents=True, exist_ok=True)
    for dirpath, dirnames, filenames in os.walk(src):
        rel = Path(dirpath).relative_to(src)
        if rel == Path("."):
            dirnames[:] = [d for d in dirnames if not _kept(d)]
            filenames = [f for f in filenames if not _kept(f)]
        else:
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        out_dir = dst / rel
        # remove what src does not have
        if out_dir.is_dir() and not out_dir.is_symlink():
            wanted = set(dirnames) | set(filenames) | {d for d in os.listdir(dirpath)
                                                      if os.path.islink(os.path.join(dirpath, d))}
            for name in os.listdir(out_dir):
                if rel == Path(".") and _kept(name):
                    continue
                if name not in wanted:
                    p = out_dir / name
                    if p.is_dir() and not p.is_symlink():
                        shutil.rmtree(p)
                    else:
                        p.unlink()
                    changed += 1
        elif out_dir.exists() or out_dir.is_symlink():
            out_dir.unlink()
            changed += 1
        out_dir.mkdir(parents=True, exist_ok=True)
        for d in list(dirnames):
            sp = Path(dirpath) / d
            if sp.is_symlink():  # a linked directory stays a link
                dirnames.remove(d)
                changed += _sync_link(sp, out_dir / d)
        for f in filenames:
            sp, dp = Path(dirpath) / f, out_dir / f
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


def project_seed_names(app: Path) -> set[str]:
    """Stems of the CSV files under the project's seed-paths (dbt seed's node names)."""
    try:
        proj = yaml.safe_load((Path(app) / "dbt_project.yml").read_text()) or {}
    except (OSError, yaml.YAMLError):
        proj = {}
    names: set[str] = set()
    for sp in proj.get("seed-paths") or ["seeds"]:
        d = Path(app) / str(sp)
        if d.is_dir():
            names |= {p.stem for p in d.rglob("*.csv")}
    return names


class PreparedTrialRunner(TrialRunner):
    """One trial (agent none|sage) on the persistent scratch `root`, from the prepared broken
    database `db_file`. See the module docstring for what differs from TrialRunner."""

    def __init__(self, task_dir: Path, project_dir: Path, db_file: Path, agent: str, *, root: Path,
                 loaded_seeds, premerge=(), timeout: float = 900):
        root = Path(root).resolve()
        super().__init__(task_dir, project_dir, db_file, agent, workdir=root.parent,
                         mode="inprocess", timeout=timeout)
        self.root = root
        self.app = root / "app"
        self.loaded_seeds = set(loaded_seeds)
        # _no-op files merged before setup (the task's own one last); True = the task's only
        self.premerge = [] if premerge is True else list(premerge or [])
        self._premerge_task = premerge is True or bool(premerge)

    # dbt: partial parsing allowed, seeds already in the database not reloaded
    def _dbt(self, args: list[str], name: str, env: dict | None = None) -> str:
        if self._phase == "setup":
            self._log(f"{name} (in the prepared database)", 0.0, "")
            return ""
        args = list(args)
        if args == ["seed"]:
            new = sorted(project_seed_names(self.app) - self.loaded_seeds)
            if not new:
                self._log(f"{name} (all seeds already loaded)", 0.0, "")
                return ""
            args = ["seed", "--select", *new]
        env = {k: v for k, v in (env or {}).items() if k != "DBT_PARTIAL_PARSE"}
        env["DBT_WRITE_JSON"] = "False"  # run-comparison.sh's inputs; not part of the grade
        return super()._dbt(args, name, env=env)

    _phase = ""

    def prepare(self) -> None:
        t0 = time.monotonic()
        for d in ("sage", "scripts", "tests", "seeds", "solutions", "logs", "macros-generated"):
            shutil.rmtree(self.root / d, ignore_errors=True)
        for d in ("sage/solutions", "scripts", "tests", "seeds", "solutions", "logs"):
            (self.root / d).mkdir(parents=True, exist_ok=True)
        sync_tree(self.project_dir, self.app)
        self._check_profile()
        dbfiles.copy_file(self.db_file, self.app / f"{self.spec.db_name}.duckdb")
        for extra in self.premerge:
            _merge_from(self.app, Path(extra))
        no_op = self.task_dir / "seeds" / "_no-op.txt"
        if self._premerge_task and no_op.is_file():
            _merge_from(self.app, no_op)
        self.seconds["prepare"] = time.monotonic() - t0

    def setup(self) -> None:
        t0 = time.monotonic()
        setup_sh = self.task_dir / "setup.sh"
        if (self.task_dir / "setup").is_dir():
            shutil.copytree(self.task_dir / "setup", self.app / "setup", dirs_exist_ok=True)
        if setup_sh.exists():
            script = self._write_mapped(setup_sh.read_text(), self.app / "setup.sh")
            if plan_script(script.read_text()) is None:
                raise ValueError("setup.sh is not a plain patch + dbt script")
            self._phase = "setup"
            try:
                self._run_script(script, "setup")
            finally:
                self._phase = ""
            script.unlink(missing_ok=True)
        (self.app / "setup.sh").unlink(missing_ok=True)
        shutil.rmtree(self.app / "setup", ignore_errors=True)
        self.seconds["setup"] = time.monotonic() - t0


def _merge_from(app: Path, no_op: Path) -> None:
    """merge_no_op(app) reads app/seeds/_no-op.txt: stage the file there for the call."""
    staged = app / "seeds" / "_no-op.txt"
    had = staged.exists()
    old = staged.read_bytes() if had else None
    staged.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(no_op, staged)
    try:
        merge_no_op(app)
    finally:
        if had:
            staged.write_bytes(old)
        else:
            staged.unlink()
