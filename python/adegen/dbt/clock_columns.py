"""Which output columns of a model are computed from the clock (issue 53): column-level clock lineage
over the compiled SQL, with sqlglot's scopes. Pure functions.

adegen.dbt.clock says which models read the clock; a table read that way was never graded. Most
such tables read it in a few columns only (`current_date - created_at as age_days`): their rows and
their other columns are the same whatever day the task runs, so the table is graded with those
columns excluded (ade-bench's `exclude_columns`, as its own asana001 grades `days_open`). This
module finds those columns, directly or through CTEs, subqueries and set operations, or inherited
from a clock column of a relation the model reads; and says when the *row set* depends on the
clock instead (a filter, a join, a grouping, a date spine up to today): such a table stays
whole-table clock-dependent.

Where the SQL cannot be followed column by column (it does not parse, a `select *` over a relation
whose columns are unknown and which holds clock columns, the clock read where the compiled SQL
does not show it) the answer is the whole table, as before. What lineage still misses is left to
the shifted-clock check (validate.clockcheck), which compares the table 40 days ahead without these
columns.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Mapping

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope

from adegen.core.graph import ProjectGraph
from adegen.dbt.clock import CLOCK_CALLS, CLOCK_WORDS, ClockUse, clock_models
from adegen.dbt.relations import node_relation

# sqlglot's own node types for the clock words (current_date -> CurrentDate, ...); the rest of the
# words stay function calls (exp.Anonymous) or bare names (a column of that name)
_NODE_NAMES = frozenset({w.replace("_", "") for w in CLOCK_WORDS} | {
    "currenttimestampltz", "utcdate", "utctime", "utctimestamp", "systimestamp"})
_MARK = "adegen_clock"  # what a clock word or a rendered run_started_at is replaced with before qualify
# a timestamp literal as dbt renders `{{ run_started_at }}` (its date is the run's: `stamps`)
_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}:?\d{2}|Z)?)?$")
# clauses whose clock reading changes only the order of rows, unless the select also limits them
_ORDER_ONLY = "order"
_LIMITS = ("limit", "offset", "fetch")


@dataclass(frozen=True)
class ClockColumns:
    """A model's clock dependence, column by column.

    `columns`: its output columns computed from the clock ({column: what it reads}, output order);
    `rows`: why its row set depends on the clock, or why its columns cannot be followed (then the
    whole table is clock-dependent); `found`: its SQL shows a clock reading (or a clock column of
    a relation it reads) at all."""

    columns: dict[str, str] = field(default_factory=dict)
    rows: str | None = None
    found: bool = False

    @property
    def whole(self) -> bool:
        return self.rows is not None

    def reason(self) -> str:
        """One line: what the table's clock dependence is."""
        if self.rows:
            return self.rows
        if not self.columns:
            return "reads no clock column of the models it reads"
        return "; ".join(f"{c} from {why}" for c, why in self.columns.items())


@dataclass
class _Taint:
    cols: dict[str, str] = field(default_factory=dict)   # lower-cased output name -> why
    names: list[str] = field(default_factory=list)      # output names, in order
    rows: str | None = None
    cause: str | None = None                            # the first clock reading seen (for a subquery's reader)


def run_dates(generated_at: str | None) -> frozenset[str]:
    """The dates a rendered `run_started_at` may carry: the manifest's day and its neighbours."""
    try:
        day = dt.date.fromisoformat(str(generated_at or "")[:10])
    except ValueError:
        return frozenset()
    return frozenset(str(day + dt.timedelta(days=d)) for d in (-1, 0, 1))


def _is_clock(node: exp.Expression) -> bool:
    if isinstance(node, exp.Anonymous):
        name = str(node.name).lower()
        return name.startswith(_MARK) or name in CLOCK_WORDS or name in CLOCK_CALLS
    return isinstance(node, exp.Func) and type(node).__name__.lower() in _NODE_NAMES


def _mark(tree: exp.Expression, stamps: frozenset[str]) -> None:
    """Before qualify: a bare clock word read as a column (`sysdate`), and a string literal dbt
    rendered from `run_started_at`, become calls qualify leaves alone."""
    for node in list(tree.find_all(exp.Column, exp.Literal)):
        if isinstance(node, exp.Column):
            ident = node.this
            word = (ident.name.lower() if not node.table and isinstance(ident, exp.Identifier)
                    and not ident.quoted and ident.name.lower() in CLOCK_WORDS else None)
        else:
            m = _STAMP.match(node.this) if node.is_string else None
            word = "run_started_at" if m and m.group(1) in stamps else None
        if word:
            node.replace(exp.Anonymous(this=f"{_MARK}_{word}"))


def _outputs(select: exp.Expression) -> list[str]:
    return [p.alias_or_name.lower() for p in getattr(select, "expressions", [])]


class _Walk:
    """Scope by scope, children first: each scope's clock columns and row dependence."""

    def __init__(self, parents: Mapping[str, ClockColumns]):
        self.parents = {k.lower(): v for k, v in parents.items()}
        self.taint: dict[int, _Taint] = {}
        self.found = False

    def parent(self, table: exp.Table) -> tuple[str, ClockColumns] | None:
        """The relation a table reference names among `parents` ("schema.identifier")."""
        name, db = table.name.lower(), table.db.lower()
        if not name:
            return None
        if db:
            hit = self.parents.get(f"{db}.{name}")
            return (f"{db}.{name}", hit) if hit else None
        keys = [k for k in self.parents if k.rsplit(".", 1)[-1] == name]
        return (keys[0], self.parents[keys[0]]) if len(keys) == 1 else None

    def source(self, scope: Scope, alias: str) -> tuple[str, _Taint] | None:
        """(name, taint) of the source `alias` of `scope` or of a scope around it."""
        s: Scope | None = scope
        while s is not None:
            src = s.sources.get(alias)
            if isinstance(src, Scope):
                return alias, self.taint.get(id(src), _Taint())
            if isinstance(src, exp.Table):
                hit = self.parent(src)
                if hit is None:
                    return None
                rel, cc = hit
                return rel, _Taint({c.lower(): f"{rel}.{c}" for c in cc.columns}, list(cc.columns),
                                   f"reads {rel}, whose rows depend on the clock" if cc.whole else None, rel)
            s = s.parent
        return None

    def column(self, scope: Scope, col: exp.Column) -> str | None:
        """What a column reference reads from the clock (None: nothing)."""
        name = col.name.lower()
        aliases = [col.table] if col.table else list(scope.selected_sources)
        for alias in aliases:
            hit = self.source(scope, alias)
            if hit and name in hit[1].cols:
                return hit[1].cols[name]
        return None

    def run(self, scope: Scope) -> _Taint:
        sel = scope.expression
        if isinstance(sel, exp.SetOperation):
            t = self._set(scope, sel)
        elif isinstance(sel, exp.Select):
            t = self._select(scope, sel)
        else:
            t = _Taint(rows=f"cannot follow a {type(sel).__name__} scope")
        self.taint[id(scope)] = t
        return t

    def _set(self, scope: Scope, op: exp.SetOperation) -> _Taint:
        sides = [self.taint.get(id(s), _Taint()) for s in scope.set_operation_scopes]
        names = sides[0].names if sides else []
        cols = {}
        for i, n in enumerate(names):
            why = next((s.cols[s.names[i]] for s in sides if i < len(s.names) and s.names[i] in s.cols), None)
            if why:
                cols[n] = why
        rows = next((s.rows for s in sides if s.rows), None)
        if rows is None and cols and (op.args.get("distinct") or not isinstance(op, exp.Union)):
            rows = f"a set operation over clock column(s) {', '.join(cols)} decides its rows"
        return _Taint(cols, names, rows, next((s.cause for s in sides if s.cause), None))

    def _select(self, scope: Scope, sel: exp.Select) -> _Taint:
        t = _Taint(names=_outputs(sel))
        for alias in scope.selected_sources:
            hit = self.source(scope, alias)
            if hit and hit[1].rows:
                t.rows, t.cause = t.rows or hit[1].rows, t.cause or hit[1].cause or hit[0]
        hits = self._hits(scope)
        self.found = self.found or bool(hits)
        t.cause = t.cause or (hits[0][1] if hits else None)
        limited = any(sel.args.get(k) for k in _LIMITS)
        for node, why in hits:
            clause, top = _clause(node, sel)
            if clause == "expressions":
                t.cols.setdefault(top.alias_or_name.lower(), why)
            elif clause != _ORDER_ONLY or limited:
                t.rows = t.rows or f"its rows depend on the clock ({why} in {_CLAUSE.get(clause, clause)})"
        for key, clause in sel.args.items():  # `qualify rn = 1`, `order by age limit 3`: a clock column's alias
            if key == "expressions" or not isinstance(clause, exp.Expression) or (key == _ORDER_ONLY and not limited):
                continue
            named = [c.name.lower() for c in clause.find_all(exp.Column) if not c.table and c.name.lower() in t.cols]
            if named:
                t.rows = t.rows or (f"its rows depend on the clock ({t.cols[named[0]]} in "
                                    f"{_CLAUSE.get(key, key)})")
        t.rows = t.rows or self._star(scope, sel)
        if t.rows is None and t.cols and sel.args.get("distinct"):
            t.rows = f"select distinct over clock column(s) {', '.join(t.cols)} decides its rows"
        return t

    def _hits(self, scope: Scope) -> list[tuple[exp.Expression, str]]:
        """The nodes of `scope` (not of its subscopes) that read the clock, each with what it reads:
        clock calls, columns of a source's clock columns, subqueries that read the clock."""
        hits: list[tuple[exp.Expression, str]] = []
        for node in scope.find_all(exp.Func):
            if _is_clock(node):
                name = node.name.lower() if isinstance(node, exp.Anonymous) else ""
                said = name[len(_MARK) + 1:] if name.startswith(_MARK) else node.sql(dialect="duckdb").lower()
                hits.append((node, said))
        for col in scope.columns:
            why = self.column(scope, col)
            if why:
                hits.append((col, why))
        for sub in scope.subquery_scopes:
            st = self.taint.get(id(sub), _Taint())
            if st.cols or st.rows:
                hits.append((sub.expression, st.cause or "a subquery reading the clock"))
        return hits

    def _star(self, scope: Scope, sel: exp.Select) -> str | None:
        """Why a `select *` qualify could not expand hides clock columns (None: it does not)."""
        for p in sel.expressions:
            if isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star)):
                for alias in ([p.table] if isinstance(p, exp.Column) and p.table else list(scope.selected_sources)):
                    hit = self.source(scope, alias)
                    if hit and hit[1].cols:
                        return f"select * over {hit[0]}: its clock columns cannot be followed"
        return None


_CLAUSE = {"where": "a filter", "joins": "a join", "group": "a grouping", "having": "a filter",
           "qualify": "a filter", "from": "its from clause", "from_": "its from clause",
           "order": "an order with a limit",
           "limit": "a limit", "offset": "a limit", "distinct": "a distinct on", "laterals": "a lateral"}


def _clause(node: exp.Expression, sel: exp.Select) -> tuple[str, exp.Expression]:
    """The clause of `sel` holding `node`, and the node directly under `sel`."""
    child = node
    while child.parent is not None and child.parent is not sel:
        child = child.parent
    return (child.arg_key if child.parent is sel else "?"), child


def sql_clock(sql: str, parents: Mapping[str, ClockColumns] | None = None, *, schema: dict | None = None,
              dialect: str = "duckdb", stamps: frozenset[str] = frozenset()) -> ClockColumns:
    """The clock columns of one compiled SELECT. `parents`: {"schema.identifier": ClockColumns} of
    the relations it may read; `schema`: {catalog: {schema: {table: {column: type}}}} (expands
    `select *`); `stamps`: the dates a rendered `run_started_at` literal carries (`run_dates`)."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
        _mark(tree, stamps)
        tree = qualify(tree, schema=schema, dialect=dialect, validate_qualify_columns=False,
                       quote_identifiers=False, identify=False)
        scopes = list(traverse_scope(tree))
    except (SqlglotError, ValueError, KeyError, TypeError, RecursionError) as exc:
        return ClockColumns(rows=f"its compiled SQL cannot be followed column by column ({_first(exc)})")
    if not scopes:
        return ClockColumns(rows="its compiled SQL holds no select")
    walk = _Walk(parents or {})
    t = _Taint()
    for scope in scopes:
        t = walk.run(scope)
    names = {n.lower(): p.alias_or_name for n, p in zip(t.names, getattr(scopes[-1].expression, "expressions", []))}
    cols = {names.get(n, n): why for n, why in sorted(t.cols.items(), key=lambda kv: _index(t.names, kv[0]))}
    return ClockColumns(cols, t.rows, walk.found)


def _index(names: list[str], n: str) -> int:
    return names.index(n) if n in names else len(names)


def _first(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]


def model_clock_columns(manifest: dict, schema: dict | None = None, dialect: str = "duckdb"
                        ) -> dict[str, ClockColumns]:
    """{model unique_id: ClockColumns} of every model adegen.dbt.clock says reads the clock, from
    its compiled SQL, parents first (a model inherits its parents' clock columns through refs).
    A model that reads the clock itself while its compiled SQL shows no clock reading (a macro
    run at compile time, a hook) is whole-table."""
    uses = clock_models(manifest)
    nodes = manifest.get("nodes") or {}
    stamps = run_dates((manifest.get("metadata") or {}).get("generated_at"))
    out: dict[str, ClockColumns] = {}
    by_rel: dict[str, ClockColumns] = {}
    for uid in ProjectGraph.from_manifest(manifest).topological():
        use = uses.get(uid)
        if use is None or uid not in nodes:
            continue
        n = nodes[uid]
        out[uid] = cc = _model(n, use, by_rel, (schema, dialect, stamps))
        rel = node_relation(n)
        by_rel[f"{rel.schema}.{rel.identifier}".lower()] = cc
    return out


def _model(node: dict, use: ClockUse, by_rel: dict, how: tuple) -> ClockColumns:
    schema, dialect, stamps = how
    code = node.get("compiled_code")
    if not code:
        return ClockColumns(rows="no compiled SQL to follow its clock columns in")
    try:
        cc = sql_clock(code, by_rel, schema=schema, dialect=dialect, stamps=stamps)
    except Exception as exc:  # noqa: BLE001 - sqlglot's walk failing on one model: it stays whole-table
        return ClockColumns(rows=f"its compiled SQL cannot be followed column by column ({type(exc).__name__})")
    if not cc.whole and use.upstream is None and not cc.found:
        return ClockColumns(rows=f"{use.reason()}, which its compiled SQL does not show")
    return cc


@dataclass(frozen=True)
class ClockSplit:
    """The clock-reading models sorted for grading: `whole` ({uid: why}: never graded, as before)
    and `columns` ({uid: {"columns": [...], "why": ...}}: graded without those columns; an empty
    list is a model that reads a clock-dependent model but none of its clock columns). `windowable`
    ({uid: clock columns}): the whole tables whose rows lineage saw depend on the clock, itself or
    through a date spine it reads, candidates for a window on their rows (validate.duckdb.clockwindow
    decides by execution); `spines` ({uid: {built column: SpineDate}}, adegen.dbt.clock_spine): their
    date columns carried from a spine, where the window goes."""

    whole: dict[str, str]
    columns: dict[str, dict]
    windowable: dict[str, list[str]] = field(default_factory=dict)
    spines: dict[str, dict] = field(default_factory=dict)


def split(reasons: Mapping[str, str], lineage: Mapping[str, ClockColumns],
          table_columns: Mapping[str, list[str]], spines: Mapping[str, Mapping] | None = None) -> ClockSplit:
    """`reasons` (adegen.dbt.clock), `lineage` (`model_clock_columns`) and each model's columns as
    built ({uid: [column]}, the names exclude_columns must carry) -> the split. A clock column the
    built table does not have, or a table whose every column reads the clock, stays whole. `spines`
    ({uid: {column: SpineDate}}, adegen.dbt.clock_spine): a whole table downstream of a date spine
    is a window candidate too, though its own SQL reads no clock."""
    spines = spines or {}
    carried: dict[str, dict] = {}
    whole: dict[str, str] = {}
    columns: dict[str, dict] = {}
    windowable: dict[str, list[str]] = {}
    for uid, why in reasons.items():
        cc = lineage.get(uid)
        built = {c.lower(): c for c in table_columns.get(uid) or []}
        if cc is None or cc.whole:
            rows = cc.rows if cc is not None else "no column-level lineage"
            whole[uid] = why if rows.startswith(why) else f"{why}; {rows}"
            on_spine = {built[c.lower()]: sd for c, sd in (spines.get(uid) or {}).items() if c.lower() in built}
            if cc is not None and (cc.found or on_spine) and built and all(c.lower() in built for c in cc.columns):
                windowable[uid] = [built[c.lower()] for c in cc.columns]
                if on_spine:
                    carried[uid] = on_spine
        elif any(c.lower() not in built for c in cc.columns):
            missing = [c for c in cc.columns if c.lower() not in built]
            whole[uid] = f"{why}; its clock column(s) {', '.join(missing)} are not among the built table's columns"
        elif built and len(cc.columns) >= len(built):
            whole[uid] = f"{why}; every column of it reads the clock"
        else:
            names = [built[c.lower()] for c in cc.columns]
            columns[uid] = {"columns": names, "why": f"{why}: {cc.reason()}" if names else
                            f"{why}, but {cc.reason()}"}
    return ClockSplit(whole, columns, windowable, carried)
