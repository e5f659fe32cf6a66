"""Any DuckDB file the user's dbt wrote (issue 53): a project whose `on-run-start` creates a typed
macro (`area_of_circle(radius FLOAT)`) that a model calls, built by `dbt build` with this DuckDB
(storage v2.0.0 on DuckDB 2), so the user's file holds the macro, the model relations and the raw
tables. ade-bench's image cannot open that file, so the tasks name a copy converted to storage
v1.4.0 (the first that keeps the macro's parameter types); a build on it (--db-path) proves its
tasks, and the run record says the file was converted and why."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

import realfix as rf  # noqa: E402
from adegen.adebench.procedure import storage_version  # noqa: E402
from adegen.adebench.procedure.dbfiles import harness_reads  # noqa: E402

REPO = Path(__file__).resolve().parents[2]

AREAS_SQL = """{{ config(materialized='table') }}
select
    o.status,
    count(*) as order_count,
    round(sum(area_of_circle(o.amount::float)), 2) as total_area
from {{ ref('stg_orders') }} as o
where o.amount > 10
group by o.status
"""


@pytest.fixture(scope="module")
def circle_project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("circle") / "circles"
    rf.shop_project(root, "circles", project_extra={
        "on-run-start": ["create or replace macro area_of_circle(radius FLOAT) as pi() * radius * radius"]},
        models={"models/marts/order_areas.sql": AREAS_SQL})
    r = subprocess.run([sys.executable, "-c", "from dbt.cli.main import cli; cli()", "build", "--profiles-dir", "."],
                       cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:]
    for d in ("target", "logs"):
        subprocess.run(["rm", "-rf", str(root / d)], check=True)
    return root


@pytest.fixture(scope="module")
def circle_build(circle_project, tmp_path_factory):
    out = tmp_path_factory.mktemp("circle-out")
    env = {**os.environ, "PYTHONPATH": str(REPO / "python"), "ADEGEN_SHIFTED_CLOCK": "0"}
    r = subprocess.run([sys.executable, "-m", "adegen.build", str(circle_project), "--db-path", str(circle_project),
                        "--output-dir", str(out), "--pick", "all", "--yes", "--json", "--count", "3"],
                       capture_output=True, text=True, env=env, cwd=str(circle_project.parent))
    assert r.returncode == 0, r.stderr[-4000:]
    return json.loads(r.stdout)


def test_the_users_file_holds_the_typed_macro(circle_project):
    import duckdb

    con = duckdb.connect(str(circle_project / "circles.duckdb"), read_only=True)
    try:
        rows = con.execute("select parameter_types from duckdb_functions() "
                           "where function_name = 'area_of_circle'").fetchall()
    finally:
        con.close()
    assert rows == [(["FLOAT"],)]
    assert storage_version(circle_project / "circles.duckdb")  # whatever this DuckDB writes


def test_build_proves_tasks_and_says_the_file_was_converted(circle_build, circle_project):
    doc = circle_build
    tasks = doc["tasks"]
    assert tasks and all(t["proven"] for t in tasks), [t["proof_detail"][:600] for t in tasks]
    rt = doc["runtime"]
    assert rt["storage"]["version"] == "v1.4.0", rt["storage"]
    assert "typed macro main.area_of_circle(radius FLOAT)" in rt["storage"]["reason"], rt["storage"]
    source = storage_version(circle_project / "circles.duckdb")
    record = json.loads(Path(doc["run_record"]).read_text())
    if harness_reads(source):  # an older DuckDB wrote the user's file: the tasks name it
        assert "conversion" not in doc["database"]
        return
    # the tasks, the validator and the proofs use a converted copy ade-bench can open (with duckdb
    # 1.4+: the typed macro needs storage v1.4.0), and the run record says so
    conv = doc["database"]["conversion"]
    copy = Path(doc["output_dir"]) / "databases" / "circles.duckdb"
    assert f"has storage {source}, which ade-bench's image (duckdb 1.3.0) cannot open" in conv, conv
    assert f"converted from storage {source} to v1.4.0" in conv and "needs duckdb 1.4 or newer" in conv, conv
    assert doc["database"]["db_file"] == str(copy) and storage_version(copy).startswith("v1.4.0")
    assert record["database"]["conversion"] == conv
    task = yaml.safe_load((Path(doc["output_dir"]) / "tasks" / tasks[0]["task_id"] / "task.yaml").read_text())
    assert {v.get("db_dir") for v in task["variants"]} == {str(copy.parent)}
    assert str(copy) in rt["db_note"], rt["db_note"]


def test_an_untyped_file_is_shipped_readable_by_ade_bench(tmp_path):
    """DuckDB 2's file without typed macros: the tasks' copy is storage v1.0.0, which duckdb 1.3.0
    opens, with the same objects; a file ade-bench already opens is left as it is."""
    from adegen.backends.duckdb import DuckDBBackend

    root = rf.shop_project(tmp_path / "plain", "plain")
    src = root / "plain.duckdb"
    opts = SimpleNamespace(db_path=root, output_dir=tmp_path / "out")
    note = DuckDBBackend().ship_database(SimpleNamespace(db_name="plain"), opts)
    if harness_reads(storage_version(src)):
        assert note is None and opts.db_path == root
        return
    copy = tmp_path / "out" / "databases" / "plain.duckdb"
    assert opts.db_path == copy.parent.resolve() and harness_reads(storage_version(copy))
    assert "converted from storage v2" in note and "needs duckdb" not in note, note
    again = SimpleNamespace(db_path=copy.parent, output_dir=tmp_path / "out2")
    assert DuckDBBackend().ship_database(SimpleNamespace(db_name="plain"), again) is None
    assert again.db_path == copy.parent
