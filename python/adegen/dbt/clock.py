"""Which models read the clock (issue 30, "time-stable tasks"): pure functions over dbt's manifest.

A table whose values depend on the day it is built (an age in days, a date spine up to today, a
"last 7 days" window) passes the day its solution seed is exported and fails when ade-bench runs
the task a month later. Such tables are never graded: screening never takes them as evidence
(validate.verdict), the proof refuses them as seeds (validate.fullprove), and the run summary names
them with the reason (`RunFacts.clock_dependent`).

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
    """The clock word each macro reads, itself or through the macros it calls (memoised)."""

    def __init__(self, macros: dict, root: str):
        self.macros, self.root = macros, root
        self.memo: dict[str, tuple[str, tuple[str, ...]] | None] = {}

    def name(self, uid: str) -> str:
        m = self.macros.get(uid) or {}
        pkg, name = m.get("package_name"), m.get("name") or uid.rsplit(".", 1)[-1]
        return name if pkg == self.root else f"{pkg}.{name}"

    def reads(self, uid: str, active: frozenset = frozenset()) -> tuple[str, tuple[str, ...]] | None:
        """(clock word, macro chain from `uid` down to the one naming it), or None."""
        if uid in self.memo:
            return self.memo[uid]
        m = self.macros.get(uid)
        if m is None or uid in active:  # unknown (an adapter builtin) or a recursive call
            return None
        found = None
        word = clock_word(code_words(m.get("macro_sql") or ""))
        if word:
            found = (word, (self.name(uid),))
        else:
            for dep in sorted(set((m.get("depends_on") or {}).get("macros") or [])):
                hit = self.reads(dep, active | {uid})
                if hit:
                    found = (hit[0], (self.name(uid), *hit[1]))
                    break
        self.memo[uid] = found
        return found


def _own_use(node: dict, macros: _Macros) -> ClockUse | None:
    """A model's own reading of the clock: raw code, then called macros, then compiled code."""
    word = clock_word(code_words(node.get("raw_code") or ""))
    if word:
        return ClockUse(word)
    for dep in sorted(set((node.get("depends_on") or {}).get("macros") or [])):
        hit = macros.reads(dep)
        if hit:
            return ClockUse(hit[0], hit[1])
    word = clock_word(code_words(node.get("compiled_code") or ""))
    return ClockUse(word, compiled=True) if word else None


def clock_models(manifest: dict) -> dict[str, ClockUse]:
    """{model unique_id: ClockUse} for every model of the manifest that reads the clock, itself or
    through the models it reads."""
    nodes = {u: n for u, n in (manifest.get("nodes") or {}).items() if n.get("resource_type") == "model"}
    macros = _Macros(manifest.get("macros") or {}, (manifest.get("metadata") or {}).get("project_name"))
    own = {u: use for u, n in nodes.items() if (use := _own_use(n, macros)) is not None}
    out: dict[str, ClockUse] = {}
    clean: set[str] = set()  # visited, reads no clock

    def visit(uid: str, active: frozenset) -> ClockUse | None:
        if uid in out or uid in clean or uid in active or uid not in nodes:
            return out.get(uid)
        use = own.get(uid)
        if use is None:
            for dep in sorted((nodes[uid].get("depends_on") or {}).get("nodes") or []):
                up = visit(dep, active | {uid})
                if up is not None:
                    origin, why = ((up.origin, up.origin_why) if up.upstream else (nodes[dep]["name"], up.reason()))
                    use = ClockUse(up.word, upstream=nodes[dep]["name"], origin=origin, origin_why=why)
                    break
        if use is None:
            clean.add(uid)
        else:
            out[uid] = use
        return use

    for uid in sorted(nodes):
        visit(uid, frozenset())
    return out


def clock_reasons(manifest: dict) -> dict[str, str]:
    """{model unique_id: reason} (plain strings: what the validator's workers send back)."""
    return {u: use.reason() for u, use in clock_models(manifest).items()}
