"""`python -m adegen.bulk ... --calibrate builtin:search --keep all|unsolved` and `python -m
adegen.calibrate` end to end on a small seed-based project (real dbt + DuckDB): the measured
difficulty lands in tasks.jsonl, calibration.jsonl and the review page; --keep unsolved moves the
solved tasks out; bad input is one message and exit 2."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from reliability_kit import REPO, build_env, make_project

SCHEMA = REPO / "python" / "adegen" / "schemas" / "bulk_tasks.schema.json"


def _bulk(project, out, env, *extra) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "adegen.bulk", str(project), "--tasks", "2", "--seed", "1", "--jobs", "1",
           "--output-dir", str(out), "--calibrate", "builtin:search",
           # code slips only: builtin:search finds fixes among edits of the code, and a data change's fix
           # (adapting the models to the new data) is not one it can find
           "--kinds", "catalog", *extra]
    return subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=1200)


def _rows(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def env(tmp_path_factory, adegen_cache) -> dict:
    return build_env(tmp_path_factory.mktemp("cal-home"))


@pytest.fixture(scope="module")
def bulk_out(tmp_path_factory, env):
    project = make_project(tmp_path_factory.mktemp("cal-project"))
    out = tmp_path_factory.mktemp("cal-out") / "out"
    r = _bulk(project, out, env, "--keep", "all")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    return project, out, r


def test_bulk_calibrate_keep_all_writes_the_measure_everywhere(bulk_out):
    _project, out, r = bulk_out
    rows = _rows(out / "tasks.jsonl")
    assert len(rows) == 2
    for row in rows:
        m = row["measured_difficulty"]
        assert m["label"] in ("easy", "medium", "hard") and (m["runs"], m["solved"]) == (1, 1)
        assert m["median_tries"] >= 1 and m["agent"] == "builtin:search"
    jsonschema = pytest.importorskip("jsonschema")
    for row in rows:
        jsonschema.validate(row, json.loads(SCHEMA.read_text()))
    runs = _rows(out / "calibration.jsonl")
    assert sorted(x["task_id"] for x in runs) == sorted(x["id"] for x in rows)
    assert all(x["solved"] and x["graded"] and x["sandbox_removed"] and x["tries"] >= 1 for x in runs)
    page = (out / "report.html").read_text()
    assert "Measured difficulty" in page and "measured " + rows[0]["measured_difficulty"]["label"] in page
    assert "Measured difficulty" in (out / "DATASET.md").read_text()
    assert "Calibrating 2 task(s) with builtin:search" in r.stdout


def test_standalone_calibrate_updates_tasks_jsonl_and_the_page(bulk_out, env):
    _project, out, _r = bulk_out
    first = _rows(out / "tasks.jsonl")[0]["id"]
    r = subprocess.run([sys.executable, "-m", "adegen.calibrate", str(out), "--agent-command", "exit 0",
                        "--tasks", first, "--timeout", "60"], env=env, cwd=REPO, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    measured = {x["id"]: x["measured_difficulty"] for x in _rows(out / "tasks.jsonl")}
    assert measured[first]["label"] == "unsolved" and measured[first]["agent"] == "exit 0"
    assert f"{first} [" in r.stdout and "unsolved (0/1 solved" in r.stdout
    assert "measured unsolved" in (out / "report.html").read_text()


@pytest.mark.parametrize("args, says", [
    (["/nonexistent/out", "--agent-command", "true"], "no tasks/ directory here"),
    (["{out}", "--agent-command", "agent {nope}"], "unknown placeholder {nope}"),
    (["{out}", "--agent-command", "true", "--tasks", "zzz999"], "no task 'zzz999'"),
    (["{out}", "--agent-command", "true", "--runs", "0"], "--runs"),
])
def test_calibrate_bad_input_is_one_message_and_exit_2(bulk_out, env, args, says):
    _project, out, _r = bulk_out
    argv = [a.replace("{out}", str(out)) for a in args]
    r = subprocess.run([sys.executable, "-m", "adegen.calibrate", *argv], env=env, cwd=REPO, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_bulk_keep_unsolved_moves_the_solved_tasks_out(bulk_out, env):
    project, out, _r = bulk_out
    before = _rows(out / "calibration.jsonl")
    r = _bulk(project, out, env, "--keep", "unsolved")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    # builtin:search solved both (the standalone run's newer measure is not the bulk ledger's)
    assert _rows(out / "tasks.jsonl") == []
    assert not [p for p in (out / "tasks").iterdir() if p.is_dir()]
    assert len([p for p in (out / "solved_by_reference").iterdir() if (p / "task.yaml").is_file()]) == 2
    assert _rows(out / "calibration.jsonl") == before  # measured once; the rerun did not run the agent again
