"""SQL type families: what kind of value a column of a type holds (the one place that decides it).

Type names as DuckDB's DESCRIBE writes them (`BIGINT`, `DECIMAL(18,3)`, `TIMESTAMP WITH TIME ZONE`,
`VARCHAR`, `INTEGER[]`), any case; also the common names of other databases (`number`, `int4`,
`bpchar`, `datetime`). The measured facts (adegen.facts.evidence) group columns by family; the prompt
writer names one in plain words (adegen.prompts.fields.type_words).
"""
from __future__ import annotations

import re

FAMILIES = ("integer", "decimal", "number", "text", "date", "timestamp", "bool", "other")
NUMBERS = frozenset({"integer", "decimal", "number"})

_INTEGER = re.compile(r"(tinyint|smallint|integer|int\b|int\d|bigint|hugeint|utinyint|usmallint|uinteger|"
                      r"ubigint|uhugeint)")
_DECIMAL = re.compile(r"(float|real|double|decimal|numeric)")
_APPROXIMATE = re.compile(r"(float|double|real)", re.I)


def family(sql_type: str) -> str:
    """One of FAMILIES. "number" is Snowflake's NUMBER, whose scale decides between whole numbers and
    decimals; INTERVAL, TIME, BLOB, STRUCT, ... are "other"."""
    t = str(sql_type).lower().strip()
    if t.startswith("timestamp") or t == "datetime":
        return "timestamp"
    if t == "date":
        return "date"
    if t in ("boolean", "bool"):
        return "bool"
    if _INTEGER.match(t):
        return "integer"
    if _DECIMAL.match(t):
        return "decimal"
    if t.startswith("number"):
        return "number"
    if t.startswith(("varchar", "text", "string", "char", "bpchar")):
        return "text"
    return "other"


def approximate(sql_type: str) -> bool:
    """A binary floating-point type (FLOAT, DOUBLE, REAL): no use as a key, its values compare
    unreliably."""
    return bool(_APPROXIMATE.match(str(sql_type)))
