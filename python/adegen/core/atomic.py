"""Files written whole or not at all: a temp file in the same directory, then a rename.

A leaf (standard library only), so every writer of output files - the task.yaml writer, the run
record, the bulk ledger and dataset files - uses the same helper without importing `output`."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

TMP_PREFIX = ".adegen-tmp-"  # adegen's temp files and dirs in an output directory (a rerun removes them)


def write_text_atomic(path: Path, text: str, *, tmp_prefix: str | None = None) -> None:
    """Write `text` to `path` through a temp file in the same directory and a rename: readers see
    the old file or the new one, never a partial one; the temp file is removed on any failure."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=tmp_prefix or f".{path.name}-", dir=path.parent)
    try:
        # mkstemp makes the file 0600; the result gets the mode of the file it replaces, or the
        # mode a plain open() would give (0666 minus the umask)
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o666 & ~_UMASK
        os.chmod(tmp, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read_umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


_UMASK = _read_umask()  # read once at import: os.umask is process-wide, reading it later races threads
