"""Which date columns of a model are carried from a date spine, and how far ahead (issue 53). Pure
functions over compiled SQL, with sqlglot's scopes.

A spine up to today (`dbt_utils.date_spine(datepart="month", ..., end_date="date_trunc('month',
current_date)")`, `generate_series(date '2023-01-01', current_date, interval 1 month)`) makes every
table downstream of it grow with the clock. Its rows up to the data's own last date do not: a
customer x month table joined onto the spine holds, for the months the subscriptions cover, the same
rows whatever day it is built. This module follows a spine's generated column through CTEs,
subqueries, set operations and models (`date_month + interval 1 month`, `date_trunc('quarter',
date_month)`, `lead(date_month)`) and says, per output column, the spine's step (its datepart,
coarsened by a date_trunc) and how far ahead of a spine date the column's values may lie.
`through` turns that and the data's last date into the last date a window keeps: one step past the
data plus the shifts ahead, so a churn row in the month after a customer's last active month is
graded too. Execution decides whether the rows in the window really stay put
(validate.duckdb.clockwindow).
"""
from __future__ import annotations

import calendar
import datetime as dt
from dataclasses import dataclass
from typing import Mapping

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope

from adegen.core.graph import ProjectGraph
from adegen.dbt.relations import node_relation

# dateparts from fine to coarse; a date_trunc to a coarser one coarsens the step
UNITS = ("day", "week", "month", "quarter", "year")
_MONTHS = {"month": 1, "quarter": 3, "year": 12}
_DATA = "data"  # a column read from a relation that is no spine: not a generated date
_GENERATORS = ("generate_series", "range")


@dataclass(frozen=True)
class SpineDate:
    """A date column carried from a date spine: the spine's step (`datepart`, coarsened by any
    date_trunc on the way) and how far ahead of a spine date its values may lie (`ahead`:
    ((unit, n), ...), sorted, n > 0; a lag or `- interval` shifts back, which a window needs no
    room for)."""

    datepart: str
    ahead: tuple[tuple[str, int], ...] = ()

    def shifted(self, unit: str, n: int) -> SpineDate:
        if n <= 0 or unit not in UNITS:
            return self
        got = dict(self.ahead)
        got[unit] = got.get(unit, 0) + n
        return SpineDate(self.datepart, tuple(sorted(got.items())))

    def coarsened(self, unit: str) -> SpineDate:
        if unit in UNITS and UNITS.index(unit) > UNITS.index(self.datepart):
            return SpineDate(unit, self.ahead)
        return self

    def merged(self, other: SpineDate) -> SpineDate:
        """Either of two spine dates (a set operation's sides, an expression reading both)."""
        out = self.coarsened(other.datepart)
        for unit, n in other.ahead:
            have = dict(out.ahead).get(unit, 0)
            out = out.shifted(unit, n - have) if n > have else out
        return out

    def to_dict(self) -> dict:
        return {"datepart": self.datepart, "ahead": [list(a) for a in self.ahead]}

    @classmethod
    def from_dict(cls, d: Mapping) -> SpineDate:
        return cls(str(d["datepart"]), tuple((str(u), int(n)) for u, n in d.get("ahead") or ()))

    def describe(self) -> str:
        shift = " + ".join(f"{n} {u}" for u, n in self.ahead)
        return f"a {self.datepart} spine date" + (f", up to {shift} ahead" if shift else "")


def _add(day: dt.date, months: int, days: int) -> dt.date:
    """`day` plus `months` calendar months (the month's last day where the day does not exist), then `days`."""
    y, m = divmod(day.year * 12 + day.month - 1 + months, 12)
    return dt.date(y, m + 1, min(day.day, calendar.monthrange(y, m + 1)[1])) + dt.timedelta(days=days)


def through(data_last: dt.date, spine: SpineDate) -> dt.date:
    """The last date a window on a spine column keeps: the data's last date, one step of the spine
    (the period that date falls in starts before it), and the shifts ahead."""
    steps = [(spine.datepart, 1), *spine.ahead]
    months = sum(n * _MONTHS[u] for u, n in steps if u in _MONTHS)
    days = sum(n * (7 if u == "week" else 1) for u, n in steps if u not in _MONTHS)
    return _add(data_last, months, days)


def _unit(node: exp.Expression | None) -> str | None:
    """The datepart an Interval / date function names, lower-cased and singular."""
    if node is None:
        return None
    if isinstance(node, exp.Interval):
        node = node.args.get("unit")
    name = (node.name if isinstance(node, (exp.Var, exp.Identifier, exp.Literal)) else str(node or "")).lower()
    name = name[:-1] if name.endswith("s") else name
    return name if name in UNITS else None


def _count(node: exp.Expression | None) -> int | None:
    """The whole number an Interval or a date_add's amount holds (None: not a literal)."""
    if isinstance(node, exp.Interval):
        node = node.this
    while isinstance(node, (exp.Paren, exp.Cast)):
        node = node.this
    if isinstance(node, exp.Neg):
        inner = _count(node.this)
        return -inner if inner is not None else None
    if isinstance(node, exp.Literal):
        try:
            return int(str(node.this).split()[0])
        except ValueError:
            return None
    return None


def _interval_of(node: exp.Expression) -> tuple[str, int] | None:
    """(unit, n) of an interval operand, `interval 1 month` or `interval '1 month'`."""
    if not isinstance(node, exp.Interval):
        return None
    unit = _unit(node)
    if unit is None and isinstance(node.this, exp.Literal):  # interval '1 month'
        parts = str(node.this.this).split()
        unit = _unit(exp.Var(this=parts[1])) if len(parts) == 2 else None
    n = _count(node)
    return (unit, n) if unit and n is not None else None


def _step(unit: str, n: int) -> SpineDate:
    """The spine a generator stepping `n` `unit`s makes: 3 months are a quarter; other multiples
    keep the unit and need the rest of the step as room ahead."""
    named = {("month", 3): "quarter", ("month", 12): "year", ("day", 7): "week"}.get((unit, n))
    return SpineDate(named) if named else SpineDate(unit).shifted(unit, n - 1)


class _Walk:
    """Scope by scope, children first: each scope's output columns -> SpineDate | _DATA | None."""

    def __init__(self, parents: Mapping[str, Mapping[str, SpineDate]]):
        self.parents = {k.lower(): {c.lower(): s for c, s in v.items()} for k, v in parents.items()}
        self.out: dict[int, dict[str, SpineDate | str | None]] = {}

    def _table(self, table: exp.Table, col: str) -> SpineDate | str | None:
        gen = table.this
        if isinstance(gen, exp.GenerateSeries) or (isinstance(gen, exp.Anonymous)
                                                  and str(gen.name).lower() in _GENERATORS):
            step = gen.args.get("step") if isinstance(gen, exp.GenerateSeries) else (gen.expressions[2:3] or [None])[0]
            got = _interval_of(step) if step is not None else None
            return _step(*got) if got else None
        name, db = table.name.lower(), table.db.lower()
        keys = [f"{db}.{name}"] if db else [k for k in self.parents if k.rsplit(".", 1)[-1] == name]
        hit = self.parents.get(keys[0]) if len(keys) == 1 else None
        return (hit or {}).get(col, _DATA)

    def column(self, scope: Scope, col: exp.Column) -> SpineDate | str | None:
        name = col.name.lower()
        for alias in ([col.table] if col.table else list(scope.selected_sources)):
            s: Scope | None = scope
            while s is not None and alias not in s.sources:
                s = s.parent
            src = s.sources[alias] if s is not None else None
            if isinstance(src, Scope):
                got = self.out.get(id(src), {})
                if name in got:
                    return got[name]
            elif isinstance(src, exp.Table):
                return self._table(src, name)
        return _DATA if col.table or scope.selected_sources else None

    def value(self, scope: Scope, node: exp.Expression) -> SpineDate | str | None:
        """What one expression carries: a spine date, data, or neither (a constant, a generator)."""
        if isinstance(node, exp.Column):
            return self.column(scope, node)
        if isinstance(node, (exp.Subquery, exp.Select)):
            return _DATA
        if isinstance(node, exp.Window):
            return self.value(scope, node.this)
        if isinstance(node, (exp.Lead, exp.Lag)):
            v = self.value(scope, node.this)
            n = _count(node.args.get("offset")) or 1
            return v.shifted(v.datepart, n) if isinstance(v, SpineDate) and isinstance(node, exp.Lead) else v
        if isinstance(node, (exp.TimestampTrunc, exp.DateTrunc)):
            v = self.value(scope, node.this)
            unit = _unit(node.args.get("unit"))
            return v.coarsened(unit) if isinstance(v, SpineDate) and unit else v
        if isinstance(node, (exp.Add, exp.Sub, exp.DateAdd, exp.DateSub, exp.TsOrDsAdd)):
            return self._shift(scope, node)
        return self._combine(scope, list(node.iter_expressions()))

    def _shift(self, scope: Scope, node: exp.Expression) -> SpineDate | str | None:
        base, other = node.this, node.expression
        iv = _interval_of(other) if other is not None else None
        if iv is None and isinstance(node, (exp.DateAdd, exp.DateSub, exp.TsOrDsAdd)):
            unit, n = _unit(node.args.get("unit")), _count(other)
            iv = (unit, n) if unit and n is not None else None
        if iv is None:
            if isinstance(base, exp.Interval) and isinstance(node, exp.Add):  # interval 1 month + d
                base, other, iv = other, base, _interval_of(base)
            if iv is None:
                return self._combine(scope, [base, other])
        sign = -1 if isinstance(node, (exp.Sub, exp.DateSub)) else 1
        v = self.value(scope, base)
        if isinstance(v, SpineDate):
            return v.shifted(iv[0], sign * iv[1])
        if v is None and self._generated(base):  # start + row_number() * interval 1 month: the spine itself
            return _step(*iv)
        return v

    def _generated(self, node: exp.Expression) -> bool:
        """A step count no relation feeds: `cast(row_number() over (...) - 1 as bigint) * interval`."""
        return node.find(exp.RowNumber) is not None or any(
            isinstance(n, exp.Interval) and n.find(exp.RowNumber) is not None for n in node.walk())

    def _combine(self, scope: Scope, nodes: list) -> SpineDate | str | None:
        got: SpineDate | str | None = None
        for n in nodes:
            if not isinstance(n, exp.Expression):
                continue
            if isinstance(n, exp.Mul) and any(isinstance(x, exp.Interval) for x in (n.this, n.expression)) \
                    and self._generated(n):
                iv = _interval_of(n.expression if isinstance(n.expression, exp.Interval) else n.this)
                v: SpineDate | str | None = _step(*iv) if iv else None
            else:
                v = self.value(scope, n)
            if isinstance(v, SpineDate):
                got = got.merged(v) if isinstance(got, SpineDate) else v
            elif v == _DATA and got is None:
                got = _DATA
        return got

    def run(self, scope: Scope) -> dict[str, SpineDate | str | None]:
        sel = scope.expression
        cols: dict[str, SpineDate | str | None] = {}
        if isinstance(sel, exp.SetOperation):
            sides = [self.out.get(id(s), {}) for s in scope.set_operation_scopes]
            names = list(sides[0]) if sides else []
            for i, n in enumerate(names):
                vals = [list(s.values())[i] for s in sides if i < len(s)]
                spines = [v for v in vals if isinstance(v, SpineDate)]
                cols[n] = spines[0] if spines else (_DATA if _DATA in vals else None)
                for v in spines[1:]:
                    cols[n] = cols[n].merged(v)
        elif isinstance(sel, exp.Select):
            for p in sel.expressions:
                cols[p.alias_or_name.lower()] = self.value(scope, p.this if isinstance(p, exp.Alias) else p)
        self.out[id(scope)] = cols
        return cols


def spine_dates(sql: str, parents: Mapping[str, Mapping[str, SpineDate]] | None = None, *,
                schema: dict | None = None, dialect: str = "duckdb") -> dict[str, SpineDate]:
    """{output column (lower-cased): SpineDate} of one compiled SELECT's columns carried from a date
    spine, generated here or read from `parents` ({"schema.identifier": {column: SpineDate}});
    `schema` ({catalog: {schema: {table: {column: type}}}}) expands `select *`. {} where the SQL
    cannot be followed."""
    try:
        tree = qualify(sqlglot.parse_one(sql, read=dialect), schema=schema, dialect=dialect,
                       validate_qualify_columns=False, quote_identifiers=False, identify=False)
        scopes = list(traverse_scope(tree))
    except (SqlglotError, ValueError, KeyError, TypeError, RecursionError):
        return {}
    walk = _Walk(parents or {})
    cols: dict = {}
    for scope in scopes:
        cols = walk.run(scope)
    return {c: v for c, v in cols.items() if isinstance(v, SpineDate)}


def model_spine_dates(manifest: dict, uids: set[str], schema: dict | None = None) -> dict[str, dict[str, SpineDate]]:
    """{model unique_id: {column: SpineDate}} of the models `uids` (and those they read), parents
    first, from their compiled code; models without such a column are left out."""
    nodes = manifest.get("nodes") or {}
    graph = ProjectGraph.from_manifest(manifest)
    by_rel: dict[str, dict[str, SpineDate]] = {}
    out: dict[str, dict[str, SpineDate]] = {}
    for uid in graph.topological():
        n = nodes.get(uid) or {}
        code = n.get("compiled_code")
        if n.get("resource_type") != "model" or not code:
            continue
        try:
            got = spine_dates(code, by_rel, schema=schema)
        except Exception:  # noqa: BLE001 - sqlglot failing on one model: no spine column there
            got = {}
        if got:
            rel = node_relation(n)
            by_rel[f"{rel.schema}.{rel.identifier}".lower()] = got
            if uid in uids:
                out[uid] = got
    return out
