"""--json keeps stdout for the JSON document alone, whatever writes to file descriptor 1 below
Python during the run (DuckDB prints its progress bar from C for a query over 2 s, in the build's
process and in its workers, which inherit the descriptor: on the heavy project it broke the
document)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PYDIR = Path(__file__).resolve().parents[1]

SCRIPT = """
import json, os, subprocess, sys
from adegen.core.commandline import run_command

def execute(opts):
    os.write(1, b"  50% |#####     | (~3 seconds remaining)\\r")       # C-level, this process
    subprocess.run([sys.executable, "-c", "import os; os.write(1, b'child progress')"])  # a worker
    print("python print", flush=True)
    return 0, {"ok": True}

class Opts:
    json = True

sys.exit(run_command(["--json"], lambda argv: Opts(), execute))
"""


def test_json_stdout_holds_only_the_document():
    p = subprocess.run([sys.executable, "-c", SCRIPT], cwd=PYDIR, capture_output=True, text=True, timeout=60,
                       env={"PYTHONPATH": str(PYDIR), "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"ok": True}
    assert "remaining" in p.stderr and "child progress" in p.stderr and "python print" in p.stderr
