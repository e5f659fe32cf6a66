"""Late rows for an incremental model: the rows a task's setup.sh inserts into the model's raw
relation between the first `dbt run` and the second (issue 52, item 2).

A slip in an `is_incremental()` filter never shows on a fresh build: the filter only runs when the
model's table exists. Production runs it the other way: a first run, new rows arrive, a scheduled
run picks them up. The rows that tell a `>=` filter from a `>` one are rows that arrive *with the
timestamp already loaded* (events of one batch that land after the load): copies of the raw rows
behind the model's newest rows, with new keys (as ade-bench's airbnb013 adds reviews at the
newest REVIEW_DATE). A correct model (`>=` with its `unique_key`) takes them on the next run, the
slip (`>`) leaves them out for good.

Which raw relation and column hold the model's key is found from the data (the intact build):
the one column of a raw table (not a model's relation) whose values are unique and hold the keys of
the model's newest rows; the filter's column and the `unique_key` are read from the model's SQL.
`plan` returns the `LateRows` or why there are none; `insert_sql` is the pure SQL text."""
from __future__ import annotations

import csv
import io
import re
from dataclasses import asdict, dataclass
from datetime import date, datetime, time
from decimal import Decimal

from adegen.sql.quote import ident, literal
from adegen.sql.types import family

# `<col> >= (select max(<col>) from {{ this }})`, the column of {{ this }} the filter reads
_FILTER = re.compile(r">=?\s*\(\s*select\s+max\s*\(\s*(?:\w+\.)?(\w+)\s*\)\s+from\s+\{\{\s*this\s*\}\}", re.I)
_UNIQUE_KEY = re.compile(r"unique_key\s*=\s*['\"](\w+)['\"]")
_NUMBERED = re.compile(r"^(.*?)(\d+)$")
MAX_ROWS = 2   # late rows per task: copies of at most this many of the newest rows


@dataclass(frozen=True)
class LateRows:
    """The rows setup.sh adds to `relation` ("schema.name"): `sql`, one INSERT through run_sql.sh;
    for a seed, `csv` (lines without the header, appended to `seed_file`, then `dbt seed`), so a
    `dbt seed` or `dbt build` of the agent's keeps them as production's raw data would."""

    relation: str
    key_column: str
    keys: tuple[str, ...]   # the new keys, as text
    sql: str
    seed_file: str = ""     # the seed's CSV (project-relative) when the relation is a seed
    csv: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def filter_column(model_sql: str) -> str | None:
    """The column of `{{ this }}` whose max the is_incremental() filter compares with."""
    m = _FILTER.search(model_sql)
    return m.group(1) if m else None


def unique_key(model_sql: str) -> str | None:
    """The model's single-column unique_key (config(unique_key='...')), else None."""
    m = _UNIQUE_KEY.search(model_sql)
    return m.group(1) if m else None


def plan(con, model_rel: tuple[str, str], model_sql: str, model_relations: set[tuple[str, str]],
         seed_files: dict[str, str]) -> LateRows | str:
    """The late rows for the model built at `model_rel` in `con`'s database, or why there are none
    (`seed_files`: "schema.name" of each seed -> its CSV file)."""
    ts, key = filter_column(model_sql), unique_key(model_sql)
    if ts is None:
        return "no `>= (select max(...) from {{ this }})` filter to load late rows against"
    if key is None:
        return "no single-column unique_key: a second run over the newest timestamp would duplicate rows"
    rel = f"{ident(model_rel[0])}.{ident(model_rel[1])}"
    newest = [str(r[0]) for r in con.execute(
        f"select cast({ident(key)} as varchar) from {rel} where {ident(ts)} = (select max({ident(ts)}) from {rel}) "
        f"and {ident(key)} is not null order by 1 limit {MAX_ROWS}").fetchall()]
    if not newest:
        return f"{model_rel[1]} has no rows to load late siblings of"
    held = _raw_key_columns(con, newest, model_relations)
    # the table the keys come from holds each once; raw data delivered at least once holds them
    # more often, and then only one column of the raw tables may hold them
    found = [h[:4] for h in held if h[4]] or [h[:4] for h in held]
    if len(found) != 1:
        where = ", ".join(f"{s}.{t}.{c}" for s, t, c, _ in found) or "no raw table"
        return f"the keys of {model_rel[1]}'s newest rows are in {where}, not in exactly one raw column"
    schema, table, column, sql_type = found[0]
    raw = f"{ident(schema)}.{ident(table)}"
    new_keys = _new_keys(con, raw, column, sql_type, len(newest))
    if new_keys is None:
        return f"{schema}.{table}.{column} holds keys adegen cannot make new ones of"
    cur = con.execute(f"select * from {raw} where cast({ident(column)} as varchar) in "
                      f"({', '.join(literal(k) for k in newest)}) order by cast({ident(column)} as varchar)")
    names = [d[0] for d in cur.description]
    rows = [list(r) for r in cur.fetchall()]
    at = names.index(column)
    renamed = dict(zip(newest, new_keys))   # every delivery of a key gets the same new key
    for r in rows:
        r[at] = renamed[str(r[at])]
    sql = insert_sql(f"{schema}.{table}", names, rows)
    if sql is None:
        return "a copied value holds a `;` (run_sql.sh splits statements on every `;`)"
    seed = seed_files.get(f"{schema}.{table}".lower()) or ""
    return LateRows(f"{schema}.{table}", column, tuple(str(k) for k in new_keys), sql,
                    seed, csv_lines(rows) if seed else "")


def _raw_key_columns(con, keys: list[str], model_relations: set[tuple[str, str]]) -> list[tuple]:
    """(schema, table, column, type, unique) of every raw table column holding all `keys`: one scan
    per raw table for its columns, a second one for the uniqueness of those that hold them."""
    cols = con.execute(
        "select c.table_schema, c.table_name, c.column_name, c.data_type from information_schema.columns c "
        "join information_schema.tables t using (table_catalog, table_schema, table_name) "
        "where t.table_type = 'BASE TABLE' and c.table_catalog = current_database() "
        "order by 1, 2, c.ordinal_position").fetchall()
    tables: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for schema, table, column, sql_type in cols:
        if (schema.lower(), table.lower()) not in model_relations:
            tables.setdefault((schema, table), []).append((column, sql_type))
    wanted = ", ".join(literal(k) for k in keys)
    out = []
    for (schema, table), columns in tables.items():
        raw = f"{ident(schema)}.{ident(table)}"
        held = con.execute("select " + ", ".join(
            f"count(distinct case when cast({ident(c)} as varchar) in ({wanted}) then cast({ident(c)} as varchar) end)"
            for c, _ in columns) + f" from {raw}").fetchone()
        for (column, sql_type), hits in zip(columns, held):
            if hits != len(keys):
                continue
            rows, distinct = con.execute(f"select count(*), count(distinct {ident(column)}) from {raw}").fetchone()
            out.append((schema, table, column, sql_type, rows == distinct))
    return out


def _new_keys(con, raw: str, column: str, sql_type: str, n: int) -> list | None:
    """`n` keys the column does not hold yet: the next integers, or the next numbers after a text
    key's prefix (evt_0041 -> evt_0042), zero-padded as the keys are."""
    c = ident(column)
    if family(sql_type) == "integer":
        top = con.execute(f"select max({c}) from {raw}").fetchone()[0]
        return [int(top) + i for i in range(1, n + 1)]
    if family(sql_type) != "text":
        return None
    values = [str(r[0]) for r in con.execute(f"select {c} from {raw} where {c} is not null").fetchall()]
    parts = [_NUMBERED.match(v) for v in values]
    if not values or not all(parts) or len({p.group(1) for p in parts}) != 1:
        return None
    prefix, width = parts[0].group(1), max(len(p.group(2)) for p in parts)
    top = max(int(p.group(2)) for p in parts)
    return [f"{prefix}{str(top + i).zfill(width)}" for i in range(1, n + 1)]


def insert_sql(relation: str, columns: list[str], rows: list[list]) -> str | None:
    """One INSERT of `rows` into `relation` ("schema.name"), values as literals (None when a value
    holds a `;`: run_sql.sh would split the statement there)."""
    values = [[_value(v) for v in r] for r in rows]
    if any(";" in v for r in values for v in r):
        return None
    schema, _, name = relation.partition(".")
    body = ",\n".join("  (" + ", ".join(r) + ")" for r in values)
    return (f"insert into {ident(schema)}.{ident(name)} ({', '.join(ident(c) for c in columns)}) values\n"
            f"{body}\n")


def csv_lines(rows: list[list]) -> str:
    """`rows` as seed CSV lines (no header): NULL empty, timestamps as `dbt seed` reads them."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    for r in rows:
        w.writerow(["" if v is None else _text(v) for v in r])
    return out.getvalue()


def _text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, (date, time)):
        return v.isoformat()
    return repr(v) if isinstance(v, float) else str(v)


def _value(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float, Decimal)):
        return repr(v) if isinstance(v, float) else str(v)
    if isinstance(v, (datetime, date, time)):
        return literal(v.isoformat(sep=" ") if isinstance(v, datetime) else v.isoformat())
    return literal(str(v))
