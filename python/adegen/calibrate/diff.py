"""The diff an agent made to the project: files changed and lines added/removed (pure; the
snapshots are `adegen.dbt.project_files` of the sandbox before and after the agent, which follow
the copy policy: no target/, logs/, dbt_packages/ or database files)."""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field


@dataclass(frozen=True)
class DiffStats:
    files: list[str] = field(default_factory=list)  # changed, added or removed, sorted
    lines_added: int = 0
    lines_removed: int = 0

    def to_json(self) -> dict:
        return {"files": list(self.files), "lines_added": self.lines_added, "lines_removed": self.lines_removed}


def _lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    return data.decode("utf-8", "replace").splitlines()


def diff_stats(before: dict[str, bytes], after: dict[str, bytes]) -> DiffStats:
    files, added, removed = [], 0, 0
    for rel in sorted(set(before) | set(after)):
        a, b = before.get(rel), after.get(rel)
        if a == b:
            continue
        files.append(rel)
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, _lines(a), _lines(b),
                                                           autojunk=False).get_opcodes():
            if tag != "equal":
                removed += i2 - i1
                added += j2 - j1
    return DiffStats(files, added, removed)
