"""taskgen: byte-exact unified diffs (GNU patch round trip) and the task.yaml / script formats."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from adegen.tasks.task_yaml import PromptEntry, SeedEntry, Variant
from adegen.tasks.taskgen import (TaskPlan, build_task_files, render_setup_sh, render_solution_sh, render_task_yaml,
                            assertion_file_name, unified_diff)

CASES = {
    "lf": (b"select\n  a,\n  max(b) as b\nfrom t\nleft join u on 1=1\nwhere x\n",
           b"select\n  a,\n  sum(b) as b\nfrom t\nleft join u on 1=1\nwhere x\n"),
    "crlf": (b"select\r\n  a,\r\n  max(b) as b\r\nfrom t\r\nleft join u on 1=1\r\nwhere x\r\n",
             b"select\r\n  a,\r\n  sum(b) as b\r\nfrom t\r\nleft join u on 1=1\r\nwhere x\r\n"),
    "no_newline_last_line": (b"select 1\nfrom x\nleft join y", b"select 1\nfrom x\njoin y"),
    "no_newline_elsewhere": (b"a\nb\nc\nd\ne\nf\ng\nh\ni\nj", b"a\nB\nc\nd\ne\nf\ng\nh\ni\nj"),
    "crlf_no_newline": (b"a\r\nb\r\nc", b"a\r\nb\r\nC"),
    "latin1_bytes": (b"select '\xe9t\xe9' as s,\n  sum(x)\nfrom t\n", b"select '\xe9t\xe9' as s,\n  max(x)\nfrom t\n"),
    "two_hunks": (b"".join(b"l%d\n" % i for i in range(30)),
                  b"".join((b"L%d\n" if i in (2, 25) else b"l%d\n") % i for i in range(30))),
}


def _patch(cwd: Path, patch: bytes) -> subprocess.CompletedProcess:
    return subprocess.run(["patch", "-p1", "--batch"], input=patch, cwd=cwd, capture_output=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_diff_round_trips_with_gnu_patch(tmp_path, name):
    old, new = CASES[name]
    (tmp_path / "models").mkdir()
    f = tmp_path / "models" / "m.sql"
    f.write_bytes(old)
    setup, solution = unified_diff(old, new, "models/m.sql"), unified_diff(new, old, "models/m.sql")
    assert setup.startswith(b"--- a/models/m.sql\n+++ b/models/m.sql\n@@ -")
    r = _patch(tmp_path, setup)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f.read_bytes() == new
    r = _patch(tmp_path, solution)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f.read_bytes() == old
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["m.sql", "models"]  # no .orig/.rej


def test_diff_matches_gnu_diff(tmp_path):
    old, new = CASES["lf"]
    (tmp_path / "a").write_bytes(old)
    (tmp_path / "b").write_bytes(new)
    r = subprocess.run(["diff", "-u", "a", "b"], cwd=tmp_path, capture_output=True)
    ours = unified_diff(old, new, "x.sql").split(b"\n", 2)[2]
    assert ours == r.stdout.split(b"\n", 2)[2]
    assert b"\\ No newline at end of file" in unified_diff(*CASES["no_newline_last_line"], "m.sql")


def test_solution_is_exact_inverse():
    for old, new in CASES.values():
        setup, solution = unified_diff(old, new, "m.sql"), unified_diff(new, old, "m.sql")
        swapped = []
        for line in setup.split(b"\n"):
            if line.startswith(b"@@"):
                parts = line.split(b" ")
                line = b" ".join([parts[0], b"-" + parts[2][1:], b"+" + parts[1][1:], *parts[3:]])
            elif line.startswith(b"-") and not line.startswith(b"---"):
                line = b"+" + line[1:]
            elif line.startswith(b"+") and not line.startswith(b"+++"):
                line = b"-" + line[1:]
            swapped.append(line)
        # same lines, with each change block's -/+ groups in the other order
        assert sorted(swapped) == sorted(solution.split(b"\n"))


def _spec(*, db_type="duckdb", db_name="acme", db_dir=None, exclude_columns=None, **kw) -> TaskPlan:
    extra = {"db_dir": db_dir} if db_dir and db_type == "duckdb" else {}
    excl = exclude_columns or {}
    base = dict(task_id="acme007", description="Wrong join type in int_orders_enriched: `left join` -> `join`",
                prompts=[PromptEntry("base", "Some orders are missing from int_orders_enriched.\nCan you fix it?")],
                difficulty="medium", tags=["dbt", "debugging", "join-logic", "acme"],
                test_setup_models=["int_orders_enriched", "fct_orders"],
                solution_seeds=[SeedEntry("fct_orders", exclude_columns=excl.get("fct_orders", []))],
                variant=Variant(db_type=db_type, db_name=db_name, project_name="acme", project_dir="/out/projects",
                                extra=extra))
    base.update(kw)
    return TaskPlan(**base)


def test_task_yaml_fields_exact():
    data = yaml.safe_load(render_task_yaml(_spec()))
    assert list(data) == ["task_id", "status", "description", "prompts", "author_name", "author_email",
                          "difficulty", "tags", "test_setup", "solution_seeds", "variants"]
    assert data["prompts"] == [{"key": "base", "prompt": "Some orders are missing from int_orders_enriched.\nCan you fix it?"}]
    assert data["author_name"] == "ade-bench-plugin" and data["author_email"] == ""
    assert data["test_setup"] == "dbt run --select int_orders_enriched fct_orders"
    assert data["solution_seeds"] == [{"table_name": "fct_orders"}]
    assert data["variants"] == [{"db_type": "duckdb", "db_name": "acme", "project_type": "dbt",
                                 "project_name": "acme", "project_dir": "/out/projects"}]
    assert "db_dir" not in render_task_yaml(_spec())


def test_task_yaml_extras_only_when_asked():
    text = render_task_yaml(_spec(db_dir="/dbs", seed_based=True, status="dev", max_test_timeout_sec=120,
                                  exclude_columns={"fct_orders": ["days_open"]}))
    data = yaml.safe_load(text)
    assert data["status"] == "dev"
    assert data["variants"][0]["db_dir"] == "/dbs"
    assert data["test_setup"] == "dbt seed\ndbt run --select int_orders_enriched fct_orders"
    assert data["solution_seeds"] == [{"table_name": "fct_orders", "exclude_columns": ["days_open"]}]
    assert data["max_test_timeout_sec"] == 120
    snow = yaml.safe_load(render_task_yaml(_spec(db_type="snowflake", db_name="ACME", db_dir="/dbs")))
    assert "db_dir" not in snow["variants"][0] and snow["variants"][0]["db_type"] == "snowflake"


def test_task_yaml_validates_against_ade_bench():
    hm = pytest.importorskip("ade_bench.harness_models", reason="ade-bench (ade_bench.harness_models) not installed")
    data = yaml.safe_load(render_task_yaml(_spec(db_dir="/dbs")))
    for v in data["variants"]:
        hm.VariantConfig(**v)
    for s in data["solution_seeds"]:
        hm.SolutionSeedConfig(**s)


def test_scripts():
    assert render_setup_sh(False) == (
        "#!/bin/bash\npatch -p1 --silent --no-backup-if-mismatch --reject-file=- < '/app/setup/changes.patch'\n\n"
        "# Run dbt to materialize the broken state\ndbt deps\ndbt run\n\n"
        "# One modification time for every file, so the changed one does not stand out\n"
        "find . -exec touch -h -r dbt_project.yml {} +\n")
    assert "dbt seed\ndbt run\n" in render_setup_sh(True)
    assert render_solution_sh(["fct_orders"]) == ("#!/bin/bash\npatch -p1 < '/sage/solutions/changes.patch'\n\n"
                                                  "dbt run --select fct_orders\n")


def test_assertion_file_names():
    used: set[str] = set()
    a = assertion_file_name("acme001", "refs", used)
    b = assertion_file_name("acme001", "refs", used)
    assert a == "acme001_refs.sql" and b == "acme001_refs_2.sql"
    long = assertion_file_name("a_very_long_project_name_for_tests001", "column_" + "x" * 80, used)
    assert len(long) - len(".sql") <= 55
    assert not assertion_file_name("AUTO_x001", "refs", used).upper().startswith("AUTO_")


def test_build_task_files_tree():
    old, new = CASES["lf"]
    files = build_task_files(_spec(), unified_diff(old, new, "m.sql"), unified_diff(new, old, "m.sql"),
                             [("refs", "select 1 where false\n")])
    assert sorted(files.files) == ["setup.sh", "setup/changes.patch", "solution.sh", "solutions/changes.patch",
                                   "task.yaml", "tests/acme007_refs.sql"]
