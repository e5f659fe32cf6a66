"""A unified diff applied to copies of the project's files: forward (a `--bug-command` diff) or in
reverse (a fix from the project's history, undone on today's code), with GNU patch, never to the
project itself.

Unlike the task patches' strict application (`tasks.gnupatch`: a task's patch must fit the file it
was made from exactly), a diff here may have been written against another state of the file: a
commit's context lines move as the file changes later. So GNU patch may fuzz and shift (`--fuzz 2`,
its default); a hunk that still fails, or a patch that looks already applied, is a diff that no
longer applies. What comes out is checked by `diffs.check_files` and, like any candidate, compiled,
screened and proven."""
from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import unidiff

from adegen.core.drops import DropCode
from adegen.propose.diffs import FileChange

# --forward: with -R, a fix already undone (the file holds the bug) is skipped, never re-applied as
# the fix; --batch alone would assume a reversed patch and apply it the other way
PATCH = ("patch", "--batch", "--forward", "--no-backup-if-mismatch", "--reject-file=-", "--fuzz=2")
TIMEOUT = 30.0  # seconds; a few model files take milliseconds


@dataclass(frozen=True)
class Applied:
    """The changed files, or the problem ((code, why)) that keeps the diff from being a candidate."""

    files: tuple[FileChange, ...] = ()
    problem: tuple[DropCode, str] | None = None


def _not_applying(why: str) -> Applied:
    return Applied(problem=(DropCode.DIFF_NOT_APPLYING, f"does not apply: {why}"))


def _strip(name: str, level: int) -> str:
    parts = name.split("/")
    return "/".join(parts[level:])


def _level(patch: unidiff.PatchSet) -> int:
    """1 when every file is named `a/...` / `b/...` (git's way), else 0."""
    names = [(f.source_file, f.target_file) for f in patch]
    prefixed = all((s == "/dev/null" or s.startswith("a/")) and (t == "/dev/null" or t.startswith("b/"))
                   for s, t in names)
    return 1 if prefixed else 0


def files_of(text: str) -> tuple[list[str], int] | Applied:
    """(the project paths a diff changes, its strip level), or why it cannot be applied here: not a
    unified diff, a file created, deleted or renamed, a path leaving the project."""
    try:
        patch = unidiff.PatchSet(text)
    except unidiff.UnidiffParseError as exc:
        return _not_applying(f"not a unified diff ({exc})")
    if not len(patch):
        return _not_applying("not a unified diff (no file in it)")
    level, paths = _level(patch), []
    for f in patch:
        if f.is_added_file or f.is_removed_file:
            return Applied(problem=(DropCode.DIFF_OUTSIDE_MODELS, f"creates or deletes a file ({f.path})"))
        source, target = _strip(f.source_file, level), _strip(f.target_file, level)
        if f.is_rename or source != target:
            return Applied(problem=(DropCode.DIFF_OUTSIDE_MODELS, f"renames a file ({source} -> {target})"))
        if getattr(f, "is_binary_file", False):
            return _not_applying(f"changes a binary file ({target})")
        pure = PurePosixPath(target)
        if not target or pure.is_absolute() or ".." in pure.parts:
            return Applied(problem=(DropCode.DIFF_OUTSIDE_MODELS, f"names a path outside the project ({target})"))
        paths.append(pure.as_posix())
    return paths, level


def apply_diff(project_dir: Path, text: str, *, allowed=None, reverse: bool = False) -> Applied:
    """The files `text` changes, applied (in reverse with `reverse`) to copies of the project's
    files; `allowed` (a set of project paths) limits which files it may touch."""
    got = files_of(text)
    if isinstance(got, Applied):
        return got
    paths, level = got
    if allowed is not None:
        outside = [p for p in paths if p not in allowed]
        if outside:
            return Applied(problem=(DropCode.DIFF_OUTSIDE_MODELS,
                                    "touches files outside the project's models: " + ", ".join(outside[:3])))
    originals = {}
    for rel in paths:
        try:
            originals[rel] = (project_dir / rel).read_bytes()
        except OSError:
            return _not_applying(f"no such file in the project: {rel}")
    with tempfile.TemporaryDirectory(prefix="adegen-diff-") as tmp:
        tree = Path(tmp) / "tree"
        for rel, data in originals.items():
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            (tree / rel).write_bytes(data)
        diff_file = Path(tmp) / "bug.diff"
        diff_file.write_bytes(text.encode("utf-8", errors="surrogateescape"))
        argv = [*PATCH, f"-p{level}", "-d", str(tree), "-i", str(diff_file)] + (["-R"] if reverse else [])
        try:
            r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT,
                               stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return _not_applying(f"patch did not finish within {TIMEOUT:.0f} s")
        except OSError as exc:
            return _not_applying(f"cannot run GNU patch: {exc}")
        if r.returncode != 0:
            return _not_applying(_why(r.stdout.decode("utf-8", "replace"), r.returncode))
        return Applied(tuple(FileChange(rel, originals[rel], (tree / rel).read_bytes()) for rel in paths))


def _why(output: str, code: int) -> str:
    """GNU patch's telling line: a failed hunk, a patch that looks applied already, its error."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    telling = [ln for ln in lines if "FAILED" in ln or "previously applied" in ln or "malformed" in ln
               or "garbage" in ln or "can't find file" in ln.lower()]
    return " ".join((telling or lines[-1:] or [f"patch exited {code}"])[0].split())[:200]
