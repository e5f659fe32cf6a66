"""Candidates that come as a diff: a bug written as changed files with a story, in place of a
pattern's one-site rewrite. Two sources make them: a fix from the project's git history, undone
on today's code (`propose.history`), and the user's `--bug-command` (`propose.bug_command`).

A diff becomes a `DiffCandidate`, an ordinary `proposals.Candidate` whose pattern is a
`DiffPattern` (what the pipeline reads of a pattern: id, family, symptom, difficulty, no data
precondition) and whose one site replaces the changed lines of its first file; every other file
the diff changes rides on that site as a `siblings.Companion`, so the compile check, the
screening (`siblings.changed_files`), the proposal (`Proposal.siblings`), the task's patches and
the proof take a multi-file diff the way they take a sibling pair. One path: nothing downstream
asks where a candidate came from, except `site.realise_candidate`, which grades a diff's other
files where they show (`DiffCandidate.companion_changes`) instead of requiring a table of each
file's own as a pair does.

Pure functions: the files come already applied (`propose.diff_apply`)."""
from __future__ import annotations

import dataclasses
import difflib
import re
from dataclasses import dataclass, field

from adegen.core.drops import Drop, DropCode
from adegen.propose.candidate_sites import decode
from adegen.propose.model import SiblingChange
from adegen.propose.proposals import Candidate, Scope, own_models
from adegen.propose.siblings import Companion
from adegen.rewrite.engine import Site
from adegen.rewrite.text import SQL_WORDS

MAX_CHANGED_LINES = 40  # removed + added lines over all files: a bigger diff is a refactor, not a slip
# ranking units a diff candidate gains (as a sibling pair's PAIR_BONUS): a mistake a person made in
# this very project, or one the user asked for, is tried before a pattern's guess
DIFF_BONUS = 8
KINDS = {"values": "values_wrong", "build_error": "build_error"}  # the story's kind -> the symptom screened for
SOURCES = {"history": "reverted-fix", "bug_command": "external-diff"}  # source -> family


@dataclass(frozen=True)
class FileChange:
    """One file of a diff: its path in the project (forward slashes), today's bytes and the bug's."""

    path: str
    original: bytes
    mutant: bytes


@dataclass(frozen=True)
class DiffBug:
    """A diff with its story. `ref`: the commit it undoes (history) or the model the command was
    asked about; `model`: the model the bug is about (drops are filed under it)."""

    source: str  # history | bug_command
    ref: str
    story: str
    kind: str  # values | build_error
    files: tuple[FileChange, ...]
    model: str = ""

    @property
    def pattern_id(self) -> str:
        """One id per diff (`history@<sha>`, `bug_command@<model>`): the selection's no-repeat rule
        and the drops tell diffs apart by it."""
        return f"{self.source}@{self.ref[:12] if self.source == 'history' else self.ref}"

    @property
    def label(self) -> str:
        if self.source == "history":
            story = self.story if len(self.story) <= 60 else self.story[:57].rstrip() + "..."
            return f'commit {self.ref[:7]} "{story}"'
        return f"--bug-command for {self.ref}"

    def to_json(self) -> dict:
        return {"source": self.source, "ref": self.ref, "story": self.story, "kind": self.kind,
                "pattern_id": self.pattern_id, "model": self.model, "files": [f.path for f in self.files]}


@dataclass(frozen=True)
class DiffPattern:
    """What the pipeline reads of a pattern, for a diff: no data precondition (a diff states no
    condition), no assertion test (the equality test grades it), ranked DIFF_BONUS units up."""

    id: str
    name: str
    family: str
    symptom: str
    realistic: str
    mutation: str = ""
    difficulty: str = "medium"
    rank_penalty: int = -DIFF_BONUS
    db_types: str = "all"
    precondition: tuple = ()
    assertion_tests: tuple = ()
    applies_when: tuple = ()
    requires: dict = field(default_factory=dict)
    symptom_template: str = ""
    guidance: str = ""
    max_lines: int = MAX_CHANGED_LINES


def pattern_for(bug: DiffBug) -> DiffPattern:
    if bug.source == "history":
        name, realistic = (f"fix undone (commit {bug.ref[:7]})",
                           f"The project once shipped this and fixed it in commit {bug.ref[:7]} "
                           f"({bug.story!r}); the task undoes that fix on today's code.")
    else:
        name, realistic = "bug from --bug-command", f"Written by --bug-command: {bug.story}"
    return DiffPattern(bug.pattern_id, name, SOURCES[bug.source], KINDS[bug.kind], realistic,
                       mutation=bug.story)


class DiffCandidate(Candidate):
    """A Candidate made from a diff: one site (the first file's changed lines, the other files as
    its companions) and the DiffBug it came from."""

    def __init__(self, model: dict, bug: DiffBug, raw_bytes: bytes, site: Site, covered_by: str | None = None):
        super().__init__(model, pattern_for(bug), raw_bytes, [site], covered_by=covered_by)
        self.bug = bug

    @property
    def origin(self) -> DiffBug:
        return self.bug

    def with_sites(self, sites: list) -> DiffCandidate:
        one = DiffCandidate(self.model, self.bug, self.raw_bytes, sites[0], covered_by=self.covered_by)
        one.score = self.score
        return one

    def mart_shown(self, obs, discovery: dict) -> str | None:
        """A changed mart (nearest first) to report a diff's bug on when its own model is no mart and
        `site.deep_table` found none: that one looks only below the model, and a mart the diff
        itself changes is a root of the screening (distance 0), not below it."""
        if obs is None or getattr(obs, "build_error", False) or self.model.get("layer") == "marts":
            return None
        layers = {m["name"]: m.get("layer") for m in discovery.get("models", [])}
        marts = [f for f in _changed(obs) if layers.get(str(f["table"])) == "marts" and str(f["table"]) != self.name]
        return str(min(marts, key=lambda f: (int(f.get("distance") or 0), str(f["table"])))["table"]) if marts else None

    def companion_changes(self, obs, table: str, discovery: dict) -> tuple[SiblingChange, ...]:
        """The diff's other files as the proposal's siblings: each graded on its own model's table
        when the screening saw it change, else on `table` (the proposal's own: its fix is part of
        restoring that one). Unlike a sibling pair, a file need not show on a table of its own."""
        changed = {str(f["table"]) for f in _changed(obs)}
        by_uid = {m["unique_id"]: m for m in discovery.get("models", [])}
        out = []
        for comp in self.sites[0].companions:
            mine = comp.model if comp.model in changed and by_uid.get(comp.unique_id, {}).get(
                "materialized") != "ephemeral" else table
            out.append(SiblingChange(comp.model, comp.unique_id, comp.path, _encode(comp.raw),
                                     _encode(_apply(comp.raw, comp.site)), mine, comp.site.line))
        return tuple(out)


def _changed(obs) -> list[dict]:
    """The measured tables of a screening whose rows differ (a prompt may name them)."""
    return [f for f in (getattr(obs, "details", None) or {}).get("tables") or []
            if int(f.get("rows_differing") or 0) > 0 and not f.get("error") and not f.get("columns_missing")]


def _encode(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


def _apply(raw: str, site: Site) -> str:
    return raw[:site.start] + site.after + raw[site.end:]


# ---------------------------------------------------------------------------------------------
# what a diff changes

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# strings and quoted names whole (their inside is code), comments dropped, whitespace ignored
_CODE = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|\{#.*?#\}|--[^\n]*|/\*.*?\*/|\w+|[^\s\w]", re.S)


def code_tokens(text: str) -> list[str]:
    """The text's tokens outside comments (SQL and Jinja), whitespace ignored: two files with the
    same tokens differ in layout or comments only."""
    return [t for t in _CODE.findall(text) if not t.startswith(("--", "/*", "{#"))]


def logic_changed(original: bytes, mutant: bytes) -> bool:
    """Whether an edit changes more than names (an alias, a qualifier, a column renamed): a keyword,
    a function, an operator, a literal or a number. A refactor's inverse renames things back."""
    a, b = code_tokens(decode(original)), code_tokens(decode(mutant))
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for toks, lo, hi in ((a, i1, i2), (b, j1, j2)):
            for i in range(lo, hi):
                name = _NAME.fullmatch(toks[i]) is not None
                if not name or toks[i].lower() in SQL_WORDS or toks[i + 1:i + 2] == ["("]:
                    return True
    return False


def changed_lines(original: bytes, mutant: bytes) -> int:
    """Lines removed plus lines added, as a unified diff counts them."""
    a, b = decode(original).splitlines(), decode(mutant).splitlines()
    return sum((i2 - i1) + (j2 - j1) for tag, i1, i2, j1, j2 in
               difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if tag != "equal")


def check_files(files: tuple[FileChange, ...], model_paths) -> tuple[DropCode, str] | None:
    """Why a diff's files cannot make a task, or None: a file that is no SQL file of the project's own
    models (`model_paths`), no change, a change of comments or whitespace only, too many lines."""
    outside = [f.path for f in files if f.path not in model_paths]
    if outside:
        return DropCode.DIFF_OUTSIDE_MODELS, "touches files outside the project's models: " + ", ".join(outside[:3])
    changed = [f for f in files if f.original != f.mutant]
    if not changed:
        return DropCode.DIFF_NO_CHANGE, "changes nothing"
    if all(code_tokens(decode(f.original)) == code_tokens(decode(f.mutant)) for f in changed):
        return DropCode.DIFF_NO_CHANGE, "changes only comments or whitespace"
    lines = sum(changed_lines(f.original, f.mutant) for f in changed)
    if lines > MAX_CHANGED_LINES:
        return DropCode.DIFF_TOO_BIG, f"changes {lines} lines (at most {MAX_CHANGED_LINES})"
    return None


def span_site(pattern_id: str, original: str, mutant: str) -> Site:
    """One site that turns `original` into `mutant`: the lines between the first and the last
    difference (whole lines, so the prompt's leak check compares whole tokens)."""
    n = min(len(original), len(mutant))
    p = next((i for i in range(n) if original[i] != mutant[i]), n)
    s = 0
    while s < n - p and original[-1 - s] == mutant[-1 - s]:
        s += 1
    start = original.rfind("\n", 0, p) + 1
    end_o, end_m = len(original) - s, len(mutant) - s
    nl = original.find("\n", end_o)
    grow = (len(original) if nl == -1 else nl) - end_o  # to the end of the last changed line
    end_o, end_m = end_o + grow, end_m + grow
    return Site(pattern_id, 0, start, end_o, original.count("\n", 0, start) + 1, original[start:end_o],
                mutant[start:end_m], note="diff")


def candidate_for(bug: DiffBug, scope: Scope) -> DiffCandidate | Drop:
    """The candidate of a diff, or the Drop that says why it cannot be one (check_files). Its own
    model is the diff's most upstream file: the symptom is traced down from there."""
    models = {m["path"]: m for m in own_models(scope.discovery, scope.project_name)}
    problem = check_files(bug.files, models)
    if problem is not None:
        return Drop(bug.model or "?", bug.pattern_id, f"{bug.label}: {problem[1]}", problem[0])
    files = [f for f in bug.files if f.original != f.mutant]
    files.sort(key=lambda f: int(models[f.path].get("depth") or 0))  # stable: the diff's order among equals
    first, rest = files[0], files[1:]
    comps = tuple(Companion(models[f.path]["name"], models[f.path]["unique_id"], f.path, decode(f.original),
                            span_site(bug.pattern_id, decode(f.original), decode(f.mutant))) for f in rest)
    site = dataclasses.replace(span_site(bug.pattern_id, decode(first.original), decode(first.mutant)),
                               companions=comps)
    model = models[first.path]
    return DiffCandidate(model, bug, first.original, site, covered_by=scope.survey.covered_models.get(model["name"]))
