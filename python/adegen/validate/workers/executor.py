"""Where the validator's jobs (baseline builds, screens, proof states, gradings) run: `--executor`.

- `local` (the default): `validate.pool.WorkerPool`, worker processes on this machine.
- `dask://HOST:PORT`: the workers of a running Dask distributed scheduler (`validate.dask_pool`).

Both run the same module-level job functions with the same arguments; the driver (this process)
alone writes task folders, the ledger and the run record, so which executor ran a job never shows in
the output. The Dask client is made once per process and per address and shared by every validator
of the run (a plan's projects use one connection)."""
from __future__ import annotations

import re
import socket
import threading
from dataclasses import dataclass
from typing import Callable

from adegen.core.errors import InputError

FIELD = "--executor"
_DASK_RE = re.compile(r"^dask://(?P<host>\[[0-9a-fA-F:.]+\]|[^/:\s]+):(?P<port>\d{1,5})/?$")
CONNECT_TIMEOUT = 20  # seconds to reach the scheduler and see a worker


@dataclass(frozen=True)
class ExecutorSpec:
    kind: str = "local"        # "local" | "dask"
    address: str | None = None  # the scheduler's address as Dask writes it (tcp://HOST:PORT)

    @property
    def remote(self) -> bool:
        return self.kind != "local"

    def describe(self) -> str:
        return "local worker pool" if not self.remote else f"Dask scheduler {self.address}"


LOCAL = ExecutorSpec()


def parse_executor(text: str | None, field: str = FIELD) -> ExecutorSpec:
    """`local` or `dask://HOST:PORT`; anything else is an InputError naming `field`."""
    if text is None or text.strip() in ("", "local"):
        return LOCAL
    m = _DASK_RE.match(text.strip())
    if m is None or not 0 < int(m["port"]) < 65536:
        raise InputError(f"expected local or dask://HOST:PORT (a running Dask scheduler), got {text!r}",
                         field=field)
    return ExecutorSpec("dask", f"tcp://{m['host']}:{int(m['port'])}")


_clients: dict[str, object] = {}
_clients_lock = threading.Lock()


def dask_client(spec: ExecutorSpec):
    """The process's client for `spec` (connected once; workers checked). InputError when dask is
    not installed, the scheduler cannot be reached, it has no worker, or a worker runs more than
    one thread (a worker process runs one job at a time: in-process dbt is not thread-safe)."""
    with _clients_lock:
        client = _clients.get(spec.address)
        if client is not None and client.status == "running":
            return client
        try:
            from distributed import Client
        except ImportError:
            raise InputError("needs Dask: pip install 'adegen[dask]' (dask[distributed])", field=FIELD) from None
        _refused(spec.address)
        try:
            client = Client(spec.address, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise InputError(f"cannot reach the Dask scheduler at {spec.address}: {exc}", field=FIELD) from None
        try:
            client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError):
            client.close()
            raise InputError(f"the Dask scheduler at {spec.address} has no worker (start some with "
                             f"`dask worker {spec.address} --nthreads 1`)", field=FIELD) from None
        wide = sorted(a for a, w in client.scheduler_info(n_workers=-1)["workers"].items() if w.get("nthreads", 1) != 1)
        if wide:
            client.close()
            raise InputError(f"Dask worker(s) {', '.join(wide)} run more than one thread; adegen runs one job per "
                             "worker process (in-process dbt): start them with --nthreads 1", field=FIELD)
        _clients[spec.address] = client
        return client


def _refused(address: str) -> None:
    """An InputError at once when nothing listens at the scheduler's address: Dask's client keeps
    retrying a refused connection for its whole timeout (20 s for a mistyped port)."""
    host, port = address.removeprefix("tcp://").rsplit(":", 1)
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT).close()
    except ConnectionRefusedError as exc:
        raise InputError(f"cannot reach the Dask scheduler at {address}: {exc}", field=FIELD) from None
    except OSError:  # unreachable for another reason (a timeout, no route): the client says how
        pass


def cluster_size(spec: ExecutorSpec) -> int:
    """Worker processes the cluster has now (bulk's default --jobs with a Dask executor)."""
    return max(1, len(dask_client(spec).scheduler_info(n_workers=-1)["workers"]))


def make_pool(spec: ExecutorSpec, jobs: int, on_start: Callable[[], object] | None = None):
    """The validator's pool for `spec`: submit(fn, *args, deadline=...), broadcast, shutdown."""
    if not spec.remote:
        from adegen.validate.workers.pool import WorkerPool

        return WorkerPool(jobs, on_start=on_start)
    from adegen.validate.workers.dask_pool import DaskPool

    return DaskPool(dask_client(spec), on_start=on_start)
