"""Which models read the clock (issue 30, "time-stable tasks"): pure functions over dbt's manifest.

A table whose values depend on the day it is built (an age in days, a date spine up to today, a
"last 7 days" window) passes the day its solution seed is exported and fails when ade-bench runs
the task a month later. adegen.dbt.clock_columns follows each model named here column by column:
one that reads the clock only in some columns is graded without them (`RunFacts.clock_columns`),
one whose rows grow with it through a date (`RunFacts.clock_windows`, validate.clockwindow); the
others are never graded: screening never takes them as evidence (validate.verdict), the proof
refuses them as seeds (validate.fullprove), and the run summary names them with the reason
(`RunFacts.clock_dependent`).

A model reads the clock when
1. its raw code names a clock word (`lexer.code_words`: Jinja read, comments and SQL string
   literals ignored), e.g. `current_date`, `now()`, `{{ run_started_at }}`;
2. a macro it calls does, at any depth: dbt's manifest lists each node's and each macro's
   `depends_on.macros`, `adapter.dispatch` already resolved (`dbt.current_timestamp` ->
   `dbt_duckdb.duckdb__current_timestamp`, whose body is `now()`), across the project's and
   every package's macros;
3. its compiled code names one (a clock word that reached the SQL through `var()` or an
   environment variable, which the raw code does not show);
4. or it reads (ref) a model that does.
What lineage cannot see (a hook that creates a database macro, a source view) is caught by
execution: the validator's determinism build runs 40 days ahead (validate.clockcheck).
"""
from __future__ import annotations

from dataclasses import dataclass

from adegen.core.graph import Inherited, ProjectGraph, macros_called
from adegen.sql.lexer import code_words

# Names that read the clock wherever they stand (SQL keywords and functions of the common
# warehouses, dbt's context variable); `now`/`today` only when called: `today` is a fair column name.
CLOCK_WORDS = frozenset({
    "current_date", "current_timestamp", "current_time", "current_datetime", "localtimestamp", "localtime",
    "sysdate", "systimestamp", "sysdatetime", "getdate", "getutcdate", "transaction_timestamp",
    "statement_timestamp", "clock_timestamp", "get_current_time", "get_current_timestamp", "run_started_at",
    "utcnow",
})
CLOCK_CALLS = frozenset({"now", "today"})


def clock_word(words: list[str]) -> str | None:
    """The first clock word of a token list (`now()` / `today()` only as calls), else None."""
    for i, w in enumerate(words):
        if w in CLOCK_WORDS:
            return w
        if w in CLOCK_CALLS and i + 1 < len(words) and words[i + 1] == "(":
            return f"{w}()"
    return None


@dataclass(frozen=True)
class ClockUse:
    """Why one model reads the clock: the clock word, the macros it comes through (nearest first),
    whether only the compiled code shows it, and the nearest clock-dependent model it reads."""

    word: str
    macros: tuple[str, ...] = ()
    compiled: bool = False
    upstream: str | None = None   # the nearest clock-dependent model it reads
    origin: str | None = None     # the model where the clock is read (upstream or above it)
    origin_why: str = ""          # that model's own reason

    def reason(self) -> str:
        if self.upstream:
            via = "" if self.origin == self.upstream else f"downstream of {self.origin}, which "
            return f"reads {self.upstream} ({via}{self.origin_why})"
        where = " in its compiled SQL" if self.compiled else ""
        through = f" through macro {' -> '.join(self.macros)}" if self.macros else ""
        return f"reads {self.word}{through}{where}"


class _Macros:
    """The clock word each macro reads, itself or through the macros it calls (memoised; a macro
    that calls itself reads nothing through that call)."""

    def __init__(self, macros: dict, root: str):
        self.macros, self.root = macros, root
        self.search: Inherited[tuple[str, tuple[str, ...]]] = Inherited(
            lambda uid: macros_called(self.macros[uid]), self._own,
            lambda uid, _dep, hit: (hit[0], (self.name(uid), *hit[1])), self.macros.__contains__)

    def name(self, uid: str) -> str:
        m = self.macros.get(uid) or {}
        pkg, name = m.get("package_name"), m.get("name") or uid.rsplit(".", 1)[-1]
        return name if pkg == self.root else f"{pkg}.{name}"

    def _own(self, uid: str) -> tuple[str, tuple[str, ...]] | None:
        word = clock_word(code_words(self.macros[uid].get("macro_sql") or ""))
        return (word, (self.name(uid),)) if word else None

    def reads(self, uid: str) -> tuple[str, tuple[str, ...]] | None:
        """(clock word, macro chain from `uid` down to the one naming it), or None."""
        return self.search.of(uid)


def _own_use(node: dict, macros: _Macros) -> ClockUse | None:
    """A model's own reading of the clock: raw code, then called macros, then compiled code."""
    word = clock_word(code_words(node.get("raw_code") or ""))
    if word:
        return ClockUse(word)
    for dep in macros_called(node):
        hit = macros.reads(dep)
        if hit:
            return ClockUse(hit[0], hit[1])
    word = clock_word(code_words(node.get("compiled_code") or ""))
    return ClockUse(word, compiled=True) if word else None


def _inherit(name: str, up: ClockUse) -> ClockUse:
    """What a model reading the clock-dependent model `name` (whose use is `up`) is told."""
    origin, why = (up.origin, up.origin_why) if up.upstream else (name, up.reason())
    return ClockUse(up.word, upstream=name, origin=origin, origin_why=why)


def clock_models(manifest: dict) -> dict[str, ClockUse]:
    """{model unique_id: ClockUse} for every model of the manifest that reads the clock, itself or
    through the models it reads (the first of its parents in unique_id order that does)."""
    nodes = {u: n for u, n in (manifest.get("nodes") or {}).items() if n.get("resource_type") == "model"}
    macros = _Macros(manifest.get("macros") or {}, (manifest.get("metadata") or {}).get("project_name"))
    own = {u: use for u, n in nodes.items() if (use := _own_use(n, macros)) is not None}
    graph = ProjectGraph.from_manifest(manifest)
    search: Inherited[ClockUse] = Inherited(lambda uid: sorted(graph.parents(uid)), own.get,
                                            lambda _uid, dep, up: _inherit(nodes[dep]["name"], up), nodes.__contains__)
    for uid in sorted(nodes):
        search.of(uid)
    return search.found()


def clock_reasons(manifest: dict) -> dict[str, str]:
    """{model unique_id: reason} (plain strings: what the validator's workers send back)."""
    return {u: use.reason() for u, use in clock_models(manifest).items()}
