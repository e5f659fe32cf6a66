"""A DuckDB file of any storage version copied with the same objects (adebench.procedure.dbcopy,
issue 53): typed and untyped macros, a table macro, views that call them, a sequence that was
used, custom types, an index, a second schema. The copy reads back object by object; a typed
macro raises the storage version instead of losing its parameter types; when COPY FROM DATABASE
fails the objects are recreated from their definitions."""
from __future__ import annotations

from pathlib import Path
from unittest import mock

import duckdb
import pytest

from adegen.adebench.procedure import dbcopy
from adegen.core.errors import AdegenError

OBJECTS = [
    "create macro plain(a) as a + 1",
    "create macro rows_upto(n) as table select * from range(n) r(i)",
    "create sequence seq1 start 5", "select nextval('seq1')",
    "create type mood as enum ('sad', 'ok', 'happy')",
    "create type pt as struct(x int, y int)",
    "create schema extra",
    "create table shapes (id int default nextval('seq1'), r double, m mood, p pt)",
    "insert into shapes (r, m, p) values (1.5, 'ok', {'x': 1, 'y': 2}), (2.5, 'happy', {'x': 3, 'y': 4})",
    "create index ix_r on shapes(r)",
    # values a Parquet round trip changes, and a generated column (not inserted: computed again)
    "create table kinds (h hugeint, i interval, m map(int, varchar), u union(num int, s varchar), tz timetz, "
    "d decimal(38, 10), b blob, bt bit, twice int as (cast(h % 1000 as int) * 2))",
    "insert into kinds (h, i, m, u, tz, d, b, bt) values (170141183460469231731687303715884105727, "
    "interval '14 months 3 days 2 hours', map([1, 2], ['a', 'b']), union_value(num := 2), timetz '10:00:00+02', "
    "12.345, 'x'::blob, '0101'::bit)",
    "create table extra.t as select i from range(10) r(i)",
    "create view extra.v as select * from rows_upto(3)",
    # DuckDB renders this view's SQL with other parentheses on a copy: compared by its columns
    "create view joined as select trim(a.m::varchar) as y from shapes as a left join shapes as b using (id) "
    "full join extra.t as c on a.id = c.i",
]
TYPED = [
    "create or replace macro area_of_circle(radius FLOAT) as pi() * radius * radius",
    "create macro extra.add_months(d DATE, n INTEGER) as CAST((d + to_months(n)) AS date)",
    "create view areas as select id, area_of_circle(r::float) as a, plain(id) as p from shop.main.shapes",
]
SERIALIZATION = duckdb.SerializationException("Failed to deserialize: field id mismatch, expected: 100, got: 102")


def make(path: Path, stmts: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path))  # this DuckDB's default storage version (v2.0.0 on DuckDB 2)
    try:
        for s in stmts:
            con.execute(s)
    finally:
        con.close()
    return path


def objects(path: Path) -> dict:
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH '{path}' AS f (READ_ONLY)")
        return dbcopy.catalog(con, "f")
    finally:
        con.close()


def tag(path: Path) -> str:
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH '{path}' AS f (READ_ONLY)")
        return dbcopy.storage_tag(con, "f")
    finally:
        con.close()


def use(path: Path) -> tuple:
    con = duckdb.connect(str(path))
    try:
        return (con.execute("select * from areas order by id").fetchall(),
                con.execute("select extra.add_months(date '2020-01-31', 1)").fetchone()[0],
                con.execute("select count(*) from extra.v").fetchone()[0],
                con.execute("select nextval('seq1')").fetchone()[0],
                con.execute("select m, p from shapes order by id").fetchall())
    finally:
        con.close()


@pytest.fixture(scope="module")
def typed_db(tmp_path_factory) -> Path:
    return make(tmp_path_factory.mktemp("typed") / "src" / "shop.duckdb", OBJECTS + TYPED)


def test_typed_macros_raise_the_storage_version(typed_db, tmp_path):
    out = dbcopy.copy_database(typed_db, tmp_path / "shop.duckdb")  # asked: v1.0.0
    assert out.version == dbcopy.TYPED_MACROS and out.method == "copy"
    assert "typed macros extra.add_months(d DATE, n INTEGER), main.area_of_circle(radius FLOAT)" in out.notes[0]
    assert tag(out.path).startswith("v1.4.0")
    assert objects(out.path) == objects(typed_db)
    assert use(out.path) == use(typed_db)
    if tag(typed_db) != tag(out.path):
        assert out.converted and out.describe().startswith(f"converted from storage {tag(typed_db)} to v1.4.0")


def test_copy_from_database_failing_recreates_every_object(typed_db, tmp_path):
    """The failure seen on a real project (COPY FROM DATABASE could not copy a file holding a typed
    macro): the objects are recreated from their definitions, in dependency order."""
    with mock.patch.object(dbcopy, "_copy_statement", side_effect=SERIALIZATION):
        out = dbcopy.copy_database(typed_db, tmp_path / "shop.duckdb")
    assert out.method == "definitions" and "field id mismatch" in out.notes[-1]
    assert "recreating each object from its definition" in out.describe()
    assert objects(out.path) == objects(typed_db)
    assert use(out.path) == use(typed_db)
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH '{typed_db}' AS a (READ_ONLY)")
        con.execute(f"ATTACH '{out.path}' AS b (READ_ONLY)")
        assert dbcopy.table_hashes(con, "a") == dbcopy.table_hashes(con, "b")  # every row, every value
        assert con.execute("select twice from b.kinds").fetchone()[0] == 1454
    finally:
        con.close()


def test_a_copy_that_reads_back_different_is_redone(typed_db, tmp_path):
    """Without the version raise, COPY FROM DATABASE writes the typed macros untyped into v1.0.0:
    the check finds it, and recreating them cannot hold them in v1.0.0 either: an error naming them."""
    with mock.patch.object(dbcopy, "needed_storage", return_value=None):
        with pytest.raises(AdegenError, match="area_of_circle"):
            dbcopy.copy_database(typed_db, tmp_path / "shop.duckdb")


def test_untyped_file_stays_readable_by_ade_bench(tmp_path):
    src = make(tmp_path / "src" / "shop.duckdb", OBJECTS)
    out = dbcopy.copy_database(src, tmp_path / "shop.duckdb", drop=[("extra", "v")])
    assert out.version == "v1.0.0" and not out.notes and dbcopy.harness_reads(tag(out.path))
    want = objects(src)
    want["view"] = {v for v in want["view"] if v != ("extra", "v")}  # dropped, as model relations are
    want["column"] = {c for c in want["column"] if c[:2] != ("extra", "v")}
    assert objects(out.path) == want


def test_empty_database(tmp_path):
    out = dbcopy.copy_database(None, tmp_path / "e.duckdb", storage_version="v1.2.0")
    assert out.version == "v1.2.0" and not out.converted and tag(out.path).startswith("v1.2.0")
