"""The fields a sentence of the banks is filled with, for one finding in one task's voice: the
table and column as this person writes them, the entity by its business name, its value now and
what it should be, and how many others are affected in rough words. A field that cannot be
filled truthfully is absent, which rules out every sentence that needs it. What each field holds
is written down beside the banks (banks/placeholders.yaml); a sentence naming any other field fails
python/tests/test_phrase_banks.py. Pure functions.
"""
from __future__ import annotations

import re
from functools import lru_cache

from adegen.facts.measured import Sample
from adegen.prompts import words
from adegen.prompts.findings import Finding, sample_ratio
from adegen.sql import types as sql_types


# what `fields` sets beside the fields a sentence names (banks/placeholders.yaml): markers the code
# reads (render.fill, fits.fits, flag_noun), never named in a sentence
MARKERS = frozenset({"entity_is_period", "measure_is_plural", "measure_no_values_word", "example_named", "far_off",
                     "flag_column"})


def entity(f: Finding) -> str:
    """What one row of the finding's table stands for ("account"; "row" for an account-month)."""
    if len(f.key) >= 2:
        return "row"
    if len(f.key) == 1:
        e = words.entity_of_key(f.key[0], f.table)
        if e:
            return e
    return words.table_entity(f.table)


def row_per(f: Finding) -> str | None:
    """What "one row per ..." ends with: the entity ("account"), both keys' for a two-column key
    ("customer and month"); None when a row is no named thing ("one row per row", "unique per
    record" read as a template filled blind, issue 51)."""
    if len(f.key) == 2:
        parts = [words.entity_of_key(k, f.table) for k in f.key]
        return " and ".join(parts) if all(parts) and parts[0] != parts[1] and not words.GENERIC & set(parts) else None
    e = entity(f)
    return None if e in words.GENERIC else e


def who(sample: Sample, f: Finding, variant: int) -> str | None:
    """One affected entity as a person names it: by its name when the row has one ('Summit
    Foods', sometimes 'Summit Foods (A1002)'), else by its kind and key ('order 1', 'invoice
    I7001'); a row of a two-column key says both ('Helio Systems (invoice month 2025-01-01)')."""
    keys = [str(k) for k in sample.key]
    label = str(sample.label or "").strip()
    if not words.typeable(label):
        label = ""  # a "name" column of hashed or long text: nobody says "you can see it on b458c778e9bb..."
    if keys and len(keys) != len(f.key):
        return None
    if len(keys) == 2:
        second = f"{words.column_words(f.key[1])} {keys[1]}"
        if label:
            return f"{label} ({second})"
        dated = [i for i in (0, 1) if words.date_grain(f.key[i])]
        other = keys[1 - dated[0]] if len(dated) == 1 else ""
        if other and words.typeable(other) and not re.fullmatch(r"[\d.-]+", other):
            # "the positive row for 2019-04-14", never "day 2019-04-14, review sentiment positive"
            return f"the {other} row for {keys[dated[0]]}"
        parts = [f"{words.entity_of_key(c, f.table) or words.column_words(c)} {v}" for c, v in zip(f.key, keys)]
        return ", ".join(parts)
    if label:
        # "Helio Works (A1006)", never "Running Short (10)": a bare number after a name reads odd
        return f"{label} ({keys[0]})" if (keys and variant % 3 == 2 and words.typeable(keys[0])
                                          and re.search(r"[A-Za-z]", keys[0])) else label
    if not keys or not words.typeable(keys[0]):
        return None  # nobody types "conversation 156643300001311"
    if words.date_grain(f.key[0]):
        return keys[0]  # "2021-03-01 is gone", never "day 2021-03-01"
    e = words.entity_of_key(f.key[0], f.table)
    return f"{e} {keys[0]}" if e else f"the row for {keys[0]}"


def owner(sample: Sample, f: Finding, named: str) -> str:
    """The possessive of an entity: "Summit Foods'", "order 1's"."""
    label = str(sample.label or "").strip()
    return words.possessive(label if label and len(f.key) == 1 else named)


def cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text[:1].islower() else text


def flag_noun(text: str, vals: dict[str, str]) -> str:
    """"the is_active_user flag" where a sentence puts an article before a flag column's name:
    "stg_users is missing the is_active_user for some users" reads as if a column were missing
    (a bare name, "is_active_user in stg_users ...", stays as it is)."""
    name = vals.get("flag_column")
    if not name:
        return text
    return re.sub(rf"\b(the|an?|their|its) {re.escape(name)}(?! (flag|column))(?![\w`])", rf"\1 {name} flag", text,
                  flags=re.I)


def fields(f: Finding, voice, said: tuple = ()) -> dict[str, str]:
    """Every field a template of `f.kind` may use (banks/placeholders.yaml says what each holds), and
    the markers the code reads beside them (`measure_is_plural`, `flag_column`, ...: never in a sentence).
    `said`: the run's texts so far (normalised, padded with spaces), so a share is worded as none of
    them worded one (`_amount`)."""
    e = entity(f)
    es = words.plural(e)
    v: dict[str, str] = {"table": voice.table(f.table), "topic": words.table_topic(f.table), "entity": e,
                         "entities": es}
    if f.table.lower() in (e.lower(), es.lower()) and voice.table_style in (0, 1) and f.kind != "relation_kind":
        # "customers is missing customers" reads wrong: say which one is the table
        v["table"] = f"the {voice.table(f.table)} table"
    per = row_per(f)
    if per:
        v["row_per"] = per
    if voice.layer:
        v["layer"] = voice.layer
    if len(f.key) == 1:
        v["key_column"] = voice.column(f.key[0])
        if words.date_grain(f.key[0]):
            v["entity_is_period"] = "yes"  # a row per day: fits.fits keeps "all our days" out
    if f.column:
        # the column as the person writes it (`first_admin_close_at`): `column` where a sentence
        # names the column, `measure` / `Measure` where it is what the sentence is about
        v["column"] = v["measure"] = v["Measure"] = voice.column(f.column)
        if words.is_plural_word(f.column):
            v["measure_is_plural"] = "yes"  # render.fill makes its verbs agree ("the points are")
        v["a_measure"] = v["a_column"] = words.with_article(v["column"])
        v["values_word"] = {"number": "numbers", "date": "dates", "timestamp": "dates"}.get(f.col_type, "values")
        if v.get("measure_is_plural"):
            v["measure_no_values_word"] = "yes"  # "the points are", never "the points numbers are"
        elif words.singular(v["values_word"]) == f.column.lower().rsplit("_", 1)[-1]:
            v["values_word"] = "values"  # "the review_date values", never "the review_date dates"
        if f.col_type == "bool" or re.match(r"(is|has|was|can|should)_", f.column):
            v["flag_column"] = v["column"]  # "the has_past_due_invoice flag", see flag_noun
    v.update(_counts(f, voice, e, said))
    v.update(_sample(f, voice))
    v.update(_details(f, voice))
    if f.kind == "relation_kind" and not voice.convention:
        v.pop("layer", None)  # "like the other marts models" only where the layer agrees
    return v


def _amount(counted: tuple[int, int], noun: str, voice, said: tuple, other: bool = False) -> words.Amount | None:
    """One wording of `counted` (count, total: words.amounts), in this task's order, the first whose words
    (numbers and the noun aside) no text of `said` used: "about a third of the accounts" under
    several reports of one run read as a stock frame (issue 51). All worn: the task's first."""
    opts = words.amounts(*counted, noun, other)
    if not opts:
        return None
    first = voice.pick("amount-words", len(opts))
    opts = opts[first:] + opts[:first]
    return next((a for a in opts if not _worn(a.text, noun, said)), opts[0])


def _worn(text: str, noun: str, said: tuple) -> bool:
    rx = _wording(text, noun)
    return rx is not None and any(rx.search(t) for t in said)


@lru_cache(maxsize=1024)
def _wording(text: str, noun: str) -> re.Pattern | None:
    """A share's words as a pattern over normalised texts: its numbers any number, its noun left out
    ("about 40 of the 120 orders" -> " about \\d+ of the \\d+ "); None when one word is left."""
    kept = [w for w in re.findall(r"[a-z0-9_]+", text.lower()) if w not in (noun.lower(), words.plural(noun).lower())]
    if len(kept) < 2:
        return None
    return re.compile(" " + " ".join(r"\d+" if w.isdigit() else re.escape(w) for w in kept) + " ")


def _counts(f: Finding, voice, noun: str, said: tuple = ()) -> dict[str, str]:
    """How many are affected: in rough words ("most of the accounts are", "about 40 of the 120
    accounts", a wording no earlier text of the run used), or counted for a voice that counts;
    `others*` are the affected ones besides the example."""
    v: dict[str, str] = {}
    if f.count:
        amt = _amount((f.count, f.total), noun, voice, said) if f.total else None
        if voice.exact_counts or amt is None:
            n = words.count_of(f.count, noun)
            amt = words.Amount(n, f.count != 1)
            if f.total and f.count == f.total and f.count > 1:
                amt = words.Amount(f"all {n}", True)
        v["share"] = v["count"] = amt.text
        v["share_are"] = v["count_are"] = amt.verb("is", "are")
        v["share_have"] = v["count_have"] = amt.verb("has", "have")
        v["Share_are"], v["Share_have"] = cap(v["share_are"]), cap(v["share_have"])
        v["Count_are"], v["Count_have"] = v["Share_are"], v["Share_have"]
        v["count_rows"] = words.count_of(f.count, "row")
        if f.total and f.count < f.total and voice.exact_counts:
            v["count_of"] = f"{words.number(f.count)} of the {words.count_of(f.total, noun)}"
            v["count_rows_of"] = f"{words.number(f.count)} of the {words.count_of(f.total, 'row')}"
        elif f.total and not voice.exact_counts:
            v["count_of"] = amt.text
            v["count_rows_of"] = (_amount((f.count, f.total), "row", voice, said) or amt).text
        elif f.total:
            v["count_of"] = f"every {noun}" if f.count > 1 else f"the only {noun}"
        if f.count > 1:
            if voice.exact_counts:
                k = f.count - 1
                if f.total and f.count == f.total:  # "the other employee", never "the other 1 employee"
                    others = words.Amount(f"the other {words.count_of(k, noun) if k > 1 else noun}", k > 1)
                else:
                    others = words.Amount(f"{words.number(k)} other {words.plural(noun) if k > 1 else noun}", k > 1)
            else:
                others = _amount((f.count - 1, max(f.total - 1, 0)), noun, voice, said, other=True)
            v["others"] = others.text
            v["others_are"] = others.verb("is", "are")
            v["others_have"] = others.verb("has", "have")
    if f.total or f.after:
        wide = max(f.total or 0, f.after or 0) >= 10000
        v["count_before"] = words.count_of(f.total, noun, wide)
        v["count_after"] = words.count_of(f.after, noun, wide)
        v["number_before"], v["number_after"] = words.number(f.total, wide), words.number(f.after, wide)
        change = words.count_change(f.total, f.after, noun) if f.total and f.after is not None else None
        if change:
            v["count_change"] = change
    return v


def _sample(f: Finding, voice) -> dict[str, str]:
    """The one example: who, their value now and what it should be, how often they show up."""
    v: dict[str, str] = {}
    samples = list(f.samples)
    if not samples:
        return v
    s = samples[voice.pick(f"sample:{f.table}:{f.column}:{f.distance}", min(len(samples), 2))]
    w = who(s, f, voice.pick("who", 3))
    if w:
        v["example"] = w
        label = str(s.label or "").strip()
        if label:
            v["example_named"] = "yes"  # by its business name, not by a kind and an id
        v["Example"] = w if label and w.startswith(label) else cap(w)  # a name stays as written
        pos = owner(s, f, w)
        # "the positive row for 2019-04-14's" is no possessive, nor is "Helio Systems (invoice month
        # 2025-02-01)'s" (a blind reviewer's sheet held that one)
        if " row for " not in w and not re.search(r"\)'s?$", pos):
            v["example_possessive"] = pos
            v["Example_possessive"] = pos if label and len(f.key) == 1 else cap(pos)
    if s.compared and not f.detail.values_off_factor:
        pair = words.typed_pair(s.observed, s.expected, f.col_type, f.column or "")
        if pair:  # else the values stay out: a person would not type them
            v["value_observed"] = "an empty string" if s.observed == "" else pair[0]
            v["value_expected"] = "an empty string" if s.expected == "" else pair[1]
    copies = s.copies or (f.detail.max_copies if f.kind == "duplicated" else None)
    if copies:
        v["copies"] = str(copies)
        v["copies_words"] = words.times(copies)
    return v


_DIRECTION = {"values_high": "too high", "values_low": "too low"}
_GRAIN_NAMES = {"day": "daily", "week": "weekly", "month": "monthly", "quarter": "quarterly", "year": "yearly",
                "time": "timestamped"}
_GRAIN_ORDER = ("time", "day", "week", "month", "quarter", "year")
_GRAIN_START = {"month": "the first of a month", "quarter": "the first day of a quarter", "year": "January 1st"}


def _details(f: Finding, voice) -> dict[str, str]:
    """Kind-specific fields: the ratio, the grain, the shift, the swapped pair, the totals, the
    warehouse object kinds, the types and dbt's message."""
    v: dict[str, str] = {}
    if f.kind == "duplicated":
        if f.count > 1:  # "1 order appear more than once": one duplicated key is the example itself
            v["duplicate_keys"] = words.count_of(f.count, entity(f))
        v.setdefault("copies", str(2 if f.detail.max_copies is None else f.detail.max_copies))
    if f.kind == "rows_replaced" and f.detail.extra and f.detail.extra > 1:
        # "1 other appeared that don't belong": one stand-in is said with {example}'s sentences
        noun = entity(f)
        v["extra_count"] = words.count_of(int(f.detail.extra), "other" if noun != "row" else "row")
    if f.kind in _DIRECTION:
        v["direction"] = _DIRECTION[f.kind]
    if f.detail.drift:
        v["drift"] = f.detail.drift  # every changed date moved the same way
    if f.kind == "values_filled":
        now = {str(s.observed) for s in f.samples}
        v["filled_with"] = "empty strings" if now == {""} else "values"
    pairs = [p for p in f.detail.pairs if p[0] is not None and p[1] is not None]
    if f.kind == "values_changed" and pairs and f.col_type in ("text", "bool") and int(pairs[0][2]) * 2 >= f.count:
        # the change most rows share: "should be sandbox, shows prod"
        v["common_expected"] = words.value(pairs[0][0], f.col_type)
        v["common_observed"] = words.value(pairs[0][1], f.col_type)
    if f.kind in ("values_high", "values_low", "values_scaled") and _far_off(f):
        v["far_off"] = "yes"  # strong words ("way too high", "can't be that high") only for a big gap
    rm = f.detail.ratio_median
    spread = 9 if f.detail.ratio_spread is None else f.detail.ratio_spread
    if f.kind in ("values_high", "values_low") and rm and spread <= 1.5:
        rough = words.rough_ratio_words(rm)  # only when most rows are off by about that much
        if rough and (rm > 1) == (f.kind == "values_high"):
            v["rough_factor"] = rough
    r = f.detail.ratio
    if r:
        rw = words.ratio_words(r)
        if rw:
            v["factor"] = rw
        v["scaled_direction"] = v["direction"] = "too high" if r > 1 else "too low"
    grain = f.detail.grain
    gi, gb = (grain.intact, grain.broken) if grain else (None, None)
    if gi in _GRAIN_NAMES and gb in _GRAIN_NAMES:
        v["grain_expected"], v["grain_observed"] = _GRAIN_NAMES[gi], _GRAIN_NAMES[gb]
        v["more_or_fewer"] = "more" if _GRAIN_ORDER.index(gb) < _GRAIN_ORDER.index(gi) else "fewer"
        if gi in _GRAIN_START:
            v["grain_expected_start"] = _GRAIN_START[gi]
    if f.detail.shift_seconds:
        sec = float(f.detail.shift_seconds)
        v["shift"], v["shift_direction"] = words.duration_words(sec), ("later" if sec > 0 else "earlier")
    if f.detail.swap:
        a, b = f.detail.swap
        v["swapped_a"], v["swapped_b"] = words.value(a, f.col_type), words.value(b, f.col_type)
    total = f.detail.total
    if total and total.intact is not None and total.broken is not None:
        v["total_observed"], v["total_expected"] = words.two_values(total.broken, total.intact, "number",
                                                                    f.column or "")
    oi, ob = f.detail.only_intact, f.detail.only_broken
    if oi:
        v["value_gone"] = words.value(oi[0], f.col_type, f.column or "")
    if ob:
        v["value_new"] = words.value(ob[0], f.col_type, f.column or "")
    if f.kind == "labels_new" and ob:
        # the labels that do not belong, two at most: "values like "Settled" and "Void""
        v["new_labels"] = " and ".join(words.value(x, "text", f.column or "") for x in ob[:2])
        held = [words.value(x, "text", f.column or "") for x in f.detail.labels]
        if len(held) >= 2:
            v["known_labels"] = ", ".join(held[:-1]) + " or " + held[-1]       # "should only be a, b or c"
            v["known_labels_and"] = ", ".join(held[:-1]) + " and " + held[-1]  # "besides a, b and c"
    if f.kind == "relation_kind":
        kinds = f.detail.relation
        v["kind_expected"], v["kind_observed"] = (str(kinds.intact), str(kinds.broken)) if kinds else ("None",) * 2
        if voice.table_style == 2:  # "the X table ... stays a view" contradicts itself
            v["table"] = f.table
    types = f.detail.sql_type
    if types and types.intact and types.broken:
        ti, tb = type_words(types.intact), type_words(types.broken)
        if ti != tb:
            v["type_expected"], v["type_observed"] = ti, tb
    if f.detail.message:
        v["dbt_message"] = f.detail.message
    return v


def _far_off(f: Finding) -> bool:
    """Whether the measured values are off by half again or more (a median ratio, else the
    example's own two values): "12 instead of 11" is not "way too high"."""
    r = f.detail.ratio or f.detail.ratio_median
    if not r:
        r = sample_ratio(f.samples[0]) if f.samples else None
    return bool(r) and (r >= 1.5 or r <= 1 / 1.5)


_TYPE_WORDS = {"integer": "whole numbers", "decimal": "decimals", "text": "text"}


def type_words(sql_type: str) -> str:
    """A type in a user's words: its family (adegen.sql.types) where that has plain words, else its
    name in lower case ("number", "interval", "date")."""
    t = str(sql_type).lower()
    return _TYPE_WORDS.get(sql_types.family(t), t)
