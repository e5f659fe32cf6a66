"""Story "import CTEs": a flat model (one SELECT, no CTEs) is refactored as dbt's style guide asks:
the refs and sources it reads straight in FROM / JOIN move into import CTEs at the top
(`orders as (select * from {{ ref('orders') }})`), the FROM / JOIN then name the CTE. A model already
laid out in CTEs gets no such story: re-layouting a layered model is noise a reviewer sees through
(issue 51). Neutral: a CTE that selects * from a relation is that relation."""
from __future__ import annotations

import re

from adegen.rewrite.stories.base import IDENT, Draft, Edit, Model, Slip, Story, indent_unit, keyword_upper, overlaps

KIND = "import_ctes"
_CALL = re.compile(r"\{\{\s*(ref|source)\s*\(([^()]*)\)\s*\}\}\Z", re.S)
_ARG = re.compile(r"""['"]([^'"]+)['"]""")


def _relation_name(jinja: str) -> str | None:
    """ref('x') / ref('pkg', 'x') / source('s', 't') -> x / x / t (what the CTE is named)."""
    m = _CALL.match(jinja)
    if not m:
        return None
    args = _ARG.findall(m.group(2))
    if not args or (m.group(1) == "source" and len(args) != 2) or "=" in m.group(2):
        return None  # version=, a variable for a name: not a plain relation
    name = args[-1].lower()
    return name if IDENT.match(name) else None


def _already_imported(model: Model, k: int) -> bool:
    """Token k is the whole body of a CTE: `name as ( select * from {{ ... }} )`."""
    texts = [t.text for t in model.toks]
    return texts[k - 4:k] == ["(", "select", "*", "from"] and texts[k + 1:k + 2] == [")"]


def _reads(model: Model) -> dict[str, list]:
    """name -> the FROM / JOIN tokens reading it inline, for names free to become a CTE."""
    found: dict[str, list] = {}
    spelled: dict[str, str] = {}
    words = model.words()
    for k, t in enumerate(model.toks):
        if t.kind != "jinja" or k == 0 or model.toks[k - 1].text not in ("from", "join"):
            continue
        jinja = model.raw[t.start:t.end]
        name = _relation_name(jinja)
        if name is None or _already_imported(model, k):
            continue
        if name in words or spelled.setdefault(name, " ".join(jinja.split())) != " ".join(jinja.split()):
            spelled[name] = ""  # a name the SQL already uses, or two relations of one name: leave it
            continue
        found.setdefault(name, []).append(t)
    return {n: ts for n, ts in found.items() if spelled.get(n)}


# a layer prefix people drop when they name an import CTE (`orders as (select * from {{ ref('stg_orders') }})`)
_LAYER = re.compile(r"^(?:stg|int|fct|fact|dim|rpt|base|src|raw|mart|agg)_+")


def cte_names(reads: dict[str, list], used: set) -> dict[str, str]:
    """relation name -> its import CTE's name: the name without its layer prefix, as people write
    it (stg_orders -> orders, int_orders__enriched -> orders__enriched); the relation's own name
    where that is no identifier, one the model uses already, or another relation's. A CTE named
    exactly like the model it imports read to blind reviewers as a program's (issue 51)."""
    short = {name: _LAYER.sub("", name) for name in reads}
    taken = [s for s in short.values()]
    return {name: s if s and s != name and IDENT.match(s) and s not in used and taken.count(s) == 1
            and s not in reads else name for name, s in short.items()}


def draft(model: Model, slip: Slip) -> Draft | None:
    sql = model.sql()
    if not sql or sql[0].text != "select":
        return None  # a model with CTEs is laid out already
    full = _reads(model)
    names = cte_names(full, set(model.words()))
    reads = {names[name]: ts for name, ts in full.items()}
    edits = [Edit(t.start, t.end, name) for name, ts in reads.items() for t in ts]
    if not edits or any(overlaps(e, slip) for e in edits):
        return None
    upper, ind = keyword_upper(model), indent_unit(model.raw)
    kw = (lambda s: s.upper()) if upper else (lambda s: s)
    ctes = [f"{name} {kw('as')} (\n{ind}{kw('select * from')} {model.raw[ts[0].start:ts[0].end]}\n)"
            for name, ts in reads.items()]
    first = sql[0]
    block = Edit(first.start, first.start, kw("with") + " " + ",\n\n".join(ctes) + "\n\n")
    if overlaps(block, slip):
        return None
    read = ", ".join(full)
    return Draft(Story(KIND, f"Refactor {model.name} to read {read} through import CTEs"), [block, *edits],
                 slip.after)
