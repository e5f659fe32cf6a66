"""The check every build of the suite runs on the tasks it wrote (`reliability_kit.run_build`,
`test_build.run_build`): each task's setup patch, read back from disk, changes the files and lines
its --json entry says (`change`, adegen.tasks.shape), the run's `change_shape` adds them up, and no
task uses a retired form (adegen.catalog.retired). Counted here from the patch text on its own, so
the figure the run reports is checked against what a reviewer reads."""
from __future__ import annotations

import json
import re
import subprocess
from functools import lru_cache
from pathlib import Path


_HUNK = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def patch_shape(text: str) -> tuple[int, int]:
    """(files, lines) of a unified diff: a block of removed and added lines counts the larger side.
    A hunk is read by its line counts (a removed `-- comment` line reads like a file header)."""
    files = lines = minus = plus = old = new = 0
    for line in text.splitlines():
        if old <= 0 and new <= 0:
            lines, minus, plus = lines + max(minus, plus), 0, 0
            files += line.startswith("+++ ")
            m = _HUNK.match(line)
            if m:
                old, new = int(m.group(1) or 1), int(m.group(2) or 1)
            continue
        if line.startswith("\\"):
            continue
        if line.startswith("-"):
            minus, old = minus + 1, old - 1
        elif line.startswith("+"):
            plus, new = plus + 1, new - 1
        else:
            lines, minus, plus, old, new = lines + max(minus, plus), 0, 0, old - 1, new - 1
    return files, lines + max(minus, plus)


def _changed(text: str, sign: str) -> list[str]:
    """The lines a patch adds (`+`) or removes (`-`), without their file headers."""
    return [ln[1:] for ln in text.splitlines() if ln.startswith(sign) and not ln.startswith(sign * 3)]


@lru_cache(maxsize=1)
def _operators() -> dict[str, str]:
    from adegen.catalog.patterns import load_catalog

    return {p.id: str((p.rewrite or {}).get("operator", "")) for p in load_catalog().patterns}


def check_written(r: subprocess.CompletedProcess) -> None:
    """Raise AssertionError when a task the build wrote breaks the rules above (a build that wrote
    nothing, failed or printed no --json document passes through)."""
    from adegen.catalog.retired import RETIRED_OPERATORS

    try:
        doc = json.loads(r.stdout)
    except (TypeError, ValueError):
        return
    tasks = [t for t in doc.get("tasks") or [] if isinstance(t, dict) and t.get("path")]
    commits = 0
    for t in tasks:
        assert _operators().get(t["pattern_id"]) not in RETIRED_OPERATORS, f"{t['task_id']}: retired form {t['pattern_id']}"
        patch = Path(t["path"]) / "setup" / "changes.patch"
        if not patch.is_file():
            continue  # removed since (a test that deletes what it built)
        files, lines = patch_shape(patch.read_text(errors="replace"))
        assert t.get("change") == {"files": files, "lines": lines, "commit": files >= 2 or lines >= 3}, (
            f"{t['task_id']}: --json says {t.get('change')}, its setup patch changes {files} file(s), {lines} line(s)")
        commits += files >= 2 or lines >= 3
        # the solution keeps the purpose: not the setup's inverse (but a dropped dedup's solution restores it)
        if t.get("family") == "purposeful-change" and t.get("pattern_id") != "purpose:dedup_dropped":
            solution = (Path(t["path"]) / "solutions" / "changes.patch").read_text(errors="replace")
            assert _changed(solution, "+") != _changed(patch.read_text(errors="replace"), "-"), (
                f"{t['task_id']}: a purposeful change whose solution undoes its setup")
    fig = doc.get("change_shape")
    if tasks and fig is not None and all((Path(t["path"]) / "setup" / "changes.patch").is_file() for t in tasks):
        assert (fig["tasks"], fig["commits"]) == (len(tasks), commits), (fig, len(tasks), commits)
