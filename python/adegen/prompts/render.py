"""Fill the sentences of `phrases` for one finding: the fields, the candidate texts of one level in
a per-task order, and the whole prompt (opening + body + request). Pure functions; the order of
the candidates comes from a hash of the seed, so a task always gets the same text."""
from __future__ import annotations

import hashlib
import re
import string
from dataclasses import dataclass

from . import phrases
from .fields import cap as _cap, fields
from .findings import MOST, Finding


def spin(seed: str, slot: str, n: int) -> int:
    """A stable index in range(n) for (seed, slot)."""
    h = hashlib.sha256(f"{seed}|{slot}".encode()).digest()
    return int.from_bytes(h[:8], "big") % max(n, 1)


def rotated(seq: list, seed: str, slot: str) -> list:
    if not seq:
        return []
    i = spin(seed, slot, len(seq))
    return list(seq[i:]) + list(seq[:i])


# the body shapes of a report with an observation, and how often a task's voice uses each: the
# expectation it breaks ("X should have one row per Y"), an example with the entity's name, a
# question, a short what-I-was-doing story, a one-liner without numbers (`plain`)
SHAPES = ("rule", "example", "question", "story", "plain")
SHAPE_WEIGHTS = (5, 4, 3, 3, 5)
_POOL = tuple(s for s, w in zip(SHAPES, SHAPE_WEIGHTS) for _ in range(w))


@dataclass(frozen=True)
class Voice:
    """Per-task style: how tables and columns are written, kept the same across a task's levels,
    and the shape of its base report."""
    seed: str
    table_style: int = 0     # 0 plain, 1 `backticks`, 2 "the X table", 3 "the X model"
    column_style: int = 0    # 0 plain, 1 `backticks`, 2 "quotes", 3 in words ("active user count")
    layer: str = ""          # words for the mutated model's layer ("marts"), "" when unknown
    convention: bool = False  # the model's layer mostly uses the intact materialization
    exact_counts: bool = True  # "76 of the 90 accounts" (else "most of the accounts")
    shape: str = "example"   # one of SHAPES

    @classmethod
    def for_seed(cls, seed: str, layer: str = "", convention: bool = False) -> "Voice":
        # most people write names plain; some say "the X table" or "the X model", few quote them
        table_style = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 3, 3, 1)[spin(seed, "table-style", 16)]
        # whoever writes tables in backticks writes columns the same way
        column_style = 1 if table_style == 1 else (0, 0, 0, 0, 3, 3, 3, 2)[spin(seed, "column-style", 8)]
        # people round counts ("most of the accounts"); only the one example gets exact values
        return cls(seed, table_style, column_style, layer, convention, False, _POOL[spin(seed, "shape", len(_POOL))])

    @property
    def terse(self) -> bool:
        """Reports a data problem without counts or values (the `plain` shape)."""
        return self.shape == "plain"

    def pick(self, slot: str, n: int) -> int:
        return spin(self.seed, slot, n)

    def levels(self, key: str = "base") -> tuple:
        """The body levels a report with an observation is tried at, in order: this key's shape,
        then the other shapes, then the older fixed levels. A terse voice stays terse: its base
        and every level after it try `plain` and `general` first."""
        shape = self.shape if key == "base" else _POOL[spin(self.seed, f"shape:{key}", len(_POOL))]
        if self.terse or shape == "plain":
            return ("plain", "general") if key != "base" else (
                "plain", "general", "rule", "example", "question", "story", "specific", "counts")
        rest = rotated([s for s in SHAPES[:4] if s != shape], self.seed, f"shapes:{key}")
        return (shape, *rest, "specific", "counts", "general")

    def table(self, name: str, first: bool = True) -> str:
        if self.table_style == 1:
            return f"`{name}`"
        if self.table_style == 2 and first:
            return f"the {name} table"
        if self.table_style == 3 and first:
            return f"the {name} model"
        return name

    def column(self, name: str) -> str:
        return {1: f"`{name}`", 2: f'"{name}"'}.get(self.column_style, name)


def fill(template: str, values: dict[str, str]) -> str | None:
    names = [n for _, n, _, _ in string.Formatter().parse(template) if n]
    if any(n not in values for n in names):
        return None
    return template.format(**values)


def bodies(f: Finding, level: str, voice: Voice, second: Finding | None = None,
           key: str = "base") -> list[tuple[str, bool, str]]:
    """The candidate body texts of one level for a finding, in this task's order, each with
    whether its first letter may be lower-cased after a lead-in ("Heads up: the ...") and the
    template it came from."""
    bank = phrases.BODIES.get(f.kind, {})
    vals = fields(f, voice)
    if second is not None:
        vals["t2"] = voice.table(second.table, first=False)
        marts = re.compile(r"^(rpt|mart|marts|fct|fact|dim|agg|obt|report)_", re.I)
        vals["group"] = "reports" if marts.match(f.table) and marts.match(second.table) else "tables"
        tpls = rotated(phrases.SEVERAL, voice.seed, f"several:{level}:{key}")
    else:
        tpls = rotated(bank.get(level, []), voice.seed, f"body:{f.kind}:{level}:{key}")
        if level == "specific" and not f.samples:
            tpls = rotated(bank.get("specific_nokey", []), voice.seed, f"body:{f.kind}:nokey:{key}") + tpls
        # the concrete value is what makes a report useful: a sentence that quotes it comes
        # first, then one that names the entity, then the rest (each tier in this task's order)
        tpls.sort(key=_concreteness)
    out = []
    for tpl in tpls:
        if not _fits(tpl, f, vals):
            continue
        text = fill(tpl, vals)
        if text:
            # a sentence that starts with a word of the template (not a name) may run on from
            # a lead-in; so may a generated "account A1001"
            lower_ok = not tpl.startswith("{") or (
                tpl.startswith("{Who") and vals.get("Who", "") != vals.get("who", ""))
            # "the X table" written for {t}, or a column written in words, starts a sentence
            styled = text.startswith("the ") or tpl.startswith(_WORD_FIELDS) or (
                tpl.startswith("{col}") and voice.column_style == 3)
            out.append((_cap(text) if styled or not tpl.startswith("{") else text, lower_ok or styled, tpl))
    return out


_ZERO = re.compile(r"^-?0(\.0+)?$")
# fields that hold ordinary words (not a name): a sentence that starts with one gets a capital
_WORD_FIELDS = ("{m}", "{e}", "{es}", "{share", "{others", "{topic}")


def _concreteness(tpl: str) -> int:
    if "{obs}" in tpl or "{exp}" in tpl:
        return 0
    return 1 if re.search(r"\{(who|Who|whos|Whos|copies|copies_w)\}", tpl) else 2


# words that say (nearly) every row is affected: only when the measurement says so
_ALL = re.compile(r"whole column|every row|across the board|\b[Aa]ll the \{|[Ee]verything|\b[Ee]very \{(c|col|m|e)\}|"
                  r"the rest look|the other \{es\}|are all \{|consistently")


def _fits(tpl: str, f: Finding, vals: dict[str, str]) -> bool:
    """Whether a template's words agree with the facts beyond its fields: no "some" when every
    entity is affected and no "the whole column" when few are, no "only 0", no "the same factor"
    without a steady ratio."""
    if f.total and f.count and f.count >= f.total and re.search(r"(^|\. )Some |\bsome \{es\}", tpl):
        return False
    if _ALL.search(tpl) and not (f.total and f.count >= MOST * f.total):
        return False
    if "only {obs}" in tpl and _ZERO.match(str(vals.get("obs", "")).replace(",", "")):
        return False
    if ("same factor" in tpl or "off the same way" in tpl) and "rw" not in vals:
        return False
    return True


_ENGLISH_START = re.compile(r"^(the|some|a|an|our|there|we|every|all|in|i|i'm|small|someone|something|"
                            r"nobody|people|credits|numbers|anything|dates|timelines|duplicates|totals|"
                            r"reports|where|both|this|it|part|dbt)\b", re.I)


def cap_sentences(text: str) -> str:
    """Capital letter at the start when the text starts with an English word (names stay as they
    are: `fct_orders is ...`)."""
    return _cap(text) if _ENGLISH_START.match(text) and not text.startswith("dbt ") else text


_WHO = re.compile(r"^(someone|a colleague|one of the analysts|finance)\b", re.I)
_TIME = re.compile(r"\b(this morning|today|yesterday|since|last run|deploy|started|lately|right now)\b", re.I)


def compositions(body: str, voice: Voice, key: str, build: bool = False, lower_ok: bool = True,
                 data: bool = True, several: bool = False):
    """The whole prompts for one body: opening x request in this task's order. Openings that run
    into the body need a body that starts with an ordinary word; a body that already says when it
    happened gets no opening that says it again."""
    openers = rotated(phrases.OPENERS, voice.seed, f"open:{key}")
    asks = rotated(phrases.ASKS_BUILD if build else phrases.ASKS, voice.seed, f"ask:{key}")
    if not data:  # a config or build problem is not a data complaint
        openers = [o for o in openers if o[2] == "any"]
    if build or body.startswith(("I ", "I'm ", "Why ", "Where ", "What ", "How ")):
        openers = [o for o in openers if o[1] != "lead"]
    if several:  # the body names two tables: no request about "the table"
        asks = [a for a in asks if "the table" not in a]
    if re.search(r"\b(please|fix)\b", body, re.I) or body.rstrip().endswith("?"):
        asks = [""]  # the body already asks
    if _TIME.search(body):
        openers = [o for o in openers if not _TIME.search(o[0])]
    if _WHO.match(body):  # the body already says who noticed: no second "who" in front of it
        openers = [o for o in openers if not o[0]]
    first = body.split(" ", 1)[0].lower().strip("'`\"")
    openers = [o for o in openers if not o[0] or o[0].split(" ", 1)[0].lower().rstrip("'s") != first.rstrip("'s")]
    openers = openers or [("", "none", "any")]
    for i in range(len(openers) * len(asks)):
        yield compose(body, openers[i % len(openers)][:2], asks[(i // len(openers) + i) % len(asks)], lower_ok)


def compose(body: str, opener: tuple[str, str], ask: str, lower_ok: bool = True) -> str:
    text, mode = opener
    if mode == "lead":
        first = body.split(" ", 1)[0]
        if lower_ok and first not in ("I", "I'm") and (first == "A" or not first.isupper()):
            body = body[:1].lower() + body[1:]
        out = text + body
    elif mode == "sentence":
        out = f"{text} {body}"
    else:
        out = body
    if ask:
        sep = "\n\n" if "\n" in body else " "
        out = f"{out.rstrip()}{sep}{ask}"
    return out.strip()
