"""`--run-harness` (adegen.pipeline.harness_run): the Phase 5 `ade run` commands, the "why not" path when `ade`
or Docker does not work (this machine has no Docker daemon), and the triage of recorded ade output."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from adegen.pipeline import harness_run as ade_run
from adegen.pipeline.harness_run import (AUTO_FAILURE, CUSTOM_FAILURE, FAIL, HARNESS_ERROR, PASS, SETUP_ERROR, SOLUTION_ERROR,
                            Availability, HarnessCall, availability, commands, run_tasks, triage)

# ---------------------------------------------------------------------------------------------
# recorded ade output (console text of `ade run ... --agent sage`: harness log lines, the dbt test
# output of run-dbt-test.sh, and the trial's results.json fields)

PASS_OUT = """\
INFO Running task acme003 with agent sage
[ade-bench] expected_test_count=3
09:12:01  1 of 3 START test AUTO_fct_orders_equality ............................ [RUN]
09:12:01  1 of 3 PASS AUTO_fct_orders_equality .................................. [PASS in 0.07s]
09:12:01  2 of 3 PASS AUTO_fct_orders_existence ................................. [PASS in 0.03s]
09:12:01  3 of 3 PASS acme003_refs_match ........................................ [PASS in 0.02s]
09:12:02  Done. PASS=3 WARN=0 ERROR=0 SKIP=0 NO-OP=0 TOTAL=3
{"task_id": "acme003", "is_resolved": true, "failure_mode": "none"}
"""

SETUP_OUT = """\
INFO Running task acme_sf002 with agent sage
09:13:10  Database Error in model stg_orders (models/staging/stg_orders.sql)
09:13:10    100038 (22018): Numeric value 'n/a' is not recognized
ERROR Setup failed for task acme_sf002
WARNING Setup failed for task acme_sf002, halting task
{"task_id": "acme_sf002", "is_resolved": false, "failure_mode": "setup_failed"}
"""

SOLUTION_OUT = """\
INFO Running task acme004 with agent sage
patching file models/marts/fct_orders.sql
Hunk #1 FAILED at 12.
1 out of 1 hunk FAILED -- saving rejects to file models/marts/fct_orders.sql.rej
+ patch -p1 < /sage/solutions/changes.patch
[ade-bench] expected_test_count=2
09:14:01  1 of 2 FAIL 4 AUTO_fct_orders_equality ................................ [FAIL 4 in 0.06s]
09:14:01  2 of 2 PASS AUTO_fct_orders_existence ................................. [PASS in 0.03s]
09:14:02  Done. PASS=1 WARN=0 ERROR=1 SKIP=0 NO-OP=0 TOTAL=2
"""

AUTO_OUT = """\
INFO Running task acme005 with agent sage
[ade-bench] expected_test_count=2
09:15:01  1 of 2 FAIL 12 AUTO_dim_customers_equality ............................ [FAIL 12 in 0.09s]
09:15:01  2 of 2 PASS AUTO_dim_customers_existence .............................. [PASS in 0.02s]
09:15:02  Failure in test AUTO_dim_customers_equality (tests/AUTO_dim_customers_equality.sql)
09:15:02  Done. PASS=1 WARN=0 ERROR=1 SKIP=0 NO-OP=0 TOTAL=2
{"task_id": "acme005", "is_resolved": false, "failure_mode": "none"}
"""

CUSTOM_OUT = """\
INFO Running task acme006 with agent sage
[ade-bench] expected_test_count=3
09:16:01  1 of 3 PASS AUTO_fct_orders_equality .................................. [PASS in 0.07s]
09:16:01  2 of 3 PASS AUTO_fct_orders_existence ................................. [PASS in 0.03s]
09:16:01  3 of 3 FAIL 1 acme006_materialization ................................. [FAIL 1 in 0.02s]
09:16:02  Done. PASS=2 WARN=0 ERROR=1 SKIP=0 NO-OP=0 TOTAL=3
{"task_id": "acme006", "is_resolved": false, "failure_mode": "none"}
"""

FUSION_AUTO_OUT = """\
Passed [  0.41s] test  PUBLIC_dbt_test__audit.AUTO_fct_orders_existence
Failed [  0.52s] test  PUBLIC_dbt_test__audit.AUTO_fct_orders_equality
Finished 'test' target 'dev' with 1 error in 3s 120ms
"""


@pytest.mark.parametrize("text,verdict,category,needle", [
    (PASS_OUT, PASS, None, "3 tests passed"),
    (SETUP_OUT, FAIL, SETUP_ERROR, "Setup failed for task acme_sf002"),
    (SOLUTION_OUT, FAIL, SOLUTION_ERROR, "Hunk #1 FAILED"),
    (AUTO_OUT, FAIL, AUTO_FAILURE, "AUTO_dim_customers_equality"),
    (CUSTOM_OUT, FAIL, CUSTOM_FAILURE, "acme006_materialization"),
    (FUSION_AUTO_OUT, FAIL, AUTO_FAILURE, "AUTO_fct_orders_equality"),
])
def test_triage_recorded_output(text, verdict, category, needle):
    t = triage(text, 0 if verdict == PASS else 1)
    assert (t.verdict, t.category) == (verdict, category), t.line()
    assert needle in t.line()
    if verdict == FAIL:
        assert t.line().startswith(f"FAIL - {category}: ")
        assert ade_run.ADVICE[category] in t.line()      # the spec's advice for that failure
    assert t.to_json()["line"] == t.line()


def test_triage_ansi_colours_and_harness_errors():
    coloured = PASS_OUT.replace("PASS AUTO", "\x1b[32mPASS\x1b[0m AUTO")
    assert triage(coloured).verdict == PASS
    t = triage("INFO Running task acme001\nTraceback (most recent call last):\n  ...\nKeyError: 'x'\n", 1)
    assert (t.verdict, t.category) == (FAIL, HARNESS_ERROR)
    t = triage('{"task_id": "acme001", "is_resolved": false, "failure_mode": "test_timeout"}', 0)
    assert (t.verdict, t.category) == (FAIL, HARNESS_ERROR) and "test_timeout" in t.detail
    assert triage("", 0).verdict == FAIL                       # nothing to read is never a PASS
    assert triage(PASS_OUT, 3).verdict == FAIL                   # ade's own exit status counts


def test_commands_follow_phase_5(tmp_path):
    d = commands("acme001", "duckdb", tmp_path / "tasks")
    base = ["ade", "run", "acme001", "--db", "duckdb", "--project-type", "dbt", "--agent", "sage"]
    assert d == [base + ["--seed", "--tasks-dir", str(tmp_path / "tasks")],
                 base + ["--tasks-dir", str(tmp_path / "tasks")]]
    s = commands("acme_sf001", "snowflake", tmp_path / "tasks")
    assert s == [["ade", "run", "acme_sf001", "--db", "snowflake", "--project-type", "dbt", "--agent", "sage",
                  "--tasks-dir", str(tmp_path / "tasks")]]       # --seed export is DuckDB-only


def _fake_runner(results: dict):
    """subprocess.run stand-in: the key is the command's first two words (or the task id + --seed)."""
    calls = []

    def run(cmd, **kw):
        calls.append(list(cmd))
        if cmd[:2] == ["ade", "run"]:
            key = (cmd[2], "--seed" in cmd)
        else:
            key = tuple(cmd)
        rc, out, err = results[key]
        return subprocess.CompletedProcess(cmd, rc, out, err)

    run.calls = calls
    return run


def test_why_not_names_the_missing_prerequisite(monkeypatch):
    monkeypatch.setattr(ade_run.shutil, "which", lambda name: f"/usr/bin/{name}")
    ok_ade = (("ade", "--help"), (0, "Usage: ade [OPTIONS]", ""))
    no_docker = (("docker", "info"), (1, "Client:\n Version: 28\nServer:\n",
                                      "Cannot connect to the Docker daemon at unix:///var/run/docker.sock."))
    a = availability(runner=_fake_runner(dict([ok_ade, no_docker])))
    assert not a.ok and a.ade[0] and not a.docker[0]
    assert a.reason().startswith("Docker is not available") and "Cannot connect to the Docker daemon" in a.reason()
    assert "ade-bench" not in a.reason()
    broken_ade = (("ade", "--help"), (1, "", "ModuleNotFoundError: No module named 'scripts_python'"))
    ok_docker = (("docker", "info"), (0, "Server Version: 28", ""))
    a = availability(runner=_fake_runner(dict([broken_ade, ok_docker])))
    assert a.reason() == ("ade-bench does not work: `ade --help` failed (exit 1): ModuleNotFoundError: No module "
                          "named 'scripts_python'")
    monkeypatch.setattr(ade_run.shutil, "which", lambda name: None)
    a = availability(runner=_fake_runner({}))
    assert "`ade` is not on PATH" in a.reason() and "`docker` is not on PATH" in a.reason()


def test_check_timeout_is_bounded(monkeypatch):
    monkeypatch.setattr(ade_run.shutil, "which", lambda name: f"/usr/bin/{name}")

    def hang(cmd, **kw):
        raise subprocess.TimeoutExpired(cmd, kw.get("timeout"))

    a = availability(runner=hang, timeout=2)
    assert "did not answer within 2s" in a.ade[1] and "did not answer within 2s" in a.docker[1]


def test_run_tasks_not_available_says_why_and_continues(tmp_path):
    said = []
    a = Availability(False, (True, "ok"), (False, "`docker info` failed (exit 1): Cannot connect"))
    res = run_tasks(["acme001"], "duckdb", tmp_path, say=said.append,
                    call=HarnessCall(runner=lambda *a, **k: pytest.fail("must not run ade"), avail=a))
    assert res == {"ran": False, "reason": "Docker is not available: `docker info` failed (exit 1): Cannot connect",
                   "results": []}
    assert "not running ade-bench's harness: Docker is not available" in said[0] and "Continuing" in said[0]


def test_run_tasks_runs_seed_then_plain_and_triages(tmp_path):
    runner = _fake_runner({("acme001", True): (0, PASS_OUT, ""), ("acme001", False): (0, PASS_OUT, ""),
                           ("acme002", True): (1, SETUP_OUT, "")})
    said = []
    res = run_tasks(["acme001", "acme002"], "duckdb", tmp_path, say=said.append,
                    call=HarnessCall(runner=runner, avail=Availability(True, (True, "ok"), (True, "ok"))))
    assert res["ran"]
    got = [(r["task_id"], r["seed"], r["verdict"], r["category"]) for r in res["results"]]
    # acme002's --seed run failed: no seeds, so no second run
    assert got == [("acme001", True, PASS, None), ("acme001", False, PASS, None),
                   ("acme002", True, FAIL, SETUP_ERROR)]
    assert [c[2] for c in runner.calls] == ["acme001", "acme001", "acme002"]
    assert any("acme002 (with --seed): FAIL - setup error" in s for s in said)


def test_real_machine_why_not():
    """This machine: `ade --help` and/or `docker info` fail, and the reason says which."""
    a = availability(timeout=30)
    if a.ok:
        pytest.skip("ade and Docker both work here")
    why = a.reason()
    if not a.docker[0]:
        assert "Docker is not available" in why
    if not a.ade[0]:
        assert "ade-bench does not work" in why
    if shutil.which("docker") and subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode:
        assert "Docker is not available: `docker info` failed" in why


def test_cli_flag_parses(tmp_path):
    from adegen.cli.build_args import parse_args

    proj = Path(__file__).resolve().parents[2] / "integration_tests"
    if not (proj / "dbt_project.yml").is_file():
        pytest.skip("integration_tests/ missing")
    o = parse_args([str(proj), "--run-harness", "--output-dir", str(tmp_path / "o")])
    assert o.run_harness and not o.emulate_snowflake
