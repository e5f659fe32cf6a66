"""No trace of the change in the agent's sandbox (issue 52, item 4). After a written task's setup.sh
has run the way ade-bench runs it (the harness emulation in script mode: real bash, GNU patch, find
and touch, dbt as subprocesses), every file and directory of the project has one modification time,
there is no .orig or .rej, and the project copy the task ships holds nothing of dbt's from the
intact build (target/, logs/, partial-parse state): the only target/ is the broken build's own."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from adegen.adebench.procedure.emulate import TrialConfig, TrialRunner, map_paths
from adegen.calibrate.tasks import load_tasks
from adegen.core.paths import package_root
from adegen.tasks.output import copy_project
from adegen.tasks.taskgen import SETUP_PATCH, unified_diff
from adegen.validate.duckdb.fastprove import patched_paths

STALE = ("target", "logs", "dbt_packages", "partial_parse.msgpack", "manifest.json", "dbt.log")


def mtimes(root: Path) -> dict[str, int]:
    """rel path -> modification time (ns) of every file, directory and symlink under `root`
    (`root` itself left out: ade-bench removes setup.sh and setup/ from it after setup)."""
    out = {}
    for here, dirs, files in os.walk(root):
        for n in dirs + files:
            p = Path(here) / n
            out[p.relative_to(root).as_posix()] = p.lstat().st_mtime_ns
    return out


def _spread(listing: dict[str, int]) -> dict[int, list[str]]:
    by_time: dict[int, list[str]] = {}
    for rel, t in sorted(listing.items()):
        by_time.setdefault(t, []).append(rel)
    return {t: rels[:6] for t, rels in by_time.items()}


def test_after_setup_every_file_has_one_mtime_and_no_patch_leftovers(acme_tasks_built, tmp_path):
    """setup.sh in script mode (a dbt process per call, about 15 CPU seconds) on the task whose patch
    touches the most files (a model file it adds too, when the build has a moved CTE): the one-time
    touch covers every file whatever the patch; GNU patch's leftovers on a hunk at an offset or one
    that fails are test_the_setup_patch_leaves_no_backup_reject_or_output's."""
    out, _doc = acme_tasks_built
    task = max(load_tasks(out), key=lambda t: len(patched_paths(t.task_dir / "setup" / "changes.patch")))
    runner = TrialRunner(task.task_dir, task.project_dir, task.db_file, "none",
                         TrialConfig(workdir=tmp_path, mode="script", packages_from=task.project_dir))
    runner.prepare()
    # the copy's own times differ (adegen writes profiles.yml, the database is a fresh copy)
    assert len(set(mtimes(runner.app).values())) > 1
    runner.setup()
    listing = mtimes(runner.app)
    changed = patched_paths(task.task_dir / "setup" / "changes.patch")
    assert changed and changed <= set(listing), (changed, sorted(listing))
    assert (runner.app / "target" / "run_results.json").is_file()  # the broken build's, kept
    assert len(set(listing.values())) == 1, _spread(listing)
    assert not [r for r in listing if r.endswith((".orig", ".rej"))]
    assert not (runner.app / "setup").exists() and not (runner.app / "setup.sh").exists()
    shutil.rmtree(runner.root)


def test_the_shipped_copy_holds_nothing_of_the_intact_build(acme_tasks_built, example_project, tmp_path):
    """The build's copy, and a copy of a project that has been built and run in place."""
    out, _doc = acme_tasks_built
    for task_dir in (out / "tasks").iterdir():
        assert not [p for p in task_dir.rglob("*") if p.name in STALE], task_dir
    project = tmp_path / "acme"
    shutil.copytree(example_project, project)
    (project / "packages.yml").unlink()  # its `local: ../` (adegen itself) only resolves in the repository
    for rel in ("target/partial_parse.msgpack", "target/manifest.json", "logs/dbt.log",
                "dbt_packages/dbt_utils/dbt_project.yml", "acme.duckdb"):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text("intact build\n")
    for copy in (out / "projects" / "acme", tmp_path / "copy"):
        if not copy.exists():
            copy_project(project, copy, profiles_yml="{}\n", adegen_root=package_root())
        found = [p.relative_to(copy).as_posix() for p in copy.rglob("*")
                 if p.name in STALE or p.suffix in (".duckdb", ".wal")]
        assert not found, (copy, found)


@pytest.mark.parametrize("case", ["offset", "failing hunk"])
def test_the_setup_patch_leaves_no_backup_reject_or_output(tmp_path, case):
    """The patch line setup.sh runs, through bash, on a file it fits only at an offset and on one it
    does not fit: GNU patch's defaults would leave models/m.sql.orig (and .rej); it leaves neither,
    and prints no "patching file" line into the agent's terminal."""
    old = b"".join(b"select %d as c\n" % i for i in range(12))
    new = old.replace(b"select 6 as c\n", b"select 66 as c\n")
    on_disk = b"-- moved\n" + old if case == "offset" else old.replace(b"select 6 as c", b"select 7 as c")
    results = {}
    for name, line in (("default", "patch -p1 < '/app/setup/changes.patch'"), ("setup.sh", SETUP_PATCH)):
        app = tmp_path / name / "app"
        (app / "setup").mkdir(parents=True)
        (app / "models").mkdir()
        (app / "setup" / "changes.patch").write_bytes(unified_diff(old, new, "models/m.sql"))
        (app / "models" / "m.sql").write_bytes(on_disk)
        r = subprocess.run(["bash", "-c", map_paths(line, tmp_path / name)], cwd=app, capture_output=True,
                           text=True)
        results[name] = (r, sorted(p.relative_to(app).as_posix() for p in app.rglob("*")))
    assert "models/m.sql.orig" in results["default"][1]  # what the options prevent
    r, names = results["setup.sh"]
    assert names == ["models", "models/m.sql", "setup", "setup/changes.patch"], names
    assert "patching file" not in r.stdout + r.stderr
    if case == "offset":
        patched = (tmp_path / "setup.sh" / "app" / "models" / "m.sql").read_bytes()
        assert r.returncode == 0 and patched == b"-- moved\n" + new
    else:
        assert r.returncode == 1 and "FAILED" in r.stdout + r.stderr
