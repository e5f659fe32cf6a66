"""GNU patch, applied one way everywhere a task's patches are applied (the round trip check, the
proofs): `patch -p1 --batch --forward`, bounded by a timeout. A patch that applies only with fuzz
or at an offset counts as not applying: ade-bench applies it to the very file it was made from,
so it must fit exactly."""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

PATCH_CMD = ("patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch")
TIMEOUT = 120.0  # seconds; a model file's patch takes milliseconds


@dataclass(frozen=True)
class Applied:
    ok: bool
    output: str    # patch's stdout and stderr, interleaved
    why: str = ""  # not ok: patch's last line, or that it needed fuzz or an offset


def apply_patch(patch_file: Path, cwd: Path, timeout: float = TIMEOUT) -> Applied:
    """Apply `patch_file` to the tree at `cwd` (never raises for a patch that does not apply)."""
    try:
        with open(patch_file, "rb") as fin:
            r = subprocess.run(PATCH_CMD, cwd=cwd, stdin=fin, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Applied(False, "", f"patch did not finish within {timeout:.0f} s")
    out = r.stdout.decode("utf-8", errors="replace").strip()
    if r.returncode != 0:
        return Applied(False, out, out.splitlines()[-1] if out else f"patch exited {r.returncode}")
    if "Hunk" in out or "fuzz" in out or "offset" in out.lower():
        return Applied(False, out, "patch applied only with fuzz/offset: " + out.replace("\n", " "))
    return Applied(True, out)
