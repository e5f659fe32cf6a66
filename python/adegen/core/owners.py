"""Which process holds a lock file or a run's work directory, and whether it still runs: one owner
record, `<pid> <host> <start>`, written by `record()` and read by `alive()`.

`<start>` is the process start time in clock ticks since boot (Linux `/proc/<pid>/stat`, field 22):
a later process that got the same pid has another one, so a record whose writer died is never
taken for a live run (elsewhere the field is empty and the pid alone decides)."""
from __future__ import annotations

import os
import socket
from pathlib import Path


def start_ticks(pid: int) -> str | None:
    """The start time of process `pid` (Linux /proc), None where it cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def record() -> str:
    """This process's owner record (one line, no newline)."""
    return f"{os.getpid()} {socket.gethostname()} {start_ticks(os.getpid()) or ''}"


def alive(text: str) -> bool | None:
    """Whether the process that wrote the owner record `text` still runs; None when `text` holds
    no record (empty: its writer was killed before writing it). A record of another host counts
    as alive: another machine's run (a shared /tmp) is never touched."""
    try:
        pid_s, host, ticks = (text.split() + ["", "", ""])[:3]
        pid = int(pid_s)
    except ValueError:
        return None
    if host and host != socket.gethostname():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    now = start_ticks(pid)
    return not (ticks and now and ticks != now)
