"""Issue 28's selection rules, without dbt: a prompt never states its fix (the check every prompt
key of every task goes through), a bug upstream of a mart is reported on the mart, and a diff is
described on the key the bug does not change (never a surrogate key it reassigns)."""
from __future__ import annotations

from types import SimpleNamespace

import duckdb

from adegen.core.drops import DropCode
from adegen.prompts import checks
from adegen.propose.site import deep_table, retarget
from adegen.validate.rules import oracle
from adegen.validate.rules.contract import Observation
from adegen.facts.evidence import table_facts

CONFIG = SimpleNamespace(id="materialization_changed", name="Materialization changed",
                         family="config-materialization")
SITE = SimpleNamespace(before="{{ config(tags=['x']) }}", after="{{ config(materialized='view', tags=['x']) }}",
                       line=1, placeholders={"original_materialization": "table", "wrong_materialization": "view"})


def test_a_prompt_naming_how_the_model_is_built_states_the_fix():
    for text in ("dim_accounts is a view now, it used to be a table.",
                 "Why is dim_accounts materialized differently?", "Someone changed the config of dim_accounts."):
        assert checks.states_fix(text, SITE, CONFIG), text
    assert checks.states_fix("Queries on dim_accounts got slow since the last deploy.", SITE, CONFIG) == []
    # only configuration changes are held to it: "the orders table" is a fine way to name data
    data_bug = SimpleNamespace(family="aggregation")
    assert checks.states_fix("The orders table has totals that are too high.", None, data_bug) == []


def test_every_prompt_key_goes_through_the_fix_check():
    from adegen.prompts.levels import PromptRequest, reasons_against

    req = PromptRequest(seed="x", model="dim_accounts", pattern=CONFIG, site=SITE)
    why = reasons_against("dim_accounts should be a table, not a view.", req, {"dim_accounts"}, {"dim_accounts"})
    assert any(w.startswith("states the fix") for w in why)


DISCOVERY = {"models": [{"name": "stg_workspaces", "layer": "staging"}, {"name": "int_accounts", "layer": "intermediate"},
                        {"name": "dim_accounts", "layer": "marts"}, {"name": "rpt_health", "layer": "marts"}]}


def _obs(*tables):
    return Observation(True, "r", False, tables[0]["table"], 1, 9, ["x"], {t["table"]: t["distance"] for t in tables},
                       "e", {"tables": list(tables)})


def _t(name, distance, differing=2):
    return {"table": name, "distance": distance, "rows_intact": 10, "rows_broken": 10, "rows_differing": differing,
            "columns": [{"name": "environment_tier"}]}


def test_a_staging_bug_is_reported_on_the_nearest_mart_that_shows_it():
    o = _obs(_t("stg_workspaces", 0), _t("int_accounts", 1), _t("dim_accounts", 2), _t("rpt_health", 3))
    assert deep_table({"name": "stg_workspaces", "layer": "staging"}, o, DISCOVERY) == "dim_accounts"
    r = retarget(o, "dim_accounts")
    assert (r.compared_table, r.rows_differing, r.rows_total, r.columns_differ, r.example) == (
        "dim_accounts", 2, 10, ["environment_tier"], None)
    # a mart is reported on itself; a change nothing downstream shows stays where it is
    assert deep_table({"name": "dim_accounts", "layer": "marts"}, o, DISCOVERY) is None
    quiet = _obs(_t("stg_workspaces", 0), _t("dim_accounts", 2, differing=0))
    assert deep_table({"name": "stg_workspaces", "layer": "staging"}, quiet, DISCOVERY) is None
    # no mart downstream changed: the farthest changed table
    o = _obs(_t("stg_workspaces", 0), _t("int_accounts", 1))
    assert deep_table({"name": "stg_workspaces", "layer": "staging"}, o, DISCOVERY) == "int_accounts"


def test_a_row_bug_is_reported_where_rows_went_missing():
    """A filter drops orders: the orders mart loses rows, the customers mart only counts fewer.
    The table that lost rows is the one the report names, even when another mart is nearer."""
    lost = dict(_t("rpt_health", 3), rows_broken=8)
    o = _obs(_t("stg_workspaces", 0, differing=2), _t("dim_accounts", 2), lost)
    assert deep_table({"name": "stg_workspaces", "layer": "staging"}, o, DISCOVERY) == "rpt_health"


def test_a_surrogate_key_the_bug_reassigns_is_not_the_key_of_the_diff():
    """row_number() ordered by signup date numbers the customers; the bug flips the order, so
    customer_key is reassigned for every customer. Joined on customer_key every row would look
    changed in every column; on the natural key customer_id only customer_key changed."""
    con = duckdb.connect()
    rows = "(values ('C1', 'Ada', date '2024-01-05'), ('C2', 'Bo', date '2024-02-11'), ('C3', 'Cy', date '2024-03-20'))"
    base = (f"select row_number() over (order by signed_on) as customer_key, customer_id, name, signed_on "
            f"from {rows} t(customer_id, name, signed_on)")
    con.execute(f"create table b_dim as {base}")
    con.execute(f"create table m_dim as {base.replace('order by signed_on', 'order by signed_on desc')}")
    d = oracle.compare_relations(con, "dim", "b_dim", "m_dim")
    f = table_facts(con, d, "b_dim", "m_dim")
    assert f["key"] == ["customer_id"]
    assert [c["name"] for c in f["columns"]] == ["customer_key"]
    assert f["missing"]["count"] == 0 and f["extra"]["count"] == 0


def _unit(family):
    from adegen.pipeline.bulk_units import Unit

    return Unit(f"orders|{family}_pattern|0", SimpleNamespace(family=family, name="orders",
                                                               pattern=SimpleNamespace(id=f"{family}_pattern")))


def test_bulk_passes_over_a_family_holding_a_fifth_while_others_are_left():
    from adegen.pipeline.bulk_loop import family_cap_reason

    # 10 tasks wanted: a family may hold 2
    assert family_cap_reason(_unit("config-materialization"), ["config-materialization"], [_unit("join")], 10) is None
    why = family_cap_reason(_unit("config-materialization"), ["config-materialization"] * 2, [_unit("join")], 10)
    assert why and why.reason.startswith("family cap: config-materialization")
    assert why.code is DropCode.FAMILY_CAP and why.pattern_id == "config-materialization_pattern"
    # nothing else left to try: the family may go on
    assert family_cap_reason(_unit("config-materialization"), ["config-materialization"] * 2,
                             [_unit("config-materialization")], 10) is None
    # every later family is itself at the cap
    assert family_cap_reason(_unit("join"), ["join", "join", "window", "window"], [_unit("window")], 10) is None


def test_a_pool_whose_every_site_fails_its_precondition_is_not_a_screening_round():
    from adegen.pipeline.propose import has_live_site

    failing = SimpleNamespace(drop_reason=lambda: "precondition not met: 0 of 9 rows fall through")
    holding = SimpleNamespace(drop_reason=lambda: None)
    compiled, broken = SimpleNamespace(ok=True), SimpleNamespace(ok=False, reason="Parser Error")
    cand = lambda results, measured: SimpleNamespace(
        name="orders", pattern=SimpleNamespace(id="case_else_dropped"), sites=[SimpleNamespace(line=3), SimpleNamespace(line=9)],
        compile_results=results, preconditions=measured)
    assert not has_live_site(cand({0: compiled, 1: compiled}, {0: failing, 1: failing}))
    assert not has_live_site(cand({0: broken, 1: compiled}, {1: failing}))
    assert has_live_site(cand({0: broken, 1: compiled}, {0: failing, 1: holding}))
    assert has_live_site(cand({}, {}))  # not measured (no DuckDB build): screened as before
