"""project.load_project: profile lookup, env_var rendering and every InputError."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from adegen.core.errors import InputError
from adegen.discover.project import load_project


def make_project(root: Path, profiles: str | None, project: str | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "dbt_project.yml").write_text(project or "name: p\nprofile: p\nconfig-version: 2\n")
    if profiles is not None:
        (root / "profiles.yml").write_text(textwrap.dedent(profiles))
    return root


DUCK = """
p:
  target: dev
  outputs:
    dev: {type: duckdb, path: "{{ env_var('ADEGEN_T_DB', 'data/shop.duckdb') }}", schema: main}
    other: {type: duckdb, path: /abs/other.duckdb, schema: "{{ env_var('ADEGEN_T_SCHEMA') }}"}
"""


def test_duckdb_defaults_and_env_var(tmp_path, monkeypatch):
    monkeypatch.delenv("DBT_PROFILES_DIR", raising=False)
    monkeypatch.delenv("ADEGEN_T_DB", raising=False)
    p = make_project(tmp_path / "proj", DUCK)
    info = load_project(p)
    assert (info.name, info.profile_name, info.target_name, info.adapter_type) == ("p", "p", "dev", "duckdb")
    assert info.db_path == (p / "data" / "shop.duckdb").resolve() and info.db_name == "shop"
    assert info.schema == "main" and info.model_paths == ["models"]
    assert info.profiles_path == (p / "profiles.yml").resolve()
    monkeypatch.setenv("ADEGEN_T_DB", str(tmp_path / "x.duckdb"))
    assert load_project(p).db_name == "x"
    monkeypatch.setenv("ADEGEN_T_SCHEMA", "s1")
    info = load_project(p, target="other", db_name="named")
    assert (info.schema, info.db_name, info.db_path) == ("s1", "named", Path("/abs/other.duckdb"))


def test_missing_env_var_without_default(tmp_path, monkeypatch):
    monkeypatch.delenv("ADEGEN_T_SCHEMA", raising=False)
    p = make_project(tmp_path / "proj", DUCK)
    with pytest.raises(InputError, match="ADEGEN_T_SCHEMA"):
        load_project(p, target="other", profiles_dir=p)


def test_profiles_lookup_order(tmp_path, monkeypatch):
    p = make_project(tmp_path / "proj", DUCK)
    elsewhere = tmp_path / "elsewhere"
    make_project(elsewhere, DUCK.replace("schema: main", "schema: from_env_dir"))
    monkeypatch.setenv("DBT_PROFILES_DIR", str(elsewhere))
    assert load_project(p).schema == "from_env_dir"          # $DBT_PROFILES_DIR before project dir
    assert load_project(p, profiles_dir=p).schema == "main"   # argument first
    monkeypatch.delenv("DBT_PROFILES_DIR")
    assert load_project(p).schema == "main"                   # then the project dir


def test_snowflake(tmp_path):
    p = make_project(tmp_path / "sf", """
        p:
          target: prod
          outputs:
            prod: {type: snowflake, account: a, user: u, database: ANALYTICS, schema: CORE}
        """)
    info = load_project(p, profiles_dir=p, db_type="snowflake")
    assert (info.adapter_type, info.db_name, info.db_path, info.schema) == ("snowflake", "ANALYTICS", None, "CORE")


@pytest.mark.parametrize(
    "setup, kwargs, message",
    [
        ("missing", {}, "does not exist"),
        ("file", {}, "not a directory"),
        ("no_project", {}, "no dbt_project.yml"),
        ("bad_yaml", {}, "invalid YAML"),
        ("no_profiles", {}, "profiles.yml not found"),
        ("no_profile", {}, "profile 'p' (from dbt_project.yml) not found"),
        ("duck", {"target": "nope"}, "target 'nope' not found"),
        ("postgres", {}, "only DuckDB and Snowflake are supported"),
        ("duck", {"db_type": "snowflake"}, "contradicts the profile's adapter 'duckdb'"),
    ],
)
def test_input_errors(tmp_path, monkeypatch, setup, kwargs, message):
    monkeypatch.delenv("DBT_PROFILES_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.dbt fallback
    p = tmp_path / "proj"
    if setup == "file":
        p.write_text("x")
    elif setup == "no_project":
        p.mkdir()
    elif setup == "bad_yaml":
        make_project(p, DUCK, project="name: [unclosed\n")
    elif setup == "no_profiles":
        make_project(p, None)
    elif setup == "no_profile":
        make_project(p, "other:\n  target: dev\n  outputs: {dev: {type: duckdb}}\n")
    elif setup == "duck":
        make_project(p, DUCK)
    elif setup == "postgres":
        make_project(p, "p:\n  target: dev\n  outputs: {dev: {type: postgres, host: h}}\n")
    with pytest.raises(InputError) as ei:
        load_project(p, **kwargs)
    assert message in str(ei.value)
