"""A graded table whose name is too long for ade-bench's AUTO test names (issue 11 item 9): the task
excludes the AUTO tests and ships short-named stand-ins with the same grading; proven in the harness
emulation (real dbt + DuckDB): the broken state fails, the solved state passes."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from adegen.tasks import stand_in_tests
from adegen.discover.project import load_project
from adegen.tasks.task_yaml import PromptEntry, SeedEntry, Variant, update_task_yaml
from adegen.tasks.taskgen import TaskPlan, build_task_files, unified_diff
from adegen.backends import ValidatorSetup, make_validator

SHOPFIX = Path(__file__).resolve().parent / "fixtures" / "shopfix"
LONG = "customer_revenue_by_region_and_acquisition_channel_rolling_v2"  # 61 characters
REVENUE = "models/marts/customer_revenue.sql"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("longname") / "shopfix"
    shutil.copytree(SHOPFIX, root)
    (root / "models" / "marts" / f"{LONG}.sql").write_text(
        "select region, count(*) as customers, sum(total_amount) as revenue\n"
        "from {{ ref('customer_revenue') }}\ngroup by region\n")
    return root


@pytest.fixture(scope="module")
def validator(project, tmp_path_factory):
    v = make_validator(load_project(project), ValidatorSetup(tmp_path_factory.mktemp("longname-work"), jobs=1))
    v.baseline()
    yield v
    v.close()


def _task(tasks: Path, project: Path) -> Path:
    original = (project / REVENUE).read_bytes()
    mutant = original.replace(b"sum(amount)", b"max(amount)")
    plan = TaskPlan(task_id="shopfix900", description="sum -> max in customer_revenue",
                    prompts=[PromptEntry("base", f"Revenue per region in {LONG} looks too low. Can you fix it?")],
                    difficulty="medium", tags=["dbt", "shopfix"], test_setup_models=["customer_revenue", LONG],
                    solution_seeds=[SeedEntry(LONG)],
                    variant=Variant("duckdb", "shopfix", "shopfix", str(project.parent)),
                    seed_based=True, max_test_timeout_sec=120, solution_rebuild=["customer_revenue", LONG])
    files = build_task_files(plan, unified_diff(original, mutant, REVENUE), unified_diff(mutant, original, REVENUE), [])
    task = tasks / "shopfix900"
    for rel, data in files.files.items():
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_bytes(data)
    (task / "seeds").mkdir(exist_ok=True)
    return task


def test_task_files_use_short_stand_ins(project, tmp_path):
    task = _task(tmp_path, project)
    data = yaml.safe_load((task / "task.yaml").read_text())
    assert data["solution_seeds"] == [{"table_name": LONG, "exclude_tests": ["equality_test", "existence_test"]}]
    names = sorted(p.name for p in (task / "tests").iterdir())
    assert names == sorted(stand_in_tests.file_names(LONG))
    assert all(len(Path(n).stem) <= 55 and not n.upper().startswith("AUTO_") for n in names)
    assert len(f"AUTO_{LONG}_existence") > 55
    # exclude_columns added later re-render the stand-in equality test with the same columns
    update_task_yaml(task / "task.yaml", exclude_columns={LONG: ["customers"]})
    eq = (task / "tests" / stand_in_tests.file_names(LONG)[0]).read_text()
    assert "{% set cols_to_exclude = [\n    'customers'\n] %}" in eq
    assert "ade_bench_equality_test(" not in eq  # the macro's body, not a call the harness may not serve


def test_long_table_task_is_proven(project, validator, tmp_path):
    task = _task(tmp_path / "tasks", project)
    db = validator.prepare_database(tmp_path / "databases")
    proof = validator.prove(task, project, db)
    assert proof.ok and proof.broken_fails and proof.solved_passes, proof.detail
    eq, ex = (Path(n).stem for n in stand_in_tests.file_names(LONG))
    assert f"{eq}=failed" in proof.detail and f"{eq}=passed" in proof.detail and f"{ex}=passed" in proof.detail
    assert proof.expected_tests == 2
    assert (task / "seeds" / f"solution__{LONG}.csv").is_file()
