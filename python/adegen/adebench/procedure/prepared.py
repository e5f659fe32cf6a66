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
  solution seeds, with the `_no-op.txt` column types merged exactly as seed-schema.sh does; a
  solution seed that an earlier trial of the run loaded with the same CSV bytes and the same seed
  configuration is copied in from the `seed_cache` (harness.seedcache: keyed on that content)
  instead, and dbt loads only the rest (no dbt call when none is left);
- `premerge`: the task's `_no-op.txt` is merged into dbt_project.yml before setup (the merge is
  idempotent, so the test phase's own merge writes the same text), which saves dbt a full re-parse
  per phase; the merged keys only configure `solution__*` seeds.

The independent check stays `run_harness(..., mode="script")`.
"""
from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from adegen.dbt import sync_tree
from adegen.adebench.procedure import dbfiles, yamlc
from adegen.adebench.procedure.emulate import TrialConfig, TrialRunner, merge_no_op, plan_script
from adegen.adebench.procedure.seedcache import SeedCache, config_digest, relation_names, seed_key


def project_seed_files(app: Path) -> dict[str, list[Path]]:
    """dbt seed's node names (the stems of the CSV files under the project's seed-paths) and
    their files."""
    try:
        proj = yamlc.safe_load_file(Path(app) / "dbt_project.yml") or {}
    except (OSError, yaml.YAMLError):
        proj = {}
    files: dict[str, list[Path]] = {}
    for sp in proj.get("seed-paths") or ["seeds"]:
        d = Path(app) / str(sp)
        if d.is_dir():
            for p in sorted(d.rglob("*.csv")):
                files.setdefault(p.stem, []).append(p)
    return files


def project_seed_names(app: Path) -> set[str]:
    """Stems of the CSV files under the project's seed-paths (dbt seed's node names)."""
    return set(project_seed_files(app))


@dataclass(frozen=True)
class PreparedRoot:
    """Where and from what a prepared trial starts, besides its task: the persistent scratch
    `root`, the seeds its database already holds, the `_no-op` files merged into dbt_project.yml
    before setup (the task's own one after them, when there are any) and the run's seed cache."""

    root: Path
    loaded_seeds: frozenset = frozenset()
    premerge: tuple = ()
    seed_cache: SeedCache | None = None


class PreparedTrialRunner(TrialRunner):
    """One trial (agent none|sage) on the persistent scratch root, from the prepared broken
    database `db_file`. See the module docstring for what differs from TrialRunner."""

    def __init__(self, task_dir: Path, project_dir: Path, db_file: Path, agent: str, prepared: PreparedRoot):
        root = Path(prepared.root).resolve()
        super().__init__(task_dir, project_dir, db_file, agent, TrialConfig(workdir=root.parent, mode="inprocess"))
        self.root = root
        self.app = root / "app"
        self.loaded_seeds = set(prepared.loaded_seeds)
        self.premerge = list(prepared.premerge)
        self.seed_cache = prepared.seed_cache

    # dbt: setup's dbt lines are the prepared database; partial parsing allowed; seeds already in
    # the database not reloaded
    def _dbt(self, args: list[str], name: str, env: dict | None = None) -> str:
        if self._phase == "setup":
            self._log(f"{name} (in the prepared database)", 0.0, "")
            return ""
        env = {k: v for k, v in (env or {}).items() if k != "DBT_PARTIAL_PARSE"}
        env["DBT_WRITE_JSON"] = "False"  # run-comparison.sh's inputs; not part of the grade
        if list(args) != ["seed"]:
            return super()._dbt(list(args), name, env=env)
        t0 = time.monotonic()
        files = project_seed_files(self.app)
        new = sorted(set(files) - self.loaded_seeds)
        keys = self._seed_keys(new, files, env)
        cached = self.seed_cache.restore(self.db_path, keys) if keys else set()
        rest = [s for s in new if s not in cached]
        if not rest:
            what = "all seeds already loaded" + (f"; {len(cached)} from the seed cache" if cached else "")
            self._log(f"{name} ({what})", time.monotonic() - t0, "")
            return ""
        # kept only when dbt created the table (no relation of that name before): a load into an
        # existing table keeps that table's columns, which a restore could not know
        present = relation_names(self.db_path, [s for s in rest if s in keys])
        fresh = [s for s in rest if s in keys and s not in present]
        out = super()._dbt(["seed", "--select", *rest], name, env=env)
        if self.steps[-1].ok:
            for s in fresh:
                self.seed_cache.store(self.db_path, keys[s], s)
        return out

    @property
    def db_path(self) -> Path:
        return self.app / f"{self.spec.db_name}.duckdb"

    def _seed_keys(self, names: list[str], files: dict[str, list[Path]], env: dict) -> dict[str, str]:
        """The seed-cache key of each seed that has exactly one CSV file (none without a cache)."""
        if self.seed_cache is None or not names:
            return {}
        digest = config_digest(self.app) + "|" + repr(sorted({**self.env, **env}.items()))
        return {s: seed_key(s, files[s][0].read_bytes(), digest) for s in names if len(files[s]) == 1}

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
        dbfiles.copy_file(self.db_file, self.db_path)
        for extra in self.premerge:
            merge_no_op_file(self.app, Path(extra))
        no_op = self.task_dir / "seeds" / "_no-op.txt"
        if self.premerge and no_op.is_file():
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
