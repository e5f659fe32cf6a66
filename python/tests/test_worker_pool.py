"""validate.pool's workers end with the run that started them, also when the run is SIGKILLed while a
worker is still starting (PR_SET_PDEATHSIG is set only once the worker runs): the job already in its
pipe is never run by the orphan. Such an orphan used to build a baseline into the work directory the
next run had just removed as a dead run's (stray /tmp/adegen-bulk-*/validate/adegen-validate/baseline
dirs after test_bulk's killed runs)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from adegen.validate.workers.pool import WorkerPool
from reliability_kit import process_alive

REPO = Path(__file__).resolve().parents[2]

# Imported by the spawned worker when it unpickles its start hook, before the worker's own code
# runs: the run is killed during this import, so the worker finds its parent gone on its first step.
SLOW_START = "import time\ntime.sleep(2.0)\n\ndef noop():\n    pass\n"

RUN = textwrap.dedent("""\
    import os, signal, sys, time
    sys.path.insert(0, sys.argv[1])
    import slow_start
    from adegen.validate.workers.pool import WorkerPool

    if __name__ == "__main__":
        pool = WorkerPool(1, on_start=slow_start.noop, start_method="spawn")
        fut = pool.submit(os.mkdir, sys.argv[2])
        while not fut.running():  # the job is being sent down the worker's pipe
            time.sleep(0.01)
        time.sleep(0.2)
        print(pool.pids[0], flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # the run dies while its worker is still importing
    """)


def test_a_worker_whose_run_died_while_it_started_never_runs_the_job(tmp_path):
    (tmp_path / "slow_start.py").write_text(SLOW_START)
    script = tmp_path / "run.py"
    script.write_text(RUN)
    marker = tmp_path / "the-job-ran"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "python"), os.environ.get("PYTHONPATH", "")])}
    p = subprocess.Popen([sys.executable, str(script), str(tmp_path), str(marker)], env=env, cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    worker = int(p.stdout.readline())
    p.wait(timeout=60)
    assert p.returncode == -9
    deadline = time.monotonic() + 30
    while process_alive(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not process_alive(worker), "the orphaned worker is still running"
    time.sleep(0.5)
    assert not marker.exists(), "the orphaned worker ran the job of a run that was SIGKILLed"


def test_a_shadow_build_ends_with_its_worker(tmp_path):
    """The shadow build runs under faketime, a grandchild of the worker: `end_with` ends it once the
    worker is gone (PR_SET_PDEATHSIG would only see faketime)."""
    worker = subprocess.Popen(["sleep", "60"])
    code = ("import sys, time; from adegen.validate.workers.pool import end_with; end_with(int(sys.argv[1]), every=0.1); "
            "print('watching', flush=True); time.sleep(60)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "python"), os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen([sys.executable, "-c", code, str(worker.pid)], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "watching"
        time.sleep(0.5)
        assert child.poll() is None  # its worker is alive: it keeps going
        worker.kill()
        worker.wait()
        assert child.wait(timeout=10) == 1
    finally:
        for p in (worker, child):
            if p.poll() is None:
                p.kill()
                p.wait()


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_every_start_method_runs_jobs(method):
    """ADEGEN_MP_START: a forkserver's worker is the server's child, not this process's; it must not
    take itself for an orphan."""
    pool = WorkerPool(1, start_method=method)
    try:
        assert pool.submit(os.getpid).result(timeout=120) not in (None, os.getpid())
    finally:
        pool.shutdown()
