"""The validator's jobs on a Dask distributed cluster (`--executor dask://HOST:PORT`), behind the
interface of `validate.pool.WorkerPool`: `submit(fn, *args, deadline=None)` -> a
`concurrent.futures.Future`, `broadcast`, `shutdown`.

What Dask does, and adegen does not redo: placing jobs on workers, moving arguments and results,
and running a job again on another worker when the one running it is lost (killed, or its
connection dropped; after `distributed.scheduler.allowed-failures` losses the job fails with
`WorkerLost`, as a lost local worker does).

What is added here, because Dask has no such thing: the deadline. A job still running `deadline`
seconds after it started (a worker-side start event, so time spent queued does not count) is given
up, its future fails with `BudgetExceeded`, and the worker running it is restarted by its nanny -
in-process dbt cannot be interrupted, as with the local pool, where the worker is killed.

A worker process runs one job at a time (`--nthreads 1`, checked on connect): the jobs keep
per-process state (the worker's screening app, its dbt runner), exactly as a local worker does.
Each worker reads the project and the run's databases from the run's work directory, a path every
worker must see (the same machine, or a shared file system: docs/bulk.md "Bulk on a Dask cluster"), and
caches its copy of the project there (`intact.worker_app`) for all its jobs."""
from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field
from typing import Callable

from adegen.validate.workers.pool import BudgetExceeded, WorkerLost

POLL = 0.5  # seconds between deadline checks
_warmed: set = set()  # worker side: the on_start functions this process has run


def missing_paths(paths: list[str]) -> list[str]:
    """Worker side: the paths this worker cannot see."""
    import os

    return [p for p in paths if not os.path.exists(p)]


def run_job(fn, args: tuple, token: str, topic: str, on_start):
    """Worker side: warm the process once, tell the driver the job started (its deadline counts
    from here), run it."""
    from distributed import get_worker

    if on_start is not None and on_start not in _warmed:
        _warmed.add(on_start)
        try:
            on_start()
        except Exception:  # noqa: BLE001 - warming is an optimisation; the job reports real problems
            pass
    worker = get_worker()
    worker.log_event(topic, {"token": token, "worker": worker.address})
    return fn(*args)


@dataclass
class _Job:
    fut: Future
    dfut: object  # distributed.Future (set right after the job is registered)
    deadline: float | None
    started: float | None = None  # driver's monotonic clock when the worker's start event arrived
    worker: str | None = None
    attempts: list = field(default_factory=list)  # the workers it started on (a lost one's job runs again)


class DaskPool:
    def __init__(self, client, *, on_start: Callable[[], object] | None = None):
        self.client, self.on_start = client, on_start
        self.topic = f"adegen-job-start-{uuid.uuid4().hex[:12]}"
        self.closing = threading.Event()
        self._lock = threading.Lock()
        self._jobs: dict[str, _Job] = {}
        self.restarted: list[str] = []  # workers restarted over a deadline
        client.subscribe_topic(self.topic, self._started)
        self._watch = threading.Thread(target=self._watchdog, name="adegen-dask-deadlines", daemon=True)
        self._watch.start()

    # -- the WorkerPool interface ----------------------------------------------------------------------
    def submit(self, fn, *args, deadline: float | None = None, workers: list[str] | None = None) -> Future:
        fut: Future = Future()
        fut.set_running_or_notify_cancel()  # on the cluster from now on (a submitted job is not taken back)
        if self.closing.is_set():
            fut.set_exception(WorkerLost("the pool was shut down"))
            return fut
        token = f"{getattr(fn, '__name__', 'job')}-{uuid.uuid4().hex}"
        job = _Job(fut, None, deadline)
        with self._lock:  # known before it can start: its start event finds it
            self._jobs[token] = job
        job.dfut = self.client.submit(run_job, fn, args, token, self.topic, self.on_start, key=token, pure=False,
                                      workers=workers, allow_other_workers=False)
        job.dfut.add_done_callback(lambda f, t=token: self._done(t, f))
        return fut

    def broadcast(self, fn, *args) -> list[Future]:
        """Run `fn(*args)` once on every worker there is now (e.g. to warm its state)."""
        workers = list(self.client.scheduler_info(n_workers=-1)["workers"])
        return [self.submit(fn, *args, workers=[w]) for w in workers]

    def shutdown(self) -> None:
        self.closing.set()
        with self._lock:
            jobs, self._jobs = list(self._jobs.values()), {}
        if jobs:
            self.client.cancel([j.dfut for j in jobs if j.dfut is not None])
        for j in jobs:
            _settle(j.fut, exc=WorkerLost("the pool was shut down"))
        try:
            self.client.unsubscribe_topic(self.topic)
        except Exception:  # noqa: BLE001 - the client may be closing with the process
            pass
        self._watch.join(5)

    def check_paths(self, paths: list[str]) -> None:
        """InputError unless every worker sees `paths` (the project, the run's work directory, the
        database): the workers read them at the driver's paths."""
        from adegen.core.errors import InputError

        futs = self.broadcast(missing_paths, [str(p) for p in paths])
        blind = {}
        for f in futs:
            try:
                missing = f.result(120)
            except Exception:  # noqa: BLE001 - a worker lost meanwhile: its replacement is checked by its jobs
                continue
            if missing:
                blind.setdefault(missing[0], 0)
                blind[missing[0]] += 1
        if blind:
            path, n = next(iter(blind.items()))
            raise InputError(f"{n} Dask worker(s) cannot see {path}: the workers read the project and the run's "
                             "work directory at the driver's paths (a shared file system mounted at the same place; "
                             "set TMPDIR on the driver to a directory on it)", field="--executor")

    # -- events from the cluster -------------------------------------------------------------------------
    def _started(self, event) -> None:
        msg = event[1] if isinstance(event, tuple) else event
        with self._lock:
            job = self._jobs.get(msg.get("token"))
            if job is not None:  # a rerun after a lost worker starts its deadline afresh
                job.started, job.worker = time.monotonic(), msg.get("worker")
                job.attempts.append(job.worker)

    def _done(self, token: str, dfut) -> None:
        with self._lock:
            job = self._jobs.pop(token, None)
        if job is None or job.fut.done():
            return
        if dfut.status == "finished":
            try:
                _settle(job.fut, result=dfut.result())
            except BaseException as exc:  # noqa: BLE001 - e.g. a result that cannot be unpickled here
                _settle(job.fut, exc=exc)
            return
        if dfut.status == "cancelled":
            _settle(job.fut, exc=WorkerLost("the job was cancelled on the cluster"))
            return
        exc = dfut.exception()
        from distributed.scheduler import KilledWorker

        if isinstance(exc, KilledWorker):
            exc = WorkerLost(f"the Dask workers running it were lost ({', '.join(filter(None, job.attempts))}): {exc}")
        _settle(job.fut, exc=exc)

    def _watchdog(self) -> None:
        while not self.closing.wait(POLL):
            now = time.monotonic()
            with self._lock:
                over = [(t, j) for t, j in self._jobs.items()
                        if j.deadline is not None and j.started is not None and now - j.started > j.deadline]
                for t, _ in over:
                    self._jobs.pop(t)
            for _, job in over:
                self._give_up(job, now - job.started)

    def _give_up(self, job: _Job, waited: float) -> None:
        """Over its deadline: fail the job, take it off the cluster, restart the worker stuck in it."""
        if job.worker:
            self.restarted.append(job.worker)
        _settle(job.fut, exc=BudgetExceeded(waited))
        job.dfut.cancel()
        if job.worker:
            try:
                self.client.restart_workers([job.worker], raise_for_error=False)
            except Exception:  # noqa: BLE001 - a worker without a nanny stays busy until its job ends
                pass


def _settle(fut: Future, *, result=None, exc: BaseException | None = None) -> None:
    try:
        fut.set_exception(exc) if exc is not None else fut.set_result(result)
    except InvalidStateError:  # settled already (shutdown, deadline)
        pass
