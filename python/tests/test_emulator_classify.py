"""adegen.snowflake_emulator without a server: failure classification, compat macros, profiles, project copies."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from adegen.snowflake_emulator import (COMPAT_MACROS_SQL, classify_failure, conflicting_macros, copy_project,
                             emulator_profiles, install_compat_macros, unsupported_matches)
from adegen.snowflake_emulator.compat import COMPAT_MACRO_NAMES
from adegen.core.errors import InputError
from adegen.discover.project import load_project

REPO = Path(__file__).resolve().parents[2]
SF_PROJECT = REPO / "integration_tests_snowflake"

UNSUPPORTED_RUN = """\
22:10:01  Completed with 2 errors, 0 partial successes, and 0 warnings:
22:10:01
22:10:01    Database Error in model inc_orders (models/inc_orders.sql)
  002003 (42S02): Parser Error: TEMPORARY table names can *only* use the "temp" catalog
22:10:01
22:10:01    Database Error in model uses_keys (models/uses_keys.sql)
  001003 (42000): fakesnow internal error (see server log): sql_text='select object_keys(v)' Unhandled exception
22:10:01
22:10:01  Done. PASS=3 WARN=0 ERROR=2 SKIP=0 NO-OP=0 TOTAL=5
"""

MIXED_RUN = """\
22:10:01  Completed with 2 errors, 0 partial successes, and 0 warnings:
22:10:01
22:10:01  Failure in model uses_grants (models/uses_grants.sql)
22:10:01    Database Error in model uses_grants (models/uses_grants.sql)
  001003 (42000): Parser Error: syntax error at or near "GRANT"
22:10:01
22:10:01    Database Error in model typo (models/typo.sql)
  000904 (42000): Binder Error: Referenced column "AMOUNTT" not found in FROM clause!
22:10:01
22:10:01  Done. PASS=3 WARN=0 ERROR=2 SKIP=0 NO-OP=0 TOTAL=5
"""

TEST_FAILURE = """\
22:10:01  Completed with 1 error, 0 partial successes, and 0 warnings:
22:10:01
22:10:01  Failure in test unique_fct_orders_order_id (models/marts/_marts.yml)
22:10:01    Got 3 results, configured to fail if != 0
22:10:01
22:10:01  Done. PASS=40 WARN=0 ERROR=1 SKIP=0 NO-OP=0 TOTAL=41
"""


def test_all_errors_unsupported_is_unsupported():
    status, matches, blocks = classify_failure(UNSUPPORTED_RUN)
    assert status == "unsupported"
    assert [b.name for b in blocks] == ["inc_orders", "uses_keys"]
    assert {m.id for m in matches} == {"temporary_relation", "internal_error"}


def test_one_real_error_makes_it_a_failure():
    status, matches, blocks = classify_failure(MIXED_RUN)
    assert status == "failed"
    assert [m.id for m in matches] == ["grants"]
    assert [(b.name, b.kind, bool(b.unsupported)) for b in blocks] == [
        ("uses_grants", "Database Error", True), ("typo", "Database Error", False)]


def test_failing_data_test_is_a_real_failure():
    status, matches, blocks = classify_failure(TEST_FAILURE)
    assert status == "failed" and not matches
    assert blocks[0].kind == "Failure" and blocks[0].resource_type == "test"


def test_missing_functions_only_known_ones_are_unsupported():
    assert [m.id for m in unsupported_matches(
        "Catalog Error: Scalar Function with name get_ddl does not exist!")] == ["missing_function:get_ddl"]
    # an unknown function is what a typo gives on Snowflake too: a real error
    assert unsupported_matches("Catalog Error: Scalar Function with name sum_if does not exist!") == []


def test_internal_errors_that_are_data_errors_stay_real():
    # TO_DATE with a format that does not fit fails on Snowflake too
    text = ("001003 (42000): fakesnow internal error: InvalidInputException: Invalid Input Error: "
            "Could not parse string \"31/12/2024\" according to format specifier")
    assert unsupported_matches(text) == []
    assert [m.id for m in unsupported_matches(
        "001003 (42000): fakesnow internal error: NotImplementedError: for column type VARCHAR[]")] == ["internal_error"]


def test_compat_macros_are_guarded():
    assert set(COMPAT_MACRO_NAMES) >= {"snowflake__create_table_as", "snowflake__get_merge_sql",
                                       "set_query_tag", "apply_grants", "snowflake_dml_explicit_transaction"}
    assert COMPAT_MACROS_SQL.count("env_var('DBT_FAKESNOW', '')") == 7


def test_install_compat_skips_projects_defining_the_macros(tmp_path):
    (tmp_path / "dbt_project.yml").write_text("name: p\nmacro-paths: [mac]\n")
    assert install_compat_macros(tmp_path) == tmp_path / "mac" / "fakesnow_compat.sql"
    assert conflicting_macros(tmp_path) == []            # its own file does not count
    (tmp_path / "mac" / "own.sql").write_text("{% macro set_query_tag() %}{% endmacro %}")
    assert conflicting_macros(tmp_path) == ["set_query_tag"]
    (tmp_path / "mac" / "fakesnow_compat.sql").unlink()
    assert install_compat_macros(tmp_path) is None


@pytest.mark.skipif(not SF_PROJECT.is_dir(), reason="integration_tests_snowflake/ missing")
def test_profiles_point_the_project_profile_at_the_emulator(monkeypatch):
    for var in ("SNOWFLAKE_ACCOUNT", "SNOWFLAKE_USER", "SNOWFLAKE_PASSWORD", "SNOWFLAKE_ROLE",
                "SNOWFLAKE_WAREHOUSE", "DBT_PROFILES_DIR"):
        monkeypatch.delenv(var, raising=False)
    prof = emulator_profiles(load_project(SF_PROJECT), host="127.0.0.1", port=4242)
    out = prof["acme_sf"]["outputs"][prof["acme_sf"]["target"]]
    assert prof["acme_sf"]["target"] == "dev"
    assert out["type"] == "snowflake" and out["database"] == "ACME_SF" and out["schema"] == "PUBLIC"
    assert (out["host"], out["port"], out["protocol"]) == ("127.0.0.1", 4242, "http")
    assert out["account"] and out["password"] and out["role"] and out["warehouse"]   # dummies, never empty
    assert emulator_profiles(load_project(SF_PROJECT), host="127.0.0.1", port=1, database="T1")["acme_sf"]["outputs"]["dev"][
        "database"] == "T1"


@pytest.mark.skipif(not SF_PROJECT.is_dir(), reason="integration_tests_snowflake/ missing")
def test_profiles_from_project_info(monkeypatch):
    project = pytest.importorskip("adegen.discover.project")
    monkeypatch.delenv("DBT_PROFILES_DIR", raising=False)
    info = project.load_project(SF_PROJECT)
    prof = emulator_profiles(info, host="127.0.0.1", port=4243)
    assert prof["acme_sf"]["outputs"]["dev"]["database"] == "ACME_SF"


def test_profiles_reject_non_snowflake(tmp_path):
    (tmp_path / "dbt_project.yml").write_text("name: d\nprofile: d\n")
    (tmp_path / "profiles.yml").write_text("d:\n  target: dev\n  outputs:\n    dev: {type: duckdb, path: x.duckdb}\n")
    with pytest.raises(InputError, match="not snowflake"):
        emulator_profiles(load_project(tmp_path), host="127.0.0.1", port=1)


@pytest.mark.skipif(not SF_PROJECT.is_dir(), reason="integration_tests_snowflake/ missing")
def test_copy_project_resolves_local_packages(tmp_path):
    dest = copy_project(SF_PROJECT, tmp_path / "p")
    pkgs = yaml.safe_load((dest / "packages.yml").read_text())["packages"]
    assert pkgs == [{"local": str(REPO)}]
    assert (dest / "macros" / "fakesnow_compat.sql").is_file()
    assert not (dest / "target").exists() and not (dest / "dbt_packages").exists()
