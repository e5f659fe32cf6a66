"""Story "keyword case": the model's SQL keywords written in one case (lower case, as sqlfluff's
default capitalisation rule asks, where the model shouts them or mixes both). Neutral: SQL keywords
are case-insensitive; identifiers, functions, strings, comments and Jinja are left as they are."""
from __future__ import annotations

from adegen.rewrite.stories.base import Draft, Edit, Model, Slip, Story
from adegen.sql import lexer

KIND = "keyword_case"
KEYWORDS = frozenset("""
    select from where and or not null is in as on join left right inner outer full cross natural
    using group by order having limit offset qualify over partition rows range between unbounded
    preceding following current row case when then else end distinct all union intersect except with
    asc desc nulls first last true false like ilike exists interval cast filter within
""".split())
MIN_LINES = 3  # a style pass that touches fewer lines is no commit of its own


def _lower_keywords(text: str) -> str:
    """`text` (a slip's replacement) with its SQL keywords lower-cased, nothing else."""
    out, pos = [], 0
    for t in lexer.tokenize(text):
        if t.kind == "sql" and t.text in KEYWORDS:
            out.append(text[pos:t.start])
            out.append(text[t.start:t.end].lower())
            pos = t.end
    out.append(text[pos:])
    return "".join(out)


def draft(model: Model, slip: Slip) -> Draft | None:
    kws = [t for t in model.sql() if t.text in KEYWORDS]
    loud = [t for t in kws if model.raw[t.start:t.end] != t.text]
    if len(loud) < max(3, len(kws) // 3):
        return None  # already lower case (or nearly): nothing to tidy
    edits = [Edit(t.start, t.end, t.text) for t in loud if not (slip.start <= t.start < slip.end)]
    lines = {model.raw.count("\n", 0, e.start) for e in edits}
    if len(lines) < MIN_LINES:
        return None
    return Draft(Story(KIND, f"Style: lower-case SQL keywords in {model.name}"), edits, _lower_keywords(slip.after))
