"""The top-level CTEs of a model (`with a as (...), b as (...) select ...`), read from the lexer's
tokens: where each one's name, body and definition sit in the raw text. Pure functions."""
from __future__ import annotations

import re
from dataclasses import dataclass

from adegen.rewrite.stories.base import IDENT, Model

# a relation as dbt projects name one: ref(), source(), or a var() holding one (Fivetran's packages
# read every input as `{{ var('conversation_history') }}`, set to a ref in dbt_project.yml)
_CALL = re.compile(r"\{\{\s*(ref|source|var)\s*\(", re.S)


@dataclass(frozen=True)
class Cte:
    """One top-level CTE: `name as ( body )`. Offsets into the raw text; `first`/`last`: the token
    indices of its name and of its closing parenthesis."""

    name: str
    start: int       # the name's first character
    end: int         # after the closing parenthesis
    body_start: int  # after the opening parenthesis
    body_end: int    # at the closing parenthesis
    first: int
    last: int

    def body_tokens(self, model: Model) -> list:
        return model.toks[self.first + 3:self.last]

    def reads_relation(self, model: Model) -> str | None:
        """The `{{ ref(...) }}` / `{{ source(...) }}` / `{{ var(...) }}` text when the body is only
        `select * from` it (an import CTE), else None."""
        body = self.body_tokens(model)
        if [t.text for t in body[:3]] != ["select", "*", "from"] or len(body) != 4 or body[3].kind != "jinja":
            return None
        jinja = model.raw[body[3].start:body[3].end]
        return jinja if _CALL.match(jinja) else None


def top_ctes(model: Model) -> list[Cte]:
    """The CTEs of the model's leading WITH, in order ([] when the model has none or they cannot be
    read: a recursive WITH, an unbalanced parenthesis)."""
    toks = model.toks
    sql = [k for k, t in enumerate(toks) if t.kind == "sql"]
    if not sql or toks[sql[0]].text != "with":
        return []
    k = sql[0] + 1
    out: list[Cte] = []
    while k + 2 < len(toks):
        name, as_, paren = toks[k], toks[k + 1], toks[k + 2]
        if name.kind != "sql" or not IDENT.match(name.text) or as_.text != "as" or paren.text != "(":
            return []
        close = _closing(toks, k + 2)
        if close is None:
            return []
        out.append(Cte(name.text, name.start, toks[close].end, paren.end, toks[close].start, k, close))
        if close + 1 < len(toks) and toks[close + 1].text == ",":
            k = close + 2
            continue
        return out
    return []


def _closing(toks: list, k: int) -> int | None:
    depth = 0
    for j in range(k, len(toks)):
        if toks[j].text == "(":
            depth += 1
        elif toks[j].text == ")":
            depth -= 1
            if depth == 0:
                return j
    return None


def uses(model: Model, name: str, skip: list[tuple[int, int]]) -> int:
    """How often `name` appears as a SQL word outside the spans `skip`."""
    return sum(1 for t in model.toks if t.kind == "sql" and t.text == name
               and not any(a <= t.start < b for a, b in skip))


def is_relation(jinja: str) -> bool:
    """A Jinja expression that names a relation (`_CALL`)."""
    return _CALL.match(jinja) is not None
