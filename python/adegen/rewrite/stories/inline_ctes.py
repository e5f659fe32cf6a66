"""Story "inline pass-through CTEs": the import CTEs that only select * from a ref or source are
dropped and their readers name the relation directly (`from {{ ref('orders') }} as orders`), a
tidy-up some teams make. Neutral: the alias keeps every qualified column reference working."""
from __future__ import annotations

from adegen.rewrite.stories.base import IDENT, Draft, Edit, Model, Slip, Story, overlaps

KIND = "inline_ctes"


def _pass_through(model: Model) -> list[tuple[str, int, int, str]]:
    """(name, start of the CTE, end incl. its comma, the relation's Jinja) of each top-level CTE
    `name as ( select * from {{ ... }} )` followed by a comma (the last CTE of a WITH stays)."""
    toks, out = model.toks, []
    texts = [t.text for t in toks]
    for k in range(len(toks) - 8):
        if texts[k + 1:k + 6] != ["as", "(", "select", "*", "from"] or toks[k + 6].kind != "jinja":
            continue
        if texts[k + 7] != ")" or texts[k + 8] != "," or not IDENT.match(texts[k]):
            continue
        if k == 0 or texts[k - 1] not in ("with", ","):
            continue
        end = toks[k + 9].start if k + 9 < len(toks) else toks[k + 8].end
        out.append((texts[k], toks[k].start, end, model.raw[toks[k + 6].start:toks[k + 6].end]))
    return out


def draft(model: Model, slip: Slip) -> Draft | None:
    ctes = _pass_through(model)
    edits: list[Edit] = []
    inlined = []
    texts = [t.text for t in model.toks]
    for name, start, end, jinja in ctes:
        readers = [k for k, t in enumerate(model.toks) if t.text == name and t.start >= end and k > 0
                   and texts[k - 1] in ("from", "join")]
        uses = [k for k, t in enumerate(model.toks) if t.text == name and t.start >= end]
        if not readers or len(readers) != len(uses):
            continue  # read elsewhere (a qualifier, a subquery's name): leave this one
        mine = [Edit(start, end, "")]
        for k in readers:
            t = model.toks[k]
            after = texts[k + 1] if k + 1 < len(texts) else ""
            aliased = after == "as" or (IDENT.match(after or "") and after not in _CLAUSE)
            mine.append(Edit(t.start, t.end, jinja if aliased else f"{jinja} as {name}"))
        if any(overlaps(e, slip) for e in mine):
            continue
        edits += mine
        inlined.append(name)
    if not edits:
        return None
    return Draft(Story(KIND, f"Simplify {model.name}: read {', '.join(inlined)} directly instead of "
                             "through pass-through CTEs"), edits, slip.after)


_CLAUSE = frozenset("""where group order having limit qualify window union intersect except on using
left right inner full cross join natural lateral select from""".split())
