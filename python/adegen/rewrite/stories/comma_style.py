"""Story "leading commas": a model written with trailing commas is moved to leading commas
(`    , amount`), a style some teams adopt with sqlfluff's comma rule. Neutral: only where the commas
stand changes. Every trailing comma must move (a half-done pass would point at the lines it missed),
so a model where one cannot (the next line is Jinja, a comment or a closing parenthesis) gets no
such story."""
from __future__ import annotations

import re

from adegen.rewrite.stories.base import Draft, Edit, Model, Slip, Story, overlaps

KIND = "leading_commas"
MIN_COMMAS = 3
_NEXT = re.compile(r"[ \t]*(?:--[^\n]*)?\r?\n([ \t]*)(\S)")


def draft(model: Model, slip: Slip) -> Draft | None:
    raw = model.raw
    edits: list[Edit] = []
    moved = 0
    texts = [t.text for t in model.toks]
    for i, t in enumerate(model.toks):
        if t.kind != "sql" or t.text != ",":
            continue
        if texts[i - 1:i] == [")"] and texts[i + 2:i + 4] == ["as", "("]:
            continue  # the comma between two CTEs stays where it is, as most leading-comma styles keep it
        m = _NEXT.match(raw, t.end)
        if m is None:
            if re.match(r"[ \t]*\S", raw[t.end:]) and "\n" not in raw[t.end:t.end + 2]:
                continue  # a comma inside a line (`sum(a, b)`) stays where it is
            return None
        first = m.group(2)
        nxt = raw[m.start(2):m.start(2) + 2]
        if first in ")," or nxt in ("{%", "{#", "--", "/*") or m.group(0).count("\n") > 1:
            return None  # cannot move cleanly: a Jinja line, a comment, a closing bracket
        edits.append(Edit(t.start, t.end, ""))
        edits.append(Edit(m.start(2), m.start(2), ", "))
        moved += 1
    if moved < MIN_COMMAS or any(overlaps(e, slip) for e in edits):
        return None
    return Draft(Story(KIND, f"Style: leading commas in {model.name}"), edits, slip.after)
