"""A pool of worker processes that can stop one job at once without breaking.

`concurrent.futures.ProcessPoolExecutor` cannot stop a running job: in-process dbt cannot be
interrupted from outside, and killing one of its workers breaks the whole pool. Here each worker is
one process in its own process group served by one thread of the parent; a job submitted with a
`deadline` (seconds) that is still running then is stopped by killing that worker's process group
(dbt, DuckDB and any subprocess it started), its future fails with `BudgetExceeded`, and a fresh
worker replaces it. A worker that dies fails its job with `WorkerLost` and is replaced too. Jobs
are module-level functions with picklable arguments (start method spawn by default:
`ADEGEN_MP_START` overrides).

Workers end with the parent: they die with it (PR_SET_PDEATHSIG on Linux), a worker whose parent died
before it could ask for that (a run SIGKILLed while its workers were still starting) exits instead of
running the job already in its pipe, and they stop when the parent's end of their pipe closes.
"""
from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import queue
import signal
import threading
import time
from concurrent.futures import Future
from typing import Callable

from adegen.core.settings import get_settings

POLL = 0.2  # seconds between checks for shutdown / deadlines while waiting


class BudgetExceeded(Exception):
    """The job was still running at its deadline; its worker was killed."""

    def __init__(self, seconds: float):
        super().__init__(f"still running after {seconds:.0f} s")
        self.seconds = seconds


class WorkerLost(Exception):
    """The worker process died while running the job."""


def die_with_parent() -> None:
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the pipe check below still ends the worker
        pass


def _orphaned(parent_pid: int | None) -> bool:
    """Whether the process that started this one is gone (this one was handed to init or a
    subreaper). PR_SET_PDEATHSIG only covers a parent that dies after it is set: a run SIGKILLed while
    a spawned worker was still importing left a worker that ran the job already in its pipe, writing
    into the work directory the next run had removed (stray /tmp/adegen-bulk-*/validate/... dirs)."""
    return parent_pid is not None and os.getppid() != parent_pid


def end_with(pid: int, every: float = 0.5) -> None:
    """End this process (exit 1) as soon as process `pid` is gone: for a grandchild of a worker (the
    shadow build under faketime), which PR_SET_PDEATHSIG cannot tie to the worker."""
    def watch() -> None:
        while True:
            time.sleep(every)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:
                pass

    threading.Thread(target=watch, name="adegen-end-with", daemon=True).start()


def _worker_main(conn, on_start, parent_pid: int | None = None) -> None:
    """The worker process: its own process group, then jobs from the pipe until it closes."""
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    die_with_parent()
    if _orphaned(parent_pid):  # the parent died before PR_SET_PDEATHSIG was set: nobody waits for us
        os._exit(0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's SIGTERM-as-Ctrl-C is not inherited
    if on_start is not None:
        with contextlib.suppress(Exception):
            on_start()
    while True:
        try:
            fn, args = conn.recv()
        except (EOFError, OSError):
            # the parent is done with this worker: every job closed what it opened, so skip the
            # interpreter's teardown of dbt's modules (seconds at the end of every run); only
            # multiprocessing's own finalizers run (they unlink the semaphores dbt created)
            with contextlib.suppress(Exception):
                from multiprocessing import util

                util._run_finalizers(0)
            os._exit(0)
        if _orphaned(parent_pid):
            os._exit(0)
        try:
            out = ("ok", fn(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's future
            out = ("err", exc)
        try:
            conn.send(out)
        except Exception as exc:  # noqa: BLE001 - an unpicklable result or exception
            conn.send(("err", RuntimeError(f"{type(exc).__name__}: {exc}; result: {out[1]!r}"[:2000])))


class _Slot:
    """One worker process and the parent thread that feeds it."""

    def __init__(self, pool: "WorkerPool", index: int):
        self.pool, self.index = pool, index
        self.own: queue.Queue = queue.Queue()   # jobs for this worker only (broadcast)
        self.proc = self.conn = None
        self.spawn()
        self.thread = threading.Thread(target=self.serve, name=f"adegen-pool-{index}", daemon=True)
        self.thread.start()

    def spawn(self) -> None:
        parent, child = self.pool.ctx.Pipe()
        # spawn and fork start the worker as this process's child; forkserver's parent is its server,
        # whose death PR_SET_PDEATHSIG covers
        mine = os.getpid() if self.pool.ctx.get_start_method() in ("spawn", "fork") else None
        self.proc = self.pool.ctx.Process(target=_worker_main, args=(child, self.pool.on_start, mine), daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent

    def kill(self) -> None:
        if self.proc is None:
            return
        pid = self.proc.pid
        for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
            with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
                kill()
        self.proc.join(5)
        with contextlib.suppress(OSError):
            self.conn.close()
        self.pool.note_dead(pid)

    def next_job(self):
        try:
            return self.own.get_nowait()
        except queue.Empty:
            pass
        try:
            return self.pool.jobs.get(timeout=POLL)
        except queue.Empty:
            return None

    def serve(self) -> None:
        while not self.pool.closing.is_set():
            job = self.next_job()
            if job is None:
                continue
            fut, fn, args, deadline = job
            if not fut.set_running_or_notify_cancel():
                continue
            self.run(fut, fn, args, deadline)
        self.stop()

    def stop(self) -> None:
        """Let the worker exit on its own (its pipe closes: it releases what it holds), then kill."""
        if self.proc is None:
            return
        with contextlib.suppress(OSError):
            self.conn.close()
        self.proc.join(10)
        if self.proc.is_alive():
            self.kill()

    def run(self, fut: Future, fn, args, deadline: float | None) -> None:
        try:
            self.conn.send((fn, args))
        except (OSError, ValueError) as exc:
            fut.set_exception(WorkerLost(f"could not reach the worker: {exc}"))
            self.kill()
            self.spawn()
            return
        t0 = time.monotonic()
        while True:
            try:
                ready = self.conn.poll(POLL)
            except (EOFError, OSError):
                ready = True
            if ready:
                try:
                    kind, value = self.conn.recv()
                except (EOFError, OSError):
                    fut.set_exception(WorkerLost(f"the worker process {self.proc.pid} died "
                                                 f"(exit code {self.proc.exitcode})"))
                    self.kill()
                    self.spawn()
                    return
                (fut.set_result if kind == "ok" else fut.set_exception)(value)
                return
            waited = time.monotonic() - t0
            if (deadline is not None and waited > deadline) or self.pool.closing.is_set():
                self.kill()
                if self.pool.closing.is_set():
                    fut.cancel() or fut.set_exception(WorkerLost("the pool was shut down"))
                    return
                fut.set_exception(BudgetExceeded(waited))
                self.spawn()
                return


class WorkerPool:
    """`jobs` worker processes; `submit(fn, *args, deadline=None)` -> Future."""

    def __init__(self, jobs: int, *, on_start: Callable[[], object] | None = None,
                 start_method: str | None = None):
        self.ctx = mp.get_context(start_method or get_settings().mp_start)
        self.on_start = on_start
        self.jobs: queue.Queue = queue.Queue()
        self.closing = threading.Event()
        self.dead_pids: list[int] = []
        self._dead_lock = threading.Lock()
        self.slots = [_Slot(self, i) for i in range(max(1, int(jobs)))]

    def note_dead(self, pid: int) -> None:
        with self._dead_lock:
            self.dead_pids.append(pid)

    def submit(self, fn, *args, deadline: float | None = None) -> Future:
        fut: Future = Future()
        self.jobs.put((fut, fn, args, deadline))
        return fut

    def broadcast(self, fn, *args) -> list[Future]:
        """Run `fn(*args)` once in every current worker (e.g. to warm its state)."""
        futs = []
        for slot in self.slots:
            fut: Future = Future()
            slot.own.put((fut, fn, args, None))
            futs.append(fut)
        return futs

    @property
    def pids(self) -> list[int]:
        return [s.proc.pid for s in self.slots if s.proc is not None]

    def shutdown(self) -> None:
        self.closing.set()
        while True:
            try:
                fut = self.jobs.get_nowait()[0]
            except queue.Empty:
                break
            fut.cancel()
        for slot in self.slots:
            slot.thread.join(30)
