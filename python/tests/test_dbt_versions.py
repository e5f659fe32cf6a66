"""Every dbt-core minor version adegen declares is run, not assumed (issue 15).

The range is declared in three places: pyproject.toml (dbt-core, dbt-duckdb, dbt-snowflake), the
package's dbt_project.yml (`require-dbt-version`) and constraints.txt (the version the rest of the suite
runs on). Every other minor version in that range has a pin set `constraints/dbt-<minor>.txt`; for each
one a venv is built (cached, see dbt_versions_kit.py) and adegen runs there from this source tree, as a
user would run it:

* the example project (integration_tests/): discovery equals the golden payload of the main suite
  (its proven build on every version is the README demo, checked by hand and in the README's
  "Supported dbt versions"; here the proof runs on the third-party project below, which costs half);
* a practice-like third-party project (fixtures/jaffle_shop, dbt Labs' jaffle shop, its DuckDB file
  built by that version's `dbt build`, used through --db-path/--db-name): discovery equals the main
  suite's, one proven task, and the project tree stays byte-identical;
* the Snowflake example (integration_tests_snowflake) without an account: discovery and proposals from
  the graph through that version's dbt-snowflake, one task written status: dev (proofs on the fakesnow
  emulator run in the main suite only: about 100 CPU seconds each).

Install and run times are printed (`pytest -s`), never asserted."""
from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from dbt_versions_kit import PINNED, REPO, DbtEnv, ensure_env, minor_of, read_pins, smoke_constraints
from reliability_kit import tree_state
from test_discover import GOLDEN, normalize

try:
    import tomllib
except ImportError:  # Python 3.10
    from pip._vendor import tomli as tomllib

JAFFLE = REPO / "python" / "tests" / "fixtures" / "jaffle_shop"
JAFFLE_MODELS = ["customers", "orders", "stg_customers", "stg_orders", "stg_payments"]
SMOKE = smoke_constraints()


def declared() -> dict[str, SpecifierSet]:
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    return {r.name: r.specifier for r in map(Requirement, deps)}


def minors_in(spec: SpecifierSet) -> set[tuple[int, int]]:
    """The 1.x minor versions a specifier admits (dbt 2.x is out of scope: adegen caps below it)."""
    return {(1, m) for m in range(0, 100) if any(spec.contains(f"1.{m}.{p}") for p in (0, 99))}


# --- the declared range is the tested one (no venv needed) -----------------------------------------

def test_declared_range_is_the_tested_one():
    deps = declared()
    main_pins = read_pins(REPO / "constraints.txt")
    main_minor = tuple(int(x) for x in main_pins["dbt-core"].split(".")[:2])
    tested = {main_minor} | {minor_of(p) for p in SMOKE}
    for dist in ("dbt-core", "dbt-duckdb", "dbt-snowflake"):
        assert minors_in(deps[dist]) == tested, (dist, str(deps[dist]), sorted(tested))
    require = yaml.safe_load((REPO / "dbt_project.yml").read_text())["require-dbt-version"]
    assert minors_in(SpecifierSet(",".join(require))) == tested, require
    for example in ("integration_tests", "integration_tests_snowflake"):
        req = yaml.safe_load((REPO / example / "dbt_project.yml").read_text()).get("require-dbt-version")
        assert req is None or minors_in(SpecifierSet(",".join(req))) >= tested, (example, req)


@pytest.mark.parametrize("constraints", SMOKE, ids=[p.stem for p in SMOKE])
def test_pins_satisfy_the_declared_ranges(constraints):
    pins, deps = read_pins(constraints), declared()
    assert pins["dbt-core"].startswith(".".join(map(str, minor_of(constraints))) + ".")
    for dist, spec in deps.items():
        assert dist in pins, f"{constraints.name} does not pin {dist}"
        assert spec.contains(pins[dist]), f"{constraints.name}: {dist}=={pins[dist]} is outside {spec}"
    for dist in ("dbt-duckdb", "dbt-snowflake"):  # the matching adapter minor
        assert pins[dist].split(".")[:2] == pins["dbt-core"].split(".")[:2], (dist, pins[dist])


# --- the smoke jobs: every version's runs on a small pool ----------------------------------------------

@dataclass
class Ran:
    """One finished command of a smoke job."""

    proc: subprocess.CompletedProcess
    wall: float

    @property
    def ok(self) -> bool:
        return self.proc.returncode == 0

    def json(self) -> dict:
        return json.loads(self.proc.stdout)

    def tail(self, n: int = 4000) -> str:
        return (self.proc.stdout + self.proc.stderr)[-n:]


class Smoke:
    """Runs the smoke jobs of every version on a thread pool (each job is a chain of subprocesses, so
    threads suffice): one dbt/adegen process uses about one core, so two at a time halve the wall time
    on a 2-core machine. Tests wait for the job they check. Venv builds are queued first, and jobs only
    wait for those, so the pool cannot deadlock."""

    JOBS = ("example", "practice", "snowflake")

    def __init__(self, root: Path, workers: int, reference: dict):
        self.root, self.reference = root, reference
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="dbt-smoke")
        self.envs = {c.stem: self.pool.submit(self._env, c) for c in SMOKE}
        self.jobs = {(c.stem, j): self.pool.submit(getattr(self, f"_{j}"), c.stem)
                     for c in SMOKE for j in self.JOBS}

    def result(self, version: str, job: str) -> dict:
        got = self.jobs[(version, job)].result()
        walls = ", ".join(f"{k} {v.wall:.0f}s" for k, v in got.items() if isinstance(v, Ran))
        print(f"\n[{version}] {job}: {walls}")
        return got

    def env(self, version: str) -> tuple[DbtEnv, Ran]:
        return self.envs[version].result()

    def _run(self, version: str, job: str, args: list, *, cwd: Path = REPO, exe: str = "python") -> Ran:
        env, _ = self.env(version)
        home, cache = self.root / version / job / "home", self.root / version / job / "cache"
        t0 = time.monotonic()
        p = subprocess.run([str(env.venv / "bin" / exe), *map(str, args)], env=env.env(home, cache), cwd=cwd,
                           capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL)
        return Ran(p, time.monotonic() - t0)

    def _build(self, version: str, job: str, project: Path, *extra) -> Ran:
        return self._run(version, job, ["-m", "adegen.build", project, "--output-dir",
                                        self.root / version / job / "out", "--count", "3", "--pick", "1",
                                        "--yes", "--json", *extra])

    def _env(self, constraints: Path) -> tuple[DbtEnv, Ran]:
        t0 = time.monotonic()
        env = ensure_env(constraints)
        print(f"\n[{env.name}] venv {'built in %.0fs' % (time.monotonic() - t0) if env.fresh else 'cached'}: "
              f"{env.venv}")
        probe = ("import json, importlib.metadata as m, adegen; "
                 f"print(json.dumps({{'versions': {{d: m.version(d) for d in {list(PINNED)!r}}}, "
                 "'adegen': adegen.__file__}))")
        home = self.root / env.name / "probe"
        t0 = time.monotonic()
        p = subprocess.run([str(env.python), "-c", probe], env=env.env(home, home / "cache"), capture_output=True,
                           text=True, timeout=600, stdin=subprocess.DEVNULL)
        return env, Ran(p, time.monotonic() - t0)

    def _example(self, version: str) -> dict:
        project = REPO / "integration_tests"
        before = tree_state(project)
        got = {"discovery": self._run(version, "example", ["-m", "adegen.discover", project, "--json"])}
        return {**got, "unchanged": tree_state(project) == before}

    def _practice(self, version: str) -> dict:
        """The jaffle shop with jaffle_shop.duckdb built by this version's `dbt build`, as its users
        have it (raw data and every model in the file, target/ and logs/ next to it), used through
        --db-path/--db-name like the practice corpus."""
        proj = self.root / version / "practice" / "jaffle_shop"
        shutil.copytree(JAFFLE, proj)
        got = {"dbt build": self._run(version, "practice", ["build", "--profiles-dir", "."], cwd=proj, exe="dbt")}
        if not got["dbt build"].ok:
            return got
        before = tree_state(proj)
        got["discovery"] = self._run(version, "practice", ["-m", "adegen.discover", proj, "--json"])
        # one proven slip is the check here (purposeful changes, on by default, are proven on 1.11 in the
        # main suite and would add two proofs per version)
        got["build"] = self._build(version, "practice", proj, "--db-path", proj, "--db-name", "jaffle_shop",
                                   "--no-purpose")
        return {**got, "unchanged": tree_state(proj) == before}

    def _snowflake(self, version: str) -> dict:
        return {"build": self._build(version, "snowflake", REPO / "integration_tests_snowflake")}


@pytest.fixture(scope="module")
def smoke(tmp_path_factory, example_project) -> Smoke:
    """All smoke jobs, started at the first test that needs one. Total CPU seconds are printed."""
    from adegen.discover.payload import run_discovery

    cpu0 = _children_cpu()
    ref = tmp_path_factory.mktemp("practice-ref") / "jaffle_shop"
    shutil.copytree(JAFFLE, ref)
    reference = normalize(run_discovery(ref))  # the jaffle shop on the dbt the main suite runs on
    runs = Smoke(tmp_path_factory.mktemp("dbt-smoke"), max(1, min(2, os.cpu_count() or 1)), reference)
    yield runs
    runs.pool.shutdown(wait=True, cancel_futures=True)
    print(f"\n[dbt versions] smoke jobs: {_children_cpu() - cpu0:.0f}s cpu")


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


VERSIONS = pytest.mark.parametrize("version", [p.stem for p in SMOKE])


def _one_task(ran: Ran, project_name: str) -> dict:
    assert ran.ok, ran.tail()
    doc = ran.json()
    assert [t["task_id"] for t in doc["tasks"]] == [f"{project_name}001"], ran.tail(3000)
    return doc


def _assert_proven(ran: Ran, project_name: str) -> None:
    doc = _one_task(ran, project_name)
    t = doc["tasks"][0]
    assert doc["validation"]["usable"] is True, doc["validation"]
    assert t["proven"] and t["status"] == "ready", (t.get("proof_detail") or ran.tail())[-3000:]
    assert t["proof"]["broken_fails"] and t["proof"]["solved_passes"]


def _discovery(ran: Ran, version: str) -> dict:
    assert ran.ok, ran.tail()
    payload = ran.json()
    assert payload["project"]["dbt_version"] == read_pins(REPO / "constraints" / f"{version}.txt")["dbt-core"]
    return payload


@VERSIONS
def test_venv_runs_the_pinned_versions(smoke, version):
    env, probe = smoke.env(version)
    assert probe.ok, probe.tail()
    got = probe.json()
    assert got["versions"] == {d: env.pins()[d] for d in PINNED}
    assert got["adegen"] == str(REPO / "python" / "adegen" / "__init__.py")  # this tree, not an install


@VERSIONS
def test_example_discovery_is_the_golden_one(smoke, version):
    got = smoke.result(version, "example")
    assert normalize(_discovery(got["discovery"], version)) == json.loads(GOLDEN.read_text())


@VERSIONS
def test_example_discovery_leaves_the_project_untouched(smoke, version):
    assert smoke.result(version, "example")["unchanged"]


@VERSIONS
def test_practice_discovery_matches_the_main_version(smoke, version):
    got = smoke.result(version, "practice")
    assert got["dbt build"].ok, got["dbt build"].tail()
    payload = _discovery(got["discovery"], version)
    assert sorted(m["name"] for m in payload["models"]) == JAFFLE_MODELS
    assert payload["candidates"]
    assert normalize(payload) == smoke.reference


@VERSIONS
def test_practice_proves_a_task_and_stays_untouched(smoke, version):
    got = smoke.result(version, "practice")
    assert got["dbt build"].ok, got["dbt build"].tail()
    _assert_proven(got["build"], "jaffle_shop")
    assert got["unchanged"]


@VERSIONS
def test_snowflake_example_writes_a_dev_task(smoke, version):
    doc = _one_task(smoke.result(version, "snowflake")["build"], "acme_sf")
    assert doc["project"]["db_type"] == "snowflake"
    t = doc["tasks"][0]
    assert t["status"] == "dev" and not t["proven"]  # no connection: unproven, said so
    assert t["patch_check"]["line"].endswith("setup ✓ solution ✓ roundtrip ✓")
