"""adegen.prompts: prompts written from the measured diff, three hint levels, and the checks every
text passes (leaks, tool words, only changed tables named, no repeats)."""
from __future__ import annotations

from dataclasses import replace

import re
from dataclasses import dataclass, field, replace
from types import SimpleNamespace

from adegen import prompts
from adegen.facts.measured import read_table
from adegen.prompts import checks, findings, words
from adegen.prompts.levels import clean_dbt_message

TOOL = re.compile(r"intact build|oracle|column\(s\)|row\(s\)|\b1 rows\b|\(expected|\bNULL\b|mutant|baseline")


@dataclass
class Site:
    before: str
    after: str
    line: int = 12
    start: int = 0
    end: int = 0
    note: str = ""
    pattern_id: str = "p"
    placeholders: dict = field(default_factory=dict)


@dataclass
class Pat:
    id: str = "wrong_aggregation"
    name: str = "Wrong aggregation function"
    family: str = "aggregation"
    symptom: str = "values_too_high"
    difficulty: str = "medium"


def obs(*tables, build_error=False, example=None, **details):
    return SimpleNamespace(observable=True, build_error=build_error, example=example,
                           compared_table=tables[0]["table"] if tables else None,
                           changed_tables={t["table"]: t["distance"] for t in tables},
                           details={"tables": list(tables), **details})


def value_table(table, distance, column="avg_csat_score", obs_v="18.0", exp_v="4.5", changed=88, total=90,
                key="account_id", label="Helio Systems", **col):
    c = {"name": column, "type": "number", "changed": changed, "now_null": 0, "was_null": 0,
         "higher": changed, "lower": 0, "negated": 0, "rounded": 0,
         "sample": [{"key": ["A1001"], "label": label, "observed": obs_v, "expected": exp_v}]}
    c.update(col)
    return {"table": table, "distance": distance, "rows_intact": total, "rows_broken": total,
            "rows_differing": 2 * changed, "key": [key], "label": "account_name" if label else None,
            "missing": {"count": 0, "sample": []}, "extra": {"count": 0, "sample": []}, "columns": [c]}


def request(o, seed="acme001", model="mart_account_360", site=None, **kw):
    models = ("stg_accounts", "int_accounts", "mart_account_360", "mart_account_health", "fct_revenue",
              "dim_accounts")
    return prompts.PromptRequest(seed=seed, model=model, project_name="acme", pattern=kw.pop("pattern", Pat()),
                                 site=site or Site("avg(", "sum("), model_path=f"models/marts/{model}.sql",
                                 observation=o, table=model, model_materialized=kw.pop("mat", "table"),
                                 project_models=models, **kw)


def assert_clean(ps, req):
    changed = {t["table"] for t in req.observation.details["tables"]} if req.observation else {req.table}
    for key, text in ps.prompts.items():
        assert not TOOL.search(text), (key, text)
        assert not prompts.tool_words(text), (key, text)
        assert not prompts.leaks(text, site=req.site, pattern=req.pattern, model_path=req.model_path,
                                 allowed={req.model, *changed, "avg_csat_score", "account_id"}), (key, text)
        assert not checks.unchanged_tables_named(text, changed, req.project_models), (key, text)
    assert set(ps.tables) <= changed
    assert len({t.lower() for t in ps.prompts.values()}) == len(ps.prompts)


def test_base_names_table_and_concrete_value():
    """Every base names the table; one that quotes the value now also says what it should be and
    whose it is; the medium key (same table, nothing downstream) quotes no value."""
    quoted = 0
    for i in range(30):
        req = request(obs(value_table("mart_account_360", 0)), seed=f"acme{i:03d}")
        ps = prompts.write_prompts(req)
        assert list(ps.prompts) == ["base", "medium"]  # nothing downstream changed: no hard key
        base = ps.prompts["base"]
        assert "mart_account_360" in base
        if "18" in base:
            quoted += 1
            assert "4.5" in base and ("Helio Systems" in base or "A1001" in base), base
        assert "18" not in ps.prompts["medium"] and "mart_account_360" in ps.prompts["medium"]
        assert ps.tables == ["mart_account_360"]
        assert_clean(ps, req)
    assert quoted >= 5


def test_downstream_levels_name_changed_tables_only():
    tables = [value_table("int_accounts", 0, column="csat_score"),
              value_table("mart_account_360", 1), value_table("mart_account_health", 2)]
    req = request(obs(*tables), model="int_accounts")
    ps = prompts.write_prompts(req)
    assert list(ps.prompts) == ["base", "medium", "hard"]
    assert ps.named["base"] == ["int_accounts"]
    assert ps.named["medium"] == ["mart_account_360"]
    assert "mart_account_health" in ps.named["hard"]
    assert not re.search(r"\d", ps.prompts["hard"].replace("360", ""))  # business level: no values
    assert_clean(ps, req)


def test_unchanged_model_with_changed_downstream_is_chance():
    """A materialized model whose own table is equal cannot change its children: a downstream
    difference is non-determinism, never evidence."""
    req = request(obs(value_table("mart_account_health", 1)), model="mart_account_360")
    assert prompts.write_prompts(req).prompts == {}


def test_unstable_tables_are_never_named():
    tables = [value_table("int_accounts", 0, column="csat_score"), value_table("mart_account_360", 1)]
    req = request(obs(*tables, nondeterministic_tables=["mart_account_360"]), model="int_accounts")
    ps = prompts.write_prompts(req)
    assert "mart_account_360" not in " ".join(ps.prompts.values()) and "hard" not in ps.prompts


def test_ephemeral_model_reports_its_nearest_child():
    req = request(obs(value_table("mart_account_360", 1)), model="int_accounts", mat="ephemeral")
    ps = prompts.write_prompts(req)
    assert ps.named["base"] == ["mart_account_360"] and "hard" not in ps.prompts


def test_rows_lost_with_counts_and_an_entity():
    t = {"table": "dim_accounts", "distance": 0, "rows_intact": 90, "rows_broken": 88, "rows_differing": 2,
         "key": ["account_id"], "label": "account_name",
         "missing": {"count": 2, "sample": [{"key": ["A1007"], "label": "Falcon Works"}]},
         "extra": {"count": 0, "sample": []}, "columns": []}
    concrete = 0
    for seed in (f"lost:{i}" for i in range(30)):
        req = request(obs(t), model="dim_accounts", pattern=Pat(symptom="rows_missing"), seed=seed)
        ps = prompts.write_prompts(req)
        base = ps.prompts["base"]
        assert "dim_accounts" in base and "1 accounts" not in base
        assert "A1007" not in base or "Falcon Works" in base  # the account by its name, not its id alone
        # the count in rough words ("a couple fewer accounts"), never both counts pasted in
        assert not ("88" in base and "90" in base), base
        concrete += "Falcon Works" in base or "fewer accounts" in base or "2 accounts" in base
        assert_clean(ps, req)
    assert concrete >= 5  # the voices that give a handle name the account or the counts


def test_singular_and_plural():
    assert words.count_of(1, "account") == "1 account" and words.count_of(2, "company") == "2 companies"
    assert words.count_of(22419, "order") == "22,419 orders"
    assert words.plural("SLA") == "SLAs" and words.singular("analysis") == "analysis"
    f = findings.Finding("values_blank", "dim_accounts", column="csat", count=1, total=5, key=["account_id"])
    from adegen.prompts import render
    v = render.fields(f, render.Voice("s"))
    assert v["count_are"] == "1 account is" and v["count_of"] == "1 of the 5 accounts"


def test_domain_words_from_names():
    assert words.column_words("avg_csat_score") == "average CSAT score"
    assert words.column_words("total_revenue_usd") == "total revenue"
    assert words.column_words("is_active") == "active flag"
    assert words.table_topic("fct_monthly_revenue") == "monthly revenue"
    assert words.table_topic("stg_f1_dataset__results") == "results"
    assert words.table_entity("mart_account_360") == "account"
    assert words.table_entity("int_workspace_roster") == "workspace"
    assert words.entity_of_key("order_id", "x") == "order"
    # a unique name keys its entity: the rows of constructor_points are constructors, not points
    assert words.entity_of_key("constructor_name", "constructor_points") == "constructor"
    assert words.entity_of_key("first_name", "people") is None
    assert words.ratio_words(2.0) == "twice" and words.ratio_words(0.1) == "a tenth of"
    # a hundredth or a thousand times names the missing unit conversion: never said
    assert words.ratio_words(0.01) is None and words.ratio_words(100.0) is None and words.ratio_words(1000.0) is None


def test_value_kinds_are_classified_from_the_numbers():
    scaled = value_table("t", 0, obs_v="450", exp_v="4.5", ratio={"median": 100.0, "min": 100.0, "max": 100.0})
    assert findings.classify(read_table(scaled))[0].kind == "values_scaled"
    neg = value_table("t", 0, obs_v="-5", exp_v="5", negated=88, higher=0, lower=88)
    assert findings.classify(read_table(neg))[0].kind == "sign_flipped"
    blank = value_table("t", 0, obs_v=None, exp_v="5", now_null=88)
    assert findings.classify(read_table(blank))[0].kind == "values_blank"
    grain = value_table("t", 0, obs_v="2024-05-01", exp_v="2024-05-17", type="date",
                        grain={"intact": "day", "broken": "month"})
    assert findings.classify(read_table(grain))[0].kind == "date_grain"
    swap = value_table("t", 0, obs_v="b2b", exp_v="b2c", type="text",
                       pairs=[["b2b", "b2c", 3], ["b2c", "b2b", 2]])
    f = findings.classify(read_table(swap))[0]
    assert f.kind == "labels_swapped" and f.detail.swap == ("b2b", "b2c")


def _new_labels_table(distinct=4):
    return value_table("dim_invoices", 0, column="invoice_status", obs_v="settled", exp_v="paid", type="text",
                       changed=40, total=90, new_rows=40, only_broken=["settled", "void"],
                       distinct={"intact": distinct, "broken": distinct + 2},
                       pairs=[["paid", "settled", 30], ["open", "void", 10]])


def test_labels_nobody_uses_are_their_own_finding():
    f = findings.classify(read_table(_new_labels_table()))[0]
    assert f.kind == "labels_new" and f.count == 40 and f.detail.only_broken == ("settled", "void")
    # free text (a column of names, emails) has no list of labels: a new value there is just a change
    names = findings.classify(read_table(_new_labels_table(distinct=80)))[0]
    assert names.kind == "values_changed"
    # ids no person types are no labels to name in a message (a UUID read off a diff)
    ids = _new_labels_table()
    ids["columns"][0]["only_broken"] = ["01e9ac93-bccf-4ad2-af92-3317a37ec67b", "1bc241c7-6926-4b46-94b7-82d25069f067"]
    assert findings.classify(read_table(ids))[0].kind != "labels_new"


def test_a_new_label_is_quoted_unless_the_change_writes_it():
    pat = Pat(id="case_mapping_collapsed", name="CASE mapping collapsed", family="case-logic", symptom="values_wrong")
    collapsed = Site("case when lower(s) in ('paid', 'settled') then 'paid' else 'open' end", "lower(s)")
    quoted = 0
    for i in range(12):
        req = request(obs(_new_labels_table()), seed=f"acme00{i}", model="dim_invoices", site=collapsed, pattern=pat,
                      column="invoice_status")
        ps = prompts.write_prompts(req)
        assert ps.findings["base"].startswith("labels_new"), ps.findings
        quoted += '"settled"' in ps.prompts["base"]
    assert quoted >= 6  # a code the table shows now is the symptom, not the fix
    # a label the change itself writes points at the line: never quoted
    respelled = Site("'settled'", "'Settled'")
    for i in range(12):
        ps = prompts.write_prompts(request(obs(_new_labels_table()), seed=f"acme00{i}", model="dim_invoices",
                                           site=respelled, pattern=pat, column="invoice_status"))
        assert ps.base and "settled" not in ps.base.lower(), ps.base


def test_a_column_blank_everywhere_before_is_not_reported_as_filled():
    filled = value_table("int_conversations", 0, column="conversation_contacts", obs_v="ann, bob", exp_v=None,
                         type="text", changed=2, total=2, was_null=2)
    assert findings.classify(read_table(filled)) == []
    # blank on some rows only: the rows that kept their values show what the column is for
    some = value_table("int_conversations", 0, column="conversation_contacts", obs_v="ann, bob", exp_v=None,
                       type="text", changed=2, total=9, was_null=2)
    assert findings.classify(read_table(some))[0].kind == "values_filled"


def test_the_labels_a_column_held_are_said_beside_the_new_ones():
    pat = Pat(id="case_mapping_collapsed", name="CASE mapping collapsed", family="case-logic", symptom="values_wrong")
    collapsed = Site("case when s in ('paid', 'settled') then 'paid' when s = 'past_due' then 'past_due' "
                     "else 'open' end", "s")
    table = _new_labels_table()
    table["columns"][0]["labels_intact"] = ["paid", "open", "past_due"]
    listed = 0
    for i in range(12):
        req = request(obs(table), seed=f"acme00{i}", model="dim_invoices", site=collapsed, pattern=pat,
                      column="invoice_status")
        base = prompts.write_prompts(req).base
        listed += bool(re.search(r'"paid", "open" (or|and) "past_due"', base))
    # what the agent maps back to, in most reports; never how ("settled" -> "paid")
    assert listed >= 6, listed


def test_a_key_emptied_on_the_same_rows_is_reported_as_blank():
    """The key read from the joined side of a left join: the rows without a match come back with an
    empty key. Keyed on that key they look lost and replaced; a person sees an empty column."""
    t = {"table": "customers", "distance": 0, "rows_intact": 100, "rows_broken": 100, "rows_differing": 76,
         "key": ["customer_id"], "label": "first_name",
         "missing": {"count": 38, "sample": [{"key": [7], "label": "Michael"}, {"key": [9], "label": "Kathleen"}]},
         "extra": {"count": 38, "sample": [{"key": [None], "label": "Michael"}, {"key": [None], "label": "Kathleen"}]},
         "columns": []}
    (f,) = findings.classify(read_table(t))
    assert (f.kind, f.column, f.count, f.samples[0].expected) == ("values_blank", "customer_id", 38, 7)
    for seed in (f"blank:{i}" for i in range(12)):
        req = request(obs(t), model="customers", pattern=Pat(symptom="values_null"), seed=seed)
        ps = prompts.write_prompts(req)
        assert "customer_id" in ps.prompts["base"] and "customers" in ps.prompts["base"], ps.prompts["base"]
        assert_clean(ps, req)
    # other keys among the new rows: another set of entities, as before
    t["extra"]["sample"][1]["key"] = [101]
    assert findings.classify(read_table(t))[0].kind == "rows_replaced"


def test_a_label_the_change_writes_where_the_model_wrote_it_may_be_quoted():
    """`like 'cancel%' then 'cancelled'` -> `= 'cancelled' then 'cancelled'`: "cancelled" is the label
    the table showed before (the operator says so in `intact_literals`), so a report may quote it; a
    literal the change writes anew never is."""
    pat = Pat(id="like_pattern_changed", name="LIKE", family="string", symptom="values_wrong")
    t = value_table("fct_order_items", 0, column="order_status", obs_v="pending", exp_v="cancelled", type="text",
                    changed=40, total=900, key="order_item_id", label=None, higher=0)
    quoted = {}
    for kept in ([], ["cancelled"]):
        site = Site("like 'cancel%'", "= 'cancelled'", placeholders={"intact_literals": kept})
        quoted[bool(kept)] = 0
        for i in range(12):
            base = prompts.write_prompts(request(obs(t), seed=f"lit:{i}", model="stg_orders", site=site,
                                                 pattern=pat, column="order_status")).base
            quoted[bool(kept)] += '"cancelled"' in base or "cancelled" in base.split()
    assert quoted[False] == 0 and quoted[True] >= 3, quoted


def test_helper_columns_are_not_the_reported_symptom():
    t = value_table("mart_account_360", 0, column="rn", changed=90)
    t["columns"].append(value_table("x", 0, column="latest_mrr_usd", changed=9)["columns"][0])
    assert findings.classify(read_table(t))[0].column == "latest_mrr_usd"


def test_column_gone_is_reported_like_a_dashboard_owner():
    t = {"table": "fct_revenue", "distance": 0, "rows_intact": 90, "rows_broken": 90, "rows_differing": 0,
         "columns_missing": ["customer_id"], "columns_extra": []}
    req = request(obs(t), model="fct_revenue", site=Site("customer_id,", ""),
                  pattern=Pat(id="output_column_dropped", name="Output column dropped", family="projection-column",
                              symptom="structure_wrong"), column="customer_id")
    ps = prompts.write_prompts(req)
    assert "customer_id" in ps.prompts["base"] and re.search(r"dashboard|report", ps.prompts["base"])
    assert "hard" not in ps.prompts


def test_materialization_change_is_reported_by_what_readers_notice():
    t = {"table": "dim_accounts", "distance": 0, "relation_kind": {"intact": "table", "broken": "view"},
         "rows_intact": 9, "rows_broken": 9, "rows_differing": 0}
    req = request(obs(t), model="dim_accounts", site=Site("'table'", "'view'", line=1),
                  pattern=Pat(id="materialization_changed", name="Materialization changed",
                              family="config-materialization", symptom="structure_wrong"),
                  layer="marts", convention=True)
    ps = prompts.write_prompts(req)
    base = ps.prompts["base"]
    # the symptom (slow reads), never the fix ("it's a view now, it should be a table"): issue 28
    assert "dim_accounts" in base and re.search(r"slow|crawl|forever|ages|minutes|timing out|time out", base)
    for text in ps.prompts.values():
        assert not re.search(r"\b(views?|tables?|materiali[sz]\w*)\b", text, re.I), text
    assert ps.tables == ["dim_accounts"] and "hard" not in ps.prompts


def test_build_error_pastes_dbts_message_without_the_file():
    msg = ("Runtime Error in model stg_orders (models/staging/stg_orders.sql) Conversion Error: "
           "Could not convert string 'n/a' to INT32 LINE 5: select cast(amount as integer)")
    o = SimpleNamespace(observable=True, build_error=True, example=msg, compared_table="stg_orders",
                        changed_tables={"stg_orders": 0}, details={})
    req = request(o, model="stg_orders", site=Site("try_cast(", "cast("),
                  pattern=Pat(id="try_cast_to_cast", name="TRY_CAST", family="casting", symptom="build_error"))
    ps = prompts.write_prompts(req)
    assert "Could not convert string 'n/a' to INT32" in ps.prompts["base"]
    assert "stg_orders.sql" not in ps.prompts["base"] and "LINE 5" not in ps.prompts["base"]
    assert "hard" not in ps.prompts
    assert clean_dbt_message(msg).startswith("Runtime Error in model stg_orders")


def test_a_literal_the_mutation_changes_is_never_quoted():
    t = value_table("stg_plans", 0, column="plan_family", obs_v="enterprise", exp_v="starter", changed=1, total=4,
                    key="plan_id", label="Starter Monthly", type="text", pairs=[["starter", "enterprise", 1]],
                    higher=0)
    req = request(obs(t), model="stg_plans", site=Site("'starter'", "'stater'"),
                  pattern=Pat(id="like_pattern_changed", name="LIKE", family="string", symptom="values_wrong"))
    rejected = 0
    for seed in (f"literal:{i}" for i in range(30)):
        ps = prompts.write_prompts(replace(req, seed=seed))
        assert ps.base and "starter" not in " ".join(ps.prompts.values()).lower().replace("starter monthly", "")
        rejected += bool(ps.rejected)
    assert rejected  # the voices that quote values tried the quoting variants and were refused


def test_deterministic_per_seed_and_varied_across_seeds():
    req = request(obs(value_table("mart_account_360", 0)))
    assert prompts.write_prompts(req).prompts == prompts.write_prompts(req).prompts
    texts = {prompts.write_prompts(replace(req, seed=f"acme{i:03d}")).base for i in range(12)}
    assert len(texts) >= 8


def test_a_run_never_repeats_a_prompt():
    """Many tasks on the same table and finding, one avoid set (what proposals.select keeps):
    every key of every task is new, and none equals a surveyed task's prompt."""
    surveyed = prompts.write_prompts(request(obs(value_table("mart_account_360", 0)), seed="s")).base
    avoid = {surveyed}
    seen = []
    for i in range(40):
        req = request(obs(value_table("mart_account_360", 0)), seed="same-seed", avoid=frozenset(avoid))
        ps = prompts.write_prompts(req)
        assert ps.base, i
        assert_clean(ps, req)
        seen += ps.prompts.values()
        avoid |= set(ps.prompts.values())
    assert len(seen) == len(set(seen)) and surveyed not in seen


def test_nothing_measured_gives_one_general_base_prompt():
    req = request(None, model="fct_revenue", column="revenue")
    ps = prompts.write_prompts(req)
    assert list(ps.prompts) == ["base"] and "fct_revenue" in ps.base
    assert ps.sources["base"].startswith("adegen (pattern")
    assert not re.search(r"\d", ps.base)


def test_leak_reasons():
    s = Site("left join order_lines", "join order_lines", line=51)
    p = Pat(id="wrong_join_type", name="Wrong join type", family="join")
    assert prompts.leaks("Rows vanish; look at line 51 of int_orders_enriched.sql", site=s, pattern=p,
                         model_path="models/intermediate/int_orders_enriched.sql")
    assert any("pattern" in r for r in prompts.leaks("Looks like a wrong join type somewhere.", site=s, pattern=p))
    assert any("changed code" in r for r in prompts.leaks("it says join order_lines now", site=s))
    assert any("giveaway" in r for r in prompts.leaks("There is a bug in the SQL.", site=None))
    assert prompts.leaks("Some orders are missing from fct_orders. Can you fix it?", site=s, pattern=p,
                         model_path="models/intermediate/int_orders_enriched.sql") == []


def test_changed_column_is_a_leak_unless_it_is_the_symptom_column():
    s = Site("coalesce(l.discount_cents, 0)", "l.discount_cents")
    p = Pat(id="drop_coalesce", name="Dropped COALESCE", family="null_handling", symptom="values_null")
    assert prompts.leaks("coalesce is gone", site=s, pattern=p)
    assert not prompts.leaks("discount_cents is empty in fct_orders for some orders", site=s, pattern=p,
                             allowed={"discount_cents", "fct_orders"})


def test_tool_words_are_caught():
    for text in ("fct_orders has 3 rows; the intact build has 4", "missing column(s) x", "It has 1 rows",
                 "fct: order_id = 1 has amount = 2 (expected 3)", "value is NULL"):
        assert prompts.tool_words(text), text
    assert not prompts.tool_words("Order 1 shows 0, but it should be 22,419. Can you fix it?")


def test_unmeasured_task_uses_the_patterns_own_description():
    @dataclass
    class Templated(Pat):
        symptom_template: str = "The {column} numbers in {table} look too high."

    req = request(None, model="fct_revenue", column="revenue", pattern=Templated())
    ps = prompts.write_prompts(req)
    assert "he revenue numbers in fct_revenue look too high." in ps.base
    assert ps.findings["base"].endswith("(pattern)")


def test_same_numbers_in_another_type_are_reported_as_a_type_change():
    t = value_table("stg_payments", 0, column="amount", obs_v="10", exp_v="10.0", key="payment_id", label=None,
                    written_only=True, sql_type={"intact": "DOUBLE", "broken": "INTEGER"})
    req = request(obs(t), model="stg_payments")
    quoted = 0
    for seed in (f"type:{i}" for i in range(30)):
        ps = prompts.write_prompts(replace(req, seed=seed))
        assert ps.findings["base"].startswith("type_changed")
        assert "whole numbers" in ps.base
        quoted += "10.0" in ps.base
    assert quoted  # the voices that quote values give the decimal it should have


def test_a_body_that_says_who_noticed_gets_no_opener():
    from adegen.prompts import render

    body = "Someone noticed that most_recent_order in the customers table is wrong for some customers."
    for seed in ("a", "b", "c", "d", "e", "f"):
        voice = render.Voice.for_seed(seed)
        texts = list(render.compositions(render.Body(body), voice, "base", ["", "Can you fix it?"]))
        assert texts and all(t.startswith("Someone noticed") for t in texts)


def test_a_report_without_an_example_says_a_rough_measured_factor():
    """Units sold at about half of what they should be (median ratio 0.5 over most rows, not one
    steady factor): reports that quote no example row say "roughly half" / "about half", and only
    when the measurement supports it (a ratio nobody rounds, 0.8, gives no factor word)."""
    def base(median, seed):
        t = value_table("int_product_monthly_sales", 0, column="units_sold", obs_v="4", exp_v="8",
                        higher=0, lower=88, ratio={"median": median, "min": median * 0.4, "max": median * 1.6,
                                                   "rows": 88})
        return prompts.write_prompts(request(obs(t), model="int_product_monthly_sales", seed=seed)).base
    seeds = [f"rough:{i}" for i in range(60)]
    halves = [b for b in (base(0.5, s) for s in seeds) if re.search(r"\b(roughly|about) half\b", b)]
    assert len(halves) >= 5, halves
    assert not any(re.search(r"\b(roughly|about) (half|double)\b", base(0.8, s)) for s in seeds)


def test_no_lead_in_runs_into_a_sentence_about_what_someone_did():
    """"Since yesterday's run, just noticed X is empty" reads wrong: a lead-in only runs into a
    plain statement, never into a question or a sentence saying what the person did or saw."""
    from adegen.prompts import render

    for body in ("Just noticed line_count is empty in int_orders_enriched.",
                 "Tried to chart line_count from int_orders_enriched and it's null.",
                 "Adding up the amount from stg_payments, the total comes out way too high."):
        for seed in (f"lead:{i}" for i in range(40)):
            texts = list(render.compositions(render.Body(body), render.Voice.for_seed(seed), "base", [""]))
            assert texts and all(t.startswith(body.split(" ", 1)[0]) for t in texts), texts
    plain = "The line_count in int_orders_enriched is empty."
    led = {t for seed in (f"lead:{i}" for i in range(40))
           for t in render.compositions(render.Body(plain), render.Voice.for_seed(seed), "base", [""])}
    assert any(t.startswith("Since") for t in led)  # the lead-in itself still exists
