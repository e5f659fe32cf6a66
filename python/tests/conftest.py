"""Shared pytest fixtures (session-scoped, real dbt + DuckDB, no mocks).

Keep this file small: one documented fixture per shared need.

* `adegen_cache`  (autouse) - `ADEGEN_CACHE_DIR` points at a per-session temp dir, so discovery's
  scratch project copies never touch ~/.cache and are built once per session.
* `repo_root`, `example_project` - the repository and its example dbt project (integration_tests/,
  dbt name `acme`); tests needing the example skip when it is missing.
* `fixtures_dir` - python/tests/fixtures.
* `acme_discovery` - the discovery payload of integration_tests (shipped catalog, top_n=10),
  computed once per session.
* `acme_tasks_built` - a validated build of every proposal of integration_tests
  (`python -m adegen.build integration_tests --pick all --yes --json`, no ade-bench on PATH), once
  per session: (output dir, the --json document). Read it, never write into it.
* `acme_run_record` - the run record that build wrote (`<output>/.adegen/runs/*.json`): the --json
  document plus per task its layer, prompt levels, observation (changed tables, measured facts) and
  proof seconds, and the discovery graph.
* `schemafix_built` - a validated build of fixtures/schemafix (marts and seeds in custom schemas, one
  model aliased: `--pick all --yes --json --no-purpose`, no ade-bench), once per session: (output dir,
  --json document).
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "python"))

import adegen  # noqa: E402,F401  (importing it puts the interpreter's scripts dir, where dbt is, on PATH)


# The suite runs on pytest-xdist (pyproject addopts: `-n auto --dist loadgroup`). Each test module is one
# unit of work, so a module-scoped fixture (a bulk run, a built project) is made once, on one worker;
# the tests that read the validated example build (`acme_tasks_built`, directly or through a fixture)
# form one group, so it is built once per session as well. The other tests of those modules stay in
# their module's group: test_build's builds without validation (the session's `first_run`, the pty,
# --no-copy and Ctrl-C builds, about two minutes) then run on the other worker beside the example's
# build instead of after it on the same one. A test that names its own xdist_group keeps it.
SHARED_BUILD_MODULES = frozenset({"test_build.py", "test_report.py", "test_report_browser.py", "test_calibrate.py",
                                  "test_compound_build.py", "test_prompt_frames.py",
                                  "test_no_trace.py"})
SHARED_BUILD_FIXTURES = ("acme_tasks_built", "acme_run_record")


# The groups that take minutes, longest first (test-seconds of a full run with --durations, 2026-12-05:
# the example's build group about 230, test_userbase 178, the emulator build 138, the dbt versions 125, ...).
# xdist hands out groups by number of tests, which would start a two-test, two-minute module last and
# leave one worker idle while the other finishes it; these start first instead, longest first (the
# longest-processing-time rule), and the many short modules fill in after.
LONG_GROUPS = ("acme-build", "test_build.py", "test_userbase.py", "test_stories.py", "test_diff_candidates.py", "test_build_snowflake_emulator.py", "test_dbt_versions.py",
               "test_bulk_plan.py", "test_bulk.py", "test_real_projects.py", "test_validate_snowflake.py",
               "test_reliability_faults.py", "test_reliability_inputs.py", "test_validate_e2e.py", "test_relations.py",
               "test_emulator.py",
               "test_discover.py", "test_calibrate_bulk.py")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            name = item.path.name
            shared = name in SHARED_BUILD_MODULES and any(f in item.fixturenames for f in SHARED_BUILD_FIXTURES)
            item.add_marker(pytest.mark.xdist_group("acme-build" if shared else name))


if importlib.util.find_spec("xdist") is not None:
    def pytest_xdist_make_scheduler(config, log):
        from xdist.scheduler import LoadGroupScheduling

        class LongGroupsFirst(LoadGroupScheduling):
            def _assign_work_unit(self, node) -> None:
                if not getattr(self, "_long_first", False):  # once, on the full queue
                    rank = {g: i for i, g in enumerate(LONG_GROUPS)}
                    queue = sorted(self.workqueue.items(), key=lambda kv: rank.get(kv[0], len(rank)))
                    self.workqueue.clear()
                    self.workqueue.update(queue)
                    self._long_first = True
                super()._assign_work_unit(node)

        return LongGroupsFirst(config, log) if config.getvalue("dist") == "loadgroup" else None


@contextlib.contextmanager
def _session_setting(name: str, value: str):
    """`name=value` in the environment of this process (its settings read again) and of the
    subprocesses tests start, for the session; the old value back afterwards."""
    from adegen.core import settings

    old = os.environ.get(name)
    os.environ[name] = value
    settings.reload()
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old
        settings.reload()


@pytest.fixture(scope="session", autouse=True)
def one_validator_worker_per_build():
    """The suite runs builds side by side (an xdist worker per core), so a build's second validator
    worker only adds its dbt import and full parse (about 5 CPU seconds) on a saturated machine. The
    example's end-to-end build (`acme_tasks_built`) keeps the default two; bulk mode takes --jobs."""
    with _session_setting("ADEGEN_BUILD_JOBS", "1"):
        yield


@pytest.fixture(scope="session", autouse=True)
def shifted_clock_off():
    """The shifted-clock check runs the determinism build in a process of its own under faketime: a
    dbt start and a full parse (about 3 CPU seconds) per build, on a machine the suite already
    saturates. Builds here run it with today's clock in the worker (ADEGEN_SHIFTED_CLOCK=0), except
    where it is what a test proves or meets: test_clock.py, the example's end-to-end build
    (`acme_tasks_built`), and the bulk runs SIGKILLed at random moments (test_bulk.py: a faketime
    child must die with its run). Modules opt in with `shifted_clock_on`."""
    with _session_setting("ADEGEN_SHIFTED_CLOCK", "0"):
        yield


@pytest.fixture(scope="module")
def shifted_clock_on(shifted_clock_off):
    """The shifted-clock check as users get it, for one module (`pytestmark = usefixtures(...)`)."""
    with _session_setting("ADEGEN_SHIFTED_CLOCK", "1"):
        yield


@pytest.fixture(scope="session", autouse=True)
def adegen_cache(tmp_path_factory) -> Path:
    cache = tmp_path_factory.mktemp("adegen-cache")
    with _session_setting("ADEGEN_CACHE_DIR", str(cache)):
        yield cache


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
    from adegen.discover.payload import run_discovery

    return run_discovery(example_project)


@pytest.fixture(scope="session")
def acme_tasks_built(example_project, tmp_path_factory, adegen_cache) -> tuple[Path, dict]:
    import json

    from reliability_kit import build_env, run_build

    out = tmp_path_factory.mktemp("acme-built") / "ade-bench-tasks"
    env = dict(build_env(tmp_path_factory.mktemp("acme-built-home")), ADEGEN_BUILD_JOBS="2",  # the defaults
               ADEGEN_SHIFTED_CLOCK="1")
    r = run_build([example_project, "--output-dir", out, "--pick", "all", "--yes", "--json"], env, timeout=1200)
    assert r.returncode == 0, r.stderr[-3000:]
    return out, json.loads(r.stdout)


@pytest.fixture(scope="session")
def acme_run_record(acme_tasks_built) -> dict:
    import json

    _out, doc = acme_tasks_built
    return json.loads(Path(doc["run_record"]).read_text())


@pytest.fixture(scope="session")
def schemafix_built(fixtures_dir, tmp_path_factory, adegen_cache) -> tuple[Path, dict]:
    """fixtures/schemafix built and proven: its marts live in main_analytics (`+schema`),
    customer_revenue is built as main_analytics.revenue_by_customer (`alias`), and its seeds (in
    ade-bench's test phase the solution seeds too) load into main_raw."""
    import json

    from reliability_kit import build_env, run_build

    out = tmp_path_factory.mktemp("schemafix-built") / "ade-bench-tasks"
    env = build_env(tmp_path_factory.mktemp("schemafix-built-home"))
    # custom schemas and aliases are what it proves: purposeful changes (proven on the example's build
    # and in test_purpose_build) would add their candidate compile and full-emulation proofs here
    r = run_build([fixtures_dir / "schemafix", "--output-dir", out, "--pick", "all", "--yes", "--json",
                   "--no-purpose"], env, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return out, json.loads(r.stdout)
