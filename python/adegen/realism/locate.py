"""Where a mutation sits in the compiled SQL: the SELECT scope it changes and the changed node.

A rewrite site is found on the model's raw text (Jinja and all); a data precondition is measured on
the compiled SQL. Both the intact model and the mutant are compiled (the compile check), so the
site is located by comparing the two parses: the first scope (innermost first, as sqlglot's
`traverse_scope` yields them) whose SQL differs holds the change, and a structural walk of that
scope finds the deepest node whose own shape or value differs. Pure functions, no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import traverse_scope


@dataclass(frozen=True)
class SiteScope:
    """The change a mutant makes, in the intact and the mutated parse."""

    tree: exp.Expression          # the intact statement
    mutant_tree: exp.Expression   # the mutated statement
    scope: exp.Expression         # the intact scope (a Select or a set operation) holding the change
    mutant_scope: exp.Expression  # the same scope in the mutant
    before: exp.Expression        # the deepest intact node that differs (a container when a part was removed)
    after: exp.Expression         # its counterpart in the mutant

    @property
    def select(self) -> exp.Select | None:
        """The intact SELECT the changed node belongs to."""
        return _own_select(self.before, self.scope)

    @property
    def mutant_select(self) -> exp.Select | None:
        return _own_select(self.after, self.mutant_scope)


def _own_select(node: exp.Expression, scope: exp.Expression) -> exp.Select | None:
    if isinstance(node, exp.Select):
        return node
    found = node.find_ancestor(exp.Select)
    if found is not None:
        return found
    return scope if isinstance(scope, exp.Select) else None


def parse(sql: str, dialect: str) -> exp.Expression | None:
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except (SqlglotError, RecursionError, ValueError):
        return None
    return statements[-1] if statements else None


def locate(intact_sql: str, mutant_sql: str, dialect: str = "duckdb") -> SiteScope | None:
    """The changed scope and node, or None when either side does not parse or nothing differs."""
    tree, mutant = parse(intact_sql, dialect), parse(mutant_sql, dialect)
    if tree is None or mutant is None:
        return None
    try:
        a_scopes, b_scopes = list(traverse_scope(tree)), list(traverse_scope(mutant))
    except (SqlglotError, RecursionError, ValueError, KeyError):
        return None
    for a, b in zip(a_scopes, b_scopes):
        if a.expression.sql() == b.expression.sql():
            continue
        pair = first_difference(a.expression, b.expression)
        if pair is None:
            return None
        return SiteScope(tree, mutant, a.expression, b.expression, pair[0], pair[1])
    return None


def first_difference(a: exp.Expression, b: exp.Expression) -> tuple[exp.Expression, exp.Expression] | None:
    """The deepest pair of nodes where `a` and `b` differ: a node of another type or with other
    scalar arguments, or the container whose list of children changed length (a dropped list item,
    a removed clause). An alias dropped with the call it named (`coalesce(amount, 0) as amount` ->
    `amount`) keeps the output name: the change is the call's."""
    if isinstance(a, exp.Alias) and not isinstance(b, exp.Alias) and b.output_name == a.alias:
        return first_difference(a.this, b) or (a, b)
    if type(a) is not type(b):
        return a, b
    for key in sorted(set(a.args) | set(b.args)):
        va, vb = a.args.get(key), b.args.get(key)
        if _same(va, vb):
            continue
        if isinstance(va, exp.Expression) and isinstance(vb, exp.Expression):
            return first_difference(va, vb) or (a, b)
        if isinstance(va, list) and isinstance(vb, list) and len(va) == len(vb):
            for x, y in zip(va, vb):
                if not _same(x, y):
                    if isinstance(x, exp.Expression) and isinstance(y, exp.Expression):
                        return first_difference(x, y) or (a, b)
                    return a, b
            continue
        return a, b
    return None


def _same(x, y) -> bool:
    if isinstance(x, exp.Expression) and isinstance(y, exp.Expression):
        # sqlglot's == ignores the case of strings ('Completed' == 'completed'): compare the text too
        return x == y and x.sql() == y.sql()
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(_same(p, q) for p, q in zip(x, y))
    return x == y
