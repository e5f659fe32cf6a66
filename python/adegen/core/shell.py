"""A user's shell command run with one document on stdin (`--prompt-command`, `--bug-command`):
through the shell, in a session of its own, killed with everything it started at the timeout.
Never raises for the command's own failure: the caller gets its stdout, or why there is none."""
from __future__ import annotations

import os
import signal
import subprocess


def run_shell(command: str, stdin: str, timeout: float) -> tuple[str | None, str]:
    """(stdout, "") or (None, why it failed: cannot start, timed out, exit N: its last stderr line)."""
    try:
        proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return None, f"cannot start: {exc}"
    try:
        out, err = proc.communicate(stdin.encode("utf-8"), timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the command and whatever it started
        except OSError:
            proc.kill()
        proc.communicate()
        return None, f"timed out after {timeout:g} s"
    if proc.returncode != 0:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        return None, f"exit {proc.returncode}" + (f": {tail[0][:160]}" if tail[0] else "")
    return out.decode("utf-8", "replace"), ""
