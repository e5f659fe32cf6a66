"""Upstream data change `resent_rows` (issue 52, item 1): since this morning the source re-sends
some records it already sent, so a raw table now holds a key more than once and every model that
joins or sums it double counts. The adaptation is data reasoning, not a mechanical edit: find the
table that grew, see that its key repeats, and keep one row per key in the model that reads it.

Two forms, by what the table holds (measured by the caller):
- it has a load/update timestamp (`updated_at`, `_loaded_at`, `_fivetran_synced`, ... of a date or
  timestamp type): the re-sent copy carries a later one (one day on), as an append-only sync of
  updated records does. The fix keeps the latest row per key (`qualify row_number() over
  (partition by key order by ts desc) = 1`); `select distinct` is no fix, the copies differ.
- it has none: the copies are identical rows, the fix keeps one of each (`select distinct *`).

Fair because the key is unique and never NULL in the intact data (measured), so "one row per key"
is the intact table again: whichever correct dedup an agent writes (in the staging model or in
a subquery), the graded marts equal the adapted reference. Tables read as seeds are never chosen:
ade-bench's test phase and any `dbt seed`/`dbt build` an agent runs reload the CSV and undo the
change. Every fifth key (in key order, from the first) is re-sent: observable on any table and
deterministic.

Pure: the caller measures the keys and types (pipeline/datachange.py)."""
from __future__ import annotations

import re
from typing import Callable, Mapping, Sequence

from adegen.propose.datachange import (DataChange, ModelFile, RawRelation, adapted_readers, graded_table,
                                      rebuild_order, wrap_reads)
from adegen.sql.quote import ident
from adegen.sql.types import family

KIND = "resent_rows"
EVERY = 5  # one key in EVERY is re-sent
# the names a load or update timestamp goes by (a created_at is no version stamp)
STAMP = re.compile(r"(?i)(updated|modified|loaded|synced|ingested|extracted)")
KEY = re.compile(r"(?i)(^id$|_?id$)")

# The prompts (text as data): the data change is said, the fix is not. {stamp_sentence}: the
# timestamp form's sentence, empty for identical copies.
PROMPTS = {
    "base": ("Since this morning's data load, the numbers in `{table}` are off, and nobody changed the "
             "project. The source team says `{relation}` now re-sends some records it had already sent"
             "{stamp_sentence}. Can you adapt the project so `{table}` is right again?"),
    "hard": ("`{table}` has been wrong since this morning's data load: the source `{relation}` now sends "
             "some records more than once. Nobody changed the project. Can you fix it?"),
}
STAMP_SENTENCE = "; the newest copy of a record is the one with the latest `{stamp}`"
IDENTICAL_SENTENCE = ", as identical rows"
DESCRIPTION = ("Upstream data change: {relation} re-sends some records ({how}); adapt {readers} to keep one "
               "row per {key}")


def key_column(relation: RawRelation) -> str | None:
    """The table's key: the first id-named column the data holds unique and never NULL."""
    return next((c for c in relation.columns if c in relation.keys and KEY.search(c)), None)


def stamp_column(relation: RawRelation) -> str | None:
    """The table's load/update timestamp: the first column named like one, of a date or timestamp type."""
    for col, typ in zip(relation.columns, relation.types):
        if STAMP.search(col) and family(typ) in ("date", "timestamp"):
            return col
    return None


def resend_sql(relation: RawRelation, key: str, stamp: str | None) -> str:
    """The INSERT that re-sends every EVERY-th key (a copy one day newer when the table has a stamp)."""
    rel = f"{ident(relation.schema)}.{ident(relation.identifier)}"
    cols = "*"
    if stamp is not None:
        typ = dict(zip(relation.columns, relation.types))[stamp]
        cols = f"* replace (cast({ident(stamp)} + interval 1 day as {typ}) as {ident(stamp)})"
    return (f"insert into {rel} select {cols} from {rel} "
            f"qualify row_number() over (order by {ident(key)}) % {EVERY} = 1")


def dedup_subquery(key: str, stamp: str | None) -> Callable[[str], str]:
    """The read that keeps one row per key, for wrap_reads."""
    if stamp is None:
        return lambda call: f"select distinct * from {call}"
    return lambda call: (f"select * from {call} qualify row_number() over "
                         f"(partition by {ident(key)} order by {ident(stamp)} desc) = 1")


def plan_resent(relation: RawRelation, models: Mapping[str, ModelFile], downstream: Mapping[str, int],
                between: Callable[[str], Sequence[str]]) -> DataChange | None:
    """The `resent_rows` change of `relation`, or None: a seed's table, no key, a read not found,
    no table downstream to grade. Arguments as datachange.plan_change."""
    if not relation.readers or any(c.startswith("ref(") for c in relation.calls):
        return None
    key = key_column(relation)
    if key is None:
        return None
    stamp = stamp_column(relation)
    dedup = dedup_subquery(key, stamp)
    fixes = adapted_readers(relation, models, lambda text: wrap_reads(text, relation.calls, dedup, relation.identifier))
    if fixes is None:
        return None
    graded = graded_table(models, downstream)
    if graded is None:
        return None
    readers = tuple(models[u].name for u in relation.readers)
    how = f"a newer `{stamp}` on each copy" if stamp else "identical copies"
    sentence = STAMP_SENTENCE.format(stamp=stamp) if stamp else IDENTICAL_SENTENCE
    facts = (("key", key), ("stamp", stamp), ("every", EVERY), ("stamp_sentence", sentence))
    return DataChange(KIND, relation, (resend_sql(relation, key, stamp),), tuple(fixes), readers, graded.name,
                        rebuild_order(readers, graded, models, between), texts=tuple(PROMPTS.items()),
                        description_text=DESCRIPTION.format(relation=relation.identifier, how=how,
                                                            readers=", ".join(readers), key=key),
                        facts=facts)
