"""adegen.adebench.procedure pieces that need no dbt run: parser, AUTO test texts, path mapping, script
planning, task.yaml edits, seed CSV format, DuckDB storage version."""
from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import duckdb
import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adegen.adebench.procedure import (MAX_TEST_NAME, SolutionSeed, TestNameTooLong, check_table,  # noqa: E402
                            equality_macro, export_solution_seeds, generate_equality_test,
                            generate_existence_test, generate_solution_tests, map_paths,
                            no_op_text, parse_dbt_output, plan_script, storage_version,
                            write_versioned_copy)
from adegen.adebench.procedure.emulate import resource_text  # noqa: E402
from adegen.tasks.task_yaml import update_task_yaml  # noqa: E402

# Recorded from `dbt --no-use-colors test --select test_type:singular` (dbt-core 1.11.16) after a
# run-dbt-test.sh preamble. The 73-character name gets no dot padding, so ade-bench's regex
# misses it and the run can never resolve.
RECORDED = """\
22:10:58  1 of 1 OK created sql table model main.customer_revenue ........................ [OK in 0.05s]
Filtering for db_type='duckdb', project_type='dbt'
Including: AUTO_a_table_with_a_much_much_longer_name_than_allowed_by_adegen_equality.sql
Including: AUTO_a_table_with_a_much_much_longer_name_than_allowed_xx_equality.sql
Including: AUTO_a_table_with_a_rather_long_name_here_equality.sql
Including: AUTO_customer_revenue_equality.sql
[ade-bench] expected_test_count=4
22:11:01  1 of 4 START test AUTO_a_table_with_a_much_much_longer_name_than_allowed_by_adegen_equality  [RUN]
22:11:01  1 of 4 PASS AUTO_a_table_with_a_much_much_longer_name_than_allowed_by_adegen_equality  [PASS in 0.10s]
22:11:01  2 of 4 START test AUTO_a_table_with_a_much_much_longer_name_than_allowed_xx_equality  [RUN]
22:11:01  2 of 4 PASS AUTO_a_table_with_a_much_much_longer_name_than_allowed_xx_equality . [PASS in 0.04s]
22:11:01  3 of 4 START test AUTO_a_table_with_a_rather_long_name_here_equality ........... [RUN]
22:11:01  3 of 4 PASS AUTO_a_table_with_a_rather_long_name_here_equality ................. [PASS in 0.03s]
22:11:01  4 of 4 START test AUTO_customer_revenue_equality ............................... [RUN]
22:11:01  4 of 4 PASS AUTO_customer_revenue_equality ..................................... [PASS in 0.03s]
22:11:01  Done. PASS=4 WARN=0 ERROR=0 SKIP=0 NO-OP=0 TOTAL=4
"""


def test_parser_misses_long_name_and_refuses_to_resolve():
    res = parse_dbt_output(RECORDED)
    assert res.expected_test_count == 4
    assert "AUTO_a_table_with_a_much_much_longer_name_than_allowed_by_adegen_equality" not in res.tests
    assert len(res.tests) == 3 and set(res.tests.values()) == {"passed"}
    assert not res.resolved and "only 3 test results" in res.reason
    assert res.summary == {"pass": 4, "warn": 0, "error": 0, "skip": 0, "total": 4}


def test_parser_rules_fail_error_compile_and_ansi():
    ok = RECORDED.replace("expected_test_count=4", "expected_test_count=3")
    assert parse_dbt_output(ok).resolved
    failing = ok.replace("3 of 4 PASS AUTO_a_table_with_a_rather_long_name_here_equality .",
                         "3 of 4 FAIL 1 AUTO_a_table_with_a_rather_long_name_here_equality .")
    failing = failing.replace("[PASS in 0.03s]\n22:11:01  4 of 4 START", "[FAIL 1 in 0.03s]\n22:11:01  4 of 4 START", 1)
    res = parse_dbt_output(failing)
    assert res.tests["AUTO_a_table_with_a_rather_long_name_here_equality"] == "failed" and not res.resolved
    err = "\x1b[0m12:00:00  1 of 1 ERROR t_x ........... [\x1b[31mERROR\x1b[0m in 0.1s]\n"
    assert parse_dbt_output(err).tests == {"t_x": "failed"}
    comp = "[ade-bench] expected_test_count=2\nCompilation Error in test AUTO_x_existence\n"
    res = parse_dbt_output(comp)
    assert res.compile_failed and not res.resolved and res.reason == "dbt compilation error"
    assert not parse_dbt_output("nothing here").resolved


def test_generated_test_texts_match_upstream_shape(tmp_path):
    eq = generate_equality_test("orders", SolutionSeed("orders", exclude_columns=["a", "b"],
                                                       alternates=["orders_v2"]))
    assert eq.startswith("-- Define columns to compare\n{% set table_name = 'orders' %}\n")
    assert "{% set answer_keys = ['solution__orders', 'solution__orders_v2'] %}" in eq
    assert "{% set cols_to_exclude = [\n    'a',\n    'b'\n] %}" in eq
    assert "{% set cols_to_include = [\n    \n] %}" in eq
    assert "-- depends_on: {{ ref(table_name) }}\n-- depends_on: {{ ref('solution__orders') }}\n" in eq
    assert eq.endswith("{{ ade_bench_equality_test(table_name=table_name, answer_keys=answer_keys, "
                       "cols_to_exclude=cols_to_exclude) }}\n")
    ex = generate_existence_test("orders")
    assert ex.startswith("{% set table_name = 'orders' %}\n\n\n\n---")
    macro = equality_macro()
    assert macro.startswith("{% macro ade_bench_equality_test(table_name, answer_keys, cols_to_exclude=[]) %}")
    # d739fc3's macro compares the columns as typed (issue 30: 0 and 0.0 are equal there)
    assert "compare_cols.append(col.quoted)" in macro and "as varchar" not in macro
    assert macro.endswith("{% endmacro %}\n")
    names = generate_solution_tests([SolutionSeed("orders", exclude_tests=["existence_test"])],
                                    tmp_path / "t", tmp_path / "m")
    assert names == ["AUTO_orders_equality"]
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == ["AUTO_orders_equality.sql"]
    assert (tmp_path / "m" / "ade_bench_equality_test.sql").read_text() == macro


def test_test_names_longer_than_55_are_refused(tmp_path):
    ok_table = "t" * (MAX_TEST_NAME - len("AUTO__existence"))  # equality name is shorter
    generate_solution_tests([SolutionSeed(ok_table)], tmp_path / "ok")
    long_table = "rpt_customer_lifetime_value_by_acquisition_cohort"  # AUTO_..._equality = 63
    with pytest.raises(TestNameTooLong, match="55"):
        generate_solution_tests([SolutionSeed(long_table)], tmp_path / "bad")
    assert not (tmp_path / "bad").exists()


def test_map_paths_and_vendored_scripts(tmp_path):
    root = tmp_path / "r"
    s = map_paths('patch -p1 < /app/setup/changes.patch\ncp "/sage/solutions/x" models/\n'
                  "for f in /tests/*; do :; done\nls /appendix /usr/app/x seeds/ /tmp/x\n", root)
    assert f"< {root}/app/setup/changes.patch" in s and f'"{root}/sage/solutions/x"' in s
    assert f"for f in {root}/tests/*;" in s
    assert "/appendix /usr/app/x seeds/ /tmp/x" in s
    run = map_paths(resource_text("run-dbt-test.sh"), root)
    assert f'if [ -f "{root}/scripts/test-setup.sh" ]' in run and f"cp {root}/seeds/* seeds/" in run
    assert "rm -rf tests\nmkdir tests" in run
    assert "apt-get" not in resource_text("setup-dbt-test.sh").split("\n# Check")[1]


def test_plan_script_splits_only_simple_scripts():
    plan = plan_script("#!/bin/bash\npatch -p1 < /app/setup/changes.patch\n\n# build\ndbt deps\n"
                       "dbt run --select 'a b' || true\n")
    assert plan == [("bash", "patch -p1 < /app/setup/changes.patch"), ("dbt", ["deps"]),
                    ("dbt", ["run", "--select", "a b"])]
    assert plan_script('if [[ "$*" == *duckdb* ]]; then\n dbt run\nfi\n') is None
    assert plan_script("set -e\ndbt run\n") is None
    assert plan_script("cd sub && dbt run\n") is None
    assert plan_script("M=x\ndbt run --select $M\n") is None
    # a here-document with a quoted delimiter is one bash step (a data change's SQL); unquoted, or
    # never closed, the script runs whole
    sql = "/scripts/run_sql.sh \"$@\" << 'SQL'\nalter table t rename column a to b;\nSQL"
    assert plan_script(f"dbt deps\n{sql}\ndbt run || true\n") == [
        ("dbt", ["deps"]), ("bash", sql), ("dbt", ["run"])]
    assert plan_script("/scripts/run_sql.sh << SQL\nselect ${x}\nSQL\n") is None
    assert plan_script("cat << 'EOF'\nnever closed\n") is None


def test_update_task_yaml_keeps_format(tmp_path):
    src = Path(__file__).parent / "fixtures" / "tasks" / "shopfix001" / "task.yaml"
    p = tmp_path / "task.yaml"
    p.write_text(src.read_text())
    update_task_yaml(p, exclude_columns={"customer_revenue": ["region", "odd name"]},
                     max_test_timeout_sec=75)
    text = p.read_text()
    data = yaml.safe_load(text)
    assert data["solution_seeds"] == [{"table_name": "customer_revenue",
                                       "exclude_columns": ["region", "odd name"]}]
    assert data["max_test_timeout_sec"] == 75
    assert "prompt: |-\n      The total_amount numbers" in text  # untouched block scalar
    update_task_yaml(p, exclude_columns={"customer_revenue": ["region"]}, max_test_timeout_sec=90)
    data = yaml.safe_load(p.read_text())
    assert data["solution_seeds"][0]["exclude_columns"] == ["region"]
    assert data["max_test_timeout_sec"] == 90 and p.read_text().count("max_test_timeout_sec") == 1


@pytest.fixture(scope="module")
def typed_db(tmp_path_factory):
    d = tmp_path_factory.mktemp("typed")
    db = d / "typed.duckdb"
    con = duckdb.connect(str(db))
    con.execute("""
        create table t as select * from (values
          (1, 'plain', '', true, 90.000::decimal(10,3), 0.1::double,
           timestamp '2024-01-02 03:04:05', date '2024-01-02', 170141183460469231731687303715884105727::hugeint,
           timestamptz '2024-01-02 03:04:05+00', 'say "hi", ok'),
          (2, null, null, false, 2.5::decimal(10,3), 18.0::double,
           timestamp '2024-01-02 03:04:05.120', null, 5::hugeint, null, null)
        ) v(id, name, note, flag, price, ratio, ts, d, big, tstz, quoted)""")
    con.close()
    return db


def test_seed_csv_format_and_no_op(typed_db, tmp_path):
    schemas = export_solution_seeds(typed_db, ["t"], "shop", tmp_path)
    text = (tmp_path / "solution__t.csv").read_text()
    lines = text.splitlines()
    assert lines[0] == "id,name,note,flag,price,ratio,ts,d,big,tstz,quoted"
    assert lines[1] == ('1,plain,"",true,90.000,0.1,2024-01-02 03:04:05,2024-01-02,'
                        '170141183460469231731687303715884105727,2024-01-02 03:04:05+00,"say ""hi"", ok"')
    assert lines[2] == "2,,,false,2.500,18.0,2024-01-02 03:04:05.12,,5,,"
    assert text.endswith("\n")
    no_op = (tmp_path / "_no-op.txt").read_text()
    assert no_op == no_op_text("shop", schemas) and no_op.startswith("\n\nseeds:\n  shop:\n")
    types = yaml.safe_load(no_op)["seeds"]["shop"]["solution__t"]["+column_types"]
    assert types["big"] == "bigint" and types["price"] == "decimal(10,3)"
    assert types["tstz"] == "timestamp with time zone" and list(types)[0] == "id"


def test_seed_rows_are_sorted_whatever_the_scan_order(tmp_path):
    """The same rows stored in two orders export to the same bytes (ade-bench compares sets)."""
    texts = []
    for i, order in enumerate(("k desc", "k")):
        db = tmp_path / f"o{i}.duckdb"
        con = duckdb.connect(str(db))
        con.execute(f"create table t as select * from (values (2, 'b'), (1, 'a'), (3, null)) v(k, x) order by {order}")
        con.close()
        export_solution_seeds(db, ["t"], "shop", tmp_path / f"s{i}")
        texts.append((tmp_path / f"s{i}" / "solution__t.csv").read_text())
    assert texts[0] == texts[1] == "k,x\n1,a\n2,b\n3,\n"


def test_seed_pitfalls(typed_db, tmp_path):
    chk = check_table(typed_db, "t")
    assert chk.empty_string_columns == ["note"]
    assert chk.hugeint_overflow_columns == ["big"] and chk.rejected
    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute(f"attach '{typed_db}' as src (read_only)")
    con.execute("create table t as select * replace (case when id = 1 then 0.2 else ratio end as ratio) "
                "from src.t")
    con.close()
    chk2 = check_table(typed_db, "t", other_db=other)
    assert chk2.nondeterministic_columns == ["ratio"]
    assert "ratio" in chk2.exclude_columns and "note" in chk2.exclude_columns


def test_storage_version_v1_copy(typed_db, tmp_path):
    out = write_versioned_copy(typed_db, tmp_path / "shop.duckdb", drop=[("main", "t")])
    assert storage_version(out).startswith("v1.0.0")
    assert storage_version(typed_db).startswith("v2")  # duckdb 2.x default, unreadable by 1.3
    con = duckdb.connect(str(out), read_only=True)
    assert con.execute("select count(*) from information_schema.tables where table_name='t'").fetchone()[0] == 0
    con.close()
    kept = write_versioned_copy(typed_db, tmp_path / "keep" / "shop.duckdb")
    con = duckdb.connect(str(kept), read_only=True)
    assert con.execute("select count(*) from t").fetchone()[0] == 2
    con.close()


def test_sync_tree_mirrors_project_and_keeps_dbt_state(tmp_path):
    from adegen.adebench.procedure.prepared import project_seed_names, sync_tree

    src, dst = tmp_path / "src", tmp_path / "dst"
    (src / "models").mkdir(parents=True)
    (src / "seeds").mkdir()
    (src / "models" / "a.sql").write_text("select 1")
    (src / "seeds" / "raw_x.csv").write_text("id\n1\n")
    (src / "dbt_project.yml").write_text("name: p\nseed-paths: [seeds]\n")
    assert sync_tree(src, dst) == 3
    (dst / "target").mkdir()
    (dst / "target" / "partial_parse.msgpack").write_text("state")
    (dst / "p.duckdb").write_text("db")
    (dst / "models" / "a.sql").write_text("select 2")          # a mutant left behind
    (dst / "models" / "extra.sql").write_text("select 3")      # a file the project lacks
    (dst / "seeds" / "solution__a.csv").write_text("x\n")
    assert project_seed_names(dst) == {"raw_x", "solution__a"}
    assert sync_tree(src, dst) == 3
    assert (dst / "models" / "a.sql").read_text() == "select 1"
    assert not (dst / "models" / "extra.sql").exists() and not (dst / "seeds" / "solution__a.csv").exists()
    assert (dst / "target" / "partial_parse.msgpack").read_text() == "state"
    assert (dst / "p.duckdb").exists()
    assert sync_tree(src, dst) == 0
