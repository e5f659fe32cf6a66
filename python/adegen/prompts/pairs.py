"""The sentence a report adds when one mistake shows in two sibling tables (adegen.siblings)."""
from __future__ import annotations

from . import phrases
from .findings import Finding
from .render import Voice, shuffled


def also(f: Finding, voice: Voice, salt: str) -> str:
    """The sentence after a body that says a sibling table shows the same problem."""
    t = voice.table(f.table, first=False)
    if f.column:
        c = voice.column(f.column)
        tpls = phrases.ALSO_COLUMN
    else:
        c = ""
        tpls = phrases.ALSO
    # a template starts with a capital or with the name itself, written as the voice writes names
    # ("dim_customers has the same problem.": never capitalised)
    return shuffled(tpls, voice.seed, f"also:{salt}")[0].format(t=t, c=c)
