"""Bulk mode over a plan (`python -m adegen.bulk --plan PLAN.yaml`) and on a Dask cluster
(`--executor dask://HOST:PORT`), end to end (real dbt + DuckDB, a Dask LocalCluster of 2 worker
processes started here).

One plan of two small seed-based projects (reliability_kit's three-model project under two dbt
names; 2 + 1 tasks) is run twice: with the local pool, and on the cluster while one worker is
SIGKILLed in the middle of a proof. Both must write the same dataset byte for byte, apart from
what is measured (proof seconds, task.yaml's max_test_timeout_sec) and the output directory's own
path. The cluster tests skip when dask[distributed] is not installed (the
`dask` extra; the README's test command installs it)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from reliability_kit import REPO, assert_complete_tasks, build_env, make_project, temp_leftovers

PROJECTS = (("tiny", 2, 1), ("tinytwo", 1, 2))  # dbt name, tasks, seed
PLAN_NAME = "tinyset"
MEASURED = ("max_test_timeout_sec:",)  # task.yaml lines that hold a measurement (the sage trial's time)


@dataclass
class PlanRun:
    out: Path
    result: subprocess.CompletedProcess
    seconds: float
    kills: list


@pytest.fixture(scope="module")
def plan_env(tmp_path_factory, adegen_cache) -> dict:
    return build_env(tmp_path_factory.mktemp("plan-home"))


@pytest.fixture(scope="module")
def plan_file(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("plan")
    for name, _, _ in PROJECTS:
        make_project(root / "projects", name=name)
    plan = {"name": PLAN_NAME, "projects": [{"path": f"projects/{n}", "tasks": t, "seed": s} for n, t, s in PROJECTS]}
    path = root / "plan.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    return path


def plan_cmd(plan: Path, out: Path, executor: str = "local") -> list[str]:
    return [sys.executable, "-m", "adegen.bulk", "--plan", str(plan), "--output-dir", str(out), "--jobs", "2",
            "--executor", executor, "--json"]


def run_plan(cmd: list[str], env: dict, **kw) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.monotonic()
    r = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True, stdin=subprocess.DEVNULL, **kw)
    return r, time.monotonic() - t0


@pytest.fixture(scope="module")
def local_run(plan_file, plan_env, tmp_path_factory) -> PlanRun:
    out = tmp_path_factory.mktemp("plan-local") / "out"
    r, secs = run_plan(plan_cmd(plan_file, out), plan_env)
    assert r.returncode == 0, r.stderr[-3000:]
    print(f"plan, local pool: {secs:.0f}s")
    return PlanRun(out, r, secs, [])


@pytest.fixture(scope="module")
def cluster(plan_env):
    """A Dask LocalCluster: 2 worker processes of one thread, each with a nanny (restarts a killed one)."""
    distributed = pytest.importorskip("distributed", reason="dask[distributed] (the dask extra) not installed")
    env = {k: plan_env[k] for k in ("PYTHONPATH", "ADEGEN_CACHE_DIR", "DBT_SEND_ANONYMOUS_USAGE_STATS", "DO_NOT_TRACK")
           if k in plan_env}
    cl = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=0,
                                  dashboard_address=":0", env=env)
    client = distributed.Client(cl)
    client.wait_for_workers(2, timeout=120)
    yield cl, client
    client.close()
    cl.close()


def dask_url(cl) -> str:
    return "dask://" + cl.scheduler_address.split("://", 1)[1]


@pytest.fixture(scope="module")
def cluster_run(cluster, plan_file, plan_env, tmp_path_factory) -> PlanRun:
    """The plan on the cluster; the first time a proof job (a proof's broken state or a grading) is
    running on a worker, that worker process is SIGKILLed (its nanny starts a new one). One run shows
    both that the cluster writes the local pool's dataset and that a lost worker costs nothing but a
    retry: every job but the killed one runs as it would without the kill."""
    cl, client = cluster
    client.wait_for_workers(2, timeout=120)
    out = tmp_path_factory.mktemp("plan-dask") / "out"
    proc = subprocess.Popen(plan_cmd(plan_file, out, dask_url(cl)), env=plan_env, cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    kills: list[str] = []

    def killer() -> None:
        while proc.poll() is None and not kills:
            for worker, keys in client.processing().items():
                proving = [k for k in keys if str(k).startswith(("state_job-", "grade_job-"))]
                if proving:
                    pid = client.run(os.getpid, workers=[worker])[worker]
                    os.kill(pid, signal.SIGKILL)
                    kills.append(f"{worker} pid {pid} while running {proving[0].split('-')[0]}")
                    return
            time.sleep(0.05)

    t0 = time.monotonic()
    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    stdout, stderr = proc.communicate(timeout=900)
    thread.join(5)
    r = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    assert r.returncode == 0, r.stderr[-3000:]
    print(f"plan, Dask LocalCluster, killed {kills}: {time.monotonic() - t0:.0f}s")
    return PlanRun(out, r, time.monotonic() - t0, kills)


# -- what a run wrote, without what is measured ----------------------------------------------------------

def dataset_files(out: Path) -> dict[str, bytes]:
    """Every file of the dataset (tasks, project copies, databases, experiment sets, tasks.jsonl,
    DATASET.md), the measured values and the output directory's path taken out."""
    files = {}
    for sub in ("tasks", "projects", "databases", "experiment_sets"):
        for p in sorted((out / sub).rglob("*")):
            if p.is_file():
                files[str(p.relative_to(out))] = p.read_bytes()
    files["tasks.jsonl"] = "".join(json.dumps({k: v for k, v in json.loads(line).items() if k != "proof_seconds"},
                                              sort_keys=True) + "\n"
                                   for line in (out / "tasks.jsonl").read_text().splitlines()).encode()
    files["DATASET.md"] = (out / "DATASET.md").read_bytes()
    for name, data in files.items():
        if name.endswith("task.yaml") or name == "DATASET.md":
            text = data.decode().replace(str(out), "<OUT>")
            lines = [ln for ln in text.splitlines() if not ln.startswith(MEASURED) and "python -m adegen.bulk" not in ln]
            files[name] = "\n".join(lines).encode()
    return files


def assert_same_dataset(a: Path, b: Path) -> None:
    fa, fb = dataset_files(a), dataset_files(b)
    assert sorted(fa) == sorted(fb)
    assert [n for n in fa if fa[n] != fb[n]] == []


def assert_whole(out: Path) -> None:
    for name, tasks, _ in PROJECTS:
        ids = [i for i in assert_complete_tasks_of(out, name)]
        assert len(ids) == tasks
    assert not temp_leftovers(out)


def assert_complete_tasks_of(out: Path, name: str) -> list[str]:
    """reliability_kit's check on one project's ids (the two projects share tasks/)."""
    view = out.parent / f".view-{name}"
    (view / "tasks").mkdir(parents=True, exist_ok=True)
    for d in (out / "tasks").iterdir():
        if d.name.rstrip("0123456789") == name and not (view / "tasks" / d.name).exists():
            (view / "tasks" / d.name).symlink_to(d)
    return assert_complete_tasks(view, name)


# -- the plan -----------------------------------------------------------------------------------------------

def test_a_plan_writes_one_dataset_of_every_project(local_run):
    out = local_run.out
    doc = json.loads(local_run.result.stdout)
    assert doc["exit_code"] == 0 and doc["dataset"]["tasks"] == sum(t for _, t, _ in PROJECTS)
    assert [p["project"] for p in doc["projects"]] == [n for n, _, _ in PROJECTS]
    assert_whole(out)
    rows = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    assert [r["project"] for r in rows] == [n for n, t, _ in PROJECTS for _ in range(t)]
    text = (out / "DATASET.md").read_text()
    for name, tasks, seed in PROJECTS:
        assert f"| {name} | {seed} | {tasks} | {tasks} |" in text and f"## {name}: {tasks} proven tasks" in text
    sets = sorted(p.name for p in (out / "experiment_sets").iterdir())
    assert sets == sorted([f"{PLAN_NAME}.yaml"] + [f"{n}_bulk_seed{s}.yaml" for n, _, s in PROJECTS])


def test_experiment_sets_of_a_plan_load_with_ade_bench_dataset(local_run):
    dataset = pytest.importorskip("ade_bench.utils.dataset", reason="ade-bench (test-harness extra) not installed")
    out = local_run.out
    rows = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    for set_name, project in [(PLAN_NAME, None)] + [(f"{n}_bulk_seed{s}", n) for n, _, s in PROJECTS]:
        ds = dataset.Dataset(out / "tasks", task_ids=[f"@{set_name}"])
        expected = sorted(f"{r['id']}.{k}" for r in rows if project in (None, r["project"]) for k in r["prompt_keys"])
        assert ds.task_ids == expected and len(ds) == len(expected), set_name


def test_a_finished_plan_resumes_without_running_a_project(local_run, plan_file, plan_env):
    before = dataset_files(local_run.out)
    r, secs = run_plan(plan_cmd(plan_file, local_run.out), plan_env)
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and all(p.get("skipped") for p in doc["projects"]), r.stderr[-2000:]
    assert dataset_files(local_run.out) == before


@pytest.mark.parametrize("text, field", [
    ("projects: []\n", "projects"),
    ("projects:\n  - path: projects/tiny\n", "projects[0].tasks"),
    ("projects:\n  - path: projects/tiny\n    tasks: 0\n", "projects[0].tasks"),
    ("projects:\n  - path: projects/nowhere\n    tasks: 2\n", "projects[0].path"),
    ("projects:\n  - {path: projects/tiny, tasks: 2, colour: red}\n", "projects[0].colour"),
    ("name: 'a b'\nprojects:\n  - {path: projects/tiny, tasks: 2}\n", "name"),
    ("projects:\n  - {path: projects/tiny, tasks: 2}\n  - {path: projects/tiny, tasks: 3}\n", "projects[1]"),
    ("projects: [\n", None),
])
def test_a_bad_plan_ends_with_one_message_and_writes_nothing(plan_file, tmp_path, capsys, text, field):
    from adegen.cli.bulk import main

    bad = plan_file.parent / "bad.yaml"
    bad.write_text(text)
    out = tmp_path / "never"
    assert main(["--plan", str(bad), "--output-dir", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("adegen: error:") == 1 and "Traceback" not in err and str(bad) in err, err
    assert field is None or f": {field}: " in err, err
    assert not out.exists()


def test_bad_executor_ends_with_one_message(plan_file, tmp_path, capsys):
    from adegen.cli.bulk import main

    assert main(["--plan", str(plan_file), "--output-dir", str(tmp_path / "o"), "--executor", "ray://x:1"]) == 2
    err = capsys.readouterr().err
    assert "--executor" in err and "Traceback" not in err and not (tmp_path / "o").exists()
    # a scheduler nobody runs: named, nothing written
    assert main(["--plan", str(plan_file), "--output-dir", str(tmp_path / "o"), "--executor", "dask://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert "--executor" in err and "Traceback" not in err and not (tmp_path / "o").exists()


# -- on the Dask cluster --------------------------------------------------------------------------------------

def test_cluster_writes_the_same_dataset_byte_for_byte(local_run, cluster_run):
    """Even with a worker killed mid-proof (its proof ran again on another worker)."""
    assert json.loads(cluster_run.result.stdout)["executor"].startswith("Dask scheduler tcp://")
    assert_whole(cluster_run.out)
    assert_same_dataset(local_run.out, cluster_run.out)


def test_a_worker_killed_mid_proof_is_survived(local_run, cluster_run):
    assert cluster_run.kills, "no proof job was seen running on the cluster"
    assert_whole(cluster_run.out)  # no duplicate id, no partial task, no temp dir left
    rows = [json.loads(line) for line in (cluster_run.out / "tasks.jsonl").read_text().splitlines()]
    assert len({r["id"] for r in rows}) == len(rows)


def test_dask_pool_results_errors_and_deadlines(cluster):
    """The pool's contract on the cluster: results and job errors come back as the local pool gives
    them; a job over its deadline fails with BudgetExceeded, and its worker is restarted (the next
    jobs run)."""
    from adegen.validate.workers.dask_pool import DaskPool
    from adegen.validate.workers.pool import BudgetExceeded

    cl, client = cluster
    client.wait_for_workers(2, timeout=120)
    pool = DaskPool(client)
    try:
        assert pool.submit(divmod, 7, 2).result(60) == (3, 1)
        with pytest.raises(ZeroDivisionError):
            pool.submit(divmod, 1, 0).result(60)
        t0 = time.monotonic()
        with pytest.raises(BudgetExceeded):
            pool.submit(time.sleep, 60, deadline=1.0).result(60)
        assert time.monotonic() - t0 < 30 and len(pool.restarted) == 1
        assert [f.result(120) for f in [pool.submit(divmod, n, 3) for n in range(4)]] == [divmod(n, 3) for n in range(4)]
        client.wait_for_workers(2, timeout=120)  # the restarted one is back
        pool.check_paths([str(REPO)])  # every worker sees it
        from adegen.core.errors import InputError

        with pytest.raises(InputError, match=r"\d Dask worker\(s\) cannot see /nowhere/adegen"):
            pool.check_paths([str(REPO), "/nowhere/adegen"])
    finally:
        pool.shutdown()
    client.wait_for_workers(2, timeout=120)
