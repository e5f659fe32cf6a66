"""respell_labels (labels_respelled): a block of labels one SELECT's CASEs compare the same column
with is re-spelled as a source shows them, as in ade-bench's f1004. Sites on a group of two or
more labels with the exact (multi-line) mutant; none for a single literal, labels Jinja builds, a
group already in the spelling, comments or Jinja statements; CRLF kept, the revert round trip, and
the pattern's `max_lines` bounding how far a group may spread."""
from __future__ import annotations

import dataclasses

from adegen.catalog.patterns import load_catalog
from adegen.rewrite import ModelContext, apply_site, find_sites

from test_rewrite_support import check_site

CAT = load_catalog()
PATTERN = CAT.by_id["labels_respelled"]
CTX = ModelContext(name="finishes_by_driver")

FINISHES = ("with finishes as (\n"
            "    select\n"
            "        driver_id,\n"
            "        sum(case when position_desc = 'disqualified' then 1 else 0 end) as disqualified,\n"
            "        sum(case when position_desc = 'failed to qualify' then 1 else 0 end) as failed_to_qualify,\n"
            "        count(*) as finishes\n"
            "    from {{ ref('stg_results') }}\n"
            "    group by 1\n"
            ")\n"
            "select * from finishes\n")


def mutants(sql: str, pattern=PATTERN) -> list[str]:
    """Every site's mutant (each checked against the engine's rules: revert, line endings)."""
    out = []
    for s in find_sites(sql, pattern, CTX):
        check_site(sql, s, pattern.max_lines)
        out.append(apply_site(sql, s))
    return out


def respelled(sql: str, pairs: dict) -> str:
    for old, new in pairs.items():
        sql = sql.replace(old, new)
    return sql


def test_a_block_of_counts_is_respelled_in_each_spelling():
    got = mutants(FINISHES)
    assert got == [
        respelled(FINISHES, {"'disqualified'": "'DISQUALIFIED'", "'failed to qualify'": "'FAILED TO QUALIFY'"}),
        respelled(FINISHES, {"'disqualified'": "'Disqualified'", "'failed to qualify'": "'Failed To Qualify'"}),
        respelled(FINISHES, {"'disqualified'": "'Disqualified'", "'failed to qualify'": "'Failed to qualify'"}),
    ]
    (site, *_rest) = find_sites(FINISHES, PATTERN, CTX)
    assert site.line == 4 and site.before.count("\n") == 1  # the site spans the block's two lines
    assert site.note == "labels 'disqualified', 'failed to qualify' -> UPPER CASE"


def test_one_case_labels_its_branches_not_its_results():
    sql = ("select\n    case\n        when status = 'completed' then 'done'\n        when status = 'shipped' then 'sent'\n"
           "        else 'other'\n    end as state\nfrom orders\n")
    # single-word labels: Title Case and Sentence case are one mutant
    assert mutants(sql) == [
        respelled(sql, {"'completed'": "'COMPLETED'", "'shipped'": "'SHIPPED'"}),
        respelled(sql, {"'completed'": "'Completed'", "'shipped'": "'Shipped'"}),
    ]


def test_simple_case_and_in_lists_are_groups():
    simple = "select case o.status when 'paid' then 1 when 'refunded' then -1 end as sign from orders o\n"
    assert mutants(simple)[-1] == simple.replace("'paid'", "'Paid'").replace("'refunded'", "'Refunded'")
    listed = ("select\n    count(case when trim(channel) in ('email', 'sms') then 1 end) as direct,\n"
              "    count(case when trim( channel ) = 'paid search' then 1 end) as paid\nfrom visits\n")
    assert mutants(listed)[0] == respelled(listed, {"'email'": "'EMAIL'", "'sms'": "'SMS'",
                                                    "'paid search'": "'PAID SEARCH'"})


NO_SITE = [
    # one label only
    "select sum(case when status = 'returned' then 1 else 0 end) as returned from orders\n",
    # the same label twice is no block
    "select sum(case when s = 'x' then 1 end) as a, max(case when s = 'x' then 2 end) as b from t\n",
    # two columns, one label each
    "select sum(case when status = 'returned' then 1 end) as r, sum(case when kind = 'gift' then 1 end) as g from t\n",
    # labels of two SELECTs (two CTEs) are two groups
    "with a as (select case when s = 'x' then 1 end as f from t),\nb as (select case when s = 'y' then 1 end as f from t)\n"
    "select * from a join b using (f)\n",
    # a filter is not a label block (string_literal_case's ground), even beside a CASE
    "select case when amount > 100 then 'large' end as size from orders where status in ('completed', 'shipped')\n",
    # labels without letters
    "select case when code = '01' then 'a' when code = '02' then 'b' end as c from t\n",
    # built by a Jinja loop: one literal per loop value, or a literal repeated by it
    "select\n{% for m in ['card', 'cash'] %}\n    sum(case when method = '{{ m }}' then amount end) as {{ m }}_amount,\n"
    "{% endfor %}\n    count(*) as n\nfrom payments\n",
    "select\n{% for m in methods %}\n    sum(case when method = 'card' then amount end) as card_{{ m }},\n"
    "    sum(case when method = 'cash' then amount end) as cash_{{ m }},\n{% endfor %}\n    1 as n\nfrom payments\n",
    # only in comments and Jinja statements
    "-- case when s = 'a' then 1 when s = 'b' then 2 end\n/* case when s = 'a' then 1 when s = 'b' then 2 end */\n"
    "{% set x = \"case when s = 'a' then 1 when s = 'b' then 2 end\" %}\nselect case when 1 = 1 then 'x' end as y from t\n",
]


def test_no_site_where_there_is_no_block_of_labels():
    for sql in NO_SITE:
        assert find_sites(sql, PATTERN, CTX) == [], sql


def test_a_group_already_in_a_spelling_gives_no_site_for_it():
    sql = "select case when tier = 'Gold' then 3 when tier = 'Silver' then 2 end as rank from members\n"
    assert mutants(sql) == [sql.replace("'Gold'", "'GOLD'").replace("'Silver'", "'SILVER'")]
    upper = sql.replace("'Gold'", "'GOLD'").replace("'Silver'", "'SILVER'")
    assert mutants(upper) == [sql]  # back to Title Case only
    # a partly capitalised group re-spells only what changes
    mixed = sql.replace("'Gold'", "'gold'")
    assert sql in mutants(mixed)
    (title,) = [s for s in find_sites(mixed, PATTERN, CTX) if s.after == "'Gold'"]
    assert title.before == "'gold'"


def test_crlf_and_revert_kept():
    crlf = FINISHES.replace("\n", "\r\n")
    got = mutants(crlf)  # check_site: revert round trip, CRLF kept
    assert got[0] == respelled(crlf, {"'disqualified'": "'DISQUALIFIED'", "'failed to qualify'": "'FAILED TO QUALIFY'"})
    assert "\n" not in got[0].replace("\r\n", "")


def test_max_lines_bounds_how_far_a_group_spreads():
    lines = [f"    sum(case when s = 'label {k}' then 1 else 0 end) as c{k}," for k in range(13)]
    sql = "select\n" + "\n".join(lines) + "\n    1 as n\nfrom t\n"
    assert find_sites(sql, PATTERN, CTX) == []  # 13 lines: more than the pattern's 12
    sql12 = "select\n" + "\n".join(lines[:12]) + "\n    1 as n\nfrom t\n"
    assert len(mutants(sql12)) == 2  # UPPER, and Title = Sentence ('Label 0')
    two = dataclasses.replace(PATTERN, max_lines=2)  # the engine's default for every other pattern
    assert find_sites(sql12, two, CTX) == [] and len(find_sites(FINISHES, two, CTX)) == 3


def test_no_spelling_the_normalising_call_cannot_produce():
    """`lower(trim(code)) in ('PAID', 'SETTLED')` never matches: no site writes it (a reviewer
    reads it as a contradiction); `upper(x)` only takes UPPER CASE, which is where it starts."""
    lowered = ("select\n    case\n        when lower(trim(code)) in ('paid', 'settled') then 'paid'\n"
               "        when lower(trim(code)) = 'past_due' then 'late'\n        else 'open'\n    end as status\nfrom t\n")
    assert mutants(lowered) == []
    raised = lowered.replace("lower(", "upper(").replace("'paid', 'settled'", "'PAID', 'SETTLED'") \
        .replace("= 'past_due'", "= 'PAST_DUE'")
    assert mutants(raised) == []
    plain = lowered.replace("lower(trim(code))", "code")  # Title and Sentence case coincide here
    assert mutants(plain) == [respelled(plain, {"'paid', 'settled'": "'PAID', 'SETTLED'", "= 'past_due'": "= 'PAST_DUE'"}),
                              respelled(plain, {"'paid', 'settled'": "'Paid', 'Settled'", "= 'past_due'": "= 'Past_due'"})]
