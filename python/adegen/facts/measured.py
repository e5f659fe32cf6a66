"""Measured facts: what the tables a mutant changed show, as typed records (the screening measures
them, validate.evidence; the prompt writer, adegen.prompts, reads them, never the bug pattern).

On the wire - `Observation.details["tables"]` from the worker processes, the run record, the JSON
an external `--prompt-command` reads - a table's facts are one plain dict whose keys are the field
names of the records below (`TableFacts`, its `ColumnFacts`, ...; each field says what it holds),
present only when measured. The records are the one definition of those keys: the producer
(adegen.facts.evidence) writes every dict with `wire(Record, field=value, ...)`, and `read_table`
is the one place that turns a dict back into a `TableFacts`; both refuse a key no record has.
Bounded: a few tables per mutant, a few changed columns per table, three sample rows.

`Observation.details` around them: "tables" (the list), "relation_kind" {table, intact, broken}
(the mutated model's object kinds, when they differ), "nondeterministic_tables" and
"nondeterministic_columns" {table: [columns]} (never evidence).
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Sides:
    """One quantity in the intact build and in the broken one."""

    intact: Any = None
    broken: Any = None


@dataclass(frozen=True)
class Ratio:
    """broken / intact over the changed rows whose intact value is not 0."""

    median: float | None = None
    min: float | None = None
    max: float | None = None
    rows: int | None = None     # how many rows the ratio is over (None: not measured)


@dataclass(frozen=True)
class Shift:
    """How far changed dates moved, in seconds."""

    median: float | None = None
    min: float | None = None
    max: float | None = None


@dataclass(frozen=True)
class Sample:
    """One row: its key values and label, and for a changed value what it is and should be."""

    key: tuple = ()             # the values of the table's key columns
    label: Any = None           # the row's label (TableFacts.label), when the table has one
    observed: Any = None
    expected: Any = None
    copies: int | None = None   # duplicates: how many times the key is there
    compared: bool = False      # the sample of a changed value (observed and expected measured)


@dataclass(frozen=True)
class RowSet:
    """Rows of one side only, by key (TableFacts.missing: intact only; extra: broken only)."""

    count: int = 0
    sample: tuple[Sample, ...] = ()


@dataclass(frozen=True)
class Duplicates:
    keys: int = 0                   # keys with more than one row
    max_copies: int | None = None
    sample: tuple[Sample, ...] = ()


@dataclass(frozen=True)
class ColumnFacts:
    """One changed column: counts over the changed rows (keyed tables), value sets (tables without a key)."""

    name: str
    type: str = "text"              # facts.evidence.value_kind of its SQL type; "number->text" when that changed
    changed: int = 0
    now_null: int = 0
    was_null: int = 0
    higher: int = 0
    lower: int = 0
    negated: int = 0
    rounded: int = 0                # broken is the intact value rounded, truncated or floored
    new_rows: int = 0               # changed rows showing a label the intact column never holds
    labels_intact: tuple = ()       # with them, every label the intact column holds (at most 5)
    ratio: Ratio | None = None
    shift_seconds: Shift | None = None
    grain: Sides | None = None
    pairs: tuple = ()               # (intact value, broken value, rows), most rows first
    total: Sides | None = None      # the column's sum
    distinct: Sides | None = None   # distinct values
    nulls: Sides | None = None      # NULLs (tables without a key)
    only_intact: tuple = ()         # value samples one side only has (tables without a key)
    # the same; on keyed text columns: labels the intact column never holds, most rows first
    only_broken: tuple = ()
    sql_type: Sides | None = None   # the SQL types, when they changed
    # the same numbers written differently (10.0 -> 10): read from records written before issue 30,
    # no longer measured, never evidence
    written_only: bool = False
    sample: tuple[Sample, ...] = ()  # changed rows: key, label, observed and expected value


@dataclass(frozen=True)
class TableFacts:
    """One changed table."""

    table: str
    distance: int = 0                   # DAG edges from the mutated model
    rows_intact: int = 0
    rows_broken: int = 0
    rows_differing: int = 0
    error: str | None = None            # the relation could not be read after the build
    build_error: str | None = None      # dbt's message (the prompt writer's own fact of a build error)
    columns_missing: tuple = ()
    columns_extra: tuple = ()
    relation_kind: Sides | None = None  # the warehouse object type changed ("table" -> "view")
    key: tuple = ()                     # the columns that identify a row
    label: str | None = None            # the column that names the entity ("account_name")
    missing: RowSet | None = None
    extra: RowSet | None = None
    duplicates: Duplicates | None = None
    columns: tuple[ColumnFacts, ...] = ()


@dataclass(frozen=True)
class RelationKind:
    """The object kinds of the mutated model's relation in both builds ("table", "view")."""

    table: str
    intact: str
    broken: str

    def wire(self) -> dict:
        return {"table": self.table, "intact": self.intact, "broken": self.broken}


# --------------------------------------------------------------------------- writing and reading the wire

def _known(cls, d: dict) -> dict:
    unknown = set(d) - {f.name for f in fields(cls)}
    if unknown:
        raise ValueError(f"{cls.__name__} has no field {', '.join(sorted(unknown))} (adegen.facts.measured)")
    return d


def wire(record: type, **values) -> dict:
    """The wire dict of these fields of `record` (TableFacts, ColumnFacts, Sample, ...), in the order
    given: how facts are written, so a key that is not a field fails where it is written."""
    return _known(record, values)


def _sides(d: dict | None) -> Sides | None:
    return Sides(**_known(Sides, d)) if d else None


def _sample(d: dict) -> Sample:
    _known(Sample, d)
    return Sample(tuple(d.get("key") or ()), d.get("label"), d.get("observed"), d.get("expected"), d.get("copies"),
                  "observed" in d or "expected" in d)


def _samples(items) -> tuple[Sample, ...]:
    return tuple(_sample(s) for s in items or ())


def _rows(d: dict | None) -> RowSet | None:
    return RowSet(int(_known(RowSet, d).get("count") or 0), _samples(d.get("sample"))) if d else None


def _column(d: dict) -> ColumnFacts:
    _known(ColumnFacts, d)
    ints = {k: int(d.get(k) or 0) for k in ("changed", "now_null", "was_null", "higher", "lower", "negated", "rounded",
                                            "new_rows")}
    return ColumnFacts(
        str(d["name"]), str(d.get("type") or "text"), **ints,
        ratio=Ratio(**_known(Ratio, d["ratio"])) if d.get("ratio") else None,
        shift_seconds=Shift(**_known(Shift, d["shift_seconds"])) if d.get("shift_seconds") else None,
        grain=_sides(d.get("grain")), pairs=tuple(tuple(p) for p in d.get("pairs") or ()), total=_sides(d.get("total")),
        distinct=_sides(d.get("distinct")), nulls=_sides(d.get("nulls")),
        only_intact=tuple(d.get("only_intact") or ()), only_broken=tuple(d.get("only_broken") or ()),
        labels_intact=tuple(d.get("labels_intact") or ()),
        sql_type=_sides(d.get("sql_type")), written_only=bool(d.get("written_only")), sample=_samples(d.get("sample")))


def read_table(d: dict) -> TableFacts:
    """The record of one table's facts (the wire dict described above)."""
    _known(TableFacts, d)
    dup = d.get("duplicates")
    return TableFacts(
        str(d.get("table")), int(d.get("distance") or 0), int(d.get("rows_intact") or 0),
        int(d.get("rows_broken") or 0), int(d.get("rows_differing") or 0),
        str(d["error"]) if d.get("error") else None, str(d["build_error"]) if d.get("build_error") else None,
        tuple(d.get("columns_missing") or ()), tuple(d.get("columns_extra") or ()), _sides(d.get("relation_kind")),
        tuple(d.get("key") or ()), d.get("label"), _rows(d.get("missing")), _rows(d.get("extra")),
        Duplicates(int(_known(Duplicates, dup).get("keys") or 0), dup.get("max_copies"), _samples(dup.get("sample")))
        if dup else None,
        tuple(_column(c) for c in d.get("columns") or ()))


# --------------------------------------------------------------------------- the wire, whole

def model_rows_changed(observation) -> bool:
    """Whether the screening found the mutated model's own rows changed in number only (duplicates
    a set comparison does not list: an incremental model that appends its newest rows again)."""
    return bool((getattr(observation, "details", None) or {}).get("model_rows_changed"))


def usable_tables(observation, unstable=frozenset()) -> list[dict]:
    """The facts (wire dicts) of the tables a prompt may use, from a screening's Observation: only
    the object kind when the mutated model's changed (any data difference next to it is chance);
    else every measured table but the unstable ones (`unstable` and the observation's own),
    without their unstable columns."""
    details = getattr(observation, "details", None) or {}
    skip = {str(t).lower() for t in unstable} | {str(t).lower() for t in details.get("nondeterministic_tables") or []}
    kind = details.get("relation_kind")
    if kind:
        return [wire(TableFacts, table=kind["table"], distance=0,
                     relation_kind=wire(Sides, intact=kind["intact"], broken=kind["broken"]))]
    unstable_cols = {str(t).lower(): {str(c).lower() for c in cols}
                     for t, cols in (details.get("nondeterministic_columns") or {}).items()}
    out = []
    for f in details.get("tables") or []:
        if str(f.get("table")).lower() in skip:
            continue
        f = dict(f)
        drop = unstable_cols.get(str(f.get("table")).lower())
        if drop and f.get("columns"):
            f["columns"] = [c for c in f["columns"] if str(c.get("name")).lower() not in drop]
        out.append(f)
    return out


def build_failed(table: str, message: str) -> dict:
    """The facts of a table whose model failed to build (dbt's message, cleaned)."""
    return wire(TableFacts, table=table, distance=0, build_error=message)


def kind_changed(kind: RelationKind, rows: tuple[int, int]) -> dict:
    """The facts of the mutated model's table when only its object kind changed."""
    return wire(TableFacts, table=kind.table, distance=0,
                relation_kind=wire(Sides, intact=kind.intact, broken=kind.broken),
                rows_intact=rows[0], rows_broken=rows[1], rows_differing=0)
