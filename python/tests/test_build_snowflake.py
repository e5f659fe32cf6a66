"""`python -m adegen.build` on the Snowflake example project (integration_tests_snowflake, dbt name
acme_sf): detection from profiles.yml, the spec's Snowflake variant block, the rejected --db-path,
the post-generation instructions (SNOWFLAKE_* flagged when unset, no --seed), Snowflake pattern
preference, discovery and proposals without credentials, and the unproven summary without
--emulate-snowflake. Server start failures of the emulator itself: test_emulator.py
(test_launcher_exiting_immediately_gives_clear_error, test_launcher_that_never_listens_times_out_and_is_killed,
test_fixed_port_already_taken_fails_fast); here the same failure inside a build run.
The emulator proof of every generated task: test_build_snowflake_emulator.py."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import yaml

from test_build import REPO, clean_env, load_json, run_build, tree_hash  # noqa: F401 (fixture re-export)

SF_PROJECT = REPO / "integration_tests_snowflake"
SF_VARS = ("SNOWFLAKE_ACCOUNT", "SNOWFLAKE_USER", "SNOWFLAKE_PASSWORD", "SNOWFLAKE_ROLE", "SNOWFLAKE_WAREHOUSE")


def snowflake_pattern_ids() -> set[str]:
    data = yaml.safe_load((REPO / "patterns" / "snowflake.yaml").read_text())
    return {p["id"] for p in data["patterns"]}


@pytest.fixture(scope="session")
def sf_env(clean_env) -> dict:
    if not (SF_PROJECT / "dbt_project.yml").is_file():
        pytest.skip("integration_tests_snowflake/ is missing")
    env = dict(clean_env)
    for v in SF_VARS:
        env.pop(v, None)            # no account: discovery and proposals must work from the graph alone
    return env


@pytest.fixture(scope="session")
def sf_run(sf_env, tmp_path_factory):
    """Default run (validation requested, no --emulate-snowflake), with --run-harness."""
    before = tree_hash(SF_PROJECT)
    out = tmp_path_factory.mktemp("sfout") / "ade-bench-tasks"
    t0 = time.monotonic()
    r = run_build([SF_PROJECT, "--output-dir", out, "--pick", "all", "--yes", "--json", "--run-harness"], sf_env,
                  timeout=400)
    elapsed = time.monotonic() - t0
    assert r.returncode == 0, r.stderr[-3000:]
    return out, load_json(r), r, elapsed, before


def test_detection_from_profiles(sf_run):
    _, doc, _, elapsed, _ = sf_run
    assert doc["project"]["db_type"] == "snowflake"          # auto-detected (type: snowflake)
    assert doc["project"]["db_name"] == "ACME_SF"            # the profile's database
    assert elapsed < 240                                     # no hang on a login: bounded timeouts


def test_task_yaml_snowflake_variant(sf_run):
    out, doc, _, _, _ = sf_run
    assert 3 <= len(doc["tasks"]) <= 5
    hm = None
    try:
        import ade_bench.harness_models as hm  # noqa: F811
    except ImportError:
        pass
    for t in doc["tasks"]:
        d = out / "tasks" / t["task_id"]
        data = yaml.safe_load((d / "task.yaml").read_text())
        assert data["variants"] == [{"db_type": "snowflake", "db_name": "ACME_SF", "project_type": "dbt",
                                     "project_name": "acme_sf", "project_dir": str(out / "projects")}]
        assert "db_dir" not in (d / "task.yaml").read_text()
        assert data["author_name"] == "ade-bench-plugin" and data["author_email"] == ""
        assert data["prompts"][0]["key"] == "base" and "acme_sf" in data["tags"]
        assert (d / "solutions" / "changes.patch").is_file()
        assert not list((d / "solutions").glob("changes.snowflake.patch"))
        if hm is not None:
            for v in data["variants"]:
                hm.VariantConfig(**v)
            for s in data["solution_seeds"]:
                hm.SolutionSeedConfig(**s)
    if hm is None:
        pytest.skip("ade_bench.harness_models is not importable: the variant block was checked by value only")


def test_at_least_half_snowflake_patterns(sf_run):
    _, doc, _, _, _ = sf_run
    ids = [p["pattern_id"] for p in doc["proposals"]]
    sf = snowflake_pattern_ids()
    n_sf = sum(1 for i in ids if i in sf)
    assert 2 * n_sf >= len(ids), ids
    assert n_sf < len(ids), f"no ANSI pattern mixed in: {ids}"


def test_unproven_without_emulator_says_why(sf_run):
    _, doc, r, _, _ = sf_run
    from adegen.backends.snowflake import NO_FLAG

    assert doc["validation"]["usable"] is False and doc["validation"]["reason"] == NO_FLAG
    for t in doc["tasks"]:
        assert t["status"] == "dev" and not t["proven"]
        assert "--emulate-snowflake" in t["proof_detail"] and "--no-validate" not in t["proof_detail"]
    assert "UNPROVEN" in doc["validation"]["snowflake_note"] and NO_FLAG in doc["validation"]["snowflake_note"]
    assert NO_FLAG in r.stderr                               # the human summary (stderr in --json mode)
    assert "proven on Snowflake" not in r.stderr + r.stdout
    for t in doc["tasks"]:
        assert "status: dev" in (Path(t["path"]) / "task.yaml").read_text()


def test_post_generation_instructions(sf_run):
    _, doc, r, _, _ = sf_run
    steps = "\n".join(doc["next_steps"])
    assert doc["snowflake_env_unset"] == list(SF_VARS)
    for v in SF_VARS:
        assert f"export {v}=...   # unset" in steps
    assert "NOT SET in this environment: " + ", ".join(SF_VARS) in steps
    assert "ACME_SF" in steps
    ade_lines = [s for s in doc["next_steps"] if s.strip().startswith("ade run")]
    assert ade_lines and all("--db snowflake" in s for s in ade_lines)
    assert not any("--seed" in s for s in ade_lines)          # seeds export is DuckDB-only
    assert "--seed export is DuckDB-only" in steps


def test_run_harness_why_not(sf_run):
    _, doc, r, _, _ = sf_run
    h = doc["harness_run"]
    if h["ran"]:  # a machine where `ade --help` and `docker info` both work
        assert all(x["verdict"] in ("PASS", "FAIL") for x in h["results"])
        return
    assert h["results"] == []
    assert "Docker is not available" in h["reason"] or "ade-bench does not work" in h["reason"]
    assert "not running ade-bench's harness" in r.stderr


def test_project_unchanged(sf_run):
    _, _, _, _, before = sf_run
    assert tree_hash(SF_PROJECT) == before


def test_env_flagging_partial(monkeypatch):
    from adegen.cli.build import snowflake_env_unset

    env = {"SNOWFLAKE_ACCOUNT": "xy123", "SNOWFLAKE_USER": "me", "SNOWFLAKE_PASSWORD": " ",
           "SNOWFLAKE_ROLE": "R"}
    assert snowflake_env_unset(env) == ["SNOWFLAKE_PASSWORD", "SNOWFLAKE_WAREHOUSE"]
    assert snowflake_env_unset({v: "x" for v in SF_VARS}) == []


@pytest.mark.parametrize("extra", [[], ["--db-type", "snowflake"]])
def test_db_path_rejected(sf_env, tmp_path, extra):
    out = tmp_path / "out"
    r = run_build([SF_PROJECT, "--output-dir", out, "--db-path", tmp_path, "--pick", "all", *extra], sf_env,
                  timeout=120)
    assert r.returncode == 2, r.stderr[-2000:]
    assert "--db-path is for DuckDB only" in r.stderr and "no db_dir" in r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists()                                   # nothing written


def test_emulator_server_that_fails_to_start(sf_env, tmp_path, monkeypatch, capsys):
    """--emulate-snowflake with a server that cannot start: a clear error, tasks written status: dev,
    no hang (the unit-level start failures are in test_emulator.py)."""
    from adegen.snowflake_emulator.install import emulator_missing

    if emulator_missing():
        pytest.skip(f"emulator extra not installed: {emulator_missing()}")
    import adegen.snowflake_emulator as emu
    from adegen.cli.build import main
    from adegen.snowflake_emulator.errors import EmulatorStartError

    class BrokenServer:
        def __init__(self, data_dir, *a, **kw):
            self.data_dir = data_dir
            self.running = False

        def start(self):
            raise EmulatorStartError("fakesnow server exited during start-up (exit code 7): kaput")

        def stop(self):
            return None

    monkeypatch.setattr(emu, "FakesnowServer", BrokenServer)
    for k, v in sf_env.items():
        if k not in ("PATH",):
            monkeypatch.setenv(k, v)
    for v in SF_VARS:
        monkeypatch.delenv(v, raising=False)
    out = tmp_path / "out"
    t0 = time.monotonic()
    code = main([str(SF_PROJECT), "--output-dir", str(out), "--emulate-snowflake", "--pick", "1", "--count", "3",
                 "--json"])
    elapsed = time.monotonic() - t0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert code in (0, 1) and elapsed < 240
    assert "exited during start-up (exit code 7): kaput" in cap.err
    assert doc["validation"]["usable"] is False and "kaput" in doc["validation"]["reason"]
    for t in doc["tasks"]:
        assert t["status"] == "dev" and "kaput" in t["proof_detail"]
    assert "proven on Snowflake" not in cap.err + cap.out


def test_detection_unit_and_overrides(sf_env, monkeypatch):
    from adegen.cli.build_args import parse_args
    from adegen.discover.project import load_project

    for v in SF_VARS:
        monkeypatch.delenv(v, raising=False)
    p = load_project(SF_PROJECT)
    assert (p.adapter_type, p.db_name, p.schema) == ("snowflake", "ACME_SF", "PUBLIC")
    assert p.db_path is None
    assert load_project(SF_PROJECT, db_name="ACME_SF_CLONE").db_name == "ACME_SF_CLONE"
    o = parse_args([str(SF_PROJECT), "--emulate-snowflake"])
    assert o.emulate_snowflake and o.db_type is None          # auto-detected later from profiles.yml
