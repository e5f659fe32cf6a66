"""Probe queries keep a model's lateral column aliases bindable (DuckDB and Snowflake let a select
item read an earlier item's alias: `mrr > 0 as is_active, case when is_active ...`). A probe replaces
the select list, so before this the alias was gone and the precondition was "not measurable"
(`Referenced column "is_active" not found`). Run on real DuckDB."""
import duckdb
import pytest
import sqlglot
from sqlglot import exp

from adegen.realism.probe import groups_query, rows_query


@pytest.fixture()
def con():
    c = duckdb.connect()
    c.execute("create table t as select * from (values (1, 5), (2, 0), (3, null), (4, 7)) v(id, mrr)")
    yield c
    c.close()


def test_a_row_measure_reading_a_lateral_alias_binds_and_keeps_its_name(con):
    sel = sqlglot.parse_one("select id, mrr > 0 as is_active, case when is_active then 'a' end as k from t where id > 1",
                            read="duckdb")
    when = sel.expressions[2].this.args["ifs"][0].this
    q = rows_query(sel, [exp.alias_(when.copy(), "c0")])
    rel = con.execute(q)
    assert [d[0] for d in rel.description] == ["c0"]
    assert sorted(rel.fetchall(), key=str) == sorted([(False,), (None,), (True,)], key=str)


def test_a_per_group_measure_reading_a_lateral_alias_binds(con):
    sel = sqlglot.parse_one("select id % 2 as g, sum(mrr) as s, s > 5 as big from t group by 1", read="duckdb")
    q = groups_query(sel, [sel.expressions[2].this.copy()], ["count(*) filter (where g0)", "count(*)"])
    assert con.execute(q).fetchone() == (1, 2)  # odd ids: 5 (+NULL); even ids: 0 + 7


def test_a_probe_without_lateral_aliases_is_unchanged(con):
    sel = sqlglot.parse_one("select id, mrr as amount from t where mrr is not null", read="duckdb")
    q = rows_query(sel, [exp.alias_(exp.column("mrr"), "v")])
    assert "adegen_lateral" not in q and con.execute(f"select count(*) from ({q})").fetchone() == (3,)
