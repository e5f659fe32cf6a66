"""The screening verdict, written once for every backend (the proof's is validate.proof).

Pure functions over typed observations: a backend (DuckDB worker, Snowflake emulator) only builds,
exports and loads; what it saw goes into `ScreenFacts`, and `judge` decides. `judge` asks the
backend for the measured facts of the changed tables through an `Inspector` (they need queries);
everything else is decided here.

Screening oracle (ade-bench's equality test, validate.oracle): lower-cased column sets, then EXCEPT
both ways over the typed columns, against the intact build; row counts are compared too, so equal
sets with different counts are "duplicates only", and equal sets whose text differs are "column
types only" (0 vs 0.0; both dropped: ade-bench's test cannot see them). A build
error is observable only when the pattern's symptom is `build_error`. Tables whose two intact
builds differ (nondeterministic) are never evidence, nor are tables whose rows read the clock
(adegen.dbt.clock): a seed exported today fails when the task runs next month, so they are never
graded. Tables that read it only in some columns (adegen.dbt.clock_columns) arrive here compared
without those columns, as their tasks grade them (exclude_columns), and tables whose rows grow with
it compared on their rows through a date (validate.clockwindow): evidence like any other.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from adegen.core.drops import DropCode
from adegen.rewrite.text import SQL_WORDS
from adegen.facts.measured import RelationKind, kind_changed
from adegen.validate.rules.contract import Observation
from adegen.validate.rules.inspector import Evidence
from adegen.validate.rules.oracle import TableDiff


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class ScreenFacts:
    """What a backend saw when it built one mutant (model facts as in `Baseline.models`)."""

    uid: str                                   # the mutated model
    models: dict[str, dict]                    # uid -> {name, schema, alias, materialized, ...}
    dist: dict[str, int]                       # rebuilt uid -> DAG distance from the mutated model
    symptom: str | None = None
    difficulty: str | None = None
    build_ok: bool = True
    errored: list[str] = field(default_factory=list)   # uids dbt reported as failing
    error_message: str | None = None           # dbt's message for the failure
    build_output: str = ""
    diffs: dict[str, TableDiff] = field(default_factory=dict)  # rebuilt uid -> comparison with intact
    unstable: set[str] = field(default_factory=set)  # uids whose two intact builds differ
    clock: dict[str, str] = field(default_factory=dict)  # uid -> why it reads the clock (adegen.dbt.clock)
    stopped: tuple[DropCode, str] | None = None  # the build was stopped: (code, "runaway: ...")
    relation_kind: RelationKind | None = None  # the mutated model's object kinds
    details: dict = field(default_factory=dict)
    second_run: bool = False  # an is_incremental() slip screened on a second run: the fix's rerun restores its table


class Inspector(Protocol):
    """Where `judge` gets measured facts (inspector.RelationInspector on a connection that sees both builds)."""

    def evidence(self, uid: str, diff: TableDiff) -> Evidence: ...

    def tables(self, visible: dict, compared: str, known: dict) -> list[dict]: ...


def choose_compared(uid: str, visible: dict, dist: dict, models: dict, difficulty: str | None) -> str:
    """The mutated model when it shows the change; for hard patterns the farthest changed
    downstream table (a mart), else the nearest changed table."""
    downstream = [u for u in visible if dist[u] > 0]
    if difficulty == "hard" and downstream:
        return max(downstream, key=lambda u: (dist[u], models[u]["name"]))
    if uid in visible:
        return uid
    return min(visible, key=lambda u: (dist[u], models[u]["name"]))


def _table(models: dict, u: str) -> str:
    """The table a task names for model `u`: the model's name, which ade-bench's tests ref()
    wherever dbt builds it (a custom schema, an alias: adegen.dbt.relations)."""
    return models[u]["name"]


def _clock_drop(facts: ScreenFacts, uids: list[str], details: dict) -> Observation:
    """Dropped: the only tables that show the mutant read the clock, so none can be graded."""
    named = {_table(facts.models, u): facts.clock[u] for u in sorted(uids, key=lambda u: _table(facts.models, u))}
    details["ignored_clock"] = named
    reason = ("differs only in clock-dependent table(s) " + "; ".join(f"{t} ({why})" for t, why in named.items())
              + ", which are never graded: a solution seed exported today fails when the task runs later")
    changed = {_table(facts.models, u): facts.dist[u] for u in uids}
    return Observation(False, reason, False, None, 0, 0, [], changed, None, details, DropCode.CLOCK_DEPENDENT)


def judge(facts: ScreenFacts, inspect: Inspector | None) -> Observation:
    """The Observation of one screened mutant. `inspect` is asked only when some table changed
    (None when nothing was compared): the compared table's evidence, then the facts of the few
    changed tables a prompt may name (`details["tables"]`)."""
    details = dict(facts.details)
    if facts.stopped:
        code, details["stopped"] = facts.stopped
        return Observation.dropped(code, details["stopped"], details)
    models, uid, symptom = facts.models, facts.uid, facts.symptom
    if uid not in models:
        return Observation.dropped(DropCode.UNKNOWN_MODEL, f"unknown model {uid}", details)
    m = models[uid]
    if not facts.build_ok or facts.errored:
        msg = " ".join(str(facts.error_message or "dbt failed").split())[:400]
        details["build_output"] = facts.build_output[-1500:]
        failing = [u for u in (facts.errored or [uid]) if u in facts.dist]
        intended = symptom == "build_error"
        if intended and uid in facts.clock and m["materialized"] != "ephemeral":
            return _clock_drop(facts, [uid], details)  # the task would grade the mutated model
        reason = (f"build error as intended: {msg[:160]}" if intended else
                  f"build error, but the pattern's symptom is {symptom}: {msg[:160]}")
        return Observation(intended, reason, True, m["name"] if m["materialized"] != "ephemeral" else None,
                           0, 0, [], {_table(models, u): facts.dist[u] for u in failing}, msg, details,
                           None if intended else DropCode.UNEXPECTED_BUILD_ERROR)
    evidence_diffs = {u: d for u, d in facts.diffs.items() if u not in facts.unstable and u not in facts.clock}
    visible = {u: d for u, d in evidence_diffs.items() if d.visible}
    clocked = [u for u, d in facts.diffs.items() if u in facts.clock and d.visible]
    ignored = sorted(_table(models, u) for u, d in facts.diffs.items()
                     if u in facts.unstable and u not in facts.clock and d.visible)
    if ignored:
        details["ignored_nondeterministic"] = ignored
    if clocked:
        details["ignored_clock"] = {_table(models, u): facts.clock[u] for u in clocked}
    changed = {_table(models, u): facts.dist[u] for u in visible}
    kind = facts.relation_kind
    if kind and kind.intact != kind.broken:
        details["relation_kind"] = kind.wire()
        if not visible and symptom == "structure_wrong":
            if uid in facts.clock:
                return _clock_drop(facts, [uid], details)
            return _kind_changed(facts, kind, details)
    if not visible:
        dups = {u: d for u, d in evidence_diffs.items() if d.duplicates_only}
        if dups:
            details["duplicates_only"] = {_table(models, x): [dd.rows_base, dd.rows_mut] for x, dd in dups.items()}
            if symptom != "build_error" and inspect is not None:
                graded = _grain_graded(facts, dups, inspect, details)
                if graded is not None:
                    return graded
            u, d = min(dups.items(), key=lambda kv: facts.dist[kv[0]])
            code, reason = DropCode.DUPLICATES_ONLY, (
                f"visible only as duplicate rows, which the set-based equality test ignores: "
                f"{d.table} has {d.rows_mut} rows vs {d.rows_base}")
        elif clocked and symptom != "build_error":
            return _clock_drop(facts, clocked, details)
        elif retyped := {u: d for u, d in evidence_diffs.items() if d.type_only}:
            u, d = min(retyped.items(), key=lambda kv: facts.dist[kv[0]])
            code, reason = DropCode.TYPE_ONLY, type_only_reason(d)
            details["type_only"] = {_table(models, x): {c: list(t) for c, t in dd.retyped.items()}
                                    for x, dd in retyped.items()}
        elif ignored:
            code, reason = DropCode.NONDETERMINISTIC_ONLY, (
                f"differs only in nondeterministic table(s) {', '.join(ignored)} (two builds of the "
                "intact project differ there), which are never evidence")
        else:
            code, reason = DropCode.EQUIVALENT, ("equivalent on this data: every rebuilt table equals the intact "
                                                 "build (set oracle and row counts)")
        if symptom == "build_error":
            reason = "the pattern expects a build error, but the mutant builds; " + reason
            # duplicates stay duplicates: what a set-based test cannot see is why it was dropped
            code = code if code is DropCode.DUPLICATES_ONLY else DropCode.NO_BUILD_ERROR
        return Observation(False, reason, False, None, 0, 0, [], changed, None, details, code)
    target = choose_compared(uid, visible, facts.dist, models, facts.difficulty)
    d = visible[target]
    ev = inspect.evidence(target, d)
    # a prompt may name only tables the fix restores: ade-bench's rerun of an incremental model
    # keeps the broken rows it already merged, so one downstream is never named (nor graded); the
    # model of an is_incremental() slip is the exception: the fixed filter's rerun loads what it left out
    nameable = {u: x for u, x in visible.items() if u == target or models[u].get("materialized") != "incremental"
                or (facts.second_run and u == facts.uid)}
    details["tables"] = inspect.tables(nameable, target, {target: ev.details})
    details["rows_intact"], details["rows_broken"] = d.rows_base, d.rows_mut
    own = facts.diffs.get(uid)
    if facts.second_run and own is not None and uid not in visible and own.rows_mut != own.rows_base:
        # the slip's own table holds the same rows, some of them twice (a dropped unique_key): a
        # real change, so a table downstream may report it (prompts.levels)
        details["model_rows_changed"] = [own.rows_base, own.rows_mut]
    code = None
    if symptom == "build_error":
        code, observable = DropCode.NO_BUILD_ERROR, False
        reason = "the pattern expects a build error, but the mutant builds"
    else:
        observable = True
        reason = (f"{d.table}: column set differs" if d.column_set_differs
                  else f"{d.table}: {d.rows_differing} row(s) differ under the equality oracle")
    return Observation(observable, reason, False, _table(models, target), d.rows_differing, d.rows_base,
                       list(ev.columns_differ), changed, ev.example, details, code)


def _plain_name(column: str) -> bool:
    """A column name SQL reads unquoted: an identifier that is no SQL keyword (`order`, `date`)."""
    return bool(_IDENT.fullmatch(column)) and column.lower() not in SQL_WORDS


def _grain_graded(facts: ScreenFacts, dups: dict, inspect: Inspector, details: dict) -> Observation | None:
    """A mutant whose only trace is duplicate rows, graded by a grain test: ade-bench's set-based
    equality test passes on it, so the task adds a singular test that the table's key is unique
    (assertion type `columns_must_be_unique`; ade-bench's own analytics_engineering005 grades a
    removed dedup with a row-count test the same way). Only where the intact table has such a
    key, and never on an incremental table (ade-bench's rerun keeps the rows it already merged).
    None: no gradable table, the mutant stays dropped as duplicates only (`details`, which already
    holds `duplicates_only`, is written only when the mutant is graded)."""
    models = facts.models
    gradable = {u: d for u, d in dups.items()
                if models[u].get("materialized") not in ("incremental", "ephemeral") and d.rows_mut > d.rows_base}
    if not gradable:
        return None
    target = choose_compared(facts.uid, gradable, facts.dist, models, facts.difficulty)
    d = gradable[target]
    ev = inspect.evidence(target, d)
    key = list(ev.details.get("key") or [])
    # the test names the key unquoted (quoting would change its case on Snowflake): plain names only
    if not key or not ev.details.get("duplicates") or not all(_plain_name(c) for c in key):
        return None
    details["grain_test"] = {"model": models[target]["name"], "columns": key}
    details["tables"] = inspect.tables({target: d}, target, {target: ev.details})
    details["rows_intact"], details["rows_broken"] = d.rows_base, d.rows_mut
    reason = (f"{d.table}: {d.rows_mut} rows vs {d.rows_base}, duplicates only; the set-based equality test "
              f"cannot see them, a test that {' + '.join(key)} is unique does")
    changed = {_table(models, u): facts.dist[u] for u in dups}
    return Observation(True, reason, False, _table(models, target), d.rows_mut - d.rows_base, d.rows_base,
                       list(ev.columns_differ), changed, ev.example, details)


def type_only_reason(d: TableDiff) -> str:
    """Why a table whose values only changed type is no evidence (it names the retyped columns)."""
    cols = ", ".join(f"{c} ({a} -> {b})" for c, (a, b) in list(d.retyped.items())[:4])
    return (f"only column types changed: {d.table} column(s) {cols} hold equal values, which ade-bench's "
            f"equality test (typed EXCEPT against the seed) passes; {d.text_differing} of {d.rows_base} row(s) "
            "differ only as text")


def _kind_changed(facts: ScreenFacts, kind: RelationKind, details: dict) -> Observation:
    """Same data, another warehouse object (a materialization change): the pattern's own assertion
    test sees it, and the prompt reports the object kind of the model that changed."""
    table = kind.table
    d = facts.diffs.get(facts.uid)
    rows = (d.rows_base, d.rows_mut) if d is not None else (0, 0)
    details["tables"] = [kind_changed(kind, rows)]
    reason = f"{table}: built as a {kind.broken} instead of a {kind.intact}"
    return Observation(True, reason, False, table, 0, rows[0], [], {table: 0}, None, details)
