"""Tell "fakesnow cannot run this" apart from real dbt failures.

Patterns come from shared/docs/fakesnow.md (stock-server failures, the ~80 statement probe, and the
launcher's `fakesnow internal error` answers). A failing dbt call is *unsupported on emulator* when
every error block dbt reports matches one of them; any other error (or a failing test) makes it a
real failure.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# Functions real Snowflake has but fakesnow 0.12.1 lacks (a "does not exist" for any other name is
# treated as a real error: on Snowflake an unknown function fails too).
KNOWN_MISSING_FUNCTIONS = frozenset({
    "current_session", "last_query_id", "get_ddl", "ratio_to_report", "system$typeof", "result_scan",
    "current_account", "current_region", "current_warehouse", "object_keys", "array_contains",
    "array_to_string", "array_distinct", "system$clustering_information", "current_statement",
})


@dataclass(frozen=True)
class UnsupportedPattern:
    id: str
    regex: re.Pattern
    reason: str


def _p(id_: str, regex: str, reason: str) -> UnsupportedPattern:
    return UnsupportedPattern(id_, re.compile(regex, re.IGNORECASE | re.DOTALL), reason)


UNSUPPORTED_PATTERNS: tuple[UnsupportedPattern, ...] = (
    _p("temporary_relation", r'TEMPORARY table names can \*only\* use the "temp" catalog',
       "fully-qualified TEMPORARY table/view (incremental re-run, unit test); needs the compat macros"),
    _p("merge_ambiguous_values", r"Ambiguous reference to column name .{0,200}DBT_INTERNAL_(?:DEST|SOURCE)",
       "MERGE with unqualified insert values (incremental merge / snapshot); needs the compat macros"),
    _p("multi_database_transaction", r"a single transaction can only write to a single attached database",
       "DML inside begin/commit touching two DuckDB catalogs; needs the compat macros"),
    _p("query_tag", r"MappedSequence object has no element 0|show parameters like 'query_tag'",
       "query_tag config (no QUERY_TAG session parameter); needs the compat macros"),
    _p("alter_session", r"alter session.{0,200}not implemented|009999.{0,200}not implemented",
       "ALTER SESSION SET ... is not implemented"),
    _p("grants", r'syntax error at or near "GRANT"|show grants',
       "GRANT / SHOW GRANTS (grants config); needs the compat macros"),
    _p("dynamic_table", r'syntax error at or near "dynamic"', "dynamic tables"),
    _p("schema_clone", r'syntax error at or near "CLONE"', "CREATE SCHEMA ... CLONE"),
    _p("table_function", r'syntax error at or near "TABLE"', "TABLE(...) functions such as RESULT_SCAN"),
    _p("array_function_binding",
       r"No function matches .{0,300}array_length\(JSON\)|failed to bind function .{0,300}lambda",
       "ARRAY_CONTAINS / ARRAY_TO_STRING / ARRAY_DISTINCT style array functions"),
    _p("internal_error", r"fakesnow internal error|NotImplementedError|Unhandled exception",
       "fakesnow internal error (a feature it does not implement)"),
    _p("python_model", r"stored procedure|snowpark", "Python models / stored procedures"),
)

_MISSING_FN = re.compile(r"(?:Scalar|Aggregate|Table) Function with name ([\w$]+) does not exist", re.IGNORECASE)


@dataclass(frozen=True)
class UnsupportedMatch:
    id: str
    reason: str
    excerpt: str

    def render(self) -> str:
        return f"{self.id}: {self.reason} ({self.excerpt})"


# The launcher reports every non-SQL exception as "fakesnow internal error: <Type>: ...". Some of those
# are genuine data errors that Snowflake raises too (TO_DATE with a format that does not fit, a failed
# cast): they stay real failures.
DATA_ERROR_MARKERS = re.compile(
    r"InvalidInputException|ConversionException|Conversion Error|OutOfRangeException|Could not parse string"
    r"|Could not convert|Division by zero|ConstraintException", re.IGNORECASE)


def unsupported_matches(text: str) -> list[UnsupportedMatch]:
    """Every known-unsupported feature whose error text occurs in `text` (dedup by id, text order)."""
    found: dict[str, UnsupportedMatch] = {}
    for pat in UNSUPPORTED_PATTERNS:
        m = pat.regex.search(text)
        if m and pat.id == "internal_error" and DATA_ERROR_MARKERS.search(text[m.start(): m.end() + 400]):
            continue
        if m and pat.id not in found:
            found[pat.id] = UnsupportedMatch(pat.id, pat.reason, _excerpt(text, m.start(), m.end()))
    for m in _MISSING_FN.finditer(text):
        name = m.group(1).lower()
        key = f"missing_function:{name}"
        if name in KNOWN_MISSING_FUNCTIONS and key not in found:
            found[key] = UnsupportedMatch(key, f"function {name.upper()} does not exist in fakesnow",
                                          _excerpt(text, m.start(), m.end()))
    return list(found.values())


def _excerpt(text: str, start: int, end: int, width: int = 160) -> str:
    s = text[max(0, start - 40): min(len(text), end + 40)]
    s = " ".join(s.split())
    return s if len(s) <= width else s[: width - 3] + "..."


# dbt's summary: "  Database Error in model fct_orders (models/marts/fct_orders.sql)" followed by indented
# message lines; "Failure in test ..." for failing data tests.
_ERROR_HEAD = re.compile(
    r"^\s*(?:\d\d:\d\d:\d\d\s+)?((?:[A-Z][a-z]+ )?(?:Error|Failure)) in (\w+) (\S+) \(([^)]*)\)\s*$", re.MULTILINE
)
_SUMMARY = re.compile(r"Completed with \d+ errors?", re.IGNORECASE)


@dataclass(frozen=True)
class ErrorBlock:
    kind: str           # "Database Error", "Compilation Error", "Failure", ...
    resource_type: str  # model, test, seed, ...
    name: str
    path: str
    message: str
    unsupported: tuple[UnsupportedMatch, ...]


def error_blocks(output: str) -> list[ErrorBlock]:
    """The per-node errors of dbt's end-of-run summary (falls back to the whole log if no summary)."""
    m = _SUMMARY.search(output)
    text = output[m.end():] if m else output
    heads = list(_ERROR_HEAD.finditer(text))
    # dbt 1.11 prints "Failure in model X (path)" and then, indented, "Database Error in model X (path)":
    # consecutive heads of the same node are one block (kind = the most specific, i.e. last, head)
    merged: list[list] = []          # [kind, resource_type, name, path, text]
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        body = h.group(0) + "\n" + text[h.end():end]
        key = (h.group(2), h.group(3))
        if merged and (merged[-1][1], merged[-1][2]) == key:
            merged[-1][0] = h.group(1)
            merged[-1][4] += body
        else:
            merged.append([h.group(1), h.group(2), h.group(3), h.group(4), body])
    blocks: list[ErrorBlock] = []
    for kind, rtype, name, path, body in merged:
        lines = []
        for line in body.splitlines():
            if re.search(r"\bDone\. PASS=|Finished running", line):
                break
            line = re.sub(r"^\s*\d\d:\d\d:\d\d\s+", "", line).rstrip()
            if not _ERROR_HEAD.match(line):
                lines.append(line)
        message = "\n".join(l for l in lines if l.strip()).strip()
        blocks.append(ErrorBlock(kind, rtype, name, path, message, tuple(unsupported_matches(message))))
    return blocks


def classify_failure(output: str) -> tuple[str, list[UnsupportedMatch], list[ErrorBlock]]:
    """("unsupported" | "failed", matches, blocks) for the output of a failed dbt call."""
    blocks = error_blocks(output)
    if blocks:
        matches: dict[str, UnsupportedMatch] = {}
        for b in blocks:
            for u in b.unsupported:
                matches.setdefault(u.id, u)
        real = [b for b in blocks if not b.unsupported]
        return ("failed" if real else "unsupported"), list(matches.values()), blocks
    matches_all = unsupported_matches(output)
    return ("unsupported" if matches_all else "failed"), matches_all, blocks
