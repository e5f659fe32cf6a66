"""The sentence a report adds when one mistake shows in two sibling tables (adegen.propose.siblings)."""
from __future__ import annotations

from adegen.prompts import phrases
from adegen.prompts.findings import Finding
from adegen.prompts.render import Voice, shuffled


def also(f: Finding, voice: Voice, salt: str, same: bool = True) -> str:
    """The sentence after a body that says a sibling table shows the same problem; `same` False
    when the sibling's symptom is of another kind (duplicate rows here, changed values there):
    then it only says that table looks wrong too."""
    t = voice.table(f.table, first=False)
    c = voice.column(f.column) if f.column else ""
    if not same:
        tpls = phrases.ALSO_OTHER_COLUMN if f.column else phrases.ALSO_OTHER
    elif f.column:
        tpls = phrases.ALSO_COLUMN
    else:
        tpls = phrases.ALSO
    # a template starts with a capital or with the name itself, written as the voice writes names
    # ("dim_customers has the same problem.": never capitalised)
    return shuffled(tpls, voice.seed, f"also:{salt}")[0].format(table=t, column=c)

