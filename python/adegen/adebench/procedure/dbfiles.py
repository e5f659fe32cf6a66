"""DuckDB file helpers: storage-version-pinned copies, relation listing, storage checks."""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb

from adegen.sql.quote import ident, literal

# ade-bench's image pins duckdb 1.3.0; files tagged with a newer storage version cannot be read
# there. v1.0.0 is readable by every duckdb >= 1.0.
HARNESS_STORAGE_VERSION = "v1.0.0"
HARNESS_DUCKDB = "1.3.0"  # a DuckDB reads the storage versions up to its own release


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


def write_versioned_copy(src: Path | None, dst: Path, *, drop: list[tuple[str, str]] = (),
                         storage_version: str = HARNESS_STORAGE_VERSION) -> Path:
    """Write `dst` as a new DuckDB file with STORAGE_VERSION `storage_version` holding the
    contents of `src` (None: an empty database), minus the relations in `drop` ((schema, name))."""
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    for p in (dst, Path(str(dst) + ".wal")):
        if p.exists():
            p.unlink()
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH {literal(dst)} AS adegen_out (STORAGE_VERSION {literal(storage_version)})")
        if src is not None:
            tmp = dst.with_name(dst.stem + ".adegen-src.duckdb")
            copy_file(Path(src), tmp)
            try:
                # attach the copy under the database's catalog name (the file stem) so view
                # definitions, which name that catalog, keep resolving
                src_alias = ident(dst.stem)
                con.execute(f"ATTACH {literal(tmp)} AS {src_alias}")
                for schema, name in drop:
                    kind = con.execute(
                        "select table_type from information_schema.tables where table_catalog="
                        "? and lower(table_schema)=lower(?) and lower(table_name)=lower(?)",
                        [dst.stem, schema, name]).fetchone()
                    if kind:
                        what = "VIEW" if kind[0] == "VIEW" else "TABLE"
                        con.execute(f"DROP {what} IF EXISTS {src_alias}.{ident(schema)}.{ident(name)} CASCADE")
                con.execute(f"COPY FROM DATABASE {src_alias} TO adegen_out")
                con.execute(f"DETACH {src_alias}")
            finally:
                for p in (tmp, Path(str(tmp) + ".wal")):
                    if p.exists():
                        p.unlink()
        con.execute("DETACH adegen_out")
    finally:
        con.close()
    return dst


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
