"""Story "CTE extracted into its own model": a CTE of the model that reads a ref or source and
transforms it (a filter, a dedup, a join) moves into a new model file beside it, and the model's
CTE becomes an import of the new model (`select * from {{ ref('int_orders__deduped') }}`). The
import CTEs the moved CTE read go with it (the new model opens with its own), those the model no
longer reads are dropped from it. The slip sits in the moved body: the condition lost on the way.

Neutral: a CTE that selects * from a model holding its body is that body (its import CTEs are
copied verbatim). Declined where that could not hold: the body reads another CTE that is no
plain import, selects `*` over more than one relation (a join's duplicate names cannot become a
table), holds Jinja statements or `this`, or starts a WITH of its own."""
from __future__ import annotations

import posixpath
import re
import textwrap

from adegen.rewrite.stories.base import Draft, Edit, Model, Slip, Story, indent_unit, keyword_upper
from adegen.rewrite.stories.ctes import Cte, is_relation, top_ctes, uses
from adegen.sql import lexer

KIND = "extract_cte"
# what makes a CTE a transform worth a model of its own (not a rename-only select)
TRANSFORMS = frozenset({"where", "join", "group", "qualify", "distinct", "having", "over", "union"})
# layer prefixes a model name drops before the new model's (`stg_orders` -> `orders`)
PREFIXES = ("stg", "int", "fct", "fact", "dim", "rpt", "mart", "marts", "agg", "obt", "base", "src")
_THIS = re.compile(r"\{\{[^}]*\bthis\b")
_HINT = re.compile(r"\s*--\s*depends_on:\s*\{\{.*\}\}\s*$")


def new_name(model: str, cte: str) -> str:
    """`int_<model without its layer prefix>__<cte>`; `base_` beside a staging model (dbt's
    convention for a model a staging model builds on)."""
    head, _, rest = model.partition("_")
    stem = rest if head.lower() in PREFIXES and rest else model
    prefix = "base" if head.lower() in ("stg", "src", "base") else "int"
    return f"{prefix}_{stem}__{cte}"


def movable(model: Model, cte: Cte, imports: dict[str, Cte]) -> list[Cte] | None:
    """The import CTEs the body reads when `cte` can move into a model of its own, else None."""
    body = cte.body_tokens(model)
    text = model.raw[cte.body_start:cte.body_end]
    if not body or body[0].text != "select" or "{%" in text or _THIS.search(text):
        return None
    if not TRANSFORMS & {t.text for t in body if t.kind == "sql"}:
        return None
    names = {c.name for c in top_ctes(model)}
    read = [t.text for t in body if t.kind == "sql" and t.text in names]
    if any(n not in imports for n in read):
        return None  # reads a CTE that transforms: it would have to move too
    relations = [t for k, t in enumerate(body) if t.kind == "jinja" and k and body[k - 1].text in ("from", "join")
                 and is_relation(model.raw[t.start:t.end])]
    if not read and not relations:
        return None
    star = any(t.text == "*" and i and body[i - 1].text != "(" for i, t in enumerate(body))
    if star and (len(set(read)) + len(relations) > 1 or "join" in {t.text for t in body}):
        return None  # `select *` over a join: names both sides share cannot make one table
    return [imports[n] for n in dict.fromkeys(read)]


def _new_file(model: Model, slip: Slip, cte: Cte, needed: list[Cte]) -> str:
    body = model.raw[cte.body_start:slip.start] + slip.after + model.raw[slip.end:cte.body_end]
    body = textwrap.dedent(body.strip("\n")).strip() + "\n"
    # the model's `-- depends_on: {{ ref(...) }}` hints go along: the moved CTE reads what the model
    # reads, and without the hint dbt may build the new model before a seed its source names
    hints = "".join(line + "\n" for line in model.raw.splitlines() if _HINT.match(line))
    if not needed:
        return hints + body
    kw = "WITH" if keyword_upper(model) else "with"
    return hints + f"{kw}\n\n" + ",\n\n".join(model.raw[c.start:c.end] for c in needed) + f"\n\n{body}"


def _import_body(model: Model, imports: dict[str, Cte], ref: str) -> str:
    """The moved CTE's new body, laid out as the model's own import CTEs are."""
    for c in imports.values():
        inner = model.raw[c.body_start:c.body_end]
        jinja = c.reads_relation(model)
        return inner.replace(jinja, ref)
    ind = indent_unit(model.raw)
    return f"\n{ind}{'SELECT * FROM' if keyword_upper(model) else 'select * from'} {ref}\n"


def _drops(model: Model, ctes: list[Cte], cte: Cte, needed: list[Cte]) -> list[Edit]:
    """Edits removing the import CTEs the model reads only through the moved one."""
    out = []
    for c in needed:
        if uses(model, c.name, [(c.start, c.start + len(c.name)), (cte.body_start, cte.body_end)]):
            continue
        i = ctes.index(c)
        if i + 1 < len(ctes):
            out.append(Edit(c.start, ctes[i + 1].start, ""))
        else:
            out.append(Edit(ctes[i - 1].end, c.end, ""))
    return out


def lost(model: Model, slip: Slip) -> bool:
    """The slip leaves something out (a condition, a clause, a wrapping function) and adds nothing:
    its text's tokens are a part of what it replaces, in order. What a move loses on the way; a
    changed operator or constant is no slip a move makes. An empty slip (the story alone) counts."""
    before = [t.text for t in lexer.tokenize(model.raw[slip.start:slip.end])]
    after = [t.text for t in lexer.tokenize(slip.after)]
    if not before:
        return not after  # an insertion adds; only the empty slip (the story alone) counts
    rest = iter(before)
    return len(after) < len(before) and all(tok in rest for tok in after)  # a subsequence, in order


def draft(model: Model, slip: Slip) -> Draft | None:
    if not model.path or slip.start == slip.end == len(model.raw) or not lost(model, slip):
        return None  # no place for the new file; no slip to carry, or one no move makes
    ctes = top_ctes(model)
    imports = {c.name: c for c in ctes if c.reads_relation(model)}
    for cte in ctes:
        if not (cte.body_start <= slip.start and slip.end <= cte.body_end) or cte.name in imports:
            continue
        needed = movable(model, cte, imports)
        name = new_name(model.name, cte.name)
        if needed is None or name in model.taken or name == model.name:
            return None
        ref = f"{{{{ ref('{name}') }}}}"
        edits = [Edit(cte.body_start, cte.body_end, _import_body(model, imports, ref)),
                 *_drops(model, ctes, cte, needed)]
        path = posixpath.join(posixpath.dirname(model.path), f"{name}.sql")
        story = Story(KIND, f"Refactor: move {cte.name} out of {model.name} into its own model {name}",
                      files=((path, _new_file(model, slip, cte, needed)),))
        return Draft(story, edits, slip.after, absorbs_slip=True)
    return None
