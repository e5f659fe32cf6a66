"""Story "final CTE": the model's closing SELECT moves into a `final` CTE and the model ends with
`select * from final`, as dbt's style guide asks. Neutral: a CTE selected whole is its query."""
from __future__ import annotations

from adegen.rewrite.stories.base import Draft, Edit, Model, Slip, Story, indent_unit, keyword_upper

KIND = "final_cte"


def _closing_select(model: Model) -> int | None:
    """Index (in model.toks) of the SELECT that opens the closing query of a top-level WITH."""
    toks = model.toks
    depth = 0
    for k, t in enumerate(toks):
        if t.text == "(":
            depth += 1
        elif t.text == ")":
            depth -= 1
        elif t.text == "select" and depth == 0 and k > 0:
            return k
    return None


def draft(model: Model, slip: Slip) -> Draft | None:
    sql = model.sql()
    if not sql or sql[0].text != "with" or "final" in model.words():
        return None
    k = _closing_select(model)
    if k is None:
        return None
    body = [t for t in model.toks[k:] if t.kind != "jinja" or True]
    texts = [t.text for t in body]
    if len(texts) == 4 and texts[1:3] == ["*", "from"]:
        return None  # already `select * from <cte>`
    start, end = body[0].start, body[-1].end
    if slip.start < start < slip.end or slip.start < end < slip.end:
        return None
    region = model.raw[start:end]
    inside = start <= slip.start and slip.end <= end
    if inside:
        region = model.raw[start:slip.start] + slip.after + model.raw[slip.end:end]
    ind, upper = indent_unit(model.raw), keyword_upper(model)
    kw = (lambda s: s.upper()) if upper else (lambda s: s)
    indented = "\n".join((ind + line) if line.strip() else line for line in region.split("\n"))
    # the closing ")" of the last CTE stays; a comma and the new CTE follow it
    prev_end = model.toks[k - 1].end
    text = f",\n\nfinal {kw('as')} (\n\n{indented}\n\n)\n\n{kw('select * from')} final"
    return Draft(Story(KIND, f"Refactor {model.name} to end with a final CTE"),
                 [Edit(prev_end, end, text)], slip.after, absorbs_slip=inside)
