"""Seed tables loaded by `dbt seed` once, reused by later trials whose seed loads are the same.

The test phase of every trial loads the task's solution seeds (`dbt seed`). A seed's table is a
function of its CSV bytes and of what configures its load (dbt_project.yml, profiles.yml, every
YAML properties file, every macro - a project may override the seed materialization or
`generate_schema_name` - and the installed packages), not of the rest of the database: dbt seed
creates the table afresh when no relation of that name exists. Many tasks of one run grade the same
tables, so the same seed (same bytes, same configuration) is loaded again and again.

`SeedCache` keeps each table that a real `dbt seed` loaded, under a key hashing exactly those
inputs (`seed_key`), in its own DuckDB file (written to a temp name, then renamed: readers never see
half a file; several worker processes share the directory). A later trial whose seed has the same
key gets the table copied in (`CREATE TABLE ... AS SELECT *`: same columns, types and rows, in
order) instead of a dbt call - only when its database holds no relation of that name yet and the
schema dbt put it in exists, exactly the case in which dbt seed would create it. Only plain tables
are kept (no comments, constraints or column defaults, which a copy would not carry); anything else
simply loads through dbt every time.

What the key leaves out cannot change a seed load: other CSV files (other seeds), the SQL of
models, tests, snapshots and analyses (nodes, not seed configuration), and files dbt does not read
(`.txt`, `.md`, database files, target/, logs/).
"""
from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

import duckdb

from adegen.dbt.scratch import is_skipped
from adegen.adebench.procedure import yamlc
from adegen.sql.quote import ident, literal

CONFIG_SUFFIXES = (".yml", ".yaml", ".sql")
# root-project paths whose .sql files define nodes (never seed configuration); generic tests
# (<test-path>/generic) are parsed like macros and stay in the key
NODE_PATH_KEYS = (("model-paths", ["models"]), ("snapshot-paths", ["snapshots"]),
                  ("analysis-paths", ["analyses"]), ("test-paths", ["tests"]))
# dbt's build output holds no configuration; installed packages (dbt_packages/) do, so the copy policy's
# project-top list is not used here, only its anywhere list (version control, tool caches)
BUILD_OUTPUT_DIRS = frozenset({"target", "logs"})
_VERSION = "adegen-seed-cache-1"


@functools.lru_cache(maxsize=1)
def _versions() -> str:
    import importlib.metadata as md

    out = [_VERSION, duckdb.__version__]
    for dist in ("dbt-core", "dbt-duckdb"):
        try:
            out.append(f"{dist}={md.version(dist)}")
        except md.PackageNotFoundError:
            out.append(f"{dist}=none")
    return "|".join(out)


def _node_sql_dirs(app: Path) -> list[tuple[Path, bool]]:
    """(directory, is a test path) of the root project's node paths."""
    try:
        proj = yamlc.safe_load_file(app / "dbt_project.yml") or {}
    except (OSError, ValueError):
        proj = {}
    return [((app / str(d)).resolve(), key == "test-paths")
            for key, default in NODE_PATH_KEYS for d in (proj.get(key) or default)]


def _is_node_sql(path: Path, node_dirs: list[tuple[Path, bool]]) -> bool:
    if path.suffix.lower() != ".sql":
        return False
    real = path.resolve()
    for d, is_test in node_dirs:
        if d in real.parents:
            return not (is_test and real.relative_to(d).parts[0] == "generic")
    return False


def config_files(app: Path) -> list[Path]:
    """The files of `app` that configure a seed load (see the module docstring), sorted; installed
    packages (dbt_packages/, possibly symlinks) included."""
    app = Path(app)
    node_dirs = _node_sql_dirs(app)
    seen_dirs: set[str] = set()
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(app, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen_dirs:  # a symlink loop or a package linked twice
            dirnames[:] = []
            continue
        seen_dirs.add(real)
        dirnames[:] = sorted(d for d in dirnames if d not in BUILD_OUTPUT_DIRS and not is_skipped(d, False))
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if p.suffix.lower() in CONFIG_SUFFIXES and not _is_node_sql(p, node_dirs):
                found.append(p)
    return found


def config_digest(app: Path) -> str:
    """sha256 over (relative path, bytes) of every `config_files(app)`, and dbt/DuckDB versions."""
    h = hashlib.sha256(_versions().encode())
    for p in config_files(app):
        h.update(b"\0" + os.path.relpath(p, app).encode() + b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()


def seed_key(name: str, csv_bytes: bytes, digest: str) -> str:
    h = hashlib.sha256(b"seed\0" + name.encode() + b"\0" + digest.encode() + b"\0")
    h.update(csv_bytes)
    return h.hexdigest()[:32]


def relation_names(db_file: Path, names: list[str]) -> set[str]:
    """Which of `names` name a relation (any schema) of the DuckDB file (no file: none)."""
    if not names or not Path(db_file).is_file():
        return set()
    con = duckdb.connect(str(db_file), read_only=True)
    try:
        found = {r[0].lower() for r in con.execute(
            "select table_name from information_schema.tables where table_catalog = current_database()").fetchall()}
    finally:
        con.close()
    return {n for n in names if n.lower() in found}


class SeedCache:
    """A directory of `<key>.duckdb` files, each holding one seeded table (`main.seed`) and where
    dbt put it (`main.adegen_meta`: schema, name)."""

    def __init__(self, directory: Path):
        self.dir = Path(directory)

    def path(self, key: str) -> Path:
        return self.dir / f"{key}.duckdb"

    def has(self, key: str) -> bool:
        return self.path(key).is_file()

    def restore(self, db_file: Path, keys: dict[str, str]) -> set[str]:
        """Copy the cached tables of `keys` ({seed name: key}) into `db_file` as dbt seed would
        have created them (one connection); the names restored. A seed is left alone (for dbt to
        load) when it is not cached, its schema is missing or a relation of its name exists."""
        cached = {name: self.path(key) for name, key in keys.items() if self.path(key).is_file()}
        if not cached:
            return set()
        done: set[str] = set()
        con = duckdb.connect(str(db_file))
        try:
            for name, src in sorted(cached.items()):
                con.execute(f"ATTACH {literal(src)} AS adegen_seed (READ_ONLY)")
                try:
                    if _copy_in(con):
                        done.add(name)
                finally:
                    con.execute("DETACH adegen_seed")
        finally:
            con.close()
        return done

    def store(self, db_file: Path, key: str, name: str) -> bool:
        """Keep the table dbt seed just loaded for `name` in `db_file`; False when it is not one
        plain table (then it is not cached)."""
        if self.has(key):
            return True
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.dir / f".{key}.{os.getpid()}.tmp"
        con = duckdb.connect(str(tmp))
        try:
            con.execute(f"ATTACH {literal(db_file)} AS adegen_src (READ_ONLY)")
            kept = _copy_plain_table(con, name)
            con.execute("DETACH adegen_src")
        except duckdb.Error:
            kept = False
        finally:
            con.close()
        if kept:
            os.replace(tmp, self.path(key))
        for p in (tmp, Path(str(tmp) + ".wal")):
            p.unlink(missing_ok=True)
        return kept


def _copy_in(con) -> bool:
    """CREATE the attached cache entry's table where dbt put it, when its schema exists and no
    relation of its name does."""
    schema, name = con.execute("select schema_name, table_name from adegen_seed.main.adegen_meta").fetchone()
    schemas, relations = con.execute(
        "select count(*) filter (where lower(schema_name) = lower(?)), "
        "(select count(*) from information_schema.tables where table_catalog = current_database() "
        " and lower(table_schema) = lower(?) and lower(table_name) = lower(?)) "
        "from duckdb_schemas() where database_name = current_database()", [schema, schema, name]).fetchone()
    if schemas != 1 or relations != 0:
        return False
    con.execute(f"CREATE TABLE {ident(schema)}.{ident(name)} AS SELECT * FROM adegen_seed.main.seed")
    return True


def _copy_plain_table(con, name: str) -> bool:
    """Copy adegen_src's only relation called `name` into main.seed (+ main.adegen_meta) when it is
    a plain table: no view of that name, no comment, constraint or column default."""
    rows = con.execute(
        "select schema_name, table_name, comment from duckdb_tables() "
        "where database_name = 'adegen_src' and lower(table_name) = lower(?)", [name]).fetchall()
    views = con.execute("select count(*) from duckdb_views() where database_name = 'adegen_src' "
                        "and lower(view_name) = lower(?)", [name]).fetchone()[0]
    if len(rows) != 1 or views or rows[0][2]:
        return False
    schema, table = rows[0][0], rows[0][1]
    extras = con.execute(
        "select (select count(*) from duckdb_columns() where database_name = 'adegen_src' and schema_name = ? "
        "  and table_name = ? and (comment is not null or column_default is not null)) "
        "+ (select count(*) from duckdb_constraints() where database_name = 'adegen_src' and schema_name = ? "
        "  and table_name = ?)", [schema, table, schema, table]).fetchone()[0]
    if extras:
        return False
    con.execute(f"CREATE TABLE main.seed AS SELECT * FROM adegen_src.{ident(schema)}.{ident(table)}")
    con.execute("CREATE TABLE main.adegen_meta AS SELECT ? AS schema_name, ? AS table_name", [schema, table])
    return True
