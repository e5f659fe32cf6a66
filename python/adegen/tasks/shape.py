"""The shape of a task's change: how many files and lines its setup patch changes, and whether it
reads as a commit (3 or more lines, or 2 or more files: issue "Commits, not token edits") rather
than a one-token edit. Counted from the files the patch is made from, as a reviewer reads the diff:
a replaced line counts once (removed and added lines of one block, the larger of the two); a file
the change adds counts all its lines. Pure functions."""
from __future__ import annotations

import difflib
from dataclasses import dataclass

COMMIT_LINES = 3
COMMIT_FILES = 2


@dataclass(frozen=True)
class Shape:
    files: int
    lines: int

    @property
    def commit(self) -> bool:
        return self.files >= COMMIT_FILES or self.lines >= COMMIT_LINES

    def to_json(self) -> dict:
        return {"files": self.files, "lines": self.lines, "commit": self.commit}


def _lines(data: bytes | None) -> list[bytes]:
    return (data or b"").splitlines()


def changed_lines(old: bytes | None, new: bytes | None) -> int:
    a, b = _lines(old), _lines(new)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in
               difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if tag != "equal")


def shape_of(files) -> Shape:
    """files: (path, original or None, mutant or None) per file, as `Proposal.file_changes` gives them."""
    changed = [(old, new) for _path, old, new in files if old != new]
    return Shape(len(changed), sum(changed_lines(old, new) for old, new in changed))


def run_figure(tasks: list[dict]) -> dict:
    """A run's share of commit-shaped tasks, from its --json task entries (`change`)."""
    shapes = [t["change"] for t in tasks if t.get("change")]
    commits = sum(1 for s in shapes if s["commit"])
    return {"tasks": len(shapes), "commits": commits,
            "multi_file": sum(1 for s in shapes if s["files"] >= COMMIT_FILES),
            "at_least_half": bool(shapes) and 2 * commits >= len(shapes)}
