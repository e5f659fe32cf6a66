"""Shared pytest fixtures (session-scoped, real dbt + DuckDB, no mocks).

Keep this file small: one documented fixture per shared need.

* `adegen_cache`  (autouse) - `ADEGEN_CACHE_DIR` points at a per-session temp dir, so discovery's
  scratch project copies never touch ~/.cache and are built once per session.
* `repo_root`, `example_project` - the repository and its example dbt project (integration_tests/,
  dbt name `acme`); tests needing the example skip when it is missing.
* `fixtures_dir` - python/tests/fixtures.
* `acme_discovery` - the discovery payload of integration_tests (shipped catalog, top_n=10),
  computed once per session.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "python"))

import adegen  # noqa: E402,F401  (importing it puts the interpreter's scripts dir, where dbt is, on PATH)


@pytest.fixture(scope="session", autouse=True)
def adegen_cache(tmp_path_factory) -> Path:
    cache = tmp_path_factory.mktemp("adegen-cache")
    old = os.environ.get("ADEGEN_CACHE_DIR")
    os.environ["ADEGEN_CACHE_DIR"] = str(cache)
    yield cache
    if old is None:
        os.environ.pop("ADEGEN_CACHE_DIR", None)
    else:
        os.environ["ADEGEN_CACHE_DIR"] = old


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return REPO_ROOT / "python" / "tests" / "fixtures"


@pytest.fixture(scope="session")
def example_project() -> Path:
    p = REPO_ROOT / "integration_tests"
    if not (p / "dbt_project.yml").is_file():
        pytest.skip("integration_tests/ (the example project) is not there yet")
    return p


@pytest.fixture(scope="session")
def acme_discovery(example_project) -> dict:
    from adegen.discover import run_discovery

    return run_discovery(example_project)
