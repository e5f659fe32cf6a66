"""The fast trial: the in-process harness emulation on a persistent scratch root, starting from a
database that already holds what setup.sh's dbt commands produce.

`Validator.prove` (fast path) uses it for tasks adegen wrote itself, whose setup.sh is `patch`
+ `dbt deps` / `dbt seed` / `dbt run` and whose patches touch model files only. The caller derives
the broken database (the intact build, the mutated model and everything downstream of it dropped
and rebuilt from the mutant) and passes it as `db_file`; everything after setup runs as in
`TrialRunner` ("inprocess" mode), with these differences, none of which changes the graded state:

- the scratch root persists between trials: the project copy is synced file by file
  (`adegen.dbt.sync_tree`, the shared copy policy) instead of copied, and dbt partial-parses (target/ is kept; run-dbt-test.sh's
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

import shutil
from pathlib import Path

import yaml

from ..dbt import sync_tree
from . import dbfiles, yamlc
from .emulate import TrialConfig, TrialRunner, merge_no_op, plan_script


def project_seed_names(app: Path) -> set[str]:
    """Stems of the CSV files under the project's seed-paths (dbt seed's node names)."""
    try:
        proj = yamlc.safe_load((Path(app) / "dbt_project.yml").read_text()) or {}
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
                 loaded_seeds, premerge=()):
        root = Path(root).resolve()
        super().__init__(task_dir, project_dir, db_file, agent, TrialConfig(workdir=root.parent, mode="inprocess"))
        self.root = root
        self.app = root / "app"
        self.loaded_seeds = set(loaded_seeds)
        # _no-op files merged before setup (the task's own one last); True = the task's only
        self.premerge = [] if premerge is True else list(premerge or [])
        self._premerge_task = premerge is True or bool(premerge)

    # dbt: setup's dbt lines are the prepared database; partial parsing allowed; seeds already in
    # the database not reloaded
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

    def _run_script(self, script: Path, name: str) -> str:
        if self._phase == "setup" and plan_script(script.read_text()) is None:
            raise ValueError("setup.sh is not a plain patch + dbt script")
        return super()._run_script(script, name)

    def _make_dirs(self) -> None:
        for d in ("sage", "scripts", "tests", "seeds", "solutions", "logs", "macros-generated"):
            shutil.rmtree(self.root / d, ignore_errors=True)
        super()._make_dirs()

    def _place_project(self) -> None:
        sync_tree(self.project_dir, self.app)

    def _place_database(self) -> None:
        dbfiles.copy_file(self.db_file, self.app / f"{self.spec.db_name}.duckdb")
        for extra in self.premerge:
            merge_no_op_file(self.app, Path(extra))
        no_op = self.task_dir / "seeds" / "_no-op.txt"
        if self._premerge_task and no_op.is_file():
            merge_no_op_file(self.app, no_op)

    def setup(self) -> None:
        super().setup()
        (self.app / "setup.sh").unlink(missing_ok=True)


def merge_no_op_file(app: Path, no_op: Path) -> None:
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
