"""The sentences a report is made of, read from banks/ (bank.load checks them as it reads): per kind
of finding the bodies of every level (the older levels of bodies.yaml, the base report's frames of
phrases_base), the sentences that add a second table, and the openings and requests of asks.yaml.
The banks' own comments say why each sentence is worded as it is."""
from __future__ import annotations

from functools import lru_cache

from adegen.prompts import bank
from adegen.prompts.phrases_base import SHAPES_BANK

_BODIES = bank.load("bodies")
_ASKS = bank.load("asks")

# openings as (text, mode, tone), each repeated by its weight; requests per kind or group of kinds,
# ASKS_NONE times none (the report is the request), and a failing build's own
OPENERS: list[tuple[str, str, str]] = [(o["text"], o["mode"], o["tone"]) for o in _ASKS["openers"]
                                       for _ in range(o["times"])]
ASKS: dict[str, list[str]] = _ASKS["asks"]
ASKS_NONE: int = _ASKS["none"]
ASKS_BUILD: list[str] = _ASKS["build"]
TWO_REPORTS: list[str] = _ASKS["two_reports"]  # a compound task's two reports in one message

# after a body: a sibling table has the same problem (or another one); several tables at once
ALSO, ALSO_COLUMN = _BODIES["also"], _BODIES["also_column"]
ALSO_OTHER, ALSO_OTHER_COLUMN = _BODIES["also_other"], _BODIES["also_other_column"]
SEVERAL = _BODIES["several"]

_NAMED_AS_IT_WAS = ("column_gone", "column_added")  # a dropped or new column is named as it was


def _plain_column(tpl: str) -> str:
    """The older levels name a column the way the task's voice writes columns, and never start
    a sentence with it."""
    return "The " + tpl if tpl.startswith("{column} ") else tpl


BODIES: dict[str, dict[str, list[str]]] = {
    kind: {level: list(tpls) if kind in _NAMED_AS_IT_WAS else [_plain_column(t) for t in tpls]
           for level, tpls in levels.items()}
    for kind, levels in _BODIES["bodies"].items()}
for _kind, _frames in SHAPES_BANK.items():  # the base report's frames
    BODIES.setdefault(_kind, {}).update(_frames)

# the older levels' sentences that named their column {col} before the banks were data
_COL = frozenset(t for kind, levels in _BODIES["bodies"].items() if kind not in _NAMED_AS_IT_WAS
                 for tpls in levels.values() for t in map(_plain_column, tpls) if "{column}" in t)


@lru_cache(maxsize=None)
def old_spelling(tpl: str) -> str:
    """A template as it was spelled before the banks were data (see bank.old_names)."""
    text = bank.old_names(tpl)
    return text.replace("{c}", "{col}") if tpl in _COL else text
