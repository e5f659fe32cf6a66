"""Bulk mode (`python -m adegen.bulk`) end to end on a small seed-based project (real dbt + DuckDB).

Two runs of 3 proven tasks with seed 1 are shared by every test: one uninterrupted with --jobs 2,
one with --jobs 1 that is SIGKILLed at random moments and rerun until it finishes. Both must give
the same tasks (same seed: same list; killed: no duplicate, no partial task; jobs 1 == jobs 2).
The project is reliability_kit's three-model one: four bulk processes start in this module, and the
example project's discovery and baseline would cost each of them a minute. The candidate order is
checked on the example project (its discovery is shared by the session)."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from reliability_kit import REPO, assert_complete_tasks, build_env, make_project, temp_leftovers, tree_state

# the shifted-clock check as users get it (conftest.shifted_clock_off turns it off elsewhere)
pytestmark = pytest.mark.usefixtures("shifted_clock_on")

TASKS = 3
SEED = 1
NAME = "tiny"  # the dbt project name of reliability_kit.make_project
SCHEMA = REPO / "python" / "adegen" / "schemas" / "bulk_tasks.schema.json"


@dataclass
class BulkRun:
    out: Path
    result: subprocess.CompletedProcess
    seconds: float
    kills: list[str]


def bulk_cmd(project: Path, out: Path, jobs: int) -> list[str]:
    # no data changes: each is a full emulation (a minute here); the purposeful changes are in the
    # candidate list, so a resumed run must find the same ones
    return [sys.executable, "-m", "adegen.bulk", str(project), "--tasks", str(TASKS), "--seed", str(SEED),
            "--jobs", str(jobs), "--output-dir", str(out), "--json", "--kinds", "catalog,purpose"]


def run_bulk(cmd: list[str], env: dict) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.monotonic()
    r = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return r, time.monotonic() - t0


@pytest.fixture(scope="module")
def bulk_env(tmp_path_factory, adegen_cache, shifted_clock_on) -> dict:
    return build_env(tmp_path_factory.mktemp("bulk-home"))


@pytest.fixture(scope="module")
def bulk_project(tmp_path_factory) -> Path:
    return make_project(tmp_path_factory.mktemp("bulk-project"))


@pytest.fixture(scope="module")
def project_state(bulk_project) -> dict:
    return tree_state(bulk_project)


@pytest.fixture(scope="module")
def uninterrupted(bulk_project, bulk_env, project_state, tmp_path_factory) -> BulkRun:
    out = tmp_path_factory.mktemp("bulk-a") / "out"
    r, secs = run_bulk(bulk_cmd(bulk_project, out, jobs=2), bulk_env)
    assert r.returncode == 0, r.stderr[-3000:]
    print(f"bulk --tasks {TASKS} --jobs 2: {secs:.0f}s")
    return BulkRun(out, r, secs, [])


@pytest.fixture(scope="module")
def killed_and_resumed(bulk_project, bulk_env, uninterrupted, tmp_path_factory) -> BulkRun:
    """--jobs 1, SIGKILLed twice at random moments (printed): once anywhere in a run, once while
    tasks are being proven or committed; then run to the end."""
    out = tmp_path_factory.mktemp("bulk-b") / "out"
    rng = random.Random()
    kills = []
    for when in ("anywhere", "writing"):
        proc = subprocess.Popen(bulk_cmd(bulk_project, out, jobs=1), env=bulk_env, cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        t0 = time.monotonic()
        if when == "writing":  # the first task dir (temp or final) of this run is there
            seen = set(os.listdir(out / "tasks")) if (out / "tasks").is_dir() else set()
            while proc.poll() is None and not (set(os.listdir(out / "tasks")) - seen if (out / "tasks").is_dir()
                                               else set()):
                time.sleep(0.1)
        try:
            proc.wait(timeout=rng.uniform(2.0, uninterrupted.seconds) if when == "anywhere" else rng.uniform(0, 6))
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)  # the validator's workers die with it (PDEATHSIG)
            proc.wait()
            kills.append(f"{when} {time.monotonic() - t0:.1f}s")
        if out.exists():  # whatever the moment: only complete tasks are visible, ids without gaps
            assert_complete_tasks(out, NAME)
    r, secs = run_bulk(bulk_cmd(bulk_project, out, jobs=1), bulk_env)
    print(f"bulk --jobs 1 killed at {kills}, then finished in {secs:.0f}s")
    assert r.returncode == 0, r.stderr[-3000:]
    return BulkRun(out, r, secs, kills)


@pytest.fixture(scope="module")
def purposeful(bulk_project, bulk_env, project_state, tmp_path_factory) -> BulkRun:
    """One task drawn from the purposeful changes only (`--kinds purpose`)."""
    out = tmp_path_factory.mktemp("bulk-purpose") / "out"
    cmd = [sys.executable, "-m", "adegen.bulk", str(bulk_project), "--tasks", "1", "--seed", str(SEED), "--jobs", "1",
           "--output-dir", str(out), "--json", "--kinds", "purpose"]
    r, secs = run_bulk(cmd, bulk_env)
    assert r.returncode == 0, r.stderr[-3000:]
    print(f"bulk --kinds purpose --tasks 1: {secs:.0f}s")
    return BulkRun(out, r, secs, [])


def rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]


def stable(row: dict) -> dict:
    return {k: v for k, v in row.items() if k != "proof_seconds"}  # a measurement


def task_texts(out: Path, task_id: str) -> tuple[bytes, list]:
    d = out / "tasks" / task_id
    return (d / "setup" / "changes.patch").read_bytes(), yaml.safe_load((d / "task.yaml").read_text())["prompts"]


def test_writes_the_asked_number_of_proven_distinct_tasks(uninterrupted, bulk_project, project_state):
    out = uninterrupted.out
    doc = json.loads(uninterrupted.result.stdout)
    ids = assert_complete_tasks(out, NAME)
    assert len(ids) == TASKS and doc["exit_code"] == 0 and doc["dataset"]["written_this_run"] == TASKS
    got = rows(out)
    assert [r["id"] for r in got] == ids == [r["id"] for r in doc["dataset"]["tasks"]]
    for tid in ids:
        data = yaml.safe_load((out / "tasks" / tid / "task.yaml").read_text())
        assert data["status"] == "ready" and list((out / "tasks" / tid / "seeds").glob("solution__*.csv"))
    sites = [(r["model"], r["pattern"], r["site"]["line"]) for r in got]
    assert len(set(sites)) == len(sites)
    prompts = [p["prompt"] for tid in ids for p in task_texts(out, tid)[1]]
    assert len(set(prompts)) == len(prompts)
    assert not temp_leftovers(out)
    assert tree_state(bulk_project) == project_state  # the user's project is never written


def test_tasks_jsonl_validates_against_the_shipped_schema(uninterrupted):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text())
    for row in rows(uninterrupted.out):
        jsonschema.validate(row, schema)
        assert row["prompt_keys"][0] == "base" and row["dag_distance"] == max(row["graded_tables"].values())


def test_dataset_md_counts_and_command(uninterrupted):
    text = (uninterrupted.out / "DATASET.md").read_text()
    assert f"--tasks {TASKS} --seed {SEED}" in text and "| Family | tasks |" in text
    for row in rows(uninterrupted.out):
        assert f"| {row['family']} |" in text and f"| {row['layer']} |" in text
    doc = json.loads(uninterrupted.result.stdout)
    for reason, n in doc["dataset"]["dropped"].items():
        assert f"| {reason} | {n} |" in text


def test_experiment_set_loads_with_ade_bench_dataset(uninterrupted):
    dataset = pytest.importorskip("ade_bench.utils.dataset", reason="ade-bench (test-harness extra) not installed")
    out = uninterrupted.out
    data = yaml.safe_load((out / "experiment_sets" / f"{NAME}_bulk_seed{SEED}.yaml").read_text())
    assert set(data) == {"experiment_name", "description", "task_ids"}
    ds = dataset.Dataset(out / "tasks", task_ids=[f"@{NAME}_bulk_seed{SEED}"])
    expected = sorted(f"{r['id']}.{k}" for r in rows(out) for k in r["prompt_keys"])
    assert ds.task_ids == expected and len(ds) == len(expected)


def test_killed_rerun_and_one_job_give_the_same_tasks(uninterrupted, killed_and_resumed):
    a, b = uninterrupted.out, killed_and_resumed.out
    ids = assert_complete_tasks(b, NAME)
    assert [stable(r) for r in rows(b)] == [stable(r) for r in rows(a)]
    assert ids == [r["id"] for r in rows(a)]
    for tid in ids:
        assert task_texts(b, tid) == task_texts(a, tid)
    assert not temp_leftovers(b)
    exp = yaml.safe_load((b / "experiment_sets" / f"{NAME}_bulk_seed{SEED}.yaml").read_text())
    assert exp["task_ids"] == ids
    doc = json.loads(killed_and_resumed.result.stdout)
    assert doc["dataset"]["dropped"] == json.loads(uninterrupted.result.stdout)["dataset"]["dropped"]


def test_bulk_proposes_and_proves_a_purposeful_change(purposeful, bulk_project, project_state):
    """A purposeful change is a candidate of bulk mode: made, proven (fast path) and written as the
    build writes one - its solution keeps the purpose (not the setup's inverse) - with its row."""
    out = purposeful.out
    (row,) = rows(out)
    assert row["family"] == "purposeful-change" and row["pattern"].startswith("purpose:")
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(row, json.loads(SCHEMA.read_text()))
    task = out / "tasks" / row["id"]
    data = yaml.safe_load((task / "task.yaml").read_text())
    assert data["status"] == "ready" and "purposeful change" in data["description"]
    setup = (task / "setup" / "changes.patch").read_text()
    solution = (task / "solutions" / "changes.patch").read_text()
    added = [ln[1:] for ln in setup.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    assert any(ln[1:] in added for ln in solution.splitlines() if ln.startswith(" "))  # the purpose stays
    doc = json.loads(purposeful.result.stdout)
    (entry,) = doc["tasks"]
    assert entry["proven"] and entry["family"] == "purposeful-change"
    assert "(inprocess, prepared)" in (out / ".adegen" / "bulk" / "bulk.log").read_text()  # the fast path
    assert tree_state(bulk_project) == project_state


def test_candidate_order_depends_only_on_the_seed(example_project, acme_discovery, tmp_path):
    from adegen.cli.build_args import parse_args
    from adegen.pipeline import UI, RunContext, bulk_units, discovery, inputs
    from adegen.adebench.install import AdeBench

    ctx = RunContext(opts=parse_args([str(example_project), "--output-dir", str(tmp_path), "--no-validate"]),
                     ui=UI(json_mode=True, interactive=False))
    inputs.load_project(ctx)
    ctx.ade, ctx.discovery = AdeBench(False, None, "not looked for"), acme_discovery
    discovery.survey(ctx)
    units, _ = bulk_units.enumerate_units(ctx)
    keys = [u.key for u in bulk_units.order_units(units, 1)]
    assert len(set(keys)) == len(keys) == len(units)
    assert [u.key for u in bulk_units.order_units(random.Random(5).sample(units, len(units)), 1)] == keys
    assert [u.key for u in bulk_units.order_units(units, 2)] != keys
    first = bulk_units.order_units(units, 1)[:12]  # the spread: no model twice before others had a turn
    assert len({u.candidate.model["unique_id"] for u in first}) == 12
    assert len({u.candidate.family for u in first}) >= 6


def test_ledger_settles_a_commit_a_kill_left_pending(tmp_path):
    from adegen.core.drops import DropCode
    from adegen.pipeline.ledger import Ledger

    tasks = tmp_path / "tasks"
    (tasks / "acme001").mkdir(parents=True)
    for present in (True, False):
        led = Ledger.open(tmp_path, {"seed": int(present)})
        led.bind("units", 0)
        led.drop(DropCode.EQUIVALENT)
        led.begin_commit({"id": "acme001" if present else "acme002", "prompt_texts": ["x"]})
        led = Ledger.open(tmp_path, {"seed": int(present)})  # what the rerun reads
        led.recover(tasks)
        assert led.pending is None and led.cursor == (2 if present else 1)
        assert [t["id"] for t in led.tasks] == (["acme001"] if present else [])
        assert led.next_number() == (2 if present else 1)
        with pytest.raises(Exception, match="changed since this bulk run started"):
            Ledger.open(tmp_path, {"seed": int(present)}).bind("other units", 0)


def test_bad_arguments_end_with_one_message(example_project, tmp_path, capsys):
    from adegen.cli.bulk import main

    assert main([str(example_project), "--tasks", "0", "--output-dir", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "--tasks" in err and "Traceback" not in err and not (tmp_path / "o").exists()


def test_a_whole_candidates_site_is_its_first_line_that_is_more_than_a_comma():
    from adegen.pipeline.bulk_made import first_change

    old = "select\n    a,\n    count(*) as n\nfrom t\ngroup by 1\n"
    new = "select\n    a,\n    count(*) as n,\n    count(*) as k\nfrom t\nwhere s = 1\ngroup by 1\n"
    assert first_change(old, new) == {"line": 4, "before": "", "after": "count(*) as k"}
    assert first_change("select\n    a\nfrom t\n", "select\n    b\nfrom t\n") == {"line": 2, "before": "a", "after": "b"}
    assert first_change("select a\n", "select a,\n") == {"line": 1, "before": "select a", "after": "select a,"}
