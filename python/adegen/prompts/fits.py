"""Whether a template's words agree with the measured facts beyond its fields: "some" is not said
of nearly every row, "is empty now" only of (nearly) all of them, "the same factor" only with a
steady ratio, a total only of a column people add up. The template banks hold a few thousand
sentences, so what a template claims is worked out once (`says`)."""
from __future__ import annotations

import re
from functools import lru_cache

from adegen.prompts.findings import MOST, Finding
from adegen.prompts.words import GENERIC

# words that claim every row ("is empty now", "across the board") need nearly every row: a blind
# reviewer caught "effective_monthly_value_usd ... is empty now" where 11 of 90 accounts kept theirs
ALL_SHARE = 0.97
_ZERO = re.compile(r"^-?0(\.0+)?$")


# words that say (nearly) every row is affected: only when the measurement says so. A column that
# "is empty now" or "went blank" with no share named reads as blank on every row (a quarter of the
# sessions were "customer_tier in fct_sessions is empty now.")
_ALL = re.compile(r"whole column|every row|across the board|\b[Aa]ll the \{|[Ee]verything|"
                  r"\b[Ee]very \{(column|measure|entity)\}|the rest look|the other \{entities\}|are all \{|"
                  r"consistently|is empty now|went blank|go blank|empty in \{table\}\?|and it's empty\.")


def fits(tpl: str, f: Finding, vals: dict[str, str]) -> bool:
    """Whether a template's words agree with the facts beyond its fields: no "some" when every
    entity is affected and no "the whole column" when few are, no "only 0", no "the same factor"
    without a steady ratio."""
    claims = says(tpl)
    if f.total and f.count and f.count >= MOST * f.total and "some" in claims:
        return False  # 87 of 99 orders blank is not "empty for some orders"
    if f.count == 1 and ("some" in claims or "one_of" in claims):
        return False  # one account of 24 gone is not "some of them are gone", nor "for example"
    if "all" in claims and not (f.total and f.count >= ALL_SHARE * f.total):
        return False  # 79 of 90 accounts blank is not "is empty now": the other 11 still have values
    if "only_obs" in claims and _ZERO.match(str(vals.get("value_observed", "")).replace(",", "")):
        return False
    if "same_factor" in claims and "factor" not in vals:
        return False
    if (vals.get("entity") == "row" or vals.get("entity_is_period")) and "our_es" in claims:
        return False  # nobody says "should list all our rows", "some of their rows went", "our day counts"
    if vals.get("entity") in GENERIC and "row_vs_entity" in claims:
        return False  # "more rows than rows", "more than one row for the same row": a row is no entity
    if "all_before" in claims and f.total < 2:
        return False  # "All 1 order are gone": a table of one row is not "all" of anything
    if vals.get("filled_with") == "empty strings" and "value" not in claims:
        return False  # an empty string where a null belongs is not "a cancel reason"
    if "sum" in claims and not _summable(f.column or ""):
        return False  # "adding up days_since_last_login" is not something anyone does
    if "marked" in claims and f.col_type not in ("text", "bool"):
        return False  # "marked" fits a category, not a date or an amount
    if f.kind in ("values_high", "values_low", "values_scaled") and "far_off" not in vals and "strong" in claims:
        return False
    return True


@lru_cache(maxsize=None)
def says(tpl: str) -> frozenset:
    """What a template's own words claim, for `fits` (the banks are large; worked out once)."""
    checks = {"some": re.search(r"(^|\. )(Some|Part of) |\b(some|part) (of (the|their) )?\{entities\}|"
                                r"a number of \{entities\}", tpl),
              "all": _ALL.search(tpl),
              "only_obs": "only {value_observed}" in tpl,
              "same_factor": "same factor" in tpl or "off the same way" in tpl,
              # the entities as things the business owns, counts or looks for
              "our_es": re.search(r"\bour (list of )?\{entit(y|ies)\}|\{entity\} counts|\btheir \{entities\}|"
                                  r"\bEach \{entity\} is supposed to be in|looking for some \{entities\}", tpl),
              # rows set against the entities they stand for ("more rows than accounts")
              "row_vs_entity": re.search(r"\brows? (than|for the same|per) \{entit", tpl),
              "all_before": re.search(r"\b[Aa]ll \{(count_before|number_before)\}", tpl),
              "one_of": re.search(r"\b(for example|for one|for instance|one of them|a good example|alone)\b", tpl),
              "value": re.search(r"\{(filled_with|value_observed)\}", tpl),
              "sum": _SUM_WORDS.search(tpl), "marked": " marked {" in tpl, "strong": _STRONG.search(tpl)}
    return frozenset(k for k, v in checks.items() if v)


_SUM_WORDS = re.compile(r"\b(adding up|add up|totals?|totaling|summing)\b", re.I)
# name parts of a column people add up (amounts, counts), and of one they don't (ratios, ranks, ids)
_SUMMABLE = {"amount", "amounts", "revenue", "cost", "costs", "price", "total", "sum", "count", "qty", "quantity",
             "units", "cents", "dollars", "usd", "eur", "gbp", "value", "fee", "fees", "balance", "mrr", "arr",
             "spend", "sales", "paid", "credit", "debit", "payment", "payments", "refund", "discount", "tax",
             "points", "minutes", "hours", "seconds", "calls", "sessions", "orders", "items", "profit", "margin",
             "income", "charge", "charges", "sold", "outstanding"}
_NOT_SUMMABLE = {"avg", "average", "mean", "median", "rate", "ratio", "pct", "percent", "percentage", "share",
                 "rank", "since", "score", "id", "age", "key"}


def _summable(column: str) -> bool:
    """Whether people add a column up (amounts, counts), so a report may speak of its total."""
    parts = set(re.split(r"[^a-z0-9]+", column.lower()))
    return bool(parts & _SUMMABLE) and not parts & _NOT_SUMMABLE


# words for a big gap, kept for values off by half again or more
_STRONG = re.compile(r"\bso (high|low)\b|can't be that|\bway (too|off|out|more|\{direction|\{scaled_direction)|"
                     r"inflated|far \{(direction|scaled_direction)|blew up|out of line|so much|a lot (higher|lower)|"
                     r"never used to be this|no way the .* is this")
