"""Upstream data changes (issue 52, item 1): a task whose setup changes the DATA the project reads,
not its code, as ade-bench's analytics_engineering007 does ("The id field in the products table is
now a string. This has broken several models."). The project must be adapted so its marts are right
again; the solution adapts the models that read the changed table.

Two kinds: `renamed_columns` here, `resent_rows` in propose/resent.py (the source re-sends records:
the marts double count until the staging model keeps one row per key). Each makes a `DataChange`:
the setup's SQL, the models' fix, the prompts and what the run record says of it.

`renamed_columns`: the raw table's columns arrive in camelCase (`customer_id` ->
`customerId`), as when an upstream export switches its naming convention. Why this one first: it
is observable on every database (the models that name a column fail to bind) and fair (the data is
unchanged, so the marts of the adapted project equal the intact build's whatever correct fix an
agent writes). An integer id arriving as text with the same values is not: DuckDB casts text to
integers in comparisons and set operations, so joins and ade-bench's EXCEPT-based equality test
pass on the broken state (measured on the example project).

Pure functions: the caller (pipeline/datachange.py) reads the manifest, the columns and the model
files; this module decides the site, the setup's SQL, the models' fix and the prompts."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from adegen.rewrite.text import SQL_WORDS
from adegen.propose.candidate_sites import encode, endings_of
from adegen.sql.quote import ident

KIND = "renamed_columns"
_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")

# The prompt levels (text as data). Symptom only: what a user sees after the load (the model that
# fails, the table that is missing), never the rename nor the fix.
PROMPTS = {
    "base": ("Since this morning's data load, `dbt run` fails at `{reader}` and `{table}` is no longer "
             "built. Nobody changed the project. Can you get it working again, so `{table}` is built and "
             "its numbers are right?"),
    "hard": "`{table}` is missing since this morning's data load. Can you fix it?",
}
KIND_ORDER = ("resent_rows", "renamed_columns")  # the kind that asks for data reasoning first
DESCRIPTION = "Upstream data change: {relation}'s columns arrive renamed (camelCase); adapt {readers}"
TAGS = ["dbt", "debugging", "data-change", "data-inspection"]
# guessed, not measured: the error names the missing column and its camelCase candidate
DIFFICULTY = "medium"


@dataclass(frozen=True)
class RawRelation:
    """A raw table the project reads (a source's or a seed's relation): where it is, the Jinja calls
    that read it (`source('shop', 'customers')`, `ref('raw_customers')`), its columns in table order,
    and the models that read it directly (unique ids); as measured on the data: the columns' types
    (same order) and the id-named columns whose values are unique and never NULL."""

    schema: str
    identifier: str
    calls: tuple[str, ...]
    columns: tuple[str, ...]
    readers: tuple[str, ...]
    types: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.schema}.{self.identifier}"


@dataclass(frozen=True)
class ModelFile:
    """A model of the project as the site needs it: its name, path (forward slashes), text,
    materialization and layer."""

    unique_id: str
    name: str
    path: str
    text: str
    materialized: str = "view"
    layer: str = ""


@dataclass(frozen=True)
class DataChange:
    """One upstream data change and the adaptation that answers it."""

    kind: str
    relation: RawRelation
    statements: tuple[str, ...]                   # the change's SQL, one statement each (no `;` inside)
    fixes: tuple[tuple[str, bytes, bytes], ...]   # (path, today's bytes, adapted bytes)
    readers: tuple[str, ...]                      # the models the fix changes (names)
    graded: str                                   # the table the task grades
    rebuild: tuple[str, ...]                      # readers .. graded, in DAG order (solution, test_setup)
    drop: tuple[tuple[str, str], ...] = ()        # (schema, identifier) of the graded table
    texts: tuple[tuple[str, str], ...] = ()       # (prompt key, template: {reader} {table} {relation} ...)
    description_text: str = ""
    facts: tuple[tuple[str, object], ...] = ()    # what the run record says of the change (its fields)

    def setup_sql(self) -> str:
        """The change as `run_sql.sh` runs it: statements split at `;` (none holds one), then the
        graded table dropped, so a database that holds yesterday's build does not grade the broken
        state with it (a build that fails leaves no table, as on a fresh database)."""
        lines = [f"{st};" for st in self.statements]
        lines += [f"drop table if exists {ident(s)}.{ident(t)};" for s, t in self.drop]
        return "\n".join(lines) + "\n"

    def prompts(self) -> list[tuple[str, str]]:
        fields = {"reader": self.readers[0], "table": self.graded, "relation": self.relation.identifier,
                  **{k: v for k, v in self.facts if isinstance(v, str)}}
        return [(key, text.format(**fields)) for key, text in self.texts]

    def description(self) -> str:
        return self.description_text

    def record(self) -> dict:
        """The run record's `data_change` entry."""
        return {"kind": self.kind, "relation": str(self.relation), **dict(self.facts)}


def camel(name: str) -> str:
    """`customer_id` -> `customerId`; a name that is not lower snake_case stays as it is."""
    if not _SNAKE.fullmatch(name):
        return name
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def call_pattern(call: str) -> str:
    """A regex for `{{ <call> }}` written with any spacing and either quote: `source('a', 'b')`."""
    m = re.fullmatch(r"(\w+)\((.*)\)", call)
    if not m:
        raise ValueError(f"not a Jinja call: {call!r}")
    args = [a.strip().strip("'\"") for a in m.group(2).split(",")]
    inner = r"\s*,\s*".join(r"""['"]""" + re.escape(a) + r"""['"]""" for a in args)
    return r"\{\{\s*" + m.group(1) + r"\s*\(\s*" + inner + r"\s*\)\s*\}\}"


def _rename_list(renames: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{ident(new)} as {old}" for old, new in renames)


def fix_reader(text: str, calls: Sequence[str], renames: Sequence[tuple[str, str]], alias: str) -> str | None:
    """The model text adapted to the renamed columns, or None when no read of the table is found.
    `select * from {{ call }}` (the import CTE of most staging models) becomes `select * rename
    (...) from {{ call }}`; any other read in a FROM or JOIN becomes a subquery that renames (named
    `alias`, the table's identifier, when the read had no alias, so qualified columns still bind).
    A `{{ call }}` elsewhere (a `-- depends_on:` comment) is left alone."""
    cols = _rename_list(renames)
    out, hits = text, 0
    for call in calls:
        pat = call_pattern(call)
        # one pass, so a read the first form adapted is not wrapped again by the second
        out, n = re.subn(r"(?i)\b(?:(?P<star>select\s+\*)(?P<sfrom>\s+from\s+)(?P<scall>" + pat + r")"
                         r"|(?P<kw>from|join)(?P<sp>\s+)(?P<call>" + pat + r")(?P<tail>\s+(?:as\s+)?(?P<word>[A-Za-z_]\w*))?)",
                         lambda m: _adapted(m, cols, alias), out)
        hits += n
    return out if hits else None


def _adapted(m: re.Match, cols: str, alias: str) -> str:
    if m.group("star"):
        return f"{m.group('star')} rename ({cols}){m.group('sfrom')}{m.group('scall')}"
    return _wrapped(m, f"(select * rename ({cols}) from {m.group('call')})", alias)


def _wrapped(m: re.Match, sub: str, alias: str) -> str:
    """A FROM/JOIN read (groups kw, sp, call, tail, word) with `sub` in place of the call: the
    read's own alias names the subquery, else `alias` does (qualified columns still bind)."""
    keyword, space, tail, word = m.group("kw"), m.group("sp"), m.group("tail") or "", m.group("word")
    if word and word.lower() not in SQL_WORDS:
        return f"{keyword}{space}{sub}{tail}"
    return f"{keyword}{space}{sub} as {alias}{tail}"


def wrap_reads(text: str, calls: Sequence[str], subquery: Callable[[str], str], alias: str) -> str | None:
    """The model text with every FROM/JOIN read of `{{ call }}` replaced by the subquery
    `subquery(call_text)` (in parentheses, aliased as `_wrapped` says), or None when no read is
    found. A `{{ call }}` elsewhere (a `-- depends_on:` comment) is left alone."""
    out, hits = text, 0
    for call in calls:
        pat = call_pattern(call)
        out, n = re.subn(r"(?i)\b(?P<kw>from|join)(?P<sp>\s+)(?P<call>" + pat + r")"
                         r"(?P<tail>\s+(?:as\s+)?(?P<word>[A-Za-z_]\w*))?",
                         lambda m: _wrapped(m, f"({subquery(m.group('call'))})", alias), out)
        hits += n
    return out if hits else None


def plan_change(relation: RawRelation, models: Mapping[str, ModelFile], downstream: Mapping[str, int],
                between: Callable[[str], Sequence[str]]) -> DataChange | None:
    """The `renamed_columns` change of `relation`, or None when it has no snake_case column, a
    reader's read of it cannot be found, or no table model lies downstream to grade.
    `downstream`: {unique_id: distance} of every model downstream of the readers; `between(uid)`:
    the unique ids on the paths from the readers to `uid`, in DAG order."""
    renames = tuple((c, camel(c)) for c in relation.columns if camel(c) != c)
    taken = {c.lower() for c in relation.columns}
    if not renames or not relation.readers or any(new.lower() in taken for _, new in renames):
        return None  # nothing to rename, or a new name is already a column of the table
    fixes = adapted_readers(relation, models, lambda text: fix_reader(text, relation.calls, renames, relation.identifier))
    if fixes is None:
        return None
    graded = graded_table(models, downstream)
    if graded is None:
        return None
    readers = tuple(models[u].name for u in relation.readers)
    rebuild = rebuild_order(readers, graded, models, between)
    rel = f"{ident(relation.schema)}.{ident(relation.identifier)}"
    statements = tuple(f"alter table {rel} rename column {ident(old)} to {ident(new)}" for old, new in renames)
    return DataChange(KIND, relation, statements, tuple(fixes), readers, graded.name, rebuild,
                      texts=tuple(PROMPTS.items()),
                      description_text=DESCRIPTION.format(relation=relation.identifier, readers=", ".join(readers)),
                      facts=(("renames", [list(r) for r in renames]),))


def adapted_readers(relation: RawRelation, models: Mapping[str, ModelFile], adapt: Callable[[str], str | None]
                    ) -> list[tuple[str, bytes, bytes]] | None:
    """(path, old bytes, new bytes) of every model reading `relation`, each adapted by `adapt`; None when
    one of them is unknown or cannot be adapted (a data change adapts all its readers or none)."""
    fixes = []
    for uid in relation.readers:
        m = models.get(uid)
        fixed = adapt(m.text) if m else None
        if fixed is None:
            return None
        fixes.append((m.path, encode(m.text), encode(endings_of(m.text, fixed))))
    return fixes


def rebuild_order(readers: Sequence[str], graded: ModelFile, models: Mapping[str, ModelFile],
                  between: Callable[[str], Sequence[str]]) -> tuple[str, ...]:
    """The readers, the models between them and the graded table, then the graded table: the models
    the solution and test_setup rebuild, in DAG order."""
    path = [models[u].name for u in between(graded.unique_id) if u in models]
    return tuple(dict.fromkeys([*readers, *path, graded.name]))


def graded_table(models: Mapping[str, ModelFile], downstream: Mapping[str, int]) -> ModelFile | None:
    """The nearest table model downstream of the readers, a marts-layer one first (name breaks ties)."""
    tables = [models[u] for u in downstream if u in models and models[u].materialized == "table"]
    if not tables:
        return None
    return min(tables, key=lambda m: (m.layer != "marts", downstream[m.unique_id], m.name))
