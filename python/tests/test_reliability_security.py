"""Reliability suite, part 5: security (real dbt + DuckDB).

* YAML is loaded safely: a `!!python/object/apply` tag in dbt_project.yml, profiles.yml or a
  pattern file is refused with exit 2 naming the file, and in a surveyed task.yaml the task is
  skipped with a warning; the tag's command (touch a canary file) never runs.
* Surveyed patches of existing tasks are only parsed, never applied, and a patch whose paths
  escape the root (`../`, absolute) is rejected with a warning; the files it names stay untouched.
* A symlink in the project that points outside it is not followed when copying (the secret it
  points at appears nowhere in the output), nor read by discovery.
* Generated scripts quote every path (also run under bash with odd paths in test_reliability_odd.py)."""
from __future__ import annotations

import os
import shlex
import textwrap
from pathlib import Path

import pytest

from reliability_kit import (assert_complete_tasks, make_project, rel_env, run_build, task_dirs,  # noqa: F401
                             tree_state)

SECRET = "TOPSECRET-7f3a9c-never-copy-me"


def _tag(canary: Path) -> str:
    return f"!!python/object/apply:os.system [{shlex.quote('touch ' + str(canary))!r}]"


@pytest.mark.parametrize("where", ["dbt_project.yml", "profiles.yml", "pattern"])
def test_python_yaml_tag_is_refused(where, tmp_path, rel_env):
    canary = tmp_path / "CANARY"
    tag = _tag(canary)
    extra, args = {}, []
    if where == "dbt_project.yml":
        extra["dbt_project.yml"] = f"name: tiny\nprofile: tiny\nconfig-version: 2\nvars:\n  x: {tag}\n"
    elif where == "profiles.yml":
        extra["profiles.yml"] = f"tiny:\n  target: dev\n  outputs:\n    dev: {tag}\n"
    project = make_project(tmp_path, extra=extra)
    if where == "pattern":
        pd = tmp_path / "pd"
        pd.mkdir()
        (pd / "evil.yaml").write_text(f"patterns:\n  - {tag}\n")
        args = ["--patterns-dir", pd]
    before = tree_state(project)
    out = tmp_path / "out"
    r = run_build([project, "--output-dir", out, "--no-validate", "--pick", "all", *args], rel_env)
    assert r.returncode == 2, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    fname = "evil.yaml" if where == "pattern" else where
    assert fname in r.stderr and "!!python/object" in r.stderr, r.stderr
    assert not canary.exists() and not out.exists()
    assert tree_state(project) == before


@pytest.fixture(scope="session")
def hostile_run(tmp_path_factory, rel_env):
    """One build over hostile surroundings: a secret outside the project reached by symlinks, and
    an output tasks/ dir holding a task.yaml with a python tag plus patches escaping the root."""
    root = tmp_path_factory.mktemp("hostile")
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.sql").write_text(f"select '{SECRET}' as s\n")
    (outside / "secret.txt").write_text(SECRET + "\n")
    victim = outside / "victim.sql"
    victim.write_text("select 1 as untouched\n")
    project = make_project(root)
    (project / "models" / "leak.sql").symlink_to(outside / "secret.sql")  # absolute link out
    (project / "notes").mkdir()
    (project / "notes" / "secret.txt").symlink_to(os.path.relpath(outside / "secret.txt", project / "notes"))
    (project / "models" / "staging" / "alias.sql").symlink_to("stg_orders.sql")  # inside: fine to keep
    before = tree_state(project)
    out = root / "out"
    tasks = out / "tasks"
    canary = root / "CANARY"
    (tasks / "tiny001").mkdir(parents=True)
    (tasks / "tiny001" / "task.yaml").write_text(f"task_id: tiny001\nvariants: {_tag(canary)}\n")
    escaping = {"tiny002": os.path.relpath(victim, project), "tiny003": str(victim)}  # ../ and absolute
    for tid, target in escaping.items():
        d = tasks / tid
        (d / "setup").mkdir(parents=True)
        (d / "task.yaml").write_text(textwrap.dedent(f"""\
            task_id: {tid}
            status: ready
            description: hostile
            prompts: [{{key: base, prompt: fix it}}]
            difficulty: easy
            variants: [{{db_type: duckdb, db_name: tiny, project_type: dbt, project_name: tiny, project_dir: x}}]
            """))
        (d / "setup" / "changes.patch").write_text(
            f"--- a/{target}\n+++ b/{target}\n@@ -1 +1 @@\n-select 1 as untouched\n+select 2 as pwned\n")
    survey_before = tree_state(tasks)
    r = run_build([project, "--output-dir", out, "--no-validate", "--pick", "all", "--yes", "--count", "3"], rel_env)
    return dict(root=root, project=project, before=before, out=out, r=r, canary=canary, victim=victim,
                survey_before=survey_before)


def test_surveyed_task_yaml_with_python_tag_is_skipped(hostile_run):
    r = hostile_run["r"]
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Traceback" not in r.stderr
    assert f"skipped {hostile_run['out'] / 'tasks' / 'tiny001' / 'task.yaml'}" in r.stderr, r.stderr[-3000:]
    assert not hostile_run["canary"].exists()


def test_escaping_patches_rejected_never_applied(hostile_run):
    r, out = hostile_run["r"], hostile_run["out"]
    assert r.returncode == 0, r.stderr[-3000:]
    for tid in ("tiny002", "tiny003"):
        assert any(tid in ln and "path escapes the project root" in ln for ln in r.stderr.splitlines()), \
            r.stderr[-3000:]
    assert hostile_run["victim"].read_text() == "select 1 as untouched\n"
    assert tree_state(hostile_run["project"]) == hostile_run["before"]
    after = tree_state(out / "tasks")
    for k, v in hostile_run["survey_before"].items():  # existing tasks are read, never modified
        assert after.get(k) == v, k
    new = [d.name for d in task_dirs(out) if d.name not in ("tiny001", "tiny002", "tiny003")]
    assert new and min(new) == "tiny004"  # ids continue after the surveyed ones


def test_symlinks_out_of_the_project_are_not_followed(hostile_run):
    out, root = hostile_run["out"], hostile_run["root"]
    assert hostile_run["r"].returncode == 0
    copy = out / "projects" / "tiny"
    assert (copy / "dbt_project.yml").is_file()
    assert not (copy / "models" / "leak.sql").exists() and not (copy / "notes" / "secret.txt").exists()
    for dirpath, dirnames, filenames in os.walk(out):
        for n in dirnames + filenames:
            p = Path(dirpath) / n
            if p.is_symlink():  # only links that stay inside the copy survive
                assert p.resolve().is_relative_to(copy.resolve()), p
            elif p.is_file():
                assert SECRET.encode() not in p.read_bytes(), p
    assert SECRET not in hostile_run["r"].stdout + hostile_run["r"].stderr
    assert (root / "outside" / "secret.txt").read_text() == SECRET + "\n"


def test_generated_scripts_quote_every_path(hostile_run):
    out = hostile_run["out"]
    new = [d for d in task_dirs(out) if d.name not in ("tiny001", "tiny002", "tiny003")]
    assert new
    for d in new:
        for name in ("setup.sh", "solution.sh"):
            text = (d / name).read_text()
            for tok in shlex.split(text, comments=True):
                if "/" in tok and tok not in ("-p1",):
                    assert f"'{tok}'" in text, (d.name, name, tok)
