"""No two tasks of a run share a frame or an opening (adegen.prompts.frames): blind reviewers on real
projects named stock frames seen under several reports ("X, for one, has N rows", "Not sure it's
related, but also:") as the first sign of a generated set. The frame check as a pure function, a
simulated run of one kind of finding (the writer reaches for fresh frames while it has them), and
the example project's real build (the session's `acme_tasks_built`)."""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import yaml
from test_prompts import obs, request, value_table

from adegen import prompts
from adegen.prompts import frames


def test_a_frame_is_the_words_around_the_names():
    shared = frames.shared([
        "fct_orders, for one, has 12 rows.",
        "dim_accounts, for one, has 9,300 rows.",
        "Helio Systems (A1001) is one of them.",
        "Summit Foods is one of them.",
        "The amount in fct_orders is too high.",
        "Why is the revenue in fct_sales so low?",
    ])
    assert [(s.first, s.second) for s in shared] == [(0, 1), (2, 3)], shared
    # the same opening is a frame of its own; ordinary words around one name are not
    assert frames.shared(["Since the last run, fct_a is empty.", "Since the last run, the amount is off."])
    assert not frames.shared(["fct_a is empty.", "fct_b has duplicate orders."])


def test_names_given_are_masked():
    a, b = "The converted flag in fct_sessions is wrong.", "Filtering on the converted flag in fct_web gives odd rows."
    assert frames.shared([a, b])
    assert not frames.shared([a, b], names={"converted"})


def test_a_run_of_one_kind_of_finding_uses_a_fresh_frame_for_every_task():
    """Eight tasks whose bases all report a value too high on some table: each gets a frame and an
    opening no earlier task of the run used."""
    said: list[str] = []
    bases = []
    for i, (table, column) in enumerate([("fct_revenue", "net_amount"), ("mart_account_360", "avg_csat_score"),
                                         ("fct_orders", "order_total"), ("dim_accounts", "seat_count"),
                                         ("fct_sessions", "page_views"), ("rpt_monthly", "revenue"),
                                         ("fct_payments", "amount_cents"), ("dim_products", "list_price")]):
        t = value_table(table, 0, column=column, obs_v="180", exp_v="45", changed=60, total=90)
        req = request(obs(t), model=table, seed=f"run:{table}", order=i, avoid=frozenset(said))
        ps = prompts.write_prompts(req)
        bases.append(ps.base)
        said += list(ps.prompts.values())
    assert frames.shared(bases, names={"180", "45"}) == [], "\n".join(bases)



def test_a_run_words_the_same_share_differently_task_by_task():
    """Five tasks of a run whose findings each cover 38 of 120 rows: each says how many in words no
    earlier task used ("about 40 of the 120 orders", "a good chunk of the orders", ...), never the
    stock "about a third of" (issue 51); once every wording is used, the task's own comes back."""
    from adegen.prompts import fields, render
    from adegen.prompts.findings import Finding

    f = Finding("values_high", "fct_orders", column="amount", col_type="number", count=38, total=120,
                key=["order_id"])
    said: list[str] = []
    shares = []
    for i in range(5):
        share = fields.fields(f, render.Voice(f"run:task{i}", exact_counts=False), tuple(said))["share"]
        shares.append(share)
        said.append(f" {prompts.norm(f'The amount in fct_orders{i} is too high for {share}.')} ")
    assert len(set(shares[:4])) == 4 and not any("third" in s for s in shares), shares
    # the numbers and the noun aside: "about 40 of the 120 orders" is worn by "about 90 of the 987 customers"
    worn = (f" {prompts.norm('too high for about 90 of the 987 customers')} ",)
    assert "about" not in fields.fields(f, render.Voice("run:task0", exact_counts=False), worn)["share"]


def test_no_join_of_two_reports_repeats_in_a_run():
    """A compound message's join ("Also,", "One more:", a second paragraph) is none the run used
    before, by frame or by its own words under another report; the stock "Separately," and "while
    I'm at it" are gone (issue 51)."""
    from adegen.prompts import joins, phrases

    assert not [j for j in phrases.TWO_REPORTS if "Separately" in j or "while I'm at it" in j]
    said: tuple = ()
    used = []
    for _ in range(len(phrases.TWO_REPORTS)):
        _text, join = joins.two_reports("The amount in fct_a is too high.", "Why is fct_b empty?", "seed", said)
        used.append(join)
        said += (join,)
    assert sorted(used) == sorted(phrases.TWO_REPORTS)
    also = [j for j in phrases.TWO_REPORTS if " Also, " in j][0]
    for seed in ("a", "b", "c", "d"):
        text, join = joins.two_reports("A is off.", "B is off.", seed, (" also the other table looks off ",))
        assert join != also, text

def test_the_example_projects_run_shares_no_frame(acme_tasks_built):
    out, doc = acme_tasks_built
    names = {m for t in doc["tasks"] for m in (t["model"],)}
    texts, compound = {}, set()
    for path in sorted(Path(out).glob("tasks/*/task.yaml")):
        y = yaml.safe_load(path.read_text())
        texts[y["task_id"]] = {p["key"]: p["prompt"] for p in y["prompts"]}
        if "compound" in (y.get("tags") or []):
            compound.add(y["task_id"])
    bases = [ps["base"] for ps in texts.values()]
    assert len(bases) >= 4
    assert frames.shared(bases, names) == [], bases
    # nor any two prompts of two different tasks, the compound task's message of two reports with
    # them (a task's own keys may echo each other)
    keyed = [(tid, text) for tid, ps in texts.items() for text in ps.values()]
    clashes = [(keyed[s.first], keyed[s.second], s.what) for s in frames.shared([t for _, t in keyed], names)
               if keyed[s.first][0] != keyed[s.second][0]]
    assert clashes == []
    # no stock share or join (issue 51), and the compound's keys each joined their own way
    stock = [t for _, t in keyed if re.search(r"\ba third of\b|\bSeparately,|while I'm at it", t)]
    assert stock == []
    for tid in compound:
        used = [_join_of(t) for t in texts[tid].values()]
        assert None not in used and len(set(used)) == len(used), texts[tid]


def _join_of(text: str) -> str | None:
    """The words a compound message joins its two reports with (the longest join of the bank in it)."""
    from adegen.prompts import phrases

    joins = [j.format(first_report="\0", second_report="\1", second_aside="\1").split("\0")[1].split("\1")[0]
             for j in phrases.TWO_REPORTS]
    found = [j for j in joins if j.strip() and j in text] or [j for j in joins if j in text]
    return max(found, key=len) if found else None
