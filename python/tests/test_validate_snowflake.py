"""EmulatorValidator (adegen.validate.snowflake.validator) on integration_tests_snowflake (`acme_sf`) with a
real fakesnow server and dbt-snowflake: a hand-made task proven on the emulator, a mutant the
emulator cannot run reported unproven, servers always stopped.

Everything runs on tmp_path copies: the repository tree is never written to."""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
import yaml

pytest.importorskip("fakesnow", reason="fakesnow is not installed (pip install 'adegen[snowflake-emulator]', "
                                       "i.e. fakesnow[server]==0.12.1); Snowflake emulator proofs skipped")
pytest.importorskip("dbt.adapters.snowflake", reason="dbt-snowflake is not installed")

from adegen.discover.project import load_project  # noqa: E402
from adegen.tasks.task_yaml import PromptEntry, SeedEntry, Variant  # noqa: E402
from adegen.tasks.taskgen import TaskPlan, build_task_files, unified_diff  # noqa: E402
from adegen.backends import ValidatorSetup, make_validator  # noqa: E402
from adegen.validate.snowflake.validator import EmulatorValidator  # noqa: E402
from reliability_kit import process_alive

REPO = Path(__file__).resolve().parents[2]
SF = REPO / "integration_tests_snowflake"
MODEL = "models/staging/stg_products.sql"

if not (SF / "dbt_project.yml").is_file():
    pytest.skip("integration_tests_snowflake/ is missing", allow_module_level=True)


def shipped_copy(dest: Path) -> Path:
    """The project as a task ships it (output.copy_project drops the local adegen package)."""
    shutil.copytree(SF, dest, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages", "package-lock.yml"))
    (dest / "packages.yml").unlink()
    return dest


def make_task(tasks: Path, task_id: str, original: str, mutant: str, table: str) -> Path:
    spec = TaskPlan(task_id=task_id, description="hand-made emulator task",
                    prompts=[PromptEntry("base", f"Something is off in {table}; please fix it.")],
                    difficulty="medium", tags=["dbt", "acme_sf"], test_setup_models=[table],
                    solution_seeds=[SeedEntry(table)],
                    variant=Variant(db_type="snowflake", db_name="ACME_SF", project_name="acme_sf",
                                    project_dir=str(tasks.parent / "projects")),
                    seed_based=True, max_test_timeout_sec=120)
    files = build_task_files(spec, unified_diff(original.encode(), mutant.encode(), MODEL),
                             unified_diff(mutant.encode(), original.encode(), MODEL), [])
    d = tasks / task_id
    for rel, data in files.files.items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_bytes(data)
    return d


@pytest.fixture(scope="session")
def sf_env(tmp_path_factory):
    root = tmp_path_factory.mktemp("sf-validate")
    project = shipped_copy(root / "projects" / "acme_sf")
    v = make_validator(load_project(SF), ValidatorSetup(root / "work", jobs=2, emulate_snowflake=True,
                                                        dbt_timeout=300))
    assert isinstance(v, EmulatorValidator), v.usable()
    t0 = time.monotonic()
    v.baseline()
    timings = {"baseline": time.monotonic() - t0}
    yield v, root, project, timings
    servers = list(v._servers)
    v.close()
    assert all(not s.running for s in servers)
    print("\nemulator timings (s):", {k: round(x, 1) for k, x in timings.items()})


def test_usable_and_baseline(sf_env):
    v, *_ = sf_env
    ok, why = v.usable()
    assert ok, why
    assert "fakesnow" in why
    assert v.seed_based()
    assert v.prepare_database(Path("/nonexistent")) is None
    info = v.baseline_info()
    assert "PUBLIC.stg_products" in info["snapshot_tables"]


def test_iff_branch_swap_task_proven_on_emulator(sf_env):
    """A Snowflake-only function changed (IFF's branches swapped, by hand: the catalog retired the
    swap as a bug nobody ships, issue 28) is screened and proven on the emulator."""
    v, root, project, timings = sf_env
    original = (SF / MODEL).read_text()
    mutant = original.replace("iff(is_active = 'Y', true, false)", "iff(is_active = 'Y', false, true)")
    assert mutant != original
    # screening on the emulator sees the swap
    obs = v.screen("model.acme_sf.stg_products", MODEL, mutant, type("P", (), {
        "id": "iff_branch_swap", "symptom": "values_wrong", "difficulty": "medium"})())
    assert obs.observable, obs.reason
    assert obs.compared_table == "stg_products"
    task = make_task(root / "tasks", "acme_sf901", original, mutant, "stg_products")
    t0 = time.monotonic()
    proof = v.prove(task, project, None)
    timings["prove_iff_branch_swap"] = time.monotonic() - t0
    print("\n" + proof.detail)
    assert proof.ok, proof.detail
    assert proof.broken_fails and proof.solved_passes
    assert proof.detail.startswith("proven on emulator")
    assert "proven on Snowflake" not in proof.detail
    assert proof.expected_tests == 2
    assert proof.seeds == ["solution__stg_products"]
    csv = (task / "seeds" / "solution__stg_products.csv").read_text().splitlines()
    assert csv[0].split(",")[0] == "PRODUCT_ID" and len(csv) == 25
    no_op = yaml.safe_load((task / "seeds" / "_no-op.txt").read_text())
    types = no_op["seeds"]["acme_sf"]["solution__stg_products"]["+column_types"]
    assert types["PRODUCT_ID"] == "number(38,0)" and types["IS_ACTIVE"] == "boolean"
    # trial servers are stopped as soon as a trial ends; only the baseline server stays up
    assert [s for s in v._servers if s is not v._base_srv] == []


def test_mutant_the_emulator_cannot_run_is_unproven(sf_env):
    v, root, project, timings = sf_env
    original = (SF / MODEL).read_text()
    line = "    iff(is_active = 'Y', true, false) as is_active"
    assert line in original
    mutant = original.replace(line, "    iff(is_active = 'Y', current_session() is not null, false) as is_active")
    task = make_task(root / "tasks", "acme_sf902", original, mutant, "stg_products")
    t0 = time.monotonic()
    proof = v.prove(task, project, None)                 # never raises
    timings["prove_unsupported"] = time.monotonic() - t0
    print("\n" + proof.detail)
    assert not proof.ok
    assert proof.detail.startswith("unproven: the emulator cannot run")
    assert "current_session" in proof.detail.lower()
    assert [s for s in v._servers if s is not v._base_srv] == []


def test_screen_reports_an_unsupported_mutant_as_not_screenable(sf_env):
    v, *_ = sf_env
    original = (SF / MODEL).read_text()
    mutant = original.replace("split_part(category_path, ' > ', 1) as category",
                              "split_part(category_path, ' > ', 1) || current_session() as category")
    obs = v.screen("model.acme_sf.stg_products", MODEL, mutant, type("P", (), {
        "id": "x", "symptom": "values_wrong", "difficulty": "easy"})())
    assert not obs.observable and not obs.build_error
    assert obs.reason.startswith("not screenable on the emulator: the emulator cannot run it")
    assert "current_session" in obs.reason.lower()


@pytest.mark.skipif(not os.environ.get("ADEGEN_SLOW"), reason="script mode (one dbt process per call, "
                    "~75 s): set ADEGEN_SLOW=1")
def test_script_mode_agrees(sf_env):
    v, root, project, timings = sf_env
    original = (SF / MODEL).read_text()
    mutant = original.replace("iff(is_active = 'Y', true, false)", "iff(is_active = 'Y', false, true)")
    task = make_task(root / "tasks", "acme_sf903", original, mutant, "stg_products")
    t0 = time.monotonic()
    proof = v.prove(task, project, None, mode="script")
    timings["prove_script_mode"] = time.monotonic() - t0
    assert proof.ok and proof.detail.startswith("proven on emulator"), proof.detail


def test_missing_data_file_is_not_usable(tmp_path):
    v = EmulatorValidator(load_project(SF), workdir=tmp_path, data_file=tmp_path / "nope.duckdb")
    ok, why = v.usable()
    assert not ok and why.startswith("Snowflake tasks are unproven: data file") and "not found" in why
    v.close()


# -- the Snowflake backend's make_validator -------------------------------------------------------

def test_factory_without_flag_says_why(tmp_path):
    v = make_validator(load_project(SF), ValidatorSetup(tmp_path, emulate_snowflake=False))
    ok, why = v.usable()
    assert not ok
    assert why == ("Snowflake tasks are unproven: no Snowflake connection; pass --emulate-snowflake to prove "
                   "them on the local fakesnow emulator")
    with pytest.raises(Exception, match="unproven"):
        v.prove(tmp_path, tmp_path, None)
    v.close()


def test_factory_without_extra_says_install(tmp_path, monkeypatch):
    from adegen.snowflake_emulator import install

    real = install._import

    def fake_import(name, *a, **kw):
        if name.startswith("fakesnow"):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return real(name, *a, **kw)

    monkeypatch.setattr(install, "_import", fake_import)
    v = make_validator(load_project(SF), ValidatorSetup(tmp_path, emulate_snowflake=True))
    ok, why = v.usable()
    assert not ok
    assert why.startswith("Snowflake tasks are unproven: install adegen[snowflake-emulator] and pass "
                          "--emulate-snowflake")
    assert "fakesnow" in why


def test_factory_duckdb_project_gets_the_duckdb_validator(tmp_path, fixtures_dir):
    from adegen.validate import Validator

    p = fixtures_dir / "tiny_duckdb"
    if not (p / "dbt_project.yml").is_file():
        pytest.skip("tiny_duckdb fixture missing")
    v = make_validator(load_project(p), ValidatorSetup(tmp_path, emulate_snowflake=True))
    try:
        assert isinstance(v, Validator)
    finally:
        v.close()


# -- servers are always stopped --------------------------------------------------------------------

def test_server_stopped_by_close_after_a_failure(tmp_path):
    started = []

    def factory(data_dir):
        from adegen.snowflake_emulator import FakesnowServer

        srv = FakesnowServer(data_dir)
        started.append(srv)
        return srv

    v = EmulatorValidator(load_project(SF), workdir=tmp_path, server_factory=factory)

    def boom(*a, **kw):
        raise RuntimeError("dbt exploded")

    v._run = boom                                       # fails right after the server came up
    with pytest.raises(Exception, match="dbt exploded"):
        v.baseline()
    assert started and started[0].running
    pid = started[0].pid
    ok, why = v.usable()
    assert not ok and "dbt exploded" in why
    v.close()
    assert not started[0].running
    deadline = time.monotonic() + 10
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not process_alive(pid)
    v.close()                                           # idempotent
