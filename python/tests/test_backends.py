"""adegen.backends: one module per database behind one interface, and the build side routed
through it (no module of the build branches on a database name)."""
from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace as NS

import pytest
import yaml

from adegen import backends
from adegen.pipeline import harness_run as ade_run
from adegen.backends.base import Backend
from adegen.core.errors import InputError

PACKAGE = Path(__file__).resolve().parents[1] / "adegen"
# build-side modules that must reach database knowledge through adegen.backends only
ROUTED = ["cli/build.py", "cli/build_args.py", "tasks/taskgen.py", "tasks/task_yaml.py", "tasks/output.py",
          "propose/proposals.py", "discover/survey.py", "pipeline/harness_run.py", "tasks/patchcheck.py",
          "catalog/patterns.py", "discover/project.py", "discover/payload.py", "propose/mutant_compile.py",
          "adebench/install.py", *[f"pipeline/{p.name}" for p in (PACKAGE / "pipeline").glob("*.py")]]


def _project(db_type: str, **kw):
    base = dict(adapter_type=db_type, name="acme", db_name="acme", db_path=None, schema="main", target_config={},
                profile_name="acme", target_name="dev", profiles_path=Path("/p/profiles.yml"))
    base.update(kw)
    return NS(**base)


def test_registry():
    assert backends.NAMES == ("duckdb", "snowflake")
    for name, b in backends.BACKENDS.items():
        assert isinstance(b, Backend) and b.name == name and b.dialect
        assert type(b).profile_target is not Backend.profile_target  # every backend renders its profile
    with pytest.raises(InputError) as err:
        backends.for_project(_project("postgres"))
    assert err.value.field == "type" and "profiles.yml" in err.value.render()
    with pytest.raises(InputError):
        backends.get("sqlite")


def test_copy_profiles():
    duck = yaml.safe_load(backends.get("duckdb").copy_profile(
        _project("duckdb", target_config={"extensions": ["httpfs"], "path": "/abs/acme.duckdb"})))
    assert duck == {"acme": {"target": "dev", "outputs": {"dev": {
        "type": "duckdb", "path": "./acme.duckdb", "schema": "main", "threads": 1, "extensions": ["httpfs"]}}}}
    snow = yaml.safe_load(backends.get("snowflake").copy_profile(_project("snowflake", db_name="ACME", schema="")))
    out = snow["acme"]["outputs"]["dev"]
    assert out["account"] == "{{ env_var('SNOWFLAKE_ACCOUNT') }}" and out["database"] == "ACME"
    assert out["schema"] == "public"


def test_options_variants_and_checks(tmp_path):
    duck, snow = backends.get("duckdb"), backends.get("snowflake")
    opts = NS(db_path=tmp_path, emulate_snowflake=True, validate=False)
    assert duck.variant_fields(opts) == {"db_dir": str(tmp_path)}
    assert snow.variant_fields(opts) == {}
    assert duck.option_notes(opts) == ({}, ["--emulate-snowflake has no effect on a DuckDB project"])
    fields, warnings = snow.option_notes(opts)
    assert set(fields) == {"snowflake_env_unset"} and warnings == []
    duck.check_options(_project("duckdb"), opts)
    with pytest.raises(InputError) as err:
        snow.check_options(_project("snowflake", db_name="ACME"), opts)
    assert err.value.field == "--db-path" and "SNOWFLAKE_* credentials" in err.value.message


def test_proof_words_and_unproven_reasons():
    duck, snow = backends.get("duckdb"), backends.get("snowflake")
    assert duck.proof_label == "proven" and snow.proof_label == "proven on emulator"
    assert "Snowflake" not in snow.proof_label  # never "proven on Snowflake"
    assert snow.unproven_reason("Snowflake tasks are unproven: no connection") == "no connection"
    assert duck.summary_note([{"task_id": "a001", "proven": True}], "", True) is None
    note = snow.summary_note([{"task_id": "a001", "proven": True}, {"task_id": "a002"}], "no connection", False)
    assert "1 Snowflake task(s) proven on emulator" in note and "UNPROVEN (a002)" in note


def test_harness_commands_and_install_extras(tmp_path):
    assert [("--seed" in c) for c in ade_run.commands("acme001", "duckdb", tmp_path)] == [True, False]
    assert [("--seed" in c) for c in ade_run.commands("acme001", "snowflake", tmp_path)] == [False]
    assert backends.get("snowflake").seed_steps(["a001"], tmp_path)[0].startswith("3. --seed export is DuckDB-only")
    assert "--seed" in backends.get("duckdb").seed_steps(["a001"], tmp_path)[1]
    assert any(".env.example" in c for c in backends.get("snowflake").install_extras("~/.ade-bench"))
    assert backends.get("duckdb").install_extras("~/.ade-bench") == []


def test_build_side_has_no_database_branches():
    """Outside adegen/backends, no build-side module compares with or names a database type."""
    names = set(backends.NAMES)
    offenders = []
    for rel in ROUTED:
        tree = ast.parse((PACKAGE / rel).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower() in names:
                offenders.append(f"{rel}:{node.lineno} {node.value!r}")
    assert offenders == []


def test_which_duckdb_file_a_project_uses(tmp_path):
    """One lookup (backends.duckdb.find_database): --db-path, else the profile's path, else ade-bench's
    databases directories; the validator reads what it found, the input check opens it."""
    from adegen.backends.duckdb import check_database_file, find_database

    dirs = {k: tmp_path / k for k in ("db_dir", "profile", "ade")}
    (dirs["ade"] / "duckdb").mkdir(parents=True)
    for d in (dirs["db_dir"], dirs["profile"]):
        d.mkdir()
    project = NS(**{**vars(_project("duckdb", db_path=dirs["profile"] / "acme.duckdb")),
                    "has_seed_files": lambda: False})
    assert find_database(project, dirs["db_dir"], [dirs["ade"]]).path is None
    (dirs["ade"] / "duckdb" / "acme.duckdb").write_bytes(b"")
    found = find_database(project, dirs["db_dir"], [dirs["ade"]])
    assert (found.origin, found.explicit) == ("ade-bench", True)
    assert check_database_file(project, dirs["db_dir"], [dirs["ade"]]) is None  # ade-bench's: not opened
    (dirs["profile"] / "acme.duckdb").write_bytes(b"not a database")
    assert find_database(project, dirs["db_dir"], [dirs["ade"]]).origin == "profile"
    with pytest.raises(InputError, match="cannot be opened as a DuckDB database") as err:
        check_database_file(project, dirs["db_dir"], [dirs["ade"]])
    assert err.value.field == "acme.outputs.dev.path"
    (dirs["db_dir"] / "acme.duckdb").write_bytes(b"")
    found = find_database(project, dirs["db_dir"], [dirs["ade"]])
    assert (found.path, found.origin, found.explicit) == (dirs["db_dir"] / "acme.duckdb", "db_dir", True)
