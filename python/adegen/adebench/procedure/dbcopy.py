"""A DuckDB file copied into another storage version with the same objects (issue 53).

`COPY FROM DATABASE` into a file of an older storage version does not refuse what that version
cannot hold: a typed macro (`area_of_circle(radius FLOAT)`, storage v1.4.0+) is written with its
parameter types dropped, and the copy reads back as a different macro. And a file DuckDB's
`COPY FROM DATABASE` cannot copy whole (an object it fails to serialize or to order) left no copy
at all. So `copy_database`:

1. raises the storage version to what the source's objects need (`needed_storage`: typed macros
   need v1.4.0; never lower than asked);
2. copies with `COPY FROM DATABASE`, then reopens the written file and compares its catalog with
   the source's (`catalog`: schemas, tables with their columns and rows, views, macros with their
   parameter types and bodies, sequences with their next value, custom types, indexes);
3. when the copy failed or reads back different, writes the file again from each object's own
   definition (`EXPORT DATABASE`'s schema.sql, run statement by statement in dependency order,
   then every table's rows straight from the source) and compares again, every row of every table
   too (an order-free hash); a file that still differs is an error naming the difference.

The result (`DbCopy`) says the storage version written and, when the source was in another one,
how it was converted: the run record says so.
"""
from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from adegen.core.errors import AdegenError
from adegen.sql.quote import ident, literal

# ade-bench's image pins duckdb 1.3.0; files tagged with a newer storage version cannot be read
# there. v1.0.0 is readable by every duckdb >= 1.0.
HARNESS_STORAGE_VERSION = "v1.0.0"
HARNESS_DUCKDB = "1.3.0"  # a DuckDB reads the storage versions up to its own release
TYPED_MACROS = "v1.4.0"  # the first storage version that keeps a macro's parameter types

# a macro as compared: its signature (parameter names and types), not its body, and a view by its
# columns and their types (the "column" kind), not its text: DuckDB re-renders a definition on a
# copy (the case of a type name, parentheses around joins, quotes around a function name)
_MACROS = ("select schema_name, function_name, function_type, parameters, parameter_types "
           "from duckdb_functions() where database_name = ? and not internal "
           "and function_type in ('macro', 'table_macro')")


def version_key(v: str | None) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", v or "")[:3])


def harness_reads(tag: str | None) -> bool:
    """Whether ade-bench's image (duckdb HARNESS_DUCKDB) opens a file with this storage tag."""
    return bool(tag) and version_key(tag) <= version_key(HARNESS_DUCKDB)


def copy_file(src: Path, dst: Path) -> Path:
    """Plain byte copy of a DuckDB file (and its WAL, if one was left behind)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    wal = Path(str(src) + ".wal")
    dst_wal = Path(str(dst) + ".wal")
    if wal.exists():
        shutil.copyfile(wal, dst_wal)
    elif dst_wal.exists():
        dst_wal.unlink()
    return dst


def _remove(path: Path) -> None:
    for p in (path, Path(str(path) + ".wal")):
        if p.exists():
            p.unlink()


@dataclass
class DbCopy:
    path: Path
    version: str                       # the storage version written
    source_version: str | None = None  # the source file's storage tag ('v2.0.0+'); None: no source
    method: str = "copy"               # "copy" (COPY FROM DATABASE) | "definitions" (each object recreated)
    notes: list[str] = field(default_factory=list)  # why the version or the method is not the plain one

    @property
    def converted(self) -> bool:
        """The source was in another storage version than the copy."""
        return bool(self.source_version) and version_key(self.source_version) != version_key(self.version)

    def describe(self) -> str:
        """One line for the run record: the conversion, how, and why."""
        if not self.source_version:
            return f"written with storage {self.version}"
        head = (f"converted from storage {self.source_version} to {self.version}" if self.converted
                else f"copied in storage {self.version}")
        how = ("by COPY FROM DATABASE" if self.method == "copy"
               else "by recreating each object from its definition")
        return f"{head} {how}, every table, view, macro, sequence and type checked" + \
            ("".join(f"; {n}" for n in self.notes))


def typed_macros(con, db: str) -> list[str]:
    """'schema.name(p TYPE, ...)' of the macros of attached database `db` with typed parameters."""
    out = []
    for schema, name, _, params, types in con.execute(_MACROS, [db]).fetchall():
        if any(types or []):
            sig = ", ".join(f"{p} {t}" if t else p for p, t in zip(params or [], types or []))
            out.append(f"{schema}.{name}({sig})")
    return sorted(set(out))


def needed_storage(con, db: str) -> tuple[str, str] | None:
    """(the lowest storage version that holds every object of attached database `db`, why), or
    None when v1.0.0 does."""
    typed = typed_macros(con, db)
    if typed:
        return TYPED_MACROS, (f"the database holds typed macro{'s' if len(typed) > 1 else ''} "
                              f"{', '.join(typed[:3])}{' ...' if len(typed) > 3 else ''}, whose parameter "
                              f"types storage {TYPED_MACROS} is the first to keep")
    return None


def catalog(con, db: str) -> dict[str, set]:
    """Every user object of attached database `db`, by kind, as comparable tuples (macros by
    signature, views by their columns: `_MACROS`)."""
    q = lambda sql: {tuple(_hashable(x) for x in r) for r in con.execute(sql, [db]).fetchall()}  # noqa: E731
    out = {
        "schema": q("select schema_name from duckdb_schemas() where database_name = ? and not internal"),
        "table": q("select schema_name, table_name, column_count from duckdb_tables() "
                   "where database_name = ? and not internal"),
        "column": q("select schema_name, table_name, column_name, data_type, column_default from duckdb_columns() "
                    "where database_name = ? and not internal"),
        "view": q("select schema_name, view_name from duckdb_views() where database_name = ? and not internal"),
        "macro": q(_MACROS),
        "sequence": q("select schema_name, sequence_name, start_value, min_value, max_value, increment_by, cycle "
                      "from duckdb_sequences() where database_name = ?"),
        "type": q("select schema_name, type_name, logical_type, labels from duckdb_types() "
                  "where database_name = ? and not internal"),
        "index": q("select schema_name, index_name, sql from duckdb_indexes() where database_name = ?"),
    }
    out["schema"].discard(("main",))  # every file has it
    out["rows"] = {(s, t, con.execute(f"select count(*) from {ident(db)}.{ident(s)}.{ident(t)}").fetchone()[0])
                   for s, t, _ in out["table"]}
    return out


def _hashable(x):
    if isinstance(x, list):
        return tuple(_hashable(v) for v in x)
    if isinstance(x, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in x.items()))
    return x


def differences(want: dict[str, set], got: dict[str, set]) -> list[str]:
    """What `got` lacks or changed of `want` (and holds beyond it), one line per object."""
    out = []
    for kind in want:
        for row in sorted(want[kind] - got.get(kind, set()), key=repr):
            out.append(f"{kind} {repr(row)[:200]} missing or changed")
        for row in sorted(got.get(kind, set()) - want[kind], key=repr):
            out.append(f"{kind} {repr(row)[:200]} not in the source")
    return out


def storage_tag(con, db: str) -> str | None:
    row = con.execute("select tags['storage_version'] from duckdb_databases() where database_name = ?",
                      [db]).fetchone()
    return row[0] if row else None


def table_hashes(con, db: str) -> set:
    """(schema, table, an order-free hash of its rows) of every table of attached database `db`."""
    tables = con.execute("select schema_name, table_name from duckdb_tables() where database_name = ? "
                         "and not internal", [db]).fetchall()
    return {(s, t, con.execute(f"select sum(hash(x)::hugeint) from {ident(db)}.{ident(s)}.{ident(t)} as x"
                               ).fetchone()[0]) for s, t in tables}


def _check(con, dst: Path, want: dict[str, set]) -> list[str]:
    """What the written file lacks of `want` (with "data": every row of every table too)."""
    con.execute(f"ATTACH {literal(dst)} AS adegen_check (READ_ONLY)")
    try:
        got = catalog(con, "adegen_check")
        if "data" in want:
            got["data"] = table_hashes(con, "adegen_check")
        return differences(want, got)
    finally:
        con.execute("DETACH adegen_check")


def _copy_statement(con, src: str, dst: Path, version: str) -> None:
    con.execute(f"ATTACH {literal(dst)} AS adegen_out (STORAGE_VERSION {literal(version)})")
    try:
        con.execute(f"COPY FROM DATABASE {ident(src)} TO adegen_out")
    finally:
        con.execute("DETACH adegen_out")


def _copy_definitions(con, src: str, dst: Path, version: str) -> None:
    """Write `dst` from each object's definition: EXPORT DATABASE's schema.sql statements run in
    dependency order (a statement whose object needs one not made yet waits for the next pass),
    then the rows (`_copy_rows`). View bodies name the source's catalog, attached under the same name, so they
    bind while they are created and resolve in `dst` when it is opened under that name."""
    with tempfile.TemporaryDirectory(prefix="adegen-export-", dir=dst.parent) as tmp:
        con.execute(f"EXPORT DATABASE {ident(src)} TO {literal(tmp)} (FORMAT parquet)")
        schema = con.extract_statements((Path(tmp) / "schema.sql").read_text())
        con.execute(f"ATTACH {literal(dst)} AS adegen_out (STORAGE_VERSION {literal(version)})")
        try:
            con.execute("USE adegen_out")
            pending, errors = [s.query for s in schema], []
            while pending:
                errors, left = [], []
                for stmt in pending:
                    try:
                        con.execute(stmt)
                    except duckdb.Error as e:
                        left.append(stmt)
                        errors.append(f"{stmt.strip()[:120]}: {str(e).splitlines()[0]}")
                if len(left) == len(pending):
                    raise AdegenError("could not recreate every object of the database: " + "; ".join(errors[:3]))
                pending = left
            _copy_rows(con, src, "adegen_out")
        finally:
            con.execute("USE memory")
            con.execute("DETACH adegen_out")


def _copy_rows(con, src: str, dst: str) -> None:
    """Every row of every table of attached `src` into the same table of attached `dst`, straight
    from one database to the other (a Parquet round trip changes some types' values); generated
    columns are computed again."""
    cols = con.execute("select c.table_schema, c.table_name, list(c.column_name order by c.ordinal_position) "
                       "from information_schema.columns c join duckdb_tables() t on t.database_name = "
                       "c.table_catalog and t.schema_name = c.table_schema and t.table_name = c.table_name "
                       "where c.table_catalog = ? and coalesce(c.is_generated, 'NEVER') <> 'ALWAYS' "
                       "and not t.internal group by 1, 2", [src]).fetchall()
    for schema, table, names in cols:
        rel = f"{ident(schema)}.{ident(table)}"
        listed = ", ".join(ident(n) for n in names)
        con.execute(f"INSERT INTO {ident(dst)}.{rel} ({listed}) SELECT {listed} FROM {ident(src)}.{rel}")


def copy_attached(con, src: str, dst: Path, version: str) -> DbCopy:
    """Copy attached database `src` into a new file `dst` of storage `version` (raised to what its
    objects need), checked object by object (module doc)."""
    dst = Path(dst)
    result = DbCopy(dst, version, storage_tag(con, src))
    need = needed_storage(con, src)
    if need and version_key(need[0]) > version_key(version):
        result.version = need[0]
        result.notes.append(f"storage {need[0]}, not {version}: {need[1]}")
    want = catalog(con, src)
    _remove(dst)
    try:
        _copy_statement(con, src, dst, result.version)
        diff = _check(con, dst, want)
        why = ("COPY FROM DATABASE left it different: " + "; ".join(diff[:3])) if diff else ""
    except duckdb.Error as e:
        why = f"COPY FROM DATABASE failed: {str(e).strip().splitlines()[0][:300]}"
    if not why:
        return result
    _remove(dst)
    _copy_definitions(con, src, dst, result.version)
    # rebuilt object by object: every row is compared too
    diff = _check(con, dst, {**want, "data": table_hashes(con, src)})
    if diff:
        raise AdegenError(f"the copy of the database in storage {result.version} differs from it: "
                          + "; ".join(diff[:5]))
    result.method = "definitions"
    result.notes.append(why)
    return result


def copy_database(src: Path | None, dst: Path, *, drop: list[tuple[str, str]] = (),
                  storage_version: str = HARNESS_STORAGE_VERSION) -> DbCopy:
    """Write `dst` as a new DuckDB file of storage `storage_version` (raised to what the objects
    need) holding the contents of `src` (None: an empty database), minus the relations in `drop`
    ((schema, name)). The source is read from a copy; its view definitions name its catalog (the
    file stem), so the copy is attached under `dst`'s stem and they keep resolving."""
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    _remove(dst)
    con = duckdb.connect()
    try:
        if src is None:
            con.execute(f"ATTACH {literal(dst)} AS adegen_out (STORAGE_VERSION {literal(storage_version)})")
            con.execute("DETACH adegen_out")
            return DbCopy(dst, storage_version)
        tmp = dst.with_name(dst.stem + ".adegen-src.duckdb")
        copy_file(Path(src), tmp)
        try:
            alias = dst.stem
            con.execute(f"ATTACH {literal(tmp)} AS {ident(alias)}")
            for schema, name in drop:
                kind = con.execute(
                    "select table_type from information_schema.tables where table_catalog="
                    "? and lower(table_schema)=lower(?) and lower(table_name)=lower(?)",
                    [alias, schema, name]).fetchone()
                if kind:
                    what = "VIEW" if kind[0] == "VIEW" else "TABLE"
                    con.execute(f"DROP {what} IF EXISTS {ident(alias)}.{ident(schema)}.{ident(name)} CASCADE")
            return copy_attached(con, alias, dst, storage_version)
        finally:
            con.close()
            _remove(tmp)
    finally:
        con.close()  # closing twice is harmless
