"""Reliability suite, part 2: odd but valid projects must simply work (real dbt + DuckDB).

One project holds every oddity at once, in a directory whose name (with spaces, quotes and `$`)
differs from its dbt `name`, written to an output path just as odd: CRLF line endings, no trailing
newline, tabs, non-ASCII identifiers and comments, a model folder with spaces/quotes/`$`, nested
folders, versioned models, config blocks and a disabled model. One `--no-validate --pick all --yes`
build must write complete tasks whose patches round-trip with GNU patch, whose scripts run under
bash with /app and /sage mapped onto those odd paths, and the project must be copied to
`projects/<dbt name>`. Every odd file's own diff is round-tripped as well (the build picks only 5)."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from reliability_kit import (assert_complete_tasks, make_project, rel_env, roundtrip, run_build,  # noqa: F401
                             task_dirs, tree_state)

ODD_DIR = "odd proj 'q' $HOME"
NAME = "oddball"
SPACED = "models/my folder 'x' $y/stg_payments.sql"  # dbt forbids spaces in model names, not folders

ODD_MODELS: dict[str, bytes] = {
    # CRLF + tabs
    "models/staging/stg_orders.sql": (
        "select\r\n\torder_id,\r\n\tcustomer_id,\r\n\tcoalesce(amount, 0) as amount,\r\n\tstatus\r\n"
        "from {{ ref('raw_orders') }}\r\n").encode(),
    # no trailing newline, non-ASCII identifier and comment
    "models/staging/stg_customers.sql": (
        "-- clientes según la región (ünïcode comment)\n"
        "select\n    id as customer_id,\n    name as nombre_del_señor,\n"
        "    coalesce(region, 'unknown') as región\n"
        "from {{ ref('raw_customers') }}").encode(),
    # nested folders + config block
    "models/marts/deep/nested/fct_customers.sql": (
        "{{ config(materialized='table', tags=['odd']) }}\n\n"
        "select\n    c.customer_id,\n    c.\"región\" as region,\n    sum(o.amount) as total_amount,\n"
        "    count(*) as order_count\n"
        "from {{ ref('stg_customers') }} as c\n"
        "left join {{ ref('stg_orders') }} as o\n    on c.customer_id = o.customer_id\n"
        "where o.status != 'cancelled'\n"
        "group by c.customer_id, c.\"región\"\n").encode(),
    # versioned model (two versions)
    "models/marts/dim_orders_v1.sql": (
        "select order_id, customer_id, amount\nfrom {{ ref('stg_orders') }}\nwhere amount > 0\n").encode(),
    "models/marts/dim_orders_v2.sql": (
        "select order_id, customer_id, amount, status\nfrom {{ ref('stg_orders') }}\nwhere amount > 0\n").encode(),
    "models/marts/_versions.yml": (
        "version: 2\nmodels:\n  - name: dim_orders\n    latest_version: 2\n    versions:\n"
        "      - v: 1\n      - v: 2\n").encode(),
    # a folder and file name with spaces, quotes and $
    SPACED: ("select\n    order_id,\n    max(amount) as biggest\nfrom {{ ref('stg_orders') }}\n"
             "group by order_id\n").encode(),
    # disabled: must never be a target
    "models/marts/old_disabled.sql": (
        "{{ config(enabled=false) }}\nselect customer_id, sum(amount) as s\nfrom {{ ref('stg_orders') }}\n"
        "group by customer_id\n").encode(),
}
ODD_FILES = [k for k in ODD_MODELS if k.endswith(".sql") and "disabled" not in k]


@pytest.fixture(scope="session")
def odd_run(tmp_path_factory, rel_env):
    root = tmp_path_factory.mktemp("odd")
    project = make_project(root, name=NAME, dirname=ODD_DIR, models=ODD_MODELS)
    before = tree_state(project)
    out = root / "out put 'o' $dir" / "ade-bench-tasks"
    r = run_build([project, "--output-dir", out, "--no-validate", "--pick", "all", "--yes", "--json"], rel_env)
    return project, before, out, r


def test_odd_project_writes_complete_tasks(odd_run):
    project, before, out, r = odd_run
    assert r.returncode == 0, r.stderr[-4000:]
    ids = assert_complete_tasks(out, NAME)
    assert len(ids) >= 3
    assert (out / "projects" / NAME / "dbt_project.yml").is_file()  # projects/<dbt name>, not the dir name
    assert not (out / "projects" / ODD_DIR).exists()
    for tid in ids:
        data = yaml.safe_load((out / "tasks" / tid / "task.yaml").read_text(encoding="utf-8"))
        v = data["variants"][0]
        assert v["project_name"] == NAME and v["project_dir"] == str(out / "projects")
        assert "old_disabled" not in (out / "tasks" / tid / "setup" / "changes.patch").read_text(encoding="utf-8")
    assert tree_state(project) == before


def test_odd_patches_round_trip(odd_run, tmp_path):
    _, _, out, r = odd_run
    assert r.returncode == 0, r.stderr[-4000:]
    for d in task_dirs(out):
        roundtrip(out / "projects" / NAME, d, tmp_path / d.name)


def test_every_odd_file_diff_round_trips(odd_run, tmp_path):
    """Independent of which 5 the build picked: a one-token change in each odd file, diffed by
    adegen's byte-exact unified_diff, applies and reverts with GNU patch (CRLF, no newline at EOF,
    tabs, UTF-8, a path with spaces, quotes and $)."""
    from adegen.tasks.taskgen import unified_diff

    project, _, out, _ = odd_run
    for rel in ODD_FILES:
        work = tmp_path / re.sub(r"\W", "_", rel)
        shutil.copytree(project, work, symlinks=True)
        orig = (work / rel).read_bytes()
        mutant = re.sub(rb"(?i)\b(select)\b", b"SELECT", orig, count=1)
        assert mutant != orig, rel
        for old, new in ((orig, mutant), (mutant, orig)):
            patch = unified_diff(old, new, rel)
            r = subprocess.run(["patch", "-p1", "--batch", "-F0", "--no-backup-if-mismatch"], input=patch,
                               cwd=work, capture_output=True)
            assert r.returncode == 0, (rel, r.stdout, r.stderr, patch[:300])
            assert (work / rel).read_bytes() == new, rel


def _map(script: str, app: Path, sage: Path) -> str:
    """/app and /sage onto real paths, kept inside the script's own single quotes."""
    q = lambda p: str(p).replace("'", "'\\''")  # noqa: E731
    return script.replace("/sage", q(sage)).replace("/app", q(app))


def test_scripts_quote_paths_and_run_under_bash(odd_run, tmp_path):
    """setup.sh and solution.sh run with bash in a scratch copy whose path has spaces, quotes and $,
    with /app and /sage mapped onto it (sed-like text substitution that keeps the scripts' own
    quoting). dbt is a stub that records its arguments: this checks the shell level, the real dbt
    run of these scripts is the validator's job."""
    _, _, out, r = odd_run
    assert r.returncode == 0
    stub = tmp_path / "bin"
    stub.mkdir()
    log = tmp_path / "dbt.log"
    (stub / "dbt").write_text(f"#!/bin/bash\nprintf '%s\\n' \"$*\" >> {shlex.quote(str(log))}\n")
    (stub / "dbt").chmod(0o755)
    env = dict(os.environ, PATH=f"{stub}:{os.environ['PATH']}")
    for d in task_dirs(out):
        for name in ("setup.sh", "solution.sh"):
            text = (d / name).read_text()
            for tok in shlex.split(text, comments=True):  # every path token is a quoted word
                if tok.startswith("/"):
                    assert f"'{tok}'" in text or f'"{tok}"' in text, (d.name, name, tok)
        app = tmp_path / f"app $x 'y' {d.name}"
        sage = tmp_path / f"sage $x 'y' {d.name}"
        shutil.copytree(out / "projects" / NAME, app, symlinks=True)
        shutil.copytree(d, sage)
        shutil.copytree(d / "setup", app / "setup")
        before = tree_state(app)
        for name, cwd in (("setup.sh", app), ("solution.sh", app)):
            script = tmp_path / f"{d.name}-{name}"
            script.write_text(_map((d / name).read_text(), app, sage))
            res = subprocess.run(["bash", str(script)], cwd=cwd, env=env, capture_output=True, text=True)
            assert res.returncode == 0, (d.name, name, res.stdout, res.stderr)
            changed = tree_state(app) != before
            assert changed == (name == "setup.sh"), (d.name, name)
    assert "run" in log.read_text()


def test_no_copy_with_name_differing_from_directory(tmp_path, rel_env):
    """With --no-copy ade-bench finds the project as <project_dir>/<name>: a directory named
    otherwise cannot work, and the user is told so (exit 2, nothing written)."""
    project = make_project(tmp_path, name=NAME, dirname=ODD_DIR)
    before = tree_state(project)
    out = tmp_path / "out"
    r = run_build([project, "--output-dir", out, "--no-copy", "--no-validate", "--pick", "all"], rel_env)
    assert r.returncode == 2, r.stderr
    assert "must equal the dbt project name" in r.stderr and "dbt_project.yml" in r.stderr
    assert "Traceback" not in r.stderr and not out.exists()
    assert tree_state(project) == before
