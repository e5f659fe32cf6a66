"""The grading's seed cache (`adegen.adebench.procedure.seedcache`) on real dbt + DuckDB: a table restored
from the cache is the table `dbt seed` creates (columns, types, rows, row order), the key changes
with everything that configures a seed load and with nothing else, and the cache stays out of the
way whenever dbt would not simply create the table."""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from adegen import dbt as layer
from adegen.adebench.procedure.seedcache import SeedCache, config_digest, relation_names, seed_key

CSV = "id,code,amount,seen_at,note\n1,007,1.50,2024-01-02 03:04:05,\n2,010,-2.25,2024-02-03 04:05:06,x\n3,,0,,\"a,b\"\n"


def _project(root: Path) -> Path:
    (root / "seeds").mkdir(parents=True)
    (root / "models").mkdir()
    (root / "macros").mkdir()
    (root / "tests").mkdir()
    (root / "dbt_project.yml").write_text(
        "name: sc\nprofile: sc\nconfig-version: 2\n"
        "seeds:\n  sc:\n    solution__t:\n      +column_types:\n        code: varchar\n")
    (root / "profiles.yml").write_text("sc:\n  target: dev\n  outputs:\n    dev: {type: duckdb, path: ./sc.duckdb}\n")
    (root / "seeds" / "solution__t.csv").write_text(CSV)
    (root / "models" / "m.sql").write_text("select 1 as x")
    (root / "macros" / "m.sql").write_text("{% macro helper() %}1{% endmacro %}")
    return root


def _seed(app: Path) -> None:
    r = layer.run_dbt(["seed"], backend="inprocess", cwd=app, project_env=True, env={"DBT_WRITE_JSON": "False"})
    assert r.success, r.console[-2000:]


def _columns(db: Path, table: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("select schema_name, column_name, data_type, column_index from duckdb_columns() "
                           "where table_name = ? order by column_index", [table]).fetchall()
    finally:
        con.close()


def _rows(db: Path, table: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(f"select * from main.{table}").fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    """A project whose `dbt seed` ran once; its table stored in a fresh cache."""
    root = tmp_path_factory.mktemp("seedcache")
    app = _project(root / "app")
    _seed(app)
    cache = SeedCache(root / "cache")
    key = seed_key("solution__t", (app / "seeds" / "solution__t.csv").read_bytes(), config_digest(app))
    assert cache.store(app / "sc.duckdb", key, "solution__t")
    return app, cache, key


def test_restored_table_equals_the_seeded_one(seeded, tmp_path):
    app, cache, key = seeded
    db = tmp_path / "fresh.duckdb"
    duckdb.connect(str(db)).close()
    assert relation_names(db, ["solution__t"]) == set()
    assert cache.restore(db, {"solution__t": key}) == {"solution__t"}
    assert relation_names(db, ["solution__t"]) == {"solution__t"}
    assert _columns(db, "solution__t") == _columns(app / "sc.duckdb", "solution__t")
    assert ("main", "code", "VARCHAR", 2) in _columns(db, "solution__t")  # the column_types config held
    assert _rows(db, "solution__t") == _rows(app / "sc.duckdb", "solution__t")
    # dbt seed would load into an existing table instead of creating it: the cache stays out
    assert cache.restore(db, {"solution__t": key}) == set()
    assert cache.restore(db, {"solution__x": "0" * 32}) == set()  # not cached


def test_restore_needs_the_schema_dbt_used(tmp_path):
    src = tmp_path / "src.duckdb"
    con = duckdb.connect(str(src))
    con.execute("create schema raw")
    con.execute("create table raw.solution__u as select 1 as x")
    con.close()
    cache = SeedCache(tmp_path / "cache")
    assert cache.store(src, "1" * 32, "solution__u")
    fresh = tmp_path / "fresh.duckdb"
    duckdb.connect(str(fresh)).close()
    assert cache.restore(fresh, {"solution__u": "1" * 32}) == set()  # no schema raw: dbt creates it first
    con = duckdb.connect(str(fresh))
    con.execute("create schema raw")
    con.close()
    assert cache.restore(fresh, {"solution__u": "1" * 32}) == {"solution__u"}
    con = duckdb.connect(str(fresh), read_only=True)
    assert con.execute("select * from raw.solution__u").fetchall() == [(1,)]
    con.close()


def test_only_plain_tables_are_kept(seeded, tmp_path):
    app, _, _ = seeded
    cache = SeedCache(tmp_path / "c")
    db = tmp_path / "kinds.duckdb"
    con = duckdb.connect(str(db))
    con.execute("create view v as select 1 as x")
    con.execute("create table commented (x int)")
    con.execute("comment on table commented is 'docs'")
    con.execute("create table constrained (x int not null)")
    con.execute("create table plain as select 1 as x")
    con.close()
    for name in ("v", "commented", "constrained", "missing"):
        assert not cache.store(db, name * 2 + "0" * 20, name), name
    assert cache.store(db, "p" * 32, "plain")
    assert [p.name for p in cache.dir.iterdir()] == ["p" * 32 + ".duckdb"]  # no temp file left


def test_key_follows_what_configures_a_seed_load(tmp_path):
    app = _project(tmp_path / "app")
    base = config_digest(app)
    # node SQL, other seeds, singular tests, files dbt does not read: same key
    (app / "models" / "m.sql").write_text("select 2 as x")
    (app / "seeds" / "other.csv").write_text("a\n1\n")
    (app / "tests" / "AUTO_t_equality.sql").write_text("select 1 where false")
    (app / "seeds" / "_no-op.txt").write_text("seeds: {}\n")
    assert config_digest(app) == base
    for i, (path, text) in enumerate((("dbt_project.yml", "\n# changed\n"), ("macros/m.sql", " "), ("tests/props.yml", "version: 2\n"),
                       ("tests/generic/t.sql", "{% test t(model) %}select 1{% endtest %}"),
                       ("profiles.yml", "\n"))):
        copy = tmp_path / f"c{i}"
        shutil.copytree(app, copy)
        f = copy / path
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text((f.read_text() if f.exists() else "") + text)
        assert config_digest(copy) != config_digest(app), path
    assert seed_key("s", b"a\n1\n", base) != seed_key("s", b"a\n2\n", base)
    assert seed_key("s", b"a\n1\n", base) != seed_key("t", b"a\n1\n", base)
