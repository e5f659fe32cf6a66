"""What every story shares: the slip it carries, the neutral edits it adds, and how they compose.

A story is the commit an engineer set out to make (a refactor); the slip is the one
change in it that alters results. Every edit a story adds is behaviour-neutral by construction (the
same rows and columns come out): the tests build each story alone on real projects and compare every
table. Pure functions, no I/O."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from adegen.rewrite.text import Edit  # noqa: F401 - the rewrite engine's edit, shared by every story
from adegen.sql import lexer


@dataclass(frozen=True)
class Story:
    """The purpose of a task's change, as its author would title the commit (run record only: the
    prompt never sees it)."""

    kind: str
    subject: str
    # new files the change adds beside the model's own edit: (path in the project, text), the slip
    # in one of them (a CTE moved into a model of its own: adegen.rewrite.stories.extract_cte)
    files: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Slip:
    """The site's own edit: raw[start:end] becomes `after`."""

    start: int
    end: int
    after: str


@dataclass
class Draft:
    """A story's edits around one slip: `edits` never overlap the slip; `slip_after` is the slip's
    replacement text as the story writes it."""

    story: Story
    edits: list[Edit]
    slip_after: str
    absorbs_slip: bool = False  # one of `edits` already holds the slip (a block the story rewrites whole)


@dataclass
class Model:
    """The model a story reads: its raw SQL, tokens, name; its path and the project's model names
    (a story that adds a model file needs both: without a path it does not fit)."""

    raw: str
    name: str
    toks: list = field(default_factory=list)
    path: str = ""
    taken: frozenset = frozenset()

    def __post_init__(self):
        if not self.toks:
            self.toks = lexer.tokenize(self.raw)

    def sql(self) -> list:
        return [t for t in self.toks if t.kind == "sql"]

    def words(self) -> set[str]:
        return {t.text for t in self.toks if t.kind == "sql"}


def overlaps(e: Edit, slip: Slip) -> bool:
    """Strictly inside or across the slip's span (an insertion at its edge is fine)."""
    if e.start == e.end:
        return slip.start < e.start < slip.end
    return e.start < slip.end and slip.start < e.end


def compose(raw: str, slip: Slip, draft: Draft) -> str | None:
    """The slip and the story's edits applied together, or None when two of them overlap."""
    own = [] if draft.absorbs_slip else [Edit(slip.start, slip.end, draft.slip_after)]
    edits = sorted([*own, *draft.edits], key=lambda e: (e.start, e.end))
    out, pos = [], 0
    for e in edits:
        if e.start < pos:
            return None
        out.append(raw[pos:e.start])
        out.append(e.text)
        pos = e.end
    out.append(raw[pos:])
    text = "".join(out)
    plain = raw[:slip.start] + slip.after + raw[slip.end:]
    if _statements(text) != _statements(plain):
        return None  # a story never moves a Jinja statement or comment out of its place (an `{% endif %}` cut off)
    return text


_STATEMENT = re.compile(r"\{%.*?%\}|\{#.*?#\}", re.S)


def _statements(text: str) -> list[str]:
    """The Jinja statements and comments of a text, in order, as written."""
    return _STATEMENT.findall(text)


def keyword_upper(model: Model) -> bool:
    """The model writes its SQL keywords in upper case (SELECT ... FROM)."""
    for t in model.sql():
        if t.text in ("select", "from"):
            return model.raw[t.start:t.end].isupper()
    return False


def indent_unit(raw: str) -> str:
    """The model's own indentation step (two or four spaces, a tab)."""
    widths = []
    for line in raw.splitlines():
        stripped = line.lstrip(" ")
        if line.startswith("\t"):
            return "\t"
        if stripped and len(line) != len(stripped):
            widths.append(len(line) - len(stripped))
    return " " * (min(widths) if widths and min(widths) in (2, 4) else 4)


IDENT = re.compile(r"[a-z_][a-z0-9_]*\Z")
