"""The dedup-dropped kind's texts (rewrite/purposes/dedup.py), pure: a ranked CTE and its `rn = 1`
filter go and the model reads the ranked CTE's input (a CTE that only filters goes with it; a ranked
subquery too); a QUALIFY row_number() = 1 goes; a DISTINCT goes; the same site is found again in
another text of the model by its form and scope; dedups that are more than a dedup are refused."""
from __future__ import annotations

from adegen.rewrite.purposes.dedup import DISTINCT, QUALIFY, ROW_NUMBER, DedupSite, drop, sites

RANKED = """with source as (

    select * from {{ source('web', 'events') }}

),

deduplicated as (

    -- events are delivered at least once: keep the first load of each event_id
    select
        *,
        row_number() over (
            partition by event_id
            order by _loaded_at
        ) as delivery_number
    from source

)

select
    event_id,
    session_id
from deduplicated
where delivery_number = 1
"""


def test_a_ranked_cte_and_its_filter_go_and_the_model_reads_the_input():
    assert sites(RANKED) == [DedupSite(ROW_NUMBER, "deduplicated", "event_id", "source")]
    broken = drop(RANKED, sites(RANKED)[0])
    assert broken == ("with source as (\n\n    select * from {{ source('web', 'events') }}\n\n)\n\n"
                      "select\n    event_id,\n    session_id\nfrom source\n")


def test_a_filter_anded_with_others_loses_only_its_own_condition():
    text = RANKED.replace("where delivery_number = 1", "where delivery_number = 1\n    and session_id is not null")
    assert drop(text, sites(text)[0]).endswith("from source\nwhere session_id is not null\n")
    text = RANKED.replace("where delivery_number = 1", "where session_id is not null and delivery_number = 1")
    assert drop(text, sites(text)[0]).endswith("from source\nwhere session_id is not null\n")


def test_a_cte_that_only_filters_goes_with_the_ranked_one_and_its_readers_read_the_input():
    text = ("with subs as (\n    select * from {{ ref('int_subs') }}\n),\n"
            "ranked as (\n    select\n        s.*,\n        row_number() over (partition by account_id order by "
            "start_date desc) as rn\n    from subs s\n),\nlatest as (\n    select * from ranked where rn = 1\n),\n"
            "other as (\n    select account_id, row_number() over (order by x) as rn from subs\n)\n"
            "select l.account_id, l.plan from latest l\nleft join other o on o.account_id = l.account_id\n")
    (site,) = sites(text)
    assert (site.form, site.scope, site.key, site.source) == (ROW_NUMBER, "ranked", "account_id", "subs")
    broken = drop(text, site)
    assert "ranked" not in broken and "latest" not in broken and "from subs l\n" in broken
    assert "other as (" in broken  # another CTE's own `rn` is no reader of this one


def test_a_ranked_subquery_in_a_cte_goes_and_its_reader_joins_the_input():
    text = ("with payments as (\n    select * from {{ ref('stg_payments') }}\n),\nlatest_payment as (\n"
            "    select *\n    from (\n        select\n            p.*,\n            row_number() over "
            "(partition by invoice_id order by paid_at desc) as rn\n        from payments p\n    ) ranked\n"
            "    where rn = 1\n)\nselect i.invoice_id, lp.method\nfrom {{ ref('stg_invoices') }} i\n"
            "left join latest_payment lp using (invoice_id)\n")
    (site,) = sites(text)
    assert (site.key, site.source) == ("invoice_id", "payments")
    assert drop(text, site).endswith("    select * from {{ ref('stg_payments') }}\n)\nselect i.invoice_id, "
                                     "lp.method\nfrom {{ ref('stg_invoices') }} i\nleft join payments lp using "
                                     "(invoice_id)\n")


def test_a_qualify_and_a_distinct_go():
    text = ("select\n    order_id,\n    status\nfrom {{ ref('raw_orders') }}\n"
            "qualify row_number() over (partition by order_id order by updated_at desc) = 1\n")
    (site,) = sites(text)
    assert (site.form, site.key) == (QUALIFY, "order_id")
    assert drop(text, site) == "select\n    order_id,\n    status\nfrom {{ ref('raw_orders') }}\n"
    text = "select distinct\n    customer_id,\n    author_id\nfrom {{ ref('parts') }}\n"
    (site,) = sites(text)
    assert site.form == DISTINCT and drop(text, site) == "select\n    customer_id,\n    author_id\nfrom {{ ref('parts') }}\n"


def test_the_site_is_found_again_by_name_in_the_compiled_text():
    compiled = RANKED.replace("{{ source('web', 'events') }}", '"db"."main"."raw_web_events"')
    (site,) = sites(RANKED)
    assert drop(compiled, site).endswith("from source\n") and '"raw_web_events"' in drop(compiled, site)


def test_dedups_that_do_more_than_deduplicate_are_refused():
    shown = RANKED.replace("    session_id\nfrom", "    session_id,\n    delivery_number\nfrom")  # the rank is output
    filtered = RANKED.replace("    from source\n", "    from source\n    where event_id is not null\n")
    joined = RANKED.replace("    from source\n", "    from source\n    join other using (event_id)\n")
    either = RANKED.replace("where delivery_number = 1", "where delivery_number = 1 or session_id = 2")
    not_first = RANKED.replace("where delivery_number = 1", "where delivery_number = 2")
    columns = RANKED.replace("        *,\n", "        event_id,\n")  # `*` only: the CTE adds nothing but the rank
    for text in (shown, filtered, joined, either, not_first, columns):
        assert [s for s in sites(text) if s.form == ROW_NUMBER] == [], text
    assert sites("select distinct on (a) a, b from t\n") == []
    assert sites("select a, b from t\nqualify row_number() over (partition by a order by b) = 1 and b > 0\n") == []


def test_the_cleanup_is_written_into_a_plain_description_and_never_contradicts_one():
    from dataclasses import replace

    from adegen.propose.dedup import document
    from adegen.propose.purpose import ModelText

    yml = ("version: 2\n\nmodels:\n  - name: stg_web_events\n    description: Clickstream events.\n"
           "    columns:\n      - name: event_id\n")
    model = ModelText("model.p.stg_web_events", "stg_web_events", "models/stg_web_events.sql", RANKED, RANKED,
                      properties=("models/_stg.yml", yml))
    (site,) = sites(RANKED)
    assert document(site, model) == yml.replace(
        "Clickstream events.", "Clickstream events. Reads source directly, as it has one row per event_id now.")
    speaks = yml.replace("Clickstream events.", "Clickstream events, de-duplicated to the first delivery.")
    assert document(site, replace(model, properties=("models/_stg.yml", speaks))) is None
