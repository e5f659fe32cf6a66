"""The base report, the way a person who looked at a table writes it: a lead sentence in one of four
frames, optionally a handle after it, or one sentence that carries the handle itself. The sentences
are in banks/base.yaml (its comments say how a report is built and why); here they are combined,
per kind and frame, into every sentence a base report may say (`SHAPES_BANK`)."""
from __future__ import annotations

import re
from functools import lru_cache

from adegen.prompts import bank

FRAMES = ("report", "rule", "question", "story")

_BASE = bank.load("base")
# lead sentences, no entity named; one sentence that names the entity; per kind and frame
LEADS: dict[str, dict[str, list[str]]] = _BASE["leads"]
WHOLE: dict[str, dict[str, list[str]]] = _BASE["whole"]
# a second sentence with a handle, after a lead; per group of kinds, then "value" for the rest. The
# value examples go on with every way of saying the value now followed by every way of saying what
# it should be (sorted: the order a task picks from)
FOLLOW: dict[str, dict[str, list[str]]] = {kind: dict(groups) for kind, groups in _BASE["follow"].items()}
FOLLOW["value"]["exact"] = [*FOLLOW["value"]["exact"],
                            *sorted({now + then for now in _BASE["exact_now"] for then in _BASE["exact_then"]})]

# a handle with no verb of its own ("Helio Systems (A1001), for example.") read clipped after a lead;
# these say "see" or "look", which reads odd after a question
_BARE_HANDLES = {"See {example}, for example.", "Look at {example}.", "Try {example}, for instance."}
_NO_FOLLOW = {"relation_kind", "build_failed", "column_gone", "column_added", "table_gone", "rows_replaced"}
_ROWS = {"rows_lost", "rows_added", "table_empty", "duplicated", "values_blank", "values_filled"}
_SAYS_RULE = re.compile(r"\b(should|supposed|one row per|unique|always|each|every)\b|\{key_column\}")
# a lead about a column's total: one entity's value after it ("The net_revenue totals from fct_orders
# are too high. Order 10 is showing 829,900 ...") read to reviewers as calling one row a total
_TOTALS = re.compile(r"\btotals?\b|\badding up\b", re.I)
# the fields that say how many are affected
_SCOPE = re.compile(r"\{(share|share_are|share_have|Share_are|Share_have|others|others_are|others_have|count|count_are|"
                    r"count_have|Count_are|Count_have|count_of|count_rows|count_rows_of|duplicate_keys|extra_count)\}")
_TABLE_SIZE = re.compile(r"\{(count_before|number_before)\}")  # how many the table should have


@lru_cache(maxsize=None)
def has_scope(tpl: str) -> bool:
    """Whether a sentence says how many are affected."""
    return bool(_SCOPE.search(tpl))


def says_how_many(tpl: str) -> bool:
    """Whether a sentence says how many are affected or how far the row count moved."""
    return has_scope(tpl) or "{count_change}" in tpl


def shapes(kind: str) -> dict[str, list[str]]:
    """Every base sentence of a kind, per frame: leads, leads with a handle after them, and the
    one-sentence reports. A lead that already says how many are affected gets no second "how
    many"; a lead that says a count gets no follow-up saying another."""
    leads, whole = LEADS.get(kind, {}), WHOLE.get(kind, {})
    follow = {} if kind in _NO_FOLLOW else FOLLOW.get(kind if kind in _ROWS else "value", FOLLOW["value"])
    extra = [s for ss in follow.values() for s in ss]
    rules = set(follow.get("rule", []))
    out: dict[str, list[str]] = {}
    for frame in FRAMES:
        sentences = list(leads.get(frame, [])) + list(whole.get(frame, []))
        for lead in leads.get(frame, []):
            sentences += [f"{lead} {s}" for s in extra
                          if not (lead.endswith("?") and s in _BARE_HANDLES)
                          # a lead that says how many (a share, a count, how far the row count moved)
                          # gets no second "how many": "I count a few fewer rows than ... I make it a few fewer"
                          if not (says_how_many(lead) and says_how_many(s))
                          and not (_TABLE_SIZE.search(lead) and _TABLE_SIZE.search(s))
                          and ("one of them" not in s or has_scope(lead) or "{entities}" in lead)  # "them": said before
                          and not (s in rules and _SAYS_RULE.search(lead))  # the lead already says what is right
                          # nor its values twice
                          and not ("{common_expected}" in lead and ("{value_observed}" in s or "{value_expected}" in s))
                          and not ("noticed" in lead and "noticed" in s)  # "I just noticed ... I noticed it on X."
                          and not (_TOTALS.search(lead) and s not in rules)]  # a total, then one row's value
        if sentences:
            out[frame] = sentences
    return out


SHAPES_BANK = {kind: shapes(kind) for kind in LEADS}
