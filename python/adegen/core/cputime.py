"""CPU seconds spent by this process and the children it waited for: the work a step did,
which, unlike its wall time, a machine busy with other work does not stretch (the test timeout a
proof writes into task.yaml is measured with it: validate/rules/proof.test_timeout)."""
from __future__ import annotations

import resource
import time


def cpu_seconds() -> float:
    """User + system CPU seconds of this process (every thread) and its waited-for children."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime
