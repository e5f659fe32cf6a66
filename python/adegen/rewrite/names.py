"""What column and macro names say: two names an engineer could confuse, and the unit a name is in.

Shared by the rewrite operators that pick a site from names (`swap_column`, `drop_conversion`) and
by the realism checks that state the fact behind it (`related_column`, `unit_named`), so the two
always agree. Pure functions on strings.
"""
from __future__ import annotations

import re

# Name parts that say a unit: money, time, size, ratio. A conversion between two of them (cents to
# dollars, seconds to minutes, percent to a fraction) is what a dropped factor leaves undone.
# "min" is not here: it is the aggregate far more often than minutes.
UNITS = frozenset({
    "cents", "cent", "pence", "penny", "pennies", "dollars", "dollar", "usd", "eur", "euros", "gbp",
    "micros", "ms", "millis", "milliseconds", "msec", "sec", "secs", "second", "seconds", "minute",
    "minutes", "mins", "hours", "hrs", "bytes", "kb", "mb", "gb", "pct", "percent", "percentage", "bps",
})
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_COMMENT = re.compile(r"(?s)--[^\n]*|/\*.*?\*/|\{#.*?#\}")


def parts(name: str) -> list[str]:
    """The lower-cased words of a snake_case (or camelCase) name."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return [p for p in snake.lower().split("_") if p]


_IDENTIFIER = re.compile(r"(id|.+_(id|key|pk|sk))", re.I)


def is_identifier(name: str) -> bool:
    """A column named as an identifier (id, customer_id, order_key): a label, never an amount."""
    return _IDENTIFIER.fullmatch(name or "") is not None


def related_names(a: str, b: str) -> bool:
    """Two column names an engineer could confuse: the same kind of value of a sibling meaning
    (created_at/updated_at, gross_amount/net_amount, customer_id/account_id: one word differs and
    it is not the last, which says the kind), or one name is the other with one word more
    (price/unit_price, amount/amount_cents, id/customer_id)."""
    pa, pb = parts(a), parts(b)
    if not pa or not pb or pa == pb:
        return False
    if len(pa) == len(pb):
        differ = [k for k, (x, y) in enumerate(zip(pa, pb)) if x != y]
        return len(differ) == 1 and differ[0] < len(pa) - 1
    short, long_ = (pa, pb) if len(pa) < len(pb) else (pb, pa)
    return len(long_) - len(short) == 1 and (long_[1:] == short or long_[:-1] == short)


def units_in(names) -> list[tuple[str, str]]:
    """(name, unit word) for every name whose words include a unit (amount_cents -> cents)."""
    out = []
    for name in names:
        unit = next((p for p in parts(name) if p in UNITS), None)
        if unit is not None:
            out.append((name, unit))
    return out


def comment_words(text: str) -> list[str]:
    """The words of the comments in a piece of SQL (`-- stored in cents` -> stored, in, cents)."""
    return [w for c in _COMMENT.findall(text) for w in _WORD.findall(c)]


def words(text: str) -> list[str]:
    """Every identifier-like word of a piece of SQL outside comments (Jinja and string literals
    included: a macro name, a quoted column argument)."""
    return _WORD.findall(_COMMENT.sub(" ", text))
