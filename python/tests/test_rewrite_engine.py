"""Engine API: Site, apply/revert, changed_tokens, check_parses, sites_for_model, ModelContext."""
from __future__ import annotations

import dataclasses

import pytest

from adegen.core.paths import optional_patterns_dir
from adegen.catalog.patterns import load_catalog
from adegen.rewrite import (ModelContext, apply_site, changed_tokens, check_parses, find_sites,
                            revert_site, sites_for_model)

from test_rewrite_support import check_site

# the shipped catalog plus the optional patterns (patterns/optional: --patterns-dir), whose
# operators these tests keep exercised
CAT = load_catalog([optional_patterns_dir()])
CTX = ModelContext(name="m", refs=("a",), sources=(("s", "t1"),), materialized="table", columns=("x",),
                   sibling_models=("b",), project_name="acme", source_tables=(("s", "t1"), ("s", "t2")))


def sites(pid, sql, ctx=CTX):
    return find_sites(sql, CAT.by_id[pid], ctx)


def test_site_fields_and_roundtrip():
    sql = "select 1 as x\nfrom t\nleft join u on t.id = u.id\n"
    (s,) = sites("wrong_join_type", sql)
    assert (s.pattern_id, s.index, s.line, s.before, s.after) == ("wrong_join_type", 0, 3, "left", "inner")
    assert sql[s.start:s.end] == s.before
    m = apply_site(sql, s)
    assert revert_site(m, s) == sql
    with pytest.raises(ValueError):
        apply_site(sql.replace("left", "LEFT"), s)


def test_changed_tokens():
    (s,) = sites("count_distinct_to_count", "select count(distinct id) as n from t\n")
    assert changed_tokens(s) == ({"distinct"}, set())
    (s,) = sites("wrong_ref", "select * from {{ ref('a') }}\n")
    assert changed_tokens(s) == ({"a"}, {"b"})
    assert s.placeholders == {"original_ref": "a", "wrong_ref": "b"}


def test_check_parses():
    assert check_parses("select a from t where b > 1", "duckdb") is None
    assert check_parses("select a, from where", "duckdb")
    assert check_parses("select iff(a, 1, 2) from t qualify row_number() over (order by a) = 1", "snowflake") is None


def test_sites_for_model_filters_db_types():
    sql = "select nvl(a, 'x') as k, coalesce(b, 0) as b from t\n"
    duck = sites_for_model(sql, CAT, CTX, "duckdb")
    snow = sites_for_model(sql, CAT, CTX, "snowflake")
    assert "nvl_dropped" not in duck and "nvl_dropped" in snow
    assert "coalesce_dropped" in duck and "coalesce_dropped" in snow


def test_multiline_coalesce_falls_back_to_null_default():
    sql = "select\n    coalesce(\n        amount,\n        0\n    ) as amount\nfrom t\n"
    (s,) = sites("coalesce_dropped", sql)
    assert apply_site(sql, s) == sql.replace("        0\n", "        null\n")


def test_multiline_predicate_gives_no_site():
    # dropping it touches more than two lines; negating it instead is an edit nobody makes by mistake
    sql = "select *\nfrom t\nwhere status in (\n    'a',\n    'b'\n)\n"
    assert sites("where_predicate_dropped", sql) == []


def test_materialization_insert_and_edit():
    sql = "select 1 as x\r\n"
    (s,) = sites("materialization_changed", sql, dataclasses.replace(CTX, materialized="view"))
    assert apply_site(sql, s) == "{{ config(materialized='table') }}\r\nselect 1 as x\r\n"
    assert s.placeholders["original_materialization"] == "view"
    sql = "{{ config(tags=['x']) }}\nselect 1 as x\n"
    (s,) = sites("materialization_changed", sql)
    assert apply_site(sql, s) == "{{ config(materialized='view', tags=['x']) }}\nselect 1 as x\n"
    assert sites("materialization_changed", sql, dataclasses.replace(CTX, materialized="ephemeral")) == []


def test_source_swap_prefers_same_source():
    (s,) = sites("wrong_source", "select * from {{ source('s', 't1') }}\n")
    assert s.after == "t2" and s.placeholders["wrong_source"] == "s.t2"
    ctx = dataclasses.replace(CTX, source_tables=(("s", "t1"), ("other", "t9")))
    (s,) = sites("wrong_source", "select * from {{ source('s', 't1') }}\n", ctx)
    assert apply_site("select * from {{ source('s', 't1') }}\n", s) == "select * from {{ source('other', 't9') }}\n"


def test_output_column_follows_select_star_to_cte():
    sql = "with final as (\n    select\n        id,\n        amount\n    from t\n)\n\nselect * from final\n"
    got = sites("output_column_dropped", sql)
    assert [s.placeholders.get("column") for s in got] == ["id", "amount"]
    for s in got:
        check_site(sql, s)


def test_between_variants():
    sql = "select * from t where n between 1 and 10\n"
    (s,) = sites("between_bound_shift", sql)
    assert apply_site(sql, s) == "select * from t where n between 1 and 9\n"
    # bounds that are columns are never swapped by mistake: no site
    assert sites("between_bound_shift", "select * from t join p on t.d between p.valid_from and p.valid_to\n") == []


def test_incremental_requires_materialization():
    sql = "select * from e where ts > (select max(ts) from {{ this }})\n"
    assert sites("incremental_gt_to_gte", sql) == []
    (s,) = sites("incremental_gt_to_gte", sql, dataclasses.replace(CTX, materialized="incremental"))
    assert s.after == ">="


def test_from_discovery():
    disc = {
        "project": {"name": "acme"},
        "sources": [{"unique_id": "source.acme.s.t1", "source": "s", "table": "t1", "identifier": "t1"}],
        "models": [
            {"unique_id": "model.acme.stg_a", "name": "stg_a", "package_name": "acme", "layer": "staging",
             "depends_on": [], "refs": [], "sources": [["s", "t1"]], "materialized": "view", "columns": []},
            {"unique_id": "model.acme.stg_b", "name": "stg_b", "package_name": "acme", "layer": "staging",
             "depends_on": [], "refs": [], "sources": [], "materialized": "view", "columns": []},
            {"unique_id": "model.acme.int_c", "name": "int_c", "package_name": "acme", "layer": "intermediate",
             "depends_on": ["model.acme.stg_a"], "refs": ["stg_a"], "sources": [], "materialized": "table",
             "columns": ["id"], "path": "models/int_c.sql"},
            {"unique_id": "model.acme.fct_d", "name": "fct_d", "package_name": "acme", "layer": "marts",
             "depends_on": ["model.acme.int_c"], "refs": ["int_c"], "sources": [], "materialized": "table",
             "columns": []},
        ],
    }
    ctx = ModelContext.from_discovery(disc["models"][2], disc)
    assert ctx.name == "int_c" and ctx.refs == ("stg_a",) and ctx.materialized == "table"
    assert ctx.project_name == "acme" and ctx.source_tables == (("s", "t1"),)
    assert "fct_d" not in ctx.sibling_models and "int_c" not in ctx.sibling_models  # no cycles
    assert set(ctx.sibling_models) == {"stg_a", "stg_b"}


def test_snowflake_fallbacks_keep_a_site():
    sql = "select to_date(d) as d, convert_timezone('UTC', ts) as t from x\n"
    (s,) = sites("to_date_format_changed", sql)
    assert apply_site(sql, s) == "select to_date(d, 'YYYY-DD-MM') as d, convert_timezone('UTC', ts) as t from x\n"
    (s,) = sites("convert_timezone_swapped", sql)
    assert apply_site(sql, s) == "select to_date(d) as d, convert_timezone('America/New_York', ts) as t from x\n"


def test_a_comment_explaining_what_the_edit_removes_goes_with_it():
    # a comment line just above the edit that names the removed keyword says why the code is there:
    # left standing it tells that nobody removed the code by mistake and points an agent at the fix
    sql = ("with final as (\n  --Distinct was necessary to keep one row per conversation.\n"
           "  select distinct\n    conversation_id,\n    author_id\n  from parts\n)\nselect * from final\n")
    (s,) = sites("distinct_removed", sql)
    assert apply_site(sql, s) == sql.replace("  --Distinct was necessary to keep one row per conversation.\n", "") \
        .replace("select distinct", "select")
    assert s.line == 3 and revert_site(apply_site(sql, s), s) == sql  # the code's line names the site
    plain = sql.replace("  --Distinct was necessary to keep one row per conversation.\n", "")
    (p,) = sites("distinct_removed", plain)
    assert apply_site(plain, p) == plain.replace("select distinct", "select")
    # a comment too far above speaks for other code, and stays
    far = plain.replace("with final as (\n", "-- distinct ids only\n\n\n\nwith final as (\n")
    (f,) = sites("distinct_removed", far)
    assert apply_site(far, f) == far.replace("select distinct", "select")
    # a comment on a line of code cannot go alone: no site
    joined = "select c.id, o.total\nfrom c\nleft join o on o.cid = c.id  -- left join: customers without orders stay\n"
    assert sites("wrong_join_type", joined) == []
    assert sites("wrong_join_type", joined.replace("-- left join: customers", "-- customers"))


def test_no_site_leaves_an_empty_jinja_branch():
    # dropping the only line of an {% if %} leaves an empty branch nobody commits (a reviewer's clue)
    sql = "select *\nfrom t\nwhere amount > 0\n{% if var('only_paid', true) %}\n  and status = 'paid'\n{% endif %}\n"
    dropped = [s.before for s in sites("where_predicate_dropped", sql)]
    assert "  and status = 'paid'\n" not in dropped
    # with a second line in the branch, dropping one of them is still offered
    two = sql.replace("  and status", "  and region = 'eu'\n  and status")
    assert "  and status = 'paid'\n" in [s.before for s in sites("where_predicate_dropped", two)]
