"""Fill the sentences of `phrases` for one finding: the fields, the candidate texts of one level in
a per-task order, and the whole prompt (opening + body + request). Pure functions; the order of
the candidates comes from a hash of the seed, so a task always gets the same text."""
from __future__ import annotations

import hashlib
import random
import re
import string
from dataclasses import dataclass
from functools import lru_cache

from adegen.prompts import phrases
from adegen.prompts.echoes import echoes
from adegen.prompts.fields import cap as _cap, fields, flag_noun
from adegen.prompts.findings import NOT_DATA, Finding
from adegen.prompts.fits import fits as _fits
from adegen.prompts.phrases_base import has_scope
from adegen.prompts.words import plural_verbs


def spin(seed: str, slot: str, n: int) -> int:
    """A stable index in range(n) for (seed, slot)."""
    h = hashlib.sha256(f"{seed}|{slot}".encode()).digest()
    return int.from_bytes(h[:8], "big") % max(n, 1)


def shuffled(seq: list, seed: str, slot: str) -> list:
    """`seq` in a stable order of its own for (seed, slot). Unlike a rotation, which keeps the
    neighbours together, every item is equally likely to come first: a bank built as "each lead
    x each follow-up" would otherwise give most tasks the first follow-up of their lead."""
    out = list(seq)
    random.Random(hashlib.sha256(f"{seed}|{slot}".encode()).digest()).shuffle(out)
    return out


def rotated(seq: list, seed: str, slot: str) -> list:
    if not seq:
        return []
    i = spin(seed, slot, len(seq))
    return list(seq[i:]) + list(seq[:i])


# the frames of a base report (phrases_base): a statement, the rule the data breaks, a question,
# what the person was doing when they saw it; and how much concrete detail it gives: none (the
# table, the column and the kind of wrong), one handle (an entity by its business name), or one
# entity's value now and what it should be. Blind reviews (issue 12) read an id with no values
# ("Invoice I7001, for example") and stock counts on most prompts of a set as generated, and rated
# reports without an example low on usefulness; an example in the loose way people type it ("For
# order 10 I get 8299, it should be 0") read as a person's. So about half the bases quote one
# entity's values (a little under half when the seed draws the detail, four in seven along a run's
# DETAIL_CYCLE; test_prompts_voice pins the shares), a quarter say what the writer was doing (such
# reports read generated 17% of the time against 62% over 48 labels; more, and the openers read as
# rotated), and questions stay a minority frame (a question lead on every other prompt became a
# frame of its own in the reviews).
SHAPES = ("report", "rule", "question", "story")
SHAPE_WEIGHTS = (6, 3, 3, 4)
DETAILS = ("none", "handle", "exact")
DETAIL_WEIGHTS = (8, 4, 9)
_POOL = tuple(s for s, w in zip(SHAPES, SHAPE_WEIGHTS) for _ in range(w))
_DETAIL_POOL = tuple(d for d, w in zip(DETAILS, DETAIL_WEIGHTS) for _ in range(w))
# the same shares laid out in a cycle that a run walks through task by task (from a place of its
# own): drawn independently, five tasks of one run came out with no example at all (every report
# vague, rated useful 3) or with one on every report (every report read generated); any five
# tasks in a row of the cycle have two or three examples.
# None quotes values: four in seven name one entity, three say neither. Issue 28's blind task
# reviews (2026-12-03, three reviewers, 60 labels) judged the task, not the sentence: a report that
# quotes the value a row should have ("Customer 22 should be 2018-03-01", "it was 1 last week")
# gives the fix away; those tasks were rated value 2.0-2.3 against 3.0 for the same kinds of bug
# described without values, and ade-bench's own reports name the entity and the symptom, never the
# answer. `exact` stays a fallback (FALLBACK) and the seed-drawn detail of a lone prompt.
DETAIL_CYCLE = ("handle", "none", "handle", "none", "handle", "handle", "none")
# when a task's detail cannot be said (no short name, values nobody would type), less detail
# comes first, more only when nothing else fits
FALLBACK = {"none": ("none", "handle", "exact"), "handle": ("handle", "none", "exact"),
             "exact": ("exact", "handle", "none")}


@dataclass(frozen=True)
class Voice:
    """Per-task style: how tables and columns are written, kept the same across a task's levels,
    and the frame, detail and scope of its base report."""
    seed: str
    table_style: int = 0     # 0 plain, 1 `backticks`, 2 "the X table", 3 "the X model"
    layer: str = ""          # words for the mutated model's layer ("marts"), "" when unknown
    convention: bool = False  # the model's layer mostly uses the intact materialization
    exact_counts: bool = True  # "76 of the 90 accounts" (else "most of the accounts")
    shape: str = "report"    # one of SHAPES
    detail: str = "exact"    # one of DETAILS
    scope: bool = True       # says how many are affected ("for most of the accounts")
    period: bool = True      # ends with a full stop (some people leave it off)

    @classmethod
    def for_seed(cls, seed: str, layer: str = "", convention: bool = False, run: str = "",
                 order: int | None = None) -> "Voice":
        """The voice of one task; `order` (its place in the run `run`) spreads the detail of a
        run's base reports over DETAIL_CYCLE, else the seed draws it."""
        # most people write names plain; some say "the X table" or "the X model", few quote them
        table_style = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 3, 3, 1)[spin(seed, "table-style", 16)]
        if order is None:
            detail = _DETAIL_POOL[spin(seed, "detail", len(_DETAIL_POOL))]
        else:
            detail = DETAIL_CYCLE[(spin(run, "detail-cycle", len(DETAIL_CYCLE)) + order) % len(DETAIL_CYCLE)]
        # people round counts ("most of the accounts"); only an exact example gets exact values
        return cls(seed, table_style, layer, convention, False, _POOL[spin(seed, "shape", len(_POOL))], detail,
                   spin(seed, "scope", 20) < 3, spin(seed, "period", 12) != 0)

    def pick(self, slot: str, n: int) -> int:
        return spin(self.seed, slot, n)

    def detail_for(self, key: str) -> str:
        """The detail of one key: the voice's for base; medium names at most one entity; the
        others none."""
        if key == "base":
            return self.detail
        return ("none", "handle")[spin(self.seed, "detail:medium", 2)] if key == "medium" else "none"

    def levels(self, key: str = "base") -> tuple:
        """The body levels a report is tried at, in order: this key's frame, the other frames,
        then the older fixed levels (`specific` quotes values, `general` does not)."""
        shape = self.shape if key == "base" else _POOL[spin(self.seed, f"shape:{key}", len(_POOL))]
        rest = rotated([s for s in SHAPES if s != shape], self.seed, f"shapes:{key}")
        older = ("specific", "counts", "general") if self.detail_for(key) == "exact" else ("general", "specific", "counts")
        return (shape, *rest, *older)

    def table(self, name: str, first: bool = True) -> str:
        if self.table_style == 1:
            return f"`{name}`"
        if self.table_style == 2 and first:
            return f"the {name} table"
        if self.table_style == 3 and first:
            return f"the {name} model"
        return name

    def column(self, name: str) -> str:
        """A column as it is named (people copy first_admin_close_at: words made from the name,
        "the first admin close time", or a name in quotes read generated); whoever writes tables
        in backticks writes columns the same way."""
        return f"`{name}`" if self.table_style == 1 else name


# the fields that name the example entity, and the ones that say the labels a column held
_EXAMPLE = ("example", "Example", "example_possessive", "Example_possessive")
_KNOWN = re.compile(r"\{known_labels(_and)?\}")


@dataclass(frozen=True)
class Place:
    """Where a body goes: the prompt key, a second table it names (hard level), and the texts
    the run already used (`norm`ed, padded with spaces), so a frame another task used comes later."""
    key: str = "base"
    second: Finding | None = None
    said: tuple = ()


# the template banks hold a few thousand sentences (every lead with every follow-up): what depends
# on a template alone is worked out once
@lru_cache(maxsize=None)
def _names(template: str) -> tuple[str, ...]:
    return tuple(n for _, n, _, _ in string.Formatter().parse(template) if n)


def fill(template: str, values: dict[str, str]) -> str | None:
    if any(n not in values for n in _names(template)):
        return None
    text = template.format(**values)
    measure = values.get("measure", "")
    if values.get("measure_no_values_word"):
        text = re.sub(rf"(?<![\w`]){re.escape(measure)} (numbers|dates|values)\b", measure, text)
    if values.get("measure_is_plural"):
        text = plural_verbs(text, measure)
    if re.fullmatch(r"[a-z]+", measure):  # "The price in X ...", never "price in X ..."
        # (at the start "the ": bodies capitalises it unless a lead-in runs into it)
        text = re.sub(rf"^{measure}(?= )", f"the {measure}", text)
        text = re.sub(rf"([.?!] ){measure}(?= )", rf"\1The {measure}", text)
    return flag_noun(text, values)


def body_templates(f: Finding, level: str, voice: Voice, place: Place = Place()) -> tuple[list[str], dict]:
    """The templates of one level for a finding in this task's order, and the values they are
    filled with (body_of). The order depends on the templates alone, so a caller that needs the
    first few bodies fills only those: a level holds a few hundred (every lead with every
    follow-up), and filling them all for every key of every candidate was most of the prompt
    phase."""
    bank = phrases.BODIES.get(f.kind, {})
    vals = fields(f, voice, place.said)
    if voice.detail_for(place.key) != "exact" and "example_named" not in vals:
        # an entity by kind and id ("Invoice I7001, for example") only next to its values: on
        # its own it is the row a program picked, not one a person ran into
        for name in _EXAMPLE:
            vals.pop(name, None)
    if place.second is not None:
        # both tables written alike ("Both driver_points and constructor_points", never "Both
        # the driver_points table and constructor_points")
        vals["table"] = voice.table(f.table, first=False)
        vals["second_table"] = voice.table(place.second.table, first=False)
        marts = re.compile(r"^(rpt|mart|marts|fct|fact|dim|agg|obt|report)_", re.I)
        vals["table_group"] = "reports" if marts.match(f.table) and marts.match(place.second.table) else "tables"
        tpls = rotated(phrases.SEVERAL, voice.seed, f"several:{level}:{place.key}")
    else:
        tpls = shuffled(bank.get(level, []), voice.seed, f"body:{f.kind}:{level}:{place.key}")
        if level == "specific" and not f.samples:
            tpls = rotated(bank.get("specific_nokey", []), voice.seed, f"body:{f.kind}:nokey:{place.key}") + tpls
        # the detail this key gives first (then less, then more), a frame no other task of the
        # run used before one it did, and the voice's choice of saying how many are affected
        order = FALLBACK[voice.detail_for(place.key)]
        worn = Worn.of(place.said)
        # a measured factor ("roughly double", "ten times what it should be") is what makes
        # a report without an example row worth reading, so it comes first among the reports
        # without one (body_of drops a template whose field is missing)
        # a category most changed rows share ("marked unassigned when they should be admin") says
        # what is wrong; "wrong for every conversation" alone was rated useful 2-3
        pair = "common_expected" in vals and place.key == "base" and voice.detail_for(place.key) != "exact"
        base = place.key == "base"
        # labels that don't belong said beside the ones that do ("should only ever be paid,
        # past_due or open"): the agent learns what to map back to, not how
        known = "known_labels" in vals
        tpls.sort(key=lambda t: (order.index(detail_of(t)), worn(t), base and _vague(t, f.kind),
                                 pair and "{common_expected}" not in t, known and not _KNOWN.search(t), _no_factor(t),
                                 has_scope(t) != voice.scope))
    return tpls, vals


def body_of(tpl: str, f: Finding, vals: dict) -> tuple[str, bool, str] | None:
    """One template filled (body_templates' values), with whether its first letter may be
    lower-cased after a lead-in; None when its words do not fit the facts or a field is missing."""
    if not _fits(tpl, f, vals):
        return None
    text = fill(tpl, vals)
    if not text:
        return None
    # a sentence that starts with a word of the template (not a name) may run on from
    # a lead-in; so may a generated "account A1001"
    lower_ok = not tpl.startswith("{") or (
        tpl.startswith(("{Example}", "{Example_possessive}")) and vals.get("Example", "") != vals.get("example", ""))
    # "the X table" written for {table}, or an ordinary word, starts a sentence
    styled = text.startswith("the ") or tpl.startswith(_WORD_FIELDS)
    return (_cap(text) if styled or not tpl.startswith("{") else text, lower_ok or styled, tpl)


@lru_cache(maxsize=None)
def _no_factor(tpl: str) -> bool:
    return not _FACTOR.search(tpl)


# what a sentence about changed values says beyond "wrong": how many, which way, from what to what
_SAYS_WHAT = re.compile(r"\{(share|Share_are|Share_have|drift|common_expected|common_observed|count_of|count_are|"
                        r"count_have|count_rows|count_rows_of|duplicate_keys|extra_count|Count_are|Count_have|example|"
                        r"Example|example_possessive|Example_possessive|value_observed|value_expected|rough_factor|"
                        r"factor)\}")
_VAGUE_KINDS = {"values_changed", "values_high", "values_low"}


@lru_cache(maxsize=None)
def _vague(tpl: str, kind: str) -> bool:
    """A base report of changed values that says only that they are wrong or too high
    ("first_admin_close_at doesn't look right in int_intercom__conversation_part_events anymore.",
    "The bank_transfer_cents in int_order_payments is too high now."): rated useful 2 by nearly
    every reviewer; such a report comes after one that says how many, how far off or which entity."""
    return kind in _VAGUE_KINDS and not _SAYS_WHAT.search(tpl)


# the fields that name one entity or one count a person would see
_HANDLE = re.compile(r"\{(example|Example|example_possessive|Example_possessive|copies|copies_words|count_before|count_change|"
                     r"count_after|number_before|number_after|total_observed|total_expected|value_new|value_gone)\}")


@lru_cache(maxsize=None)
def detail_of(tpl: str) -> str:
    """How concrete a sentence is: `exact` quotes a value now and what it should be, `handle`
    names one entity or one count a person would see, `none` neither."""
    if "{value_observed}" in tpl or "{value_expected}" in tpl:
        return "exact"
    if _HANDLE.search(tpl):
        return "handle"
    return "none"


class Worn:
    """Whether a template's frame was already used by another task of the run: every literal
    stretch of one of its sentences (three words or more in all) appears in one earlier text.
    One per run state (`Worn.of`): the same templates are asked about for every key and level."""

    def __init__(self, said: tuple):
        self.said = said
        self.templates: dict[str, bool] = {}
        self.sentences: dict[str, bool] = {}

    @staticmethod
    @lru_cache(maxsize=16)
    def of(said: tuple) -> "Worn":
        return Worn(said)

    def __call__(self, tpl: str) -> bool:
        if not self.said:
            return False
        if tpl not in self.templates:
            self.templates[tpl] = any(self._sentence(s) for s in _sentences(tpl))
        return self.templates[tpl]

    def _sentence(self, sentence: str) -> bool:
        if sentence not in self.sentences:
            chunks = [" ".join(re.findall(r"[a-z0-9_]+", c.lower())) for c in re.split(r"\{[^}]+\}", sentence)]
            chunks = [f" {c} " for c in chunks if c]
            self.sentences[sentence] = sum(len(c.split()) for c in chunks) >= 3 and any(
                all(c in text for c in chunks) for text in self.said)
        return self.sentences[sentence]


@lru_cache(maxsize=None)
def _sentences(tpl: str) -> tuple[str, ...]:
    return tuple(re.split(r"(?<=[.?!])\s+", tpl))


_FACTOR = re.compile(r"\{(rough_factor|factor)\}")
# fields that hold ordinary words (not a name): a sentence that starts with one gets a capital
_WORD_FIELDS = ("{entity}", "{entities}", "{share}", "{share_are}", "{share_have}", "{Share_are}", "{Share_have}",
                "{Count_are}", "{Count_have}", "{others}", "{others_are}", "{others_have}", "{topic}")


_ENGLISH_START = re.compile(r"^(the|some|a|an|our|there|we|every|all|in|i|i'm|small|someone|something|"
                            r"nobody|people|credits|numbers|anything|dates|timelines|duplicates|totals|"
                            r"reports|where|both|this|it|part|dbt)\b", re.I)


def cap_sentences(text: str) -> str:
    """Capital letter at the start when the text starts with an English word (names stay as they
    are: `fct_orders is ...`)."""
    return _cap(text) if _ENGLISH_START.match(text) and not text.startswith("dbt ") else text


_WHO = re.compile(r"^(someone|a colleague|one of the analysts|finance)\b", re.I)
_TIME = re.compile(r"\b(this morning|today|yesterday|since|last run|deploy|started|lately|right now)\b", re.I)


@dataclass(frozen=True)
class Body:
    """A body text, whether its first letter may be lower-cased after a lead-in, and whether it
    is a complaint about data (only those take a data opener)."""
    text: str
    lower_ok: bool = True
    data: bool = True


def requests(f: Finding, voice: Voice, place: Place = Place()) -> list[str]:
    """The requests that may close a report of `f`, in this task's order, filled: none (the
    report is the request) in ASKS_NONE of them, short ones, and ones that say what should
    happen ("make it one row per account again")."""
    if f.kind == "build_failed":
        pool = list(phrases.ASKS_BUILD)
    else:
        own = list(phrases.ASKS.get(f.kind) or [])
        if f.column and f.kind not in NOT_DATA and (f.kind in ("values_high", "values_low") or not own):
            own += phrases.ASKS["values"]
        own = own if place.second is None else []  # about one finding; the body names two tables
        data = phrases.ASKS["data"] if f.kind not in NOT_DATA else []
        # requests that name the symptom ("find where the extra rows come from") are what people
        # write most; a generic closing line ("Can you take a look?", "Let me know what you find.")
        # reads bolted on (named first by reviewers of every panel), so it closes only a report
        # that has no request of its own words
        generic = phrases.ASKS["any"] + data if not own else []  # own x6: about one report in twenty asks
        pool = [""] * phrases.ASKS_NONE + generic + own * 6
    if place.key != "base":  # medium and hard say less: a request naming the column would say it again
        pool = [a for a in pool if not re.search(r"\{(measure|column)\}", a)]
    vals = fields(f, voice, place.said)
    out = [(a, a if not a else (fill(a, vals) if _fits(a, f, vals) else None)) for a in pool]
    if place.second is not None:  # the body names two tables: no request about "the table" or "it"
        out = [(a, t) for a, t in out if t is not None and not re.search(r"\bthe table\b|\bit\b", t)]
    out = shuffled([(a, t) for a, t in out if t is not None], voice.seed, f"ask:{place.key}")
    # a request another task of the run already closed with (names swapped or not) comes last:
    # the same closing line under several reports is what a template does
    worn = Worn.of(place.said)
    return [t for a, t in out if not a or not worn(a)] + [t for a, t in out if a and worn(a)]


# bodies no "Since the last run, ..." runs into: a question, what the person did or saw ("Just
# noticed ...", "Tried to chart ..."), a sentence already about who noticed
_NO_LEAD_IN = ("I ", "I'm ", "I'd ", "Why ", "Where ", "What ", "How ", "Anyone ", "Any ", "Is ", "Did ", "A ",
               "Who ", "When ", "Just ", "Tried ", "Loaded ", "Looked ", "Checked ", "Went ", "Charting ",
               "Adding ", "Counting ", "Grouping ", "Lining ", "Filtering ", "Totaling ", "Pulling ", "Pulled ",
               "Matching ", "Looks like ", "Someone ", "There's no way ", "Looking ", "Ran ", "Was ", "Got ",
               "Spot-checked ", "Queried ", "Doing ", "My ", "Somebody ", "Had ", "Filtered ", "Seeing ", "Those ",
               "Our ", "Numbers ", "Lots ", "Reconciling ", "Finance ")


def compositions(body: Body, voice: Voice, key: str, asks: list[str]):
    """The whole prompts for one body: opening x request in this task's order. Openings that run
    into the body need a body that starts with an ordinary word; a body that already says when it
    happened gets no opening that says it again."""
    text = body.text
    openers = rotated(phrases.OPENERS, voice.seed, f"open:{key}")
    if not body.data:  # a config or build problem is not a data complaint
        openers = [o for o in openers if o[2] == "any"]
    if text.startswith(_NO_LEAD_IN) or re.search(
            r"\b(should|supposed|used to|always|normally)\b", re.split(r"(?<=[.?])\s", text)[0]):
        # "Since the last run, X should be ..." or "..., X used to have 9300 rows" reads wrong
        openers = [o for o in openers if o[1] != "lead"]
    asks = list(asks) or [""]
    if re.search(r"\b(please|fix)\b|\b(can|could|would) (you|someone)\b", text, re.I) or text.startswith("Anyone "):
        asks = [""]  # the body already asks ("Can someone check how X is built?")
    elif "?" in text:  # "Why did X change? Can you find out why X changed?" says it twice
        asks = [a for a in asks if not re.search(r"\bwhy\b|what changed|what broke|going on", a, re.I)] or [""]
    echoed = {a for a in dict.fromkeys(asks) if a and echoes(a, text)}  # each request once, not each copy
    asks = [a for a in asks if a not in echoed] or [""]
    if _TIME.search(text):
        openers = [o for o in openers if not _TIME.search(o[0])]
    if _WHO.match(text):  # the body already says who noticed: no second "who" in front of it
        openers = [o for o in openers if not o[0]]
    first = text.split(" ", 1)[0].lower().strip("'`\"")
    openers = [o for o in openers if not o[0] or o[0].split(" ", 1)[0].lower().rstrip("'s") != first.rstrip("'s")]
    openers = openers or [("", "none", "any")]
    for opener, ask in _pairs(tuple(o[:2] for o in openers), tuple(asks)):
        yield compose(body, opener, ask, voice.period)


def _pairs(openers: tuple, asks: tuple):
    """(opening, request) pairs in a report's order: the openings cycle, the requests walk a
    diagonal. The banks repeat their no-opener and no-request entries to weight them (34 and 140
    of them): each pair comes once, at its first turn. A prompt's checks only depend on its text,
    so the first text that passes is the one it always was; a task whose texts were all refused
    walked some 6,000 repeats per body (issue 30: the prompt writer stalled builds)."""
    return iter(_pair_order(openers, asks))


@lru_cache(maxsize=512)
def _pair_order(openers: tuple, asks: tuple) -> tuple:
    """The distinct pairs of `_pairs`, in order. Cached: one task's bodies share a handful of
    (openings, requests) banks (15 among 6,000 calls for five tasks' prompts), and the walk stops
    once every distinct pair has come (a bank of one repeated entry is one pair, not 4,760 turns)."""
    n, m = len(openers), len(asks)
    most = len(set(openers)) * len(set(asks))
    seen: dict[tuple, None] = {}
    for i in range(n * m):
        pair = (openers[i % n], asks[(i // n + i) % m])
        if pair not in seen:
            seen[pair] = None
            if len(seen) == most:
                break
    return tuple(seen)


def compose(body: Body, opener: tuple[str, str], ask: str, period: bool = True) -> str:
    text, mode = opener
    main = body.text
    if mode == "lead":
        first = main.split(" ", 1)[0]
        if body.lower_ok and first not in ("I", "I'm", "I'd") and (first == "A" or not first.isupper()):
            main = main[:1].lower() + main[1:]
        out = text + main
    elif mode == "sentence":
        out = f"{text} {main}"
    else:
        out = main
    if ask:
        sep = "\n\n" if "\n" in main else " "
        out = f"{out.rstrip()}{sep}{ask}"
    # "the X table" as a field ({table}) can start a template's second sentence (not in a quoted dbt
    # message, which comes after a blank line)
    head, sep_, tail = out.strip().partition("\n")
    out = re.sub(r"([.?!] )the ", r"\1The ", head) + sep_ + tail
    if not period and not ask and out.endswith(".") and "\n" not in out and not out.endswith(".."):
        out = out[:-1]  # some people leave the last full stop off (not after a stock request)
    return out
