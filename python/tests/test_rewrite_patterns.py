"""Every pattern: a positive fixture with the exact expected mutant, and a negative fixture where
the same tokens sit only in a comment, a string literal or Jinja (no site)."""
from __future__ import annotations

import dataclasses

import pytest
import yaml

from adegen.core.paths import optional_patterns_dir
from adegen.catalog.patterns import load_catalog
from adegen.rewrite import ModelContext, apply_site, changed_tokens, find_sites

from test_rewrite_support import SQL_FIXTURES, check_site, macro_matches

# the shipped catalog plus the optional patterns (patterns/optional: --patterns-dir), whose
# operators these tests keep exercised
CATALOG = load_catalog([optional_patterns_dir()])
CASES = {c["pattern"]: c for c in yaml.safe_load((SQL_FIXTURES / "pattern_cases.yaml").read_text())["cases"]}
CTX = ModelContext(
    name="m", refs=("stg_orders",), sources=(("shop", "orders"),), materialized="table", columns=("a", "b"),
    sibling_models=("stg_order_items", "stg_payments"), project_name="acme",
    source_tables=(("shop", "orders"), ("shop", "order_items"), ("shop", "payments")),
)
NEG_CTX = dataclasses.replace(CTX, refs=(), sources=(), materialized="ephemeral")


def ctx_for(case):
    ctx = dataclasses.replace(CTX, materialized=case["materialized"]) if "materialized" in case else CTX
    if "upstream" in case:  # models this one reads, with their SQL (convert_again reads them)
        ctx = dataclasses.replace(ctx, upstream_models=tuple(case["upstream"]), model_sql=case["upstream"].get)
    if "downstream" in case:  # models that read this one, with their SQL (add_exclusion reads them)
        ctx = dataclasses.replace(ctx, downstream_models=tuple(case["downstream"]), model_sql=case["downstream"].get)
    if "context" in case:  # other ModelContext fields (accepted_values: {column: [values]})
        extra = dict(case["context"])
        if "accepted_values" in extra:
            extra["accepted_values"] = tuple((c, tuple(v)) for c, v in extra["accepted_values"].items())
        if "staged_inputs" in extra:  # [[model, [kind, target]]]: a source target is [source, table]
            extra["staged_inputs"] = tuple((m, (k, t if isinstance(t, str) else tuple(t)))
                                           for m, (k, t) in extra["staged_inputs"])
        ctx = dataclasses.replace(ctx, **extra)
    return ctx


def test_every_pattern_has_a_case():
    assert sorted(CASES) == sorted(CATALOG.by_id)


@pytest.mark.parametrize("pid", sorted(CATALOG.by_id))
def test_positive(pid):
    case, pattern = CASES[pid], CATALOG.by_id[pid]
    ctx = ctx_for(case)
    sites = find_sites(case["sql"], pattern, ctx)
    assert len(sites) == case["sites"]
    assert apply_site(case["sql"], sites[0]) == case["expected"]
    assert macro_matches(case["sql"], pattern.to_macro_dict(), ctx)
    for s in sites:
        assert s.pattern_id == pid
        check_site(case["sql"], s, pattern.max_lines)
        removed, added = changed_tokens(s)
        assert removed or added
    assert [s.index for s in sites] == list(range(len(sites)))
    assert [s.start for s in sites] == sorted(s.start for s in sites)


def _spell(seq):
    return " ".join("'x'" if t == "''" else ("{{ x }}" if t == "{{" else t) for t in seq)


@pytest.mark.parametrize("pid", sorted(CATALOG.by_id))
def test_negative_tokens_only_in_comments_strings_jinja(pid):
    pattern = CATALOG.by_id[pid]
    if not pattern.applies_when:
        pytest.skip("applies to every model (gated by `requires` only)")
    text = " ".join(_spell(s) for s in pattern.applies_when)
    sql = (
        f"-- {text}\n"
        f"/* {text} */\n"
        f"{{# {text} #}}\n"
        f"{{% set unused = \"{text}\" %}}\n"
        f"select '{text.replace(chr(39), chr(39) * 2)}' as a from t\n"
    )
    assert find_sites(sql, pattern, NEG_CTX) == []
    assert find_sites(sql, pattern, CTX) == [] or pattern.applies_when == (("{{",),)
    assert not macro_matches(sql, pattern.to_macro_dict(), NEG_CTX)
    # the same text inside a Jinja expression yields nothing either (only the `{{` token)
    jinja = f"select {{{{ \"{text}\" }}}} as a from t\n"
    assert find_sites(jinja, pattern, NEG_CTX) == []


def test_case_preserved_and_no_identity_mutants():
    p = CATALOG.by_id["inner_join_to_left"]
    (s,) = find_sites("select * from a INNER JOIN b on a.id = b.id\n", p, CTX)
    assert s.after == "LEFT"
    # two edits that give the same text are one site
    p = CATALOG.by_id["case_branch_dropped"]
    assert len(find_sites("select case when a then 1 when a then 1 end as x from t\n", p, CTX)) == 1


def test_first_value_flip_reads_the_window_after_the_arguments():
    """FIRST_VALUE's ORDER BY sits in the OVER ( ... ) after its arguments: only a DESC there is
    dropped (an ORDER BY inside the arguments, DuckDB's ordered form, is read first); an ascending
    window or a named window gives no site."""
    p = CATALOG.by_id["first_value_order_flipped"]
    two = ("select first_value(a) over (partition by k order by t asc) as first_a,\n"
           "       first_value(a) over (partition by k order by t desc nulls last) as last_a from x\n")
    (s,) = find_sites(two, p, CTX)
    assert apply_site(two, s).splitlines()[1].strip() == (
        "first_value(a) over (partition by k order by t nulls last) as last_a from x")
    for none in ("select first_value(a) over (partition by k order by t) as a0 from x\n",
                 "select first_value(a) over w as a0 from x window w as (order by t desc)\n"):
        assert find_sites(none, p, CTX) == [], none
    ordered = "select first_value(a order by t desc) over (partition by k) as a0 from x\n"
    (s,) = find_sites(ordered, p, CTX)
    assert apply_site(ordered, s) == "select first_value(a order by t) over (partition by k) as a0 from x\n"


def test_count_star_only_for_a_key_of_the_left_joined_side_in_a_grouped_select():
    """count(o.order_id) -> count(*) only where o is LEFT JOINed in the same grouped SELECT and the
    column is its join key or an id: a column NULL on matched rows too, the preserved side, an inner
    join or an ungrouped SELECT gives no site."""
    p = CATALOG.by_id["count_rows_of_left_join"]
    base = ("select c.customer_id, {item} as n\nfrom customers as c\n{join} orders as o\n"
            "    on c.customer_id = o.customer_id\n{tail}")
    grouped = "group by 1\n"
    (s,) = find_sites(base.format(item="count(o.customer_id)", join="left join", tail=grouped), p, CTX)
    assert s.before.strip() == "o.customer_id" and s.after == "*"
    for item, join, tail in (("count(o.shipped_at)", "left join", grouped),
                             ("count(c.customer_id)", "left join", grouped),
                             ("count(o.order_id)", "inner join", grouped),
                             ("count(o.order_id) over (partition by c.customer_id)", "left join", "")):
        assert find_sites(base.format(item=item, join=join, tail=tail), p, CTX) == [], (item, join)


def test_staging_bypassed_reads_what_a_one_input_staging_model_reads():
    """Discovery gives each model the models it refs that read one seed or one source; a ref to
    such a model becomes a ref to the seed (or a source() call), other refs give no site."""
    def entry(name, deps, refs=(), sources=()):
        return {"unique_id": f"model.p.{name}", "name": name, "package_name": "p", "depends_on": list(deps),
                "refs": list(refs), "sources": [list(s) for s in sources]}
    models = [entry("stg_payments", ["seed.p.raw_payments"], refs=["raw_payments"]),
              entry("stg_orders", ["source.p.shop.orders"], sources=[("shop", "orders")]),
              entry("int_both", ["model.p.stg_payments", "model.p.stg_orders"], refs=["stg_payments", "stg_orders"]),
              entry("customers", ["model.p.stg_payments", "model.p.stg_orders", "model.p.int_both"],
                    refs=["stg_payments", "stg_orders", "int_both"])]
    ctx = ModelContext.from_discovery(models[-1], {"models": models})
    assert ctx.staged_inputs == (("stg_payments", ("ref", "raw_payments")),
                                 ("stg_orders", ("source", ("shop", "orders"))))
    p = CATALOG.by_id["staging_bypassed"]
    sql = ('select * from {{ ref("stg_payments") }} p\njoin {{ ref(\'stg_orders\') }} o using (order_id)\n'
           "join {{ ref('int_both') }} b using (order_id)\n")
    first, second = find_sites(sql, p, ctx)
    assert apply_site(sql, first).splitlines()[0] == 'select * from {{ ref("raw_payments") }} p'
    assert apply_site(sql, second).splitlines()[1] == "join {{ source('shop', 'orders') }} o using (order_id)"
    assert first.placeholders == {"original_ref": "stg_payments", "wrong_ref": "raw_payments"}
