"""Fill the sentences of `phrases` for one finding: the fields, the candidate texts of one level in
a per-task order, and the whole prompt (opening + body + request). Pure functions; the order of
the candidates comes from a hash of the seed, so a task always gets the same text."""
from __future__ import annotations

import hashlib
import re
import string
from dataclasses import dataclass

from . import phrases, words
from .findings import Finding


def spin(seed: str, slot: str, n: int) -> int:
    """A stable index in range(n) for (seed, slot)."""
    h = hashlib.sha256(f"{seed}|{slot}".encode()).digest()
    return int.from_bytes(h[:8], "big") % max(n, 1)


def rotated(seq: list, seed: str, slot: str) -> list:
    if not seq:
        return []
    i = spin(seed, slot, len(seq))
    return list(seq[i:]) + list(seq[:i])


@dataclass(frozen=True)
class Voice:
    """Per-task style: how tables and columns are written, kept the same across a task's levels."""
    seed: str
    table_style: int = 0     # 0 plain, 1 `backticks`, 2 "the X table"
    column_style: int = 0    # 0 plain, 1 `backticks`, 2 "quotes"
    layer: str = ""          # words for the mutated model's layer ("marts"), "" when unknown
    convention: bool = False  # the model's layer mostly uses the intact materialization
    exact_counts: bool = True  # "76 of the 90 accounts" (else "most of the accounts")
    terse: bool = False      # reports a data problem without counts or values (the `plain` level)

    @classmethod
    def for_seed(cls, seed: str, layer: str = "", convention: bool = False) -> "Voice":
        # most people write names plain; some quote them, a few write "the X table"
        table_style = (0, 0, 0, 0, 0, 1, 2, 2)[spin(seed, "table-style", 8)]
        # whoever writes tables in backticks writes columns the same way
        column_style = 1 if table_style == 1 else (0, 0, 0, 0, 2)[spin(seed, "column-style", 5)]
        exact = spin(seed, "count-style", 5) < 2  # most people round a count ("most of the ...")
        terse = spin(seed, "terse", 20) < 9  # about half of the reports quote no number at all
        return cls(seed, table_style, column_style, layer, convention, exact, terse)

    def table(self, name: str, first: bool = True) -> str:
        if self.table_style == 1:
            return f"`{name}`"
        if self.table_style == 2 and first:
            return f"the {name} table"
        return name

    def column(self, name: str) -> str:
        return {0: name, 1: f"`{name}`", 2: f'"{name}"'}[self.column_style]


def _entity(f: Finding) -> str:
    if len(f.key) == 1:
        e = words.entity_of_key(f.key[0], f.table)
        if e:
            return e
    return words.table_entity(f.table)


def who(sample: dict, f: Finding, variant: int) -> str | None:
    """One affected entity as a person names it: 'Falcon Works', 'account A1001 (Falcon Works)',
    'order 1', 'Falcon Works (invoice month 2025-01-01)', 'season 2019, driver 7'."""
    keys = [str(k) for k in (sample.get("key") or [])]
    label = str(sample.get("label") or "").strip()
    if keys and len(keys) != len(f.key):
        return None
    if len(keys) == 2:
        second = f"{words.column_words(f.key[1])} {keys[1]}"
        if label:
            return f"{label} ({second})"
        parts = [f"{words.entity_of_key(c, f.table) or words.column_words(c)} {v}" for c, v in zip(f.key, keys)]
        return ", ".join(parts)
    if label:
        e = _entity(f)
        if variant % 2 and keys and e != "record":
            return f"{e} {keys[0]} ({label})"
        return label
    if not keys:
        return None
    e = words.entity_of_key(f.key[0], f.table)
    return f"{e} {keys[0]}" if e else f"the row for {keys[0]}"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text[:1].islower() else text


def fields(f: Finding, voice: Voice) -> dict[str, str]:
    """Every field a template of `f.kind` may use; a field that cannot be filled truthfully is
    absent, which rules out the templates that need it."""
    # a row of a two-column-key table (account x month) is not an account: call it a row
    e = _entity(f) if len(f.key) < 2 else "row"
    es = words.plural(e)
    plain = f.kind == "relation_kind" and voice.table_style == 2  # "the X table ... stays a view"
    v: dict[str, str] = {"t": f.table if plain else voice.table(f.table), "topic": words.table_topic(f.table),
                         "e": e, "es": es}
    if f.table.lower() in (e.lower(), es.lower()) and not plain and voice.table_style != 2:
        # "customers dropped from 100 customers ..." reads wrong: say which one is the table
        v["t"] = f"the {voice.table(f.table)} table"
    if voice.layer:
        v["layer"] = voice.layer
    if f.column:
        v["c"] = voice.column(f.column)
        v["m"] = words.column_words(f.column)
        if f.col_type == "bool" and not v["m"].endswith("flag"):
            v["m"] += " flag"
    noun = e if len(f.key) == 1 else "row"  # rows of an account-month table are not accounts
    if f.count:
        v["n"] = words.count_of(f.count, noun)
        v["n_rows"] = words.count_of(f.count, "row")
        v["N_are"] = (f"All {v['n']} are" if f.total and f.count == f.total and f.count > 1
                      else _cap(v["n"]) + (" is" if f.count == 1 else " are"))
        v["n_are"] = v["n"] + (" is" if f.count == 1 else " are")
        v["n_have"] = v["n"] + (" has" if f.count == 1 else " have")
        v["N_have"] = _cap(v["n_have"])
        if f.total and f.count < f.total and not voice.exact_counts:
            v["n_of"] = words.share_of(f.count, f.total, noun)
            v["n_rows_of"] = words.share_of(f.count, f.total, "row")
        elif f.total and f.count < f.total:
            v["n_of"] = f"{words.number(f.count)} of the {words.count_of(f.total, noun)}"
            v["n_rows_of"] = f"{words.number(f.count)} of the {words.count_of(f.total, 'row')}"
        elif f.total and f.count == f.total:
            v["n_of"] = f"every {noun}" if f.count > 1 else f"the only {noun}"
        if f.count > 1:
            k = f.count - 1
            v["others_are"] = (f"the other {words.count_of(k, noun)} " if f.total and f.count == f.total
                               else f"{words.number(k)} other {words.plural(noun) if k > 1 else noun} ") + \
                ("are" if k > 1 else "is")
    if f.total or f.after:
        v["before"] = words.count_of(f.total, noun)
        v["after"] = words.count_of(f.after, noun)
        v["before_n"], v["after_n"] = words.number(f.total), words.number(f.after)
    samples = list(f.samples)
    if samples:
        s = samples[spin(voice.seed, f"sample:{f.table}:{f.column}:{f.distance}", min(len(samples), 2))]
        w = who(s, f, spin(voice.seed, "who", 2))
        if w:
            # a name stays as written; a generated "account A1001" starts a sentence with a capital
            v["who"] = w
            label = str(s.get("label") or "").strip()
            v["Who"] = w if label and w.startswith(label) else _cap(w)  # a name stays as written
        if "observed" in s or "expected" in s:
            obs, exp = words.two_values(s.get("observed"), s.get("expected"), f.col_type, f.column or "")
            v["obs"], v["exp"] = obs, exp
        if s.get("copies"):
            v["copies"] = str(s["copies"])
    if f.kind == "duplicated":
        v["n_keys"] = words.count_of(f.count, e)
        v["copies"] = v.get("copies") or str(f.detail.get("max_copies", 2))
    if f.kind == "rows_replaced" and f.detail.get("extra"):
        v["n_extra"] = words.count_of(int(f.detail["extra"]), "other" if noun != "row" else "row")
    r = f.detail.get("ratio")
    if r:
        rw = words.ratio_words(r)
        if rw:
            v["rw"] = rw
        v["direction"] = "too high" if r > 1 else "too low"
    grain = f.detail.get("grain") or {}
    names = {"day": "daily", "week": "weekly", "month": "monthly", "quarter": "quarterly", "year": "yearly",
             "time": "timestamped"}
    if grain.get("intact") in names and grain.get("broken") in names:
        v["gi"], v["gb"] = names[grain["intact"]], names[grain["broken"]]
    if f.detail.get("shift_seconds"):
        sec = float(f.detail["shift_seconds"])
        v["dur"], v["later"] = words.duration_words(sec), ("later" if sec > 0 else "earlier")
    if f.detail.get("swap"):
        a, b = f.detail["swap"]
        v["sa"], v["sb"] = words.value(a, f.col_type), words.value(b, f.col_type)
    total = f.detail.get("total") or {}
    if total.get("intact") is not None and total.get("broken") is not None:
        v["tot_i"], v["tot_b"] = words.two_values(total["broken"], total["intact"], "number", f.column or "")[::-1]
    oi, ob = f.detail.get("only_intact") or [], f.detail.get("only_broken") or []
    if oi:
        v["oi"] = words.value(oi[0], f.col_type, f.column or "")
    if ob:
        v["ob"] = words.value(ob[0], f.col_type, f.column or "")
    if f.kind == "relation_kind":
        v["kind_i"], v["kind_b"] = str(f.detail.get("intact")), str(f.detail.get("broken"))
        if not voice.convention:
            v.pop("layer", None)
    types = f.detail.get("sql_type") or {}
    if types.get("intact") and types.get("broken"):
        v["ti"], v["tb"] = _type_words(types["intact"]), _type_words(types["broken"])
        if v["ti"] == v["tb"]:
            del v["ti"], v["tb"]
    if f.detail.get("message"):
        v["msg"] = f.detail["message"]
    return v


def _type_words(sql_type: str) -> str:
    t = str(sql_type).lower()
    if re.match(r"(tinyint|smallint|integer|int|bigint|hugeint|u?int)", t):
        return "whole numbers"
    if re.match(r"(double|float|real|decimal|numeric)", t):
        return "decimals"
    if t.startswith(("varchar", "text", "string")):
        return "text"
    return t


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
    out = []
    for tpl in tpls:
        if not _fits(tpl, f, vals):
            continue
        text = fill(tpl, vals)
        if text:
            # a sentence that starts with a word of the template (not a name) may run on from
            # a lead-in; so may a generated "account A1001"
            lower_ok = not tpl.startswith("{") or (
                tpl.startswith("{Who}") and vals.get("Who", "") != vals.get("who", ""))
            styled = text.startswith("the ")  # "the X table" written for {t}
            out.append((_cap(text) if styled or not tpl.startswith("{") else text, lower_ok or styled, tpl))
    return out


_ZERO = re.compile(r"^-?0(\.0+)?$")


def _fits(tpl: str, f: Finding, vals: dict[str, str]) -> bool:
    """Whether a template's words agree with the facts beyond its fields: no "some" when every
    entity is affected, no "only 0", no "the same factor" without a steady ratio."""
    if f.total and f.count and f.count >= f.total and re.search(r"(^|\. )Some ", tpl):
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
    if re.search(r"\bplease\b", body, re.I) or body.rstrip().endswith("?"):
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
