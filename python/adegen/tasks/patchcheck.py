"""Phase 4 (mandatory): round-trip a task's patches with GNU patch in a throwaway copy."""
from __future__ import annotations

import hashlib
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from adegen.dbt import copy_tree
from adegen.tasks.gnupatch import apply_patch


@dataclass
class PatchCheck:
    task_id: str
    setup: bool = False
    solution: bool = False
    roundtrip: bool = False
    models_ok: bool = False
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.setup and self.solution and self.roundtrip and self.models_ok

    def line(self) -> str:
        mark = lambda b: "✓" if b else "✗"  # noqa: E731
        text = (f"{self.task_id}: setup {mark(self.setup)} solution {mark(self.solution)} "
                f"roundtrip {mark(self.roundtrip)}")
        if not self.models_ok:
            text += " models ✗"
        if self.detail and not self.ok:
            text += f" ({self.detail})"
        return text


@dataclass(frozen=True)
class TaskPatches:
    """A written task's two patches and the model files they change: (path in the project, the
    text they were made from, the buggy text) per file."""

    task_id: str
    task_dir: Path  # holds setup/changes.patch and solutions/changes.patch
    files: tuple[tuple[str, bytes | None, bytes | None], ...]  # None: the file does not exist on that side
    # a purposeful change (propose/purpose.py): the solution does not restore the original, it
    # yields the change done right, (path, right text) per file; () = the solution is the inverse
    solved: tuple[tuple[str, bytes], ...] = ()


def check_task(project_root: Path, task: TaskPatches, required_models: list[str],
               known_models: set[str], workdir: Path | None = None) -> PatchCheck:
    """Copy the project, apply setup (file must equal the mutant), apply solution (file must equal
    the original byte for byte, no stray files), and check the named models exist. The copy lives
    in `workdir` (a build's own work directory: a build killed with SIGKILL mid-check leaves it
    for the next run's cleanup, not in the system's temp directory), else in the temp directory."""
    task_dir = task.task_dir
    res = _models_checked(PatchCheck(task.task_id), required_models, known_models)
    with _project_copy(project_root, task.task_id, workdir) as work:
        before = _tree(work)
        for rel_path, original, _ in task.files:
            if _read(work / rel_path) != original:
                res.detail = f"{rel_path} in the project differs from the text the patch was made from"
                return res
        applied = apply_patch(task_dir / "setup" / "changes.patch", work)
        if not applied.ok:
            res.detail = f"setup patch: {applied.why}"
            return res
        wrong = [rel for rel, _, mutant in task.files if _read(work / rel) != mutant]
        if wrong:
            res.detail = f"setup patch did not produce the buggy text of {wrong[0]}"
            return res
        res.setup = True
        applied = apply_patch(task_dir / "solutions" / "changes.patch", work)
        if not applied.ok:
            res.detail = f"solution patch: {applied.why}"
            return res
        res.solution = True
        after = _tree(work)
        if task.solved:
            return _solved_checked(res, work, task.solved, before, after)
        if after != before:
            changed = sorted(set(before.items()) ^ set(after.items()))
            res.detail = "round trip changed " + ", ".join(sorted({p for p, _ in changed})[:3])
            return res
        res.roundtrip = True
        return res


def check_solution(project_root: Path, task: TaskPatches, required_models: list[str],
                   known_models: set[str], workdir: Path | None = None) -> PatchCheck:
    """A task whose setup patches nothing (an upstream data change, tasks/datachange.py): the
    solution patch applies to the project as it is and yields exactly the adapted files (`files`:
    path, today's text, the adapted text), nothing else. `setup` and `roundtrip` hold trivially."""
    res = _models_checked(PatchCheck(task.task_id, setup=True, roundtrip=True), required_models, known_models)
    with _project_copy(project_root, task.task_id, workdir) as work:
        before = _tree(work)
        applied = apply_patch(task.task_dir / "solutions" / "changes.patch", work)
        if not applied.ok:
            res.detail = f"solution patch: {applied.why}"
            return res
        after = _tree(work)
        changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
        wrong = [rel for rel, _, adapted in task.files if (work / rel).read_bytes() != adapted]
        wrong += sorted(changed - {rel for rel, _, _ in task.files})
        if wrong:
            res.detail = f"the solution patch did not produce the adapted files: {wrong[0]}"
            return res
        res.solution = True
        return res


def _solved_checked(res: PatchCheck, work: Path, solved, before: dict, after: dict) -> PatchCheck:
    """The solution of a purposeful change, applied to the broken state, gives exactly the right
    texts of its files and changes nothing else of the project."""
    right = {rel for rel, _ in solved}
    wrong = [rel for rel, text in solved if _read(work / rel) != text]
    wrong += sorted(p for p in set(before) | set(after) if p not in right and before.get(p) != after.get(p))
    if wrong:
        res.detail = f"the solution patch did not produce the right text of {wrong[0]}"
        return res
    res.roundtrip = True
    return res


def _models_checked(res: PatchCheck, required_models: list[str], known_models: set[str]) -> PatchCheck:
    """`res` with models_ok set: every model solution_seeds/test_setup name exists."""
    missing = [m for m in required_models if m not in known_models]
    res.models_ok = not missing
    if missing:
        res.detail = "unknown model(s) in solution_seeds/test_setup: " + ", ".join(missing)
    return res


@contextmanager
def _project_copy(project_root: Path, task_id: str, workdir: Path | None):
    """A scratch copy of the project (in `workdir`, else the temp directory), removed afterwards."""
    tmp = Path(tempfile.mkdtemp(prefix=f"ade-bench-validate-{task_id}-", dir=workdir))
    try:
        work = tmp / "project"
        copy_tree(project_root, work)
        yield work
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def _tree(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink():
            out[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out
