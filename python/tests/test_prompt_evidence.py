"""adegen.facts.evidence on real DuckDB relations: the facts a prompt is written from (rows lost,
gained and duplicated by key, values scaled, blanked, shifted to another grain, swapped, totals of
tables without a key, compound keys with the entity's name)."""
from __future__ import annotations

import duckdb
import pytest

from adegen.validate.rules import oracle
from adegen.facts.evidence import configured_kind, find_key_columns, pick_tables, relation_kind, table_facts


def facts(con, base_sql: str, mut_sql: str, table="t"):
    con.execute(f"create or replace table b_{table} as {base_sql}")
    con.execute(f"create or replace table m_{table} as {mut_sql}")
    d = oracle.compare_relations(con, table, f"b_{table}", f"m_{table}")
    assert d.visible
    return table_facts(con, d, f"b_{table}", f"m_{table}")


@pytest.fixture()
def con():
    c = duckdb.connect()
    yield c
    c.close()


ACCOUNTS = ("select * from (values ('A1', 'Helio Systems', 4.5, date '2024-05-17', 'b2b'), "
            "('A2', 'Falcon Works', 3.0, date '2024-06-03', 'b2c'), ('A3', 'Summit Foods', 5.25, "
            "date '2024-06-20', 'b2b')) t(account_id, account_name, csat, signed_on, segment)")


def col(f, name):
    return next(c for c in f["columns"] if c["name"] == name)


def test_scaled_values_with_key_label_and_sample(con):
    f = facts(con, ACCOUNTS, ACCOUNTS.replace("4.5,", "450.0,").replace("3.0,", "300.0,").replace("5.25,", "525.0,"))
    assert f["key"] == ["account_id"] and f["label"] == "account_name"
    c = col(f, "csat")
    assert c["changed"] == 3 and c["higher"] == 3 and c["ratio"]["median"] == pytest.approx(100)
    assert c["sample"][0] == {"key": ["A1"], "label": "Helio Systems", "observed": "450.0", "expected": "4.50"}
    assert c["total"] == {"intact": pytest.approx(12.75), "broken": pytest.approx(1275)}


def test_same_number_written_differently_is_not_a_change(con):
    base = "select * from (values (1, 2.0, 5.0), (2, 3.0, 6.0)) t(id, a, b)"
    f = facts(con, base, "select id, cast(a as integer) as a, b * 2 as b from (" + base + ")")
    assert [c["name"] for c in f["columns"]] == ["b"]
    # the same numbers in another type alone are no change at all: ade-bench's typed equality test
    # passes on them (issue 30), so the oracle does not see the table and nothing is measured
    con.execute("create or replace table b_w as " + base)
    con.execute("create or replace table m_w as select id, cast(a as integer) as a, b from (" + base + ")")
    d = oracle.compare_relations(con, "w", "b_w", "m_w")
    assert not d.visible and d.type_only and d.retyped == {"a": ("DECIMAL(2,1)", "INTEGER")}


def test_rows_lost_and_gained_by_key(con):
    f = facts(con, ACCOUNTS, ACCOUNTS.replace("('A2', 'Falcon Works', 3.0, date '2024-06-03', 'b2c'), ", "")
              .replace("('A3',", "('A9',"))
    assert f["missing"]["count"] == 2 and f["missing"]["sample"][0] == {"key": ["A2"], "label": "Falcon Works"}
    assert f["extra"] == {"count": 1, "sample": [{"key": ["A9"], "label": "Summit Foods"}]}


def test_duplicates_per_key(con):
    changed = ACCOUNTS.replace("3.0,", "3.5,")
    f = facts(con, ACCOUNTS, f"select * from ({changed}) union all select * from ({changed}) where account_id = 'A1'"
              f" union all select * from ({changed}) where account_id = 'A1'")
    assert f["duplicates"] == {"keys": 1, "max_copies": 3,
                               "sample": [{"key": ["A1"], "label": "Helio Systems", "copies": 3}]}


def test_blanked_values_prefer_blank_samples(con):
    f = facts(con, ACCOUNTS, ACCOUNTS.replace("4.5,", "null,").replace("3.0,", "null,"))
    c = col(f, "csat")
    assert c["now_null"] == 2 and c["sample"][0]["observed"] is None and c["sample"][0]["expected"] == "4.50"


def test_dates_moved_to_another_grain(con):
    f = facts(con, ACCOUNTS, ACCOUNTS.replace("date '2024-05-17'", "date '2024-05-01'")
              .replace("date '2024-06-03'", "date '2024-06-01'").replace("date '2024-06-20'", "date '2024-06-01'"))
    c = col(f, "signed_on")
    assert c["grain"] == {"intact": "day", "broken": "month"}
    assert c["shift_seconds"]["min"] < 0


def test_categories_swapped(con):
    f = facts(con, ACCOUNTS, ACCOUNTS.replace("'b2b')", "'x')").replace("'b2c')", "'b2b')").replace("'x')", "'b2c')"))
    c = col(f, "segment")
    assert sorted(c["pairs"]) == [["b2b", "b2c", 2], ["b2c", "b2b", 1]]


def test_labels_the_intact_column_never_holds_are_measured(con):
    # a mapping lost: raw codes ("B2B-Direct") where the labels were; swapped labels are not new
    f = facts(con, ACCOUNTS, ACCOUNTS.replace("'b2b')", "'B2B-Direct')"))
    c = col(f, "segment")
    assert c["only_broken"] == ["B2B-Direct"] and c["new_rows"] == 2
    assert c["labels_intact"] == ["b2b", "b2c"]  # every label the column held, most rows first
    swapped = col(facts(con, ACCOUNTS, ACCOUNTS.replace("'b2b')", "'x')").replace("'b2c')", "'b2b')")
                        .replace("'x')", "'b2c')"), table="s"), "segment")
    assert "only_broken" not in swapped and "new_rows" not in swapped


def test_compound_key_with_the_entity_name(con):
    base = ("select * from (values ('A1', 'Helio', date '2024-01-01', 10.0), ('A1', 'Helio', date '2024-02-01', 12.0),"
            " ('A2', 'Falcon', date '2024-01-01', 7.0)) t(account_id, account_name, invoice_month, revenue)")
    f = facts(con, base, base.replace("12.0", "1.0"))
    assert f["key"] == ["account_id", "invoice_month"] and f["label"] == "account_name"
    assert col(f, "revenue")["sample"][0]["key"] == ["A1", "2024-02-01"]


def test_no_key_gives_value_sets_and_totals(con):
    base = "select * from (values (1.0), (1.0), (2.5)) t(amount)"
    f = facts(con, base, "select amount * 10 as amount from (" + base + ")")
    assert f["key"] == []
    c = col(f, "amount")
    assert c["only_intact"] == ["1.0", "2.5"] and c["total"] == {"intact": 4.5, "broken": 45.0}


def test_column_gone_and_unreadable(con):
    f = facts(con, ACCOUNTS, f"select account_id, account_name, csat, signed_on from ({ACCOUNTS})")
    assert f["columns_missing"] == ["segment"] and "columns" not in f
    con.execute(f"create table b_gone as {ACCOUNTS}")
    d = oracle.compare_relations(con, "gone", "b_gone", "m_gone")
    assert "error" in table_facts(con, d, "b_gone", "m_gone")


def test_key_detection_prefers_ids(con):
    con.execute("create table k as select * from (values (1, 'x', 'a'), (2, 'x', 'b')) t(n, kind, order_key)")
    types = {r[0]: r[1] for r in con.execute("describe k").fetchall()}
    assert find_key_columns(con, "k", types) == ["order_key"]


def test_pick_tables_mutated_compared_nearest_and_farthest():
    visible = dict.fromkeys("abcdef")
    dist = {"a": 0, "b": 1, "c": 1, "d": 2, "e": 3, "f": 4}
    assert pick_tables(visible, dist, "a", "f") == ["a", "f", "b"] + ["c"]
    assert pick_tables({"d": 1, "e": 1}, dist, "a", "e") == ["e", "d"]


def test_relation_kinds(con, tmp_path):
    db = tmp_path / "w.duckdb"
    c = duckdb.connect(str(db))
    c.execute("create table t1 as select 1 as x; create view v1 as select * from t1")
    c.close()
    con.execute(f"attach '{db}' as w (read_only)")
    assert relation_kind(con, "w", "main", "v1") == "view" and relation_kind(con, "w", "main", "t1") == "table"
    assert relation_kind(con, "w", "main", "nope") is None
    assert configured_kind("incremental") == "table" and configured_kind("ephemeral") is None


def test_a_finding_with_a_direction_counts_only_the_rows_that_go_that_way():
    """SUM -> COUNT on jaffle_shop's orders raised gift_card_amount for 87 of 99 changed orders and
    lowered it for 12: the finding says "higher" for the 87 (its example one of them), never for
    all 99, which a blind reviewer marked untrue. Blanks count the rows that went blank."""
    from adegen.facts.measured import ColumnFacts, Sample, TableFacts
    from adegen.prompts.findings import classify

    down = Sample(key=(3,), observed=1, expected=23.0, compared=True)
    up = Sample(key=(4,), observed=1, expected=0.0, compared=True)
    col = ColumnFacts("gift_card_amount", "number", changed=99, higher=87, lower=12, sample=(down, up))
    f = next(x for x in classify(TableFacts("orders", rows_intact=99, rows_broken=99, rows_differing=99,
                                            key=("order_id",), columns=(col,))) if x.column)
    assert (f.kind, f.count, f.samples) == ("values_high", 87, [up])
    col = ColumnFacts("line_count", "number", changed=10, now_null=9, higher=1, sample=(up,))
    f = next(x for x in classify(TableFacts("fct", rows_intact=10, rows_broken=10, rows_differing=10,
                                            key=("id",), columns=(col,))) if x.column)
    assert (f.kind, f.count) == ("values_blank", 9)


def test_a_retyped_column_beside_a_real_change_is_no_symptom(con):
    """Issue 30: next to a value that really changed, a column whose numbers only changed type
    (2.0 -> 2) is not reported, keyed or not (ade-bench's typed equality test sees no change there)."""
    base = "select * from (values (1, 2.0, 5.0), (2, 3.0, 6.0)) t(id, a, b)"
    keyed = facts(con, base, "select id, cast(a as integer) as a, case when id = 1 then 7.0 else b end as b from ("
                  + base + ")")
    assert [c["name"] for c in keyed["columns"]] == ["b"]
    nokey = "select * from (values (2.0, 5.0), (2.0, 5.0), (3.0, 6.0)) t(a, b)"  # a duplicate row: no key
    unkeyed = facts(con, nokey, "select cast(a as integer) as a, case when a = 3.0 then 7.0 else b end as b from ("
                    + nokey + ")", table="u")
    assert unkeyed.get("key") == [] and [c["name"] for c in unkeyed["columns"]] == ["b"]


def test_time_lost_only_when_the_dates_are_the_same_days():
    """A timestamp column turned into dates at midnight is "the time got lost" only when each value
    kept its day (moved earlier by less than a day); a swap to another column of midnight dates
    (mntn: start_time -> flight_start_time) moved the days too, and is reported as changed dates."""
    from adegen.facts.measured import ColumnFacts, Shift, Sides, TableFacts
    from adegen.prompts.findings import classify

    def kind(shift):
        col = ColumnFacts("campaign_created_at", "timestamp", changed=4, grain=Sides("time", "day"),
                          shift_seconds=shift)
        return next(x for x in classify(TableFacts("c", rows_intact=4, rows_broken=4, rows_differing=4,
                                                   key=("id",), columns=(col,))) if x.column).kind

    assert kind(Shift(-40000.0, -86000.0, -3600.0)) == "time_lost"
    assert kind(Shift(-3 * 86400.0, -9 * 86400.0, 5 * 86400.0)) != "time_lost"
