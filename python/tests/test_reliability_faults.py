"""Reliability suite, part 3: faults and concurrency (real dbt + DuckDB, `--no-validate` runs on a
tiny project).

* SIGKILL at seeded random points spread over a whole run (>= 10 trials, one output directory): no
  partial task directory is ever visible (temp dirs are `.adegen-tmp-*` and never count), ids stay
  `<name>001..N` without gaps or duplicates, the project is untouched, and a rerun - after stale temp
  dirs and a stale lock of a dead pid are planted - succeeds and continues the sequence.
* SIGINT (Ctrl-C) exits with 130 (or 1) and one message, no traceback, with the same guarantees and
  nothing left behind (no temp dir, no lock); SIGTERM the same, and no work directory in TMPDIR.
* Two builds started at once on one output directory never share a task id nor corrupt each
  other's output; a run that finds the directory locked says "another run is writing to DIR".
* A dbt failure in the middle of validation (a mutant that crashes the build) is reported for that
  candidate only: proven in tests/test_validate_e2e.py::test_build_error_only_when_intended (one
  crashing mutant screened in the same batch as healthy ones), not duplicated here."""
from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from reliability_kit import (MODELS, REPO, assert_complete_tasks, build_cmd, make_project, rel_env,  # noqa: F401
                             run_build, task_dirs, temp_leftovers, tree_state)

ORDERS_MART = """select
    order_id,
    customer_id,
    case
        when status in ('complete', 'shipped') then 'done'
        when status = 'returned' then 'returned'
        else 'open'
    end as status_group,
    amount * 100 as amount_cents,
    case when amount >= 10 then 'large' else 'small' end as size_band
from {{ ref('stg_orders') }}
where status != 'cancelled' and amount > 0
"""
# a second mart with room: a run caps one slip kind and the cosmetic stories it uses, so the candidates
# of one mart alone run out before ten killed runs and the rerun have taken their tasks
CUSTOMERS_MART = """select
    c.customer_id,
    c.region,
    count(distinct o.order_id) as orders,
    sum(case when o.status = 'returned' then o.amount else 0 end) as returned_amount,
    max(o.amount) as largest_order,
    case when c.region in ('north', 'south') then 'domestic' else 'abroad' end as market
from {{ ref('stg_customers') }} as c
left join {{ ref('stg_orders') }} as o
    on c.customer_id = o.customer_id
group by c.customer_id, c.region
"""
ARGS = ["--no-validate", "--pick", "all", "--yes", "--count", "3"]
TRIALS = 10
SEED = 20261129


@pytest.fixture(scope="session")
def fault_project(tmp_path_factory, rel_env):
    """The tiny project, its tree state, and the duration of one complete run (warm cache)."""
    root = tmp_path_factory.mktemp("faults")
    # the default models and one more with room for bugs: ten killed runs and the rerun take up to
    # 33 tasks, more than the three default models offer since the catalog keeps realistic bugs only
    project = make_project(root, models={**MODELS, "models/marts/fct_orders.sql": ORDERS_MART,
                                         "models/marts/fct_customer_orders.sql": CUSTOMERS_MART})
    before = tree_state(project)
    ref = root / "reference-out"
    t0 = time.monotonic()
    r = run_build([project, "--output-dir", ref, *ARGS], rel_env)
    duration = time.monotonic() - t0
    assert r.returncode == 0, r.stderr[-3000:]
    assert len(assert_complete_tasks(ref, "tiny")) == 3
    return project, before, duration


def _start(args, env) -> subprocess.Popen:
    return subprocess.Popen(build_cmd(args), env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, start_new_session=True)


def _reap(p: subprocess.Popen, timeout: float = 120) -> tuple[str, str]:
    out, err = p.communicate(timeout=timeout)
    try:  # orphaned children (a dbt compile) of a killed run: end them too
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return out, err


def test_sigkill_at_random_points_then_rerun(fault_project, rel_env, tmp_path):
    project, before, duration = fault_project
    out = tmp_path / "out"
    rng = random.Random(SEED)
    seen_ids: list[str] = []
    for i in range(TRIALS):
        # stratified over the run's duration: every part of the run gets a kill
        delay = duration * (i + rng.random()) / TRIALS
        p = _start([project, "--output-dir", out, *ARGS], rel_env)
        time.sleep(delay)
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
        _reap(p)
        ids = assert_complete_tasks(out, "tiny")  # never a partial task dir; contiguous ids
        assert ids[:len(seen_ids)] == seen_ids  # committed tasks never disappear
        seen_ids = ids
        assert tree_state(project) == before, f"trial {i}: the project changed"
    # plant the debris of a run killed mid-write: a temp task dir with a higher id and a stale lock
    dead = subprocess.Popen(["true"])
    dead.wait()
    tasks = out / "tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    (tasks / ".adegen-tmp-tiny099-abcd" / "tiny099").mkdir(parents=True)
    (tasks / ".adegen-tmp-tiny099-abcd" / "tiny099" / "task.yaml").write_text("task_id: tiny099\n")
    (out / ".adegen.lock").write_text(f"{dead.pid} {socket.gethostname()}\n")
    n0 = len(seen_ids)
    r = run_build([project, "--output-dir", out, *ARGS], rel_env)
    assert r.returncode == 0, r.stderr[-3000:]
    ids = assert_complete_tasks(out, "tiny")
    assert len(ids) == n0 + 3 and ids[:n0] == seen_ids  # continues without gaps or duplicates
    assert temp_leftovers(out) == [] and not (out / ".adegen.lock").exists()
    assert tree_state(project) == before


@pytest.mark.parametrize("trial", range(3))
def test_sigint_exits_cleanly(fault_project, rel_env, tmp_path, trial):
    project, before, duration = fault_project
    out = tmp_path / "out"
    delay = duration * random.Random(SEED + trial).uniform(0.15, 0.9)
    p = _start([project, "--output-dir", out, *ARGS], rel_env)
    time.sleep(delay)
    sent = p.poll() is None
    if sent:
        p.send_signal(signal.SIGINT)
    stdout, err = _reap(p, timeout=300)
    assert "Traceback" not in err, err[-3000:]
    if sent and p.returncode != 0:
        assert p.returncode in (130, 1), (p.returncode, err[-3000:])
        assert "interrupted" in err, err[-2000:]
    assert_complete_tasks(out, "tiny")
    assert temp_leftovers(out) == [] and not (out / ".adegen.lock").exists()
    assert tree_state(project) == before


# Ctrl-C while a command's modules still load (over a second on a loaded machine) came before the
# command's error boundary and printed a traceback. A deterministic stand-in for that moment: the
# first import of an adegen module past the entry's plumbing (cli.main, core) raises KeyboardInterrupt.
_INTERRUPT_AT_IMPORT = """
import builtins, importlib, runpy, sys
# the packages runpy loads before the entry's code runs (a few light modules), then the trap
importlib.import_module(sys.argv[1] if importlib.util.find_spec(sys.argv[1]).submodule_search_locations
                        else sys.argv[1].rpartition(".")[0])
real_import = builtins.__import__
armed = [True]
def importing(name, *args, **kwargs):
    if (armed[0] and name.startswith("adegen.") and name not in sys.modules
            and name != "adegen.cli.main" and not name.startswith("adegen.core")):
        armed[0] = False
        raise KeyboardInterrupt
    return real_import(name, *args, **kwargs)
builtins.__import__ = importing
sys.argv = [sys.argv[1], "/nonexistent-project"]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("module", ["adegen.build", "adegen.bulk", "adegen", "adegen.calibrate",
                                    "adegen.report", "adegen.discover"])
def test_ctrl_c_while_the_command_loads_exits_cleanly(module, rel_env):
    r = subprocess.run(["python", "-c", _INTERRUPT_AT_IMPORT, module], env=rel_env, capture_output=True,
                       text=True, timeout=120)
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    assert r.returncode == 130 and "interrupted" in r.stderr, (r.returncode, r.stderr[-2000:])


@pytest.mark.parametrize("moment, sigint", [("discovery", "default"), ("proof", "default"),
                                           ("discovery", "ignored"), ("proof", "ignored")])
def test_sigterm_cleans_up_like_ctrl_c(fault_project, rel_env, tmp_path, moment, sigint):
    """SIGTERM (`timeout`, CI runners, systemd, container stops) is Ctrl-C: the same message and
    exit, no `.adegen-tmp-*` in the output and no work directory left in TMPDIR; sent while dbt
    runs in-process (discovery) and while proof workers grade a task; also when the build starts
    with SIGINT ignored, as a script's background job (`cmd &`) or a test runner's worker does."""
    project, before, _ = fault_project
    out, scratch = tmp_path / "out", tmp_path / "tmp"
    scratch.mkdir()
    env = dict(rel_env, TMPDIR=str(scratch))
    disposition = signal.SIG_IGN if sigint == "ignored" else signal.SIG_DFL
    p = subprocess.Popen(build_cmd([project, "--output-dir", out, "--pick", "all", "--yes", "--count", "3"]),
                         env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                         text=True, start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, disposition))
    for line in p.stdout:
        if moment == "discovery" or line.startswith("Proving "):
            break
    time.sleep(1)
    assert p.poll() is None, "the build ended before the signal: the test would prove nothing"
    p.send_signal(signal.SIGTERM)
    _, err = _reap(p, timeout=300)
    assert "Traceback" not in err, err[-3000:]
    assert p.returncode == 130 and "interrupted" in err, (p.returncode, err[-3000:])
    assert_complete_tasks(out, "tiny")
    assert temp_leftovers(out) == [] and not (out / ".adegen.lock").exists()
    assert list(scratch.iterdir()) == []
    assert tree_state(project) == before


def test_two_builds_at_once_never_share_ids(fault_project, rel_env, tmp_path):
    project, before, _ = fault_project
    out = tmp_path / "out"
    procs = [_start([project, "--output-dir", out, *ARGS], rel_env) for _ in range(2)]
    results = [(p, *_reap(p, timeout=600)) for p in procs]
    ok = [p for p, _, _ in results if p.returncode == 0]
    assert ok, [e[-2000:] for _, _, e in results]
    for p, _, err in results:
        assert "Traceback" not in err, err[-3000:]
        if p.returncode != 0:  # the loser says why, and wrote nothing of its own
            assert p.returncode == 2 and f"another run is writing to {out}" in err, err[-3000:]
    ids = assert_complete_tasks(out, "tiny")  # unique, contiguous, complete
    assert len(ids) == 3 * len(ok)
    assert temp_leftovers(out) == [] and not (out / ".adegen.lock").exists()
    assert tree_state(project) == before


def test_locked_output_dir_is_refused_clearly(fault_project, rel_env, tmp_path):
    """Deterministic half of the race: while a live run holds the lock, a build says so (exit 2)."""
    from adegen.tasks.output import RunLock

    project, before, _ = fault_project
    out = tmp_path / "out"
    lock = RunLock(out)
    lock.acquire()
    try:
        r = run_build([project, "--output-dir", out, *ARGS], rel_env)
    finally:
        lock.release()
    assert r.returncode == 2 and f"another run is writing to {out}" in r.stderr, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    assert sorted(p.name for p in out.iterdir()) == []  # nothing of its own was written
    assert tree_state(project) == before


def test_empty_lock_left_by_a_kill_between_create_and_write(tmp_path):
    """O_EXCL creates the lock before the pid is written: a kill in between leaves an empty lock,
    which must not block every later run forever (taken over once it is a few seconds old)."""
    from adegen.tasks import output as out
    from adegen.core.errors import InputError

    lock = tmp_path / out.LOCK_NAME
    lock.write_text("")
    with pytest.raises(InputError, match="another run is writing"):
        out.RunLock(tmp_path).acquire()  # fresh: its owner may be writing the pid right now
    old = time.time() - 60
    os.utime(lock, (old, old))
    lk = out.RunLock(tmp_path)
    lk.acquire()
    assert lk.held and lock.read_text().split()[0] == str(os.getpid())
    lk.release()
