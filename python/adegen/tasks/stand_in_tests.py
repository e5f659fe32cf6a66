"""Short-named stand-ins for the AUTO tests of a graded table whose name is too long.

ade-bench names the tests of a `solution_seeds` entry `AUTO_<table>_equality` and
`AUTO_<table>_existence`; its console parser stops seeing test names of about 60 characters
(harness notes, section 8), so such a task could never pass. For a table whose AUTO names would
exceed `MAX_TEST_NAME`, the task's seed entry gets `exclude_tests: [equality_test,
existence_test]` and `tests/` gets two short-named files with the same grading:

* `<stem>_existence.sql`: ade-bench's existence test text, verbatim;
* `<stem>_equality.sql`: ade-bench's equality test text (same `table_name`, `answer_keys` and
  `cols_to_exclude`, so the same exclude_columns), with the call of the `ade_bench_equality_test`
  macro replaced by that macro's own body. The harness writes the macro into the project only when
  it generates an AUTO equality test itself, which it does not for an excluded seed; the body,
  run on the same variables, grades exactly as the call would.

The files are derived from task.yaml and rewritten with it by its one writer (`task_yaml`)."""
from __future__ import annotations

import hashlib
import re

from adegen.adebench.limits import MAX_TEST_NAME

EXCLUDED = ["equality_test", "existence_test"]
_MACRO_BODY = re.compile(r"\{%-?\s*macro\s+ade_bench_equality_test\([^)]*\)\s*-?%\}\n?(.*)\{%-?\s*endmacro\s*-?%\}",
                         re.S)
_CALL = re.compile(r"^\{\{\s*ade_bench_equality_test\(.*\)\s*\}\}\s*$", re.M)


def needs_stand_ins(table: str) -> bool:
    """The harness's own test names for this table would be too long to be counted."""
    return len(f"AUTO_{table}_existence") > MAX_TEST_NAME or len(f"AUTO_{table}_equality") > MAX_TEST_NAME


def stem(table: str) -> str:
    """A short, stable, unique name stem: the table's start plus a hash of the whole name."""
    digest = hashlib.sha1(table.encode("utf-8")).hexdigest()[:6]
    room = MAX_TEST_NAME - len("_existence") - len(digest) - 1
    head = re.sub(r"[^A-Za-z0-9_]", "_", table)[:room].rstrip("_") or "t"
    if head.upper().startswith("AUTO_"):
        head = "t_" + head[: room - 2]
    return f"{head}_{digest}"


def file_names(table: str) -> tuple[str, str]:
    """(equality, existence) file names in tests/."""
    s = stem(table)
    return f"{s}_equality.sql", f"{s}_existence.sql"


def applies(seed) -> bool:
    """A seed entry (task_yaml.SeedEntry) graded by stand-ins: long name, both AUTO tests excluded."""
    return needs_stand_ins(seed.table_name) and set(EXCLUDED) <= set(seed.exclude_tests)


def render(seed) -> dict[str, str]:
    """tests/<name> -> text for one seed entry graded by stand-ins."""
    from adegen.adebench.procedure.testgen import generate_existence_test

    equality, body = _equality(seed, seed.exclude_columns)
    if body is None or not _CALL.search(equality):
        raise RuntimeError("ade-bench's equality test text has changed; adegen cannot inline its macro")
    equality = _CALL.sub(lambda _m: body.group(1).rstrip("\n"), equality, count=1)
    eq_name, ex_name = file_names(seed.table_name)
    return {f"tests/{eq_name}": equality, f"tests/{ex_name}": generate_existence_test(seed.table_name)}


def _equality(seed, exclude: list[str]):
    """(ade-bench's equality test text of one seed entry with `exclude` as its exclude_columns, the
    match of its macro's body or None)."""
    # the harness package brings duckdb along: imported only for a table that needs a stand-in
    from adegen.adebench.procedure.testgen import SolutionSeed, equality_macro, generate_equality_test

    cfg = SolutionSeed(table_name=seed.table_name, exclude_columns=list(exclude) or None,
                       alternates=list(seed.extra.get("alternates") or []) or None)
    return generate_equality_test(seed.table_name, cfg), _MACRO_BODY.search(equality_macro())


def render_all(seeds) -> dict[str, str]:
    out: dict[str, str] = {}
    for seed in seeds:
        if applies(seed):
            out.update(render(seed))
        if zero_or_null_columns(seed):
            out.update([render_zero_or_null(seed)])
    return out


def window_file(table: str) -> str:
    """tests/<name> of a table's windowed equality test (short enough for the harness to count)."""
    name = f"{table}_windowed"
    return f"tests/{name if len(name) <= MAX_TEST_NAME else stem(table) + '_w'}.sql"


def render_windowed(seed, column: str, through: str, why: str) -> tuple[str, str]:
    """(tests/<name>, text): ade-bench's equality test of one seed entry (same exclude_columns and
    answer keys), its macro body inlined as `render` does, comparing only the rows with `column`
    up to the date `through` on both sides: the table's later rows grow with the clock (`why`),
    so the entry's AUTO equality test is excluded (`exclude_tests: [equality_test]`)."""
    equality, body = _equality(seed, seed.exclude_columns)
    if body is None or not _CALL.search(equality) or body.group(1).count(_FROM_KEY) != 2 \
            or body.group(1).count(_FROM_TABLE) != 2:
        raise RuntimeError("ade-bench's equality test text has changed; adegen cannot window it")
    cond = f"{{{{ adapter.quote('{column}') }}}} <= cast('{through}' as date)"
    windowed = (body.group(1).rstrip("\n").replace(_FROM_KEY, f"{_FROM_KEY} where {cond}")
                .replace(_FROM_TABLE, f"{_FROM_TABLE} where {cond}"))
    head = (f"-- adegen: ade-bench's equality test on the rows of {seed.table_name} with {column} through "
            f"{through}\n-- (its later rows grow with the clock: {' '.join(why.split())})\n")
    return window_file(seed.table_name), head + _CALL.sub(lambda _m: windowed, equality, count=1)


_FROM_KEY = "from {{ ref(answer_key) }}"
_FROM_TABLE = "from {{ ref(table_name) }}"


# A seed entry's key (ade-bench ignores keys it does not declare): columns whose "no match" value may
# be NULL or 0 (a new count: `count(case ...)` gives 0, `sum(case ... then 1 end)` NULL; issue 52).
# They are in the entry's exclude_columns, so the AUTO equality test compares every other column,
# and a stand-in (`render_zero_or_null`) compares whole rows with those columns read as 0 when NULL.
ZERO_OR_NULL = "adegen_zero_or_null"
_APPEND = "{%- do compare_cols.append(col.quoted) -%}"


def zero_or_null_columns(seed) -> list[str]:
    return [str(c) for c in seed.extra.get(ZERO_OR_NULL) or []]


def zero_file(table: str) -> str:
    """tests/<name> of a table's zero-or-null equality test (short enough for the harness to count)."""
    name = f"{table}_zero_or_null"
    return f"tests/{name if len(name) <= MAX_TEST_NAME else stem(table) + '_z'}.sql"


def render_zero_or_null(seed) -> tuple[str, str]:
    """(tests/<name>, text): ade-bench's equality test of one seed entry, its macro body inlined as
    `render` does, over every column but the entry's other exclude_columns, the zero-or-null columns
    compared as `coalesce(column, 0)` on both sides: whole rows, so no key is needed, and a table
    without such a column (or with another value than the solution's where it is not 0) fails."""
    lenient = [c.lower() for c in zero_or_null_columns(seed)]
    equality, body = _equality(seed, [c for c in seed.exclude_columns if c.lower() not in lenient])
    if body is None or not _CALL.search(equality) or body.group(1).count(_APPEND) != 1:
        raise RuntimeError("ade-bench's equality test text has changed; adegen cannot read NULL as 0 in it")
    names = ", ".join(f"'{c}'" for c in lenient)
    append = ("{%- do compare_cols.append('coalesce(' ~ col.quoted ~ ', 0) as ' ~ col.quoted "
              f"if col.name | lower in [{names}] else col.quoted) -%}}")
    head = (f"-- adegen: ade-bench's equality test of {seed.table_name}, with {', '.join(lenient)} read as 0 where "
            "NULL on both sides\n-- (a new count's rows that match nothing may hold either)\n")
    inlined = body.group(1).rstrip("\n").replace(_APPEND, append)
    return zero_file(seed.table_name), head + _CALL.sub(lambda _m: inlined, equality, count=1)
