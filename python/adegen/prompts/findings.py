"""What a diff shows, classified: one `Finding` per noticeable symptom of a changed table.

Input: the facts measured by adegen.validate.evidence (one dict per table). Output: findings
ordered by how much a person would notice them (a vanished column before a changed value).
Nothing here looks at the bug pattern: the symptom comes from the measurement only.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

# kinds, most noticeable first (a table's main finding is the first one it has)
ORDER = ("build_failed", "table_gone", "column_gone", "relation_kind", "table_empty", "duplicated",
         "rows_lost", "rows_added", "rows_replaced", "values_blank", "values_filled", "sign_flipped",
         "values_scaled", "date_grain", "date_shifted", "time_lost", "fraction_lost", "labels_swapped",
         "flag_flipped", "values_high", "values_low", "values_changed", "type_changed", "column_added")
# findings about the shape or the build of a table, not its data
NOT_DATA = {"relation_kind", "build_failed", "column_gone", "column_added", "table_gone"}
MOST = 0.8  # share of the changed rows that must agree before a column finding is that specific


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
    samples: list = field(default_factory=list)   # {"key": [..], "label", "observed", "expected", "copies"}
    detail: dict = field(default_factory=dict)     # kind-specific: ratio, grain, shift, pairs, message...

    @property
    def rank(self) -> int:
        return ORDER.index(self.kind)


def classify(facts: dict) -> list[Finding]:
    """Every finding of one table's facts, most noticeable first."""
    t = str(facts.get("table"))
    base = dict(table=t, distance=int(facts.get("distance") or 0), total=int(facts.get("rows_intact") or 0),
                after=int(facts.get("rows_broken") or 0), key=list(facts.get("key") or []),
                label=facts.get("label"))
    out: list[Finding] = []
    if facts.get("build_error"):
        out.append(Finding("build_failed", detail={"message": str(facts["build_error"])}, **base))
    if facts.get("error"):
        out.append(Finding("table_gone", detail={"message": str(facts["error"])}, **base))
    if facts.get("columns_missing"):
        out.append(Finding("column_gone", column=facts["columns_missing"][0],
                           detail={"columns": list(facts["columns_missing"])}, **base))
    elif facts.get("columns_extra"):
        out.append(Finding("column_added", column=facts["columns_extra"][0],
                           detail={"columns": list(facts["columns_extra"])}, **base))
    if facts.get("relation_kind"):
        out.append(Finding("relation_kind", detail=dict(facts["relation_kind"]), **base))
    out += _rows(facts, base)
    for col in facts.get("columns") or []:
        f = _column(col, base, keyed=bool(base["key"]))
        if f is not None:
            out.append(f)
    return sorted(out, key=_order)


# helper columns nobody reads in a report: a change shows there first, but a person reports
# what it does to the columns they look at
_DULL = re.compile(r"^(rn|rownum|row_?num(ber)?|seq|idx|_.*|dbt_.*|.*_(sk|hash|hashkey|surrogate_key|rn))$", re.I)


def _order(f: Finding) -> tuple:
    if f.column is None or f.rank < ORDER.index("values_blank"):
        return (0, f.rank, -f.count)
    return (2 if _DULL.match(f.column) else 1, f.rank, -f.count)


def _rows(facts: dict, base: dict) -> list[Finding]:
    before, after = base["total"], base["after"]
    if before and after == 0:
        return [Finding("table_empty", count=before, **base)]
    out = []
    dup = facts.get("duplicates") or {}
    if dup.get("keys"):
        out.append(Finding("duplicated", count=int(dup["keys"]), samples=list(dup.get("sample") or []),
                           detail={"max_copies": int(dup.get("max_copies") or 2)}, **base))
    miss = facts.get("missing") or {}
    extra = facts.get("extra") or {}
    if base["key"]:
        m, x = int(miss.get("count") or 0), int(extra.get("count") or 0)
        if m and x:
            out.append(Finding("rows_replaced", count=m, samples=list(miss.get("sample") or []),
                               detail={"extra": x, "extra_samples": list(extra.get("sample") or [])}, **base))
        elif m:
            out.append(Finding("rows_lost", count=m, samples=list(miss.get("sample") or []), **base))
        elif x and not dup.get("keys"):
            out.append(Finding("rows_added", count=x, samples=list(extra.get("sample") or []), **base))
    elif after < before:
        out.append(Finding("rows_lost", count=before - after, **base))
    elif after > before:
        out.append(Finding("rows_added", count=after - before, **base))
    return out


def _column(col: dict, base: dict, keyed: bool) -> Finding | None:
    changed = int(col.get("changed") or 0)
    if not changed:
        return None
    ctype = str(col.get("type") or "text")
    kind_b = ctype.split("->")[0]
    f = Finding("values_changed", column=str(col["name"]), col_type=kind_b, count=changed,
                samples=list(col.get("sample") or []), **base)
    if not keyed:
        return _unkeyed_column(f, col)
    now_null, was_null = int(col.get("now_null") or 0), int(col.get("was_null") or 0)
    if now_null >= MOST * changed:
        f.kind = "values_blank"
        return f
    if was_null >= MOST * changed:
        f.kind = "values_filled"
        return f
    if col.get("written_only"):
        f.kind = "type_changed"
        f.detail["sql_type"] = dict(col.get("sql_type") or {})
        return f
    # the rest compares two values: samples where one side is blank would contradict the wording
    f.samples = [s for s in f.samples if s.get("observed") is not None and s.get("expected") is not None] or f.samples
    if kind_b == "number":
        ratio = col.get("ratio") or {}
        higher, lower = int(col.get("higher") or 0), int(col.get("lower") or 0)
        if int(col.get("negated") or 0) >= MOST * changed:
            f.kind = "sign_flipped"
        elif int(col.get("rounded") or 0) >= MOST * changed:
            f.kind = "fraction_lost"
        elif ratio.get("median") and _steady(ratio) and abs(ratio["median"] - 1) > 0.05 and (
                higher >= MOST * changed or lower >= MOST * changed) and int(ratio.get("rows", changed)) >= MOST * changed:
            f.kind = "values_scaled"
            f.detail["ratio"] = float(ratio["median"])
            # the example must show the factor: not a row whose right value is 0
            f.samples = [s for s in f.samples if (_float(s.get("expected")) or 0) != 0] or f.samples
        elif higher >= MOST * changed:
            f.kind = "values_high"
        elif lower >= MOST * changed:
            f.kind = "values_low"
        if f.kind in ("values_high", "values_low") and ratio.get("median"):
            f.detail["ratio_median"] = float(ratio["median"])  # how far off: "way too high" or just "too high"
            if ratio.get("min") is not None and ratio.get("max") is not None:
                f.detail["ratio_spread"] = abs(float(ratio["max"]) - float(ratio["min"])) / abs(float(ratio["median"]))
        if f.samples and f.kind in ("values_high", "values_low", "values_scaled"):
            # a row off by nearly but not quite a clean factor (82 and 829,900: a whole-dollar column
            # truncated) read as made-up numbers to every reviewer of two panels: another row, or
            # the entity named without its values
            plain = [s for s in f.samples if not _nearly_clean(s)]
            f.samples = plain or f.samples
            f.detail["values_off_factor"] = not plain
        median = f.detail.get("ratio") or f.detail.get("ratio_median")
        if median and f.samples:  # the example shows the typical factor, not an outlier
            best = min(_off_ratio(s, median) for s in f.samples)
            f.samples = [s for s in f.samples if _off_ratio(s, median) <= best + 0.005] or f.samples
        if col.get("total"):
            f.detail["total"] = dict(col["total"])
        return f
    if kind_b in ("date", "timestamp"):
        grain = col.get("grain") or {}
        shift = col.get("shift_seconds") or {}
        if grain.get("intact") and grain.get("broken") and grain["intact"] != grain["broken"]:
            if grain["intact"] == "time" and grain["broken"] == "day":
                f.kind = "time_lost"
            else:
                f.kind = "date_grain"
            f.detail["grain"] = dict(grain)
        elif shift.get("median") and shift.get("min") == shift.get("max"):
            f.kind = "date_shifted"
            f.detail["shift_seconds"] = float(shift["median"])
        elif shift.get("min") is not None and shift.get("max") is not None and (
                float(shift["min"]) > 0 or float(shift["max"]) < 0):
            # not one steady shift, but every changed date moved the same way
            f.detail["drift"] = "later" if float(shift["min"]) > 0 else "earlier"
        return f
    pairs = [p for p in col.get("pairs") or [] if p[0] is not None and p[1] is not None]
    if kind_b == "bool" and pairs:
        f.kind = "flag_flipped"
    elif pairs:
        swaps = {(a, b) for a, b, _ in pairs}
        swapped = [(a, b) for a, b in swaps if (b, a) in swaps and a < b]
        if swapped:
            f.kind = "labels_swapped"
            f.detail["swap"] = list(sorted(swapped)[0])
    if pairs:
        f.detail["pairs"] = pairs
    return f


def sample_ratio(sample: dict) -> float | None:
    """One sample's observed / expected, None when either is missing, not a number or 0."""
    o, e = _float(sample.get("observed")), _float(sample.get("expected"))
    return o / e if o and e else None


def _off_ratio(sample: dict, median: float) -> float:
    """How far one sample's observed/expected ratio is from the column's median (log scale)."""
    r = sample_ratio(sample)
    if not r or r <= 0 or median <= 0:
        return math.inf
    return abs(math.log(r) - math.log(median))


def _nearly_clean(sample: dict) -> bool:
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


def _steady(ratio: dict) -> bool:
    med, lo, hi = ratio.get("median"), ratio.get("min"), ratio.get("max")
    if not med or lo is None or hi is None:
        return False
    return abs(hi - lo) <= 0.03 * abs(med)


def _unkeyed_column(f: Finding, col: dict) -> Finding:
    """Tables without a key: only whole-table facts (values that appear on one side, totals)."""
    nulls = col.get("nulls") or {}
    if int(nulls.get("broken") or 0) > int(nulls.get("intact") or 0) and not col.get("only_broken"):
        f.kind = "values_blank"
        f.count = int(nulls["broken"]) - int(nulls.get("intact") or 0)
    grain = col.get("grain") or {}
    if grain.get("intact") and grain.get("broken") and grain["intact"] != grain["broken"]:
        f.kind = "time_lost" if (grain["intact"], grain["broken"]) == ("time", "day") else "date_grain"
        f.detail["grain"] = dict(grain)
    total = col.get("total") or {}
    if f.kind == "values_changed" and total.get("intact") and total.get("broken") is not None:
        r = total["broken"] / total["intact"] if total["intact"] else None
        if r is not None and r > 1.02:
            f.kind = "values_high"
        elif r is not None and r < 0.98:
            f.kind = "values_low"
        f.detail["total"] = dict(total)
    f.detail["only_intact"] = list(col.get("only_intact") or [])
    f.detail["only_broken"] = list(col.get("only_broken") or [])
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
