"""DuckDB file helpers: storage-version-pinned copies, relation listing, storage checks."""
from __future__ import annotations

from pathlib import Path

import duckdb

from adegen.adebench.procedure.dbcopy import (  # noqa: F401 - the file helpers live together here
    HARNESS_DUCKDB, HARNESS_STORAGE_VERSION, DbCopy, copy_database, copy_file, harness_reads)
from adegen.sql.quote import ident, literal


def mirror_catalog(con, name: str, catalog: str, sql: str) -> None:
    """Views `catalog`.schema.x over `name`.schema.x for every relation of the attached database
    `name` that `sql` may reference (its name occurs in the text): SQL compiled against another
    DuckDB file (the compile database) then runs on this one. Views already made are kept."""
    text = sql.lower()
    rels = con.execute("select table_schema, table_name from information_schema.tables where table_catalog = ?",
                       [name]).fetchall()
    attached = {r[0].lower() for r in con.execute("select database_name from duckdb_databases()").fetchall()}
    if catalog.lower() not in attached:
        con.execute(f"ATTACH ':memory:' AS {ident(catalog)}")
    have = {(s.lower(), t.lower()) for s, t in con.execute(
        "select table_schema, table_name from information_schema.tables where table_catalog = ?", [catalog]).fetchall()}
    for schema, rel in rels:
        if rel.lower() in text and (schema.lower(), rel.lower()) not in have:
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {ident(catalog)}.{ident(schema)}")
            con.execute(f"CREATE VIEW {ident(catalog)}.{ident(schema)}.{ident(rel)} AS "
                        f"SELECT * FROM {ident(name)}.{ident(schema)}.{ident(rel)}")


def write_versioned_copy(src: Path | None, dst: Path, *, drop: list[tuple[str, str]] = (),
                         storage_version: str = HARNESS_STORAGE_VERSION) -> Path:
    """Write `dst` as a new DuckDB file with STORAGE_VERSION `storage_version` (raised to what the
    objects need: dbcopy) holding the contents of `src` (None: an empty database), minus the
    relations in `drop` ((schema, name)), every object checked. `copy_database` also says how."""
    return copy_database(src, dst, drop=drop, storage_version=storage_version).path


def storage_version(path: Path) -> str | None:
    """The storage compatibility tag of a DuckDB file (e.g. 'v1.0.0+'), or None."""
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH {literal(path)} AS f (READ_ONLY)")
        row = con.execute(
            "select tags['storage_version'] from duckdb_databases() where database_name='f'"
        ).fetchone()
        return row[0] if row else None
    finally:
        con.close()


def list_relations(path: Path) -> dict[tuple[str, str], str]:
    """{(schema, name): 'BASE TABLE' | 'VIEW'} of a DuckDB file (lower-cased keys)."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = con.execute(
            "select table_schema, table_name, table_type from information_schema.tables "
            "where table_catalog = current_database()"
        ).fetchall()
    finally:
        con.close()
    return {(s.lower(), n.lower()): t for s, n, t in rows}


def largest_table_rows(path: Path) -> int | None:
    """Rows of the largest table of a DuckDB file (DuckDB's per-table row estimate), or None when
    the file cannot be read."""
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH {literal(path)} AS f (READ_ONLY)")
        row = con.execute("select max(estimated_size) from duckdb_tables() where database_name = 'f'").fetchone()
        return int(row[0] or 0) if row else 0
    except duckdb.Error:
        return None
    finally:
        con.close()
