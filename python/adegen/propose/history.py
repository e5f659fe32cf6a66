"""Bugs from the project's own history: commits that corrected a model's SQL, undone on today's
code (SWE-smith's "PR mirroring"). A mistake this project's engineers really made, and fixed,
is the most realistic bug there is for it.

Which commits: those whose message says they correct something (`FIX_WORDS`: fix, bug, correct,
wrong, revert, typo, issue #N ...), newest first, then small edits (at most SMALL_LINES changed
lines) of model SQL logic whatever their message (`diffs.logic_changed`: a keyword, a function,
an operator or a literal changed; an edit of names only is a refactor). Only the hunks of the project's own model SQL files
count (files the commit created or deleted do not: there is nothing to undo on today's code).
Their inverse is applied to today's files (`diff_apply`, GNU patch in reverse, fuzzy); what no
longer applies, changes only comments or whitespace, or is too big is skipped with its reason.
The commit's subject is the story: it goes into the run record, never into a prompt.

`git` runs as a subprocess, read-only (`git log`), on the project directory."""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import unidiff

from adegen.core.drops import Drop, DropCode
from adegen.propose.diff_apply import apply_diff
from adegen.propose.diffs import MAX_CHANGED_LINES, DiffBug, check_files, logic_changed

FIX_WORDS = re.compile(r"\b(fix(es|ed|ing)?|bug(s|fix(es)?)?|hotfix|correct(s|ed|ion|ly)?|wrong(ly)?|"
                       r"revert(s|ed)?|typo|mistake|broken|regression|issue)\b|#\d+", re.I)
SMALL_LINES = 6  # a change this small to a model's SQL is offered even when its message says nothing
MAX_COMMITS = 300  # the newest commits touching SQL that are read
MAX_BUGS = 10  # fixes undone and offered as candidates, at most
MAX_TRIED = 3 * MAX_BUGS  # commits tried at most (each one GNU patch run)
MODES = ("auto", "on", "off")
TIMEOUT = 60.0
_RECORD, _FIELD = "\x1e", "\x1f"


@dataclass(frozen=True)
class Commit:
    """A commit as far as the project's models go: its per-file patches of own model SQL files."""

    sha: str
    subject: str
    patches: tuple[str, ...]
    lines: int  # removed + added lines in those patches

    @property
    def says_fix(self) -> bool:
        return bool(FIX_WORDS.search(self.subject))


@dataclass
class HistoryScan:
    bugs: list[DiffBug] = field(default_factory=list)
    drops: list[Drop] = field(default_factory=list)
    note: str = ""  # what was read, or why the history was not read
    repository: bool = False  # the project is in a git repository (the note is worth showing)


def _git(project_dir: Path, *args: str) -> tuple[int, str, str]:
    try:
        r = subprocess.run(["git", "-c", "core.quotepath=off", *args], cwd=project_dir, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 127, "", str(exc)
    return (r.returncode, r.stdout.decode("utf-8", errors="surrogateescape"),
            r.stderr.decode("utf-8", errors="replace").strip())


def why_not(project_dir: Path, mode: str) -> tuple[str | None, bool]:
    """(why the history is not read (None: read it), whether the project is in a git repository).
    `auto` reads a project that is a repository of its own (its directory the top of a git work
    tree); `on` also one inside a larger repository (its commits limited to the project's files)."""
    if mode == "off":
        return "off (--history off)", False
    code, out, err = _git(project_dir, "rev-parse", "--show-toplevel")
    if code != 0:
        return ("not a git repository" if "not a git repository" in err.lower() else f"git: {err[:160] or code}"), False
    top = Path(out.strip())
    if mode == "auto" and top.resolve() != project_dir.resolve():
        return f"the project is inside the repository {top} (--history on reads it)", True
    return None, True


def read_commits(project_dir: Path, model_paths, limit: int = MAX_COMMITS) -> list[Commit]:
    """The newest `limit` commits (merges left out) that changed SQL under the project, each with
    the patches of the project's own model files it modified (paths relative to the project)."""
    code, out, _err = _git(project_dir, "log", "--no-merges", "--no-color", "--no-ext-diff", "--no-textconv",
                           "--no-renames", "--relative", "--src-prefix=a/", "--dst-prefix=b/", "-p", "-U3",
                           f"--format={_RECORD}%H{_FIELD}%s{_FIELD}", f"-n{limit}", "--", "*.sql")
    if code != 0:
        return []
    commits = []
    for record in out.split(_RECORD)[1:]:
        sha, subject, text = (record.split(_FIELD, 2) + ["", ""])[:3]
        try:
            files = [f for f in unidiff.PatchSet(text) if f.path in model_paths
                     and not (f.is_added_file or f.is_removed_file or f.is_rename)]
        except unidiff.UnidiffParseError:
            continue
        if files:
            commits.append(Commit(sha.strip(), subject.strip(), tuple(str(f) for f in files),
                                  sum(f.added + f.removed for f in files)))
    return commits


def candidates_in(commits: list[Commit]) -> list[Commit]:
    """The commits to try, in order: the fixes (newest first), then the small edits."""
    return [c for c in commits if c.says_fix] + [c for c in commits if not c.says_fix and c.lines <= SMALL_LINES]


def scan(project_dir: Path, model_paths: dict[str, str], mode: str = "auto") -> HistoryScan:
    """The fixes of the project's history undone on today's files (`model_paths`: own model SQL path
    -> model name), as DiffBugs, and the Drops of those that cannot be undone."""
    why, repository = why_not(project_dir, mode)
    if why is not None:
        return HistoryScan(note=f"history not read: {why}", repository=repository)
    commits = read_commits(project_dir, model_paths)
    tried = candidates_in(commits)[:MAX_TRIED]
    out = HistoryScan(note=f"history: {len(commits)} commit(s) modified model SQL, {len(tried)} tried",
                      repository=True)
    seen: set = set()
    for c in tried:
        if len(out.bugs) >= MAX_BUGS:
            break
        first = unidiff.PatchSet(c.patches[0])[0].path
        bug = DiffBug("history", c.sha, c.subject, "values", (), model=model_paths.get(first, first))
        if c.lines > MAX_CHANGED_LINES:
            out.drops.append(Drop(bug.model, bug.pattern_id, f"{bug.label}: changes {c.lines} lines "
                                  f"(at most {MAX_CHANGED_LINES})", DropCode.DIFF_TOO_BIG))
            continue
        applied = apply_diff(project_dir, "".join(c.patches), allowed=set(model_paths), reverse=True)
        problem = applied.problem or check_files(applied.files, model_paths)
        if problem is not None:
            if c.says_fix:  # a small edit was only a guess: its misses are no news
                out.drops.append(Drop(bug.model, bug.pattern_id, f"{bug.label}: {problem[1]}", problem[0]))
            continue
        if not c.says_fix and not any(logic_changed(f.original, f.mutant) for f in applied.files):
            continue  # a small edit of names only (an alias, a qualifier): a refactor undone
        key = tuple((f.path, f.mutant) for f in applied.files)
        if key in seen:  # a later commit's inverse leaves the files as an earlier one's did
            continue
        seen.add(key)
        out.bugs.append(DiffBug("history", c.sha, c.subject, "values", applied.files, model=bug.model))
    return out
