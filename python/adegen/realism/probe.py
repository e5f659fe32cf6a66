"""Probe queries: small aggregates over the rows of one SELECT scope, run on the intact build.

A precondition asks about the data at the site of a mutation ("do rows sit on this boundary?",
"does the lookup miss keys?"), so a probe keeps the scope's FROM, JOINs and WHERE and replaces its
select list with the measures it needs; the CTEs the scope can see come along. `rows_query` reads
the scope's rows (before any grouping); `groups_query` reads one row per group of its GROUP BY.

`ProbeDB` runs them read-only on the validator's intact build. The compiled SQL names the compile
database's catalog, so that catalog is mirrored by views over the intact build's relations (as the
screening's row guard does). Every query is bounded by a timeout; a failure is None, never raised.
"""
from __future__ import annotations

import threading
from pathlib import Path

import duckdb
import sqlglot
from sqlglot import exp

from adegen.adebench.procedure.dbfiles import mirror_catalog
from adegen.sql.quote import ident as q, literal as quote_literal

PROBE_SECONDS = 15.0
# sqlglot 30 names a select's WITH clause "with_" (older releases: "with")
WITH = "with_" if "with_" in exp.Select.arg_types else "with"
_DROPPED = ("group", "having", "order", "limit", "offset", "qualify", "distinct", "windows")


def visible_ctes(node: exp.Expression) -> list[exp.CTE]:
    """Every CTE a node can read: the WITH clauses of its own select and of every enclosing one,
    outermost first (a name defined twice keeps the innermost definition)."""
    withs: list[exp.With] = []
    cur: exp.Expression | None = node
    while cur is not None:
        w = cur.args.get(WITH) if isinstance(cur, (exp.Select, exp.SetOperation)) else None
        if isinstance(w, exp.With):
            withs.append(w)
        cur = cur.parent
    by_name: dict[str, exp.CTE] = {}
    for w in reversed(withs):
        for cte in w.expressions:
            by_name[cte.alias_or_name.lower()] = cte
    return list(by_name.values())


def _parse(text: str) -> exp.Expression:
    return sqlglot.parse_one(text, read="duckdb")


def _as_expr(x) -> exp.Expression:
    return x.copy() if isinstance(x, exp.Expression) else _parse(str(x))


def _with(select: exp.Select, ctes: list[exp.CTE]) -> exp.Select:
    if ctes:
        select.set(WITH, exp.With(expressions=[c.copy() for c in ctes]))
    return select


def rows_query(select: exp.Select, measures: list, *, where=True, extra=None) -> str:
    """SELECT <measures> over the rows of `select`'s FROM/JOINs and WHERE (`where`: False drops the
    WHERE, a condition replaces it; `extra` is one more condition ANDed to it)."""
    probe = select.copy()
    for key in _DROPPED + (WITH,):
        probe.set(key, None)
    if where is False:
        probe.set("where", None)
    elif isinstance(where, exp.Expression):
        probe.set("where", exp.Where(this=where.copy()))
    if extra is not None:
        cond = _as_expr(extra)
        old = probe.args.get("where")
        probe.set("where", exp.Where(this=exp.and_(old.this, cond) if old is not None else cond))
    ms = [_as_expr(m) for m in measures]
    if not _reads_lateral_alias(select, ms + [probe.args.get("where")]):
        probe.set("expressions", ms)
        return _with(probe, visible_ctes(select)).sql(dialect="duckdb")
    # A measure (or the WHERE) reads an alias of the select list itself (DuckDB's and Snowflake's
    # lateral column alias: `mrr > 0 as is_active, case when is_active ...`). The original row-level
    # items stay in the probe's select list so the alias binds exactly as it did in the model; an
    # outer select keeps the measures' own names and count.
    kept = [i.copy() for i in select.expressions if not _aggregates(i)]
    probe.set("expressions", kept + [exp.alias_(m, f"adegen_m{i}") for i, m in enumerate(ms)])
    outer = exp.select(*[exp.alias_(exp.column(f"adegen_m{i}"), m.alias_or_name or f"m{i}") for i, m in enumerate(ms)])
    outer = outer.from_(exp.Subquery(this=probe, alias=exp.TableAlias(this=exp.to_identifier("adegen_lateral"))))
    return _with(outer, visible_ctes(select)).sql(dialect="duckdb")


def _aggregates(item: exp.Expression) -> bool:
    """Whether a select item aggregates (an aggregate outside any window function)."""
    return any(a.find_ancestor(exp.Window) is None for a in item.find_all(exp.AggFunc))


def _reads_lateral_alias(select: exp.Select, nodes: list) -> bool:
    """Whether an unqualified column in `nodes` names an alias of `select`'s own select list."""
    aliases = {i.alias.lower() for i in select.expressions if isinstance(i, exp.Alias)}
    return bool(aliases) and any(
        not c.table and c.name.lower() in aliases
        for n in nodes if n is not None for c in n.find_all(exp.Column))


def groups_query(select: exp.Select, per_group: list, measures: list) -> str:
    """SELECT <measures> FROM (one row per group of `select`'s GROUP BY with <per_group>): the
    inner columns are named g0, g1, ... in the order given."""
    probe = select.copy()
    for key in _DROPPED + (WITH,):
        probe.set(key, None)
    inner = [exp.alias_(_as_expr(e), f"g{i}") for i, e in enumerate(per_group)]
    keys = group_keys(select)
    # the original items stay when a per-group expression reads one of their aliases (see rows_query)
    kept = [i.copy() for i in select.expressions] if _reads_lateral_alias(select, inner + [probe.args.get("where")]) else []
    probe.set("expressions", (kept + inner) if inner else [exp.alias_(exp.Count(this=exp.Star()), "g0")])
    if keys:
        probe.set("group", exp.Group(expressions=keys))
    outer = exp.select(*[_as_expr(m) for m in measures]).from_(exp.Subquery(this=probe, alias=exp.TableAlias(
        this=exp.to_identifier("adegen_groups"))))
    return _with(outer, visible_ctes(select)).sql(dialect="duckdb")


def group_keys(select: exp.Select) -> list[exp.Expression]:
    """The GROUP BY keys of `select` as expressions over its FROM: positions (`group by 1, 2`),
    select-list aliases and GROUP BY ALL are resolved to the select items they stand for, since a
    probe replaces the select list."""
    group = select.args.get("group")
    items = list(select.expressions)
    by_alias = {i.alias.lower(): i.this for i in items if isinstance(i, exp.Alias)}
    if group is None:
        return []
    if group.args.get("all"):
        return [i.unalias().copy() for i in items if i.unalias().find(exp.AggFunc) is None]
    out = []
    for g in group.expressions:
        if isinstance(g, exp.Literal) and g.is_int and 0 < int(g.this) <= len(items):
            out.append(items[int(g.this) - 1].unalias().copy())
        elif isinstance(g, exp.Column) and not g.table and g.name.lower() in by_alias:
            out.append(by_alias[g.name.lower()].copy())
        else:
            out.append(g.copy())
    return out


class ProbeDB:
    """Read-only queries on the intact build `db_file`, for SQL compiled against `catalog`."""

    def __init__(self, db_file: Path, catalog: str | None, *, seconds: float = PROBE_SECONDS,
                 settings: dict | None = None):
        self.db_file, self.catalog, self.seconds = Path(db_file), catalog, seconds
        self.settings = dict(settings or {})
        self._con = None
        self._lock = threading.Lock()
        self.errors: list[str] = []

    def _connect(self):
        if self._con is None:
            con = duckdb.connect()
            for key in ("memory_limit", "threads"):
                if self.settings.get(key):
                    con.execute(f"SET {key} = {quote_literal(str(self.settings[key]))}")
            name = self.db_file.stem
            con.execute(f"ATTACH {quote_literal(str(self.db_file))} AS {q(name)} (READ_ONLY)")
            con.execute(f"USE {q(name)}")
            self._con = con
        return self._con

    def one(self, sql: str) -> tuple | None:
        """The first row of `sql`, or None (the error is kept in `errors`)."""
        with self._lock:
            try:
                con = self._connect()
                if self.catalog and self.catalog.lower() != self.db_file.stem.lower():
                    mirror_catalog(con, self.db_file.stem, self.catalog, sql)
            except duckdb.Error as exc:
                self.errors.append(f"cannot open the intact build: {exc}")
                return None
            timer = threading.Timer(self.seconds, con.interrupt)
            timer.start()
            try:
                return con.execute(sql).fetchone()
            except duckdb.Error as exc:
                self.errors.append(" ".join(str(exc).split())[:300])
                return None
            finally:
                timer.cancel()

    def columns(self, relation_sql: str) -> dict[str, str] | None:
        """Column name -> SQL type of a relation or query."""
        with self._lock:
            try:
                con = self._connect()
                if self.catalog and self.catalog.lower() != self.db_file.stem.lower():
                    mirror_catalog(con, self.db_file.stem, self.catalog, relation_sql)
                return {r[0]: str(r[1]) for r in con.execute(f"DESCRIBE {relation_sql}").fetchall()}
            except duckdb.Error as exc:
                self.errors.append(" ".join(str(exc).split())[:300])
                return None

    def binds(self, sql: str) -> tuple[bool | None, str]:
        """Whether `sql` (one compiled SELECT) binds on the intact build: EXPLAIN plans it without
        running it. (True, ""); (False, the Binder, Catalog or Parser error); (None, the error)
        when something else failed (the database, an extension): undecided."""
        body = sql.strip().rstrip(";").strip()
        with self._lock:
            try:
                con = self._connect()
                if self.catalog and self.catalog.lower() != self.db_file.stem.lower():
                    mirror_catalog(con, self.db_file.stem, self.catalog, body)
                con.execute(f"EXPLAIN {body}")
                return True, ""
            except (duckdb.BinderException, duckdb.CatalogException, duckdb.ParserException) as exc:
                return False, " ".join(str(exc).split())[:300]
            except duckdb.Error as exc:
                return None, " ".join(str(exc).split())[:300]

    def close(self) -> None:
        with self._lock:
            if self._con is not None:
                self._con.close()
                self._con = None
