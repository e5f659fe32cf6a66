"""What a diff shows, classified: one `Finding` per noticeable symptom of a changed table.

Input: the measured facts of one table (adegen.facts.measured.TableFacts). Output: findings ordered by
how much a person would notice them (a vanished column before a changed value). Nothing here
looks at the bug pattern: the symptom comes from the measurement only.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from adegen.facts.measured import ColumnFacts, Ratio, Sample, Sides, TableFacts
from adegen.prompts import words

# kinds, most noticeable first (a table's main finding is the first one it has)
ORDER = ("build_failed", "table_gone", "column_gone", "relation_kind", "table_empty", "duplicated",
         "rows_lost", "rows_added", "rows_replaced", "values_blank", "values_filled", "sign_flipped",
         "values_scaled", "date_grain", "date_shifted", "time_lost", "fraction_lost", "labels_swapped",
         "labels_new", "flag_flipped", "values_high", "values_low", "values_changed", "type_changed", "column_added")
# findings about the shape or the build of a table, not its data
NOT_DATA = {"relation_kind", "build_failed", "column_gone", "column_added", "table_gone"}
MOST = 0.8  # share of the changed rows that must agree before a column finding is that specific
# a text column of labels (statuses, segments, industries), not free text (names, emails): its
# distinct values in the intact table. A label nobody uses stands out there; a new name does not
LABEL_SET = 30


@dataclass
class Detail:
    """What a finding says besides its kind, counts and samples (None or empty: nothing)."""

    message: str | None = None           # build_failed, table_gone: what dbt or DuckDB said
    columns: tuple = ()                  # column_gone, column_added: every such column
    relation: Sides | None = None        # relation_kind: the object kinds ("table", "view")
    max_copies: int | None = None        # duplicated: the most copies of one key
    extra: int = 0                       # rows_replaced: the rows that took the lost ones' place
    extra_samples: tuple[Sample, ...] = ()
    sql_type: Sides | None = None        # type_changed: the column's types
    ratio: float | None = None           # values_scaled: the steady factor broken / intact
    ratio_median: float | None = None    # values_high / values_low: how far off, typically
    ratio_spread: float | None = None    # how much the ratio varies, relative to its median
    values_off_factor: bool = False      # the samples are off a clean factor by a little: no values
    total: Sides | None = None           # the column's sums
    grain: Sides | None = None           # date_grain, time_lost: the calendar grains
    shift_seconds: float | None = None   # date_shifted: the one steady shift
    drift: str | None = None             # "earlier" / "later": every changed date moved that way
    swap: tuple | None = None            # labels_swapped: the two values
    pairs: tuple = ()                    # (intact, broken, rows) value pairs, most rows first
    only_intact: tuple = ()              # tables without a key: values only one side has
    labels: tuple = ()                   # labels_new: every label the column held (when few)
    only_broken: tuple = ()


@dataclass
class Finding:
    kind: str
    table: str
    distance: int = 0
    column: str | None = None
    col_type: str = "text"
    count: int = 0                 # rows / entities affected
    total: int = 0                 # rows of the table before the change
    after: int = 0                 # rows of the table after the change
    key: list = field(default_factory=list)
    label: str | None = None
    samples: list[Sample] = field(default_factory=list)
    detail: Detail = field(default_factory=Detail)

    @property
    def rank(self) -> int:
        return ORDER.index(self.kind)


def classify(facts: TableFacts) -> list[Finding]:
    """Every finding of one table's facts, most noticeable first."""
    base = dict(table=facts.table, distance=facts.distance, total=facts.rows_intact, after=facts.rows_broken,
                key=list(facts.key), label=facts.label)
    out: list[Finding] = []
    if facts.build_error:
        out.append(Finding("build_failed", detail=Detail(message=facts.build_error), **base))
    if facts.error:
        out.append(Finding("table_gone", detail=Detail(message=facts.error), **base))
    if facts.columns_missing:
        out.append(Finding("column_gone", column=facts.columns_missing[0],
                           detail=Detail(columns=facts.columns_missing), **base))
    elif facts.columns_extra:
        out.append(Finding("column_added", column=facts.columns_extra[0],
                           detail=Detail(columns=facts.columns_extra), **base))
    if facts.relation_kind:
        out.append(Finding("relation_kind", detail=Detail(relation=facts.relation_kind), **base))
    out += _rows(facts, base)
    for col in facts.columns:
        f = _column(col, base, keyed=bool(facts.key))
        if f is not None and not _filled_from_nothing(f):
            out.append(f)
    return sorted(out, key=_order)


# helper columns nobody reads in a report: a change shows there first, but a person reports
# what it does to the columns they look at
_DULL = re.compile(r"^(rn|rownum|row_?num(ber)?|seq|idx|_.*|dbt_.*|.*_(sk|hash|hashkey|surrogate_key|rn))$", re.I)


def _filled_from_nothing(f: Finding) -> bool:
    """A column blank on every row of the intact table that now holds values: the right state is
    "empty everywhere", which says nothing of what the column is for, so nobody can tell which
    change to undo (three blind reviewers rated such a task unfair, 2-3 of 5). Not a symptom."""
    return f.kind == "values_filled" and 0 < f.total <= f.count


def _order(f: Finding) -> tuple:
    if f.column is None or f.rank < ORDER.index("values_blank"):
        return (0, f.rank, -f.count)
    return (2 if _DULL.match(f.column) else 1, f.rank, -f.count)


def _rows(facts: TableFacts, base: dict) -> list[Finding]:
    before, after = facts.rows_intact, facts.rows_broken
    if before and after == 0:
        return [Finding("table_empty", count=before, **base)]
    out = []
    dup = facts.duplicates
    if dup and dup.keys:
        out.append(Finding("duplicated", count=dup.keys, samples=list(dup.sample),
                           detail=Detail(max_copies=int(dup.max_copies or 2)), **base))
    if facts.key:
        miss, extra = facts.missing, facts.extra
        m, x = (miss.count if miss else 0), (extra.count if extra else 0)
        if m and x and _key_blanked(facts):
            # the rows are all there, their key is not: a person sees an empty column, not a
            # different set of entities
            out.append(Finding("values_blank", column=facts.key[0], col_type="text", count=x,
                               samples=[Sample(key=s.key, label=s.label, expected=s.key[0], compared=True)
                                        for s in miss.sample], **base))
        elif m and x:
            out.append(Finding("rows_replaced", count=m, samples=list(miss.sample),
                               detail=Detail(extra=x, extra_samples=extra.sample), **base))
        elif m:
            out.append(Finding("rows_lost", count=m, samples=list(miss.sample), **base))
        elif x and not (dup and dup.keys):
            out.append(Finding("rows_added", count=x, samples=list(extra.sample), **base))
    elif after < before:
        out.append(Finding("rows_lost", count=before - after, **base))
    elif after > before:
        out.append(Finding("rows_added", count=after - before, **base))
    return out


def _key_blanked(facts: TableFacts) -> bool:
    """Every row the broken table adds has a blank (one-column) key, as many as it lost: the same
    rows with their key emptied (a key read from the side of a left join that has no match)."""
    miss, extra = facts.missing, facts.extra
    return (len(facts.key) == 1 and miss.count == extra.count and bool(extra.sample)
            and all(smp.key[:1] == (None,) for smp in extra.sample))


def _column(col: ColumnFacts, base: dict, keyed: bool) -> Finding | None:
    if not col.changed:
        return None
    f = Finding("values_changed", column=col.name, col_type=col.type.split("->")[0], count=col.changed,
                samples=list(col.sample), **base)
    if not keyed:
        return _unkeyed_column(f, col)
    most = MOST * col.changed
    # a finding with a direction counts the rows that go that way, not every changed one: "higher
    # for all the orders" was false for the 12 of 99 a SUM -> COUNT made lower (a blind reviewer
    # marked that task unfair)
    if col.now_null >= most:
        f.kind = "values_blank"
        f.count = int(col.now_null)
    elif col.was_null >= most:
        f.kind = "values_filled"
        f.count = int(col.was_null)
    elif col.written_only:
        f.kind = "type_changed"
        f.detail.sql_type = col.sql_type
    else:
        # the rest compares two values: samples where one side is blank would contradict the wording
        f.samples = [s for s in f.samples if s.observed is not None and s.expected is not None] or f.samples
        if f.col_type == "number":
            _numbers(f, col)
        elif f.col_type in ("date", "timestamp"):
            _dates(f, col)
        else:
            _categories(f, col)
    return f


def _goes(sample, sign: int) -> bool:
    """The sample's value moved that way (1: up, -1: down)."""
    was, now = _float(sample.expected), _float(sample.observed)
    return was is not None and now is not None and (now - was) * sign > 0


def _numbers(f: Finding, col: ColumnFacts) -> None:
    """Flipped signs, lost fractions, a steady factor, or too high / too low."""
    ratio, most = col.ratio or Ratio(), MOST * col.changed
    if col.negated >= most:
        f.kind = "sign_flipped"
    elif col.rounded >= most:
        f.kind = "fraction_lost"
    elif ratio.median and _steady(ratio) and abs(ratio.median - 1) > 0.05 and (
            col.higher >= most or col.lower >= most) and int(col.changed if ratio.rows is None else ratio.rows) >= most:
        f.kind = "values_scaled"
        f.detail.ratio = float(ratio.median)
        # the example must show the factor: not a row whose right value is 0
        f.samples = [s for s in f.samples if (_float(s.expected) or 0) != 0] or f.samples
    elif col.higher >= most:
        f.kind, f.count = "values_high", int(col.higher)
        f.samples = [s for s in f.samples if _goes(s, 1)] or f.samples
    elif col.lower >= most:
        f.kind, f.count = "values_low", int(col.lower)
        f.samples = [s for s in f.samples if _goes(s, -1)] or f.samples
    if f.kind in ("values_high", "values_low") and ratio.median:
        f.detail.ratio_median = float(ratio.median)  # how far off: "way too high" or just "too high"
        if ratio.min is not None and ratio.max is not None:
            f.detail.ratio_spread = abs(float(ratio.max) - float(ratio.min)) / abs(float(ratio.median))
    if f.samples and f.kind in ("values_high", "values_low", "values_scaled"):
        # a row off by nearly but not quite a clean factor (82 and 829,900: a whole-dollar column
        # truncated) read as made-up numbers to every reviewer of two panels: another row, or
        # the entity named without its values
        plain = [s for s in f.samples if not _nearly_clean(s)]
        f.samples = plain or f.samples
        f.detail.values_off_factor = not plain
    median = f.detail.ratio or f.detail.ratio_median
    if median and f.samples:  # the example shows the typical factor, not an outlier
        best = min(_off_ratio(s, median) for s in f.samples)
        f.samples = [s for s in f.samples if _off_ratio(s, median) <= best + 0.005] or f.samples
    if col.total:
        f.detail.total = col.total


# the longest span of one unit of a calendar grain, in seconds: a value cut down to that grain
# moves earlier by less than this
_GRAIN_SECONDS = {"day": 86400, "week": 7 * 86400, "month": 31 * 86400, "quarter": 92 * 86400, "year": 366 * 86400}


def _truncated(grain: Sides, shift) -> bool:
    """The broken values are the intact ones cut down to the broken grain (every change moved
    earlier by less than one unit of it), not other dates that happen to sit on that grain: a
    swapped column of dates at midnight is not "the time got lost" (two reviewers, 2026-12-03)."""
    unit = _GRAIN_SECONDS.get(str(grain.broken))
    if shift is None or shift.min is None or shift.max is None or unit is None:
        return True  # nothing measured says otherwise
    return -unit < float(shift.min) and float(shift.max) <= 0


def _dates(f: Finding, col: ColumnFacts) -> None:
    """Another calendar grain, one steady shift, or every changed date moved the same way."""
    grain, shift = col.grain or Sides(), col.shift_seconds
    if grain.intact and grain.broken and grain.intact != grain.broken and _truncated(grain, shift):
        f.kind = "time_lost" if (grain.intact, grain.broken) == ("time", "day") else "date_grain"
        f.detail.grain = grain
    elif shift and shift.median and shift.min == shift.max:
        f.kind = "date_shifted"
        f.detail.shift_seconds = float(shift.median)
    elif shift and shift.min is not None and shift.max is not None and (float(shift.min) > 0 or float(shift.max) < 0):
        # not one steady shift, but every changed date moved the same way
        f.detail.drift = "later" if float(shift.min) > 0 else "earlier"


def _categories(f: Finding, col: ColumnFacts) -> None:
    """Flags flipped, two labels swapped, or the values most changed rows share."""
    pairs = tuple(p for p in col.pairs if p[0] is not None and p[1] is not None)
    if f.col_type == "bool" and pairs:
        f.kind = "flag_flipped"
    elif pairs:
        swaps = {(a, b) for a, b, _ in pairs}
        swapped = [(a, b) for a, b in swaps if (b, a) in swaps and a < b]
        if swapped:
            f.kind = "labels_swapped"
            f.detail.swap = tuple(sorted(swapped)[0])
        elif _new_labels(f, col):
            # raw codes where a mapping was, another spelling: what people see is a value that
            # doesn't belong in the column, not a per-row difference
            f.kind = "labels_new"
            f.count = int(col.new_rows)
            f.detail.only_broken = tuple(col.only_broken)
            f.detail.labels = tuple(col.labels_intact)
    f.detail.pairs = pairs


def _new_labels(f: Finding, col: ColumnFacts) -> bool:
    # the new values are named in the message ("... but X and Y showed up"): a hash or a UUID there is
    # read off a diff, not typed by a person (held-out jira: two team ids as a parent_issue_id's "labels")
    distinct = col.distinct.intact if col.distinct else None
    return (f.col_type == "text" and bool(col.only_broken) and col.new_rows >= MOST * col.changed
            and distinct is not None and 0 < int(distinct) <= LABEL_SET
            and all(words.typeable(x) for x in col.only_broken[:2]))


def sample_ratio(sample: Sample) -> float | None:
    """One sample's observed / expected, None when either is missing, not a number or 0."""
    o, e = _float(sample.observed), _float(sample.expected)
    return o / e if o and e else None


def _off_ratio(sample: Sample, median: float) -> float:
    """How far one sample's observed/expected ratio is from the column's median (log scale)."""
    r = sample_ratio(sample)
    if not r or r <= 0 or median <= 0:
        return math.inf
    return abs(math.log(r) - math.log(median))


def _nearly_clean(sample: Sample) -> bool:
    """Whether one sample's observed/expected is within 3% of a factor a person names (2, 3, 5, 10,
    100, 1,000, ... or the inverse) without being it (within 0.5%)."""
    r = sample_ratio(sample)
    if not r or r <= 0:
        return False
    f = r if r >= 1 else 1 / r
    if f < 1.5:
        return False
    mantissa = f / 10 ** math.floor(math.log10(f))
    off = min(abs(math.log(mantissa / m)) for m in (1, 2, 3, 5, 10))
    return math.log(1.005) < off <= math.log(1.03)


def _float(v) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _steady(ratio: Ratio) -> bool:
    med, lo, hi = ratio.median, ratio.min, ratio.max
    if not med or lo is None or hi is None:
        return False
    return abs(hi - lo) <= 0.03 * abs(med)


def _unkeyed_column(f: Finding, col: ColumnFacts) -> Finding:
    """Tables without a key: only whole-table facts (values that appear on one side, totals)."""
    nulls = col.nulls or Sides()
    if int(nulls.broken or 0) > int(nulls.intact or 0) and not col.only_broken:
        f.kind = "values_blank"
        f.count = int(nulls.broken) - int(nulls.intact or 0)
    grain = col.grain or Sides()
    if grain.intact and grain.broken and grain.intact != grain.broken:
        f.kind = "time_lost" if (grain.intact, grain.broken) == ("time", "day") else "date_grain"
        f.detail.grain = grain
    total = col.total or Sides()
    if f.kind == "values_changed" and total.intact and total.broken is not None:
        r = total.broken / total.intact if total.intact else None
        if r is not None and r > 1.02:
            f.kind = "values_high"
        elif r is not None and r < 0.98:
            f.kind = "values_low"
        f.detail.total = total
    f.detail.only_intact, f.detail.only_broken = col.only_intact, col.only_broken
    f.samples = []
    return f


def main_finding(findings: list[Finding], prefer_column: str | None = None) -> Finding | None:
    """The finding a person reports first; among column findings of the same rank, the column the
    caller prefers (when it changed) wins."""
    if not findings:
        return None
    top = findings[0]
    if prefer_column and top.column and top.rank >= ORDER.index("values_blank"):
        for f in findings:
            if f.column == prefer_column and _order(f)[:2] == _order(top)[:2]:
                return f
    return top
