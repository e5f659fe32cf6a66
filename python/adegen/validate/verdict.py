"""The screening verdict and the proof finishing, written once for every backend.

Pure functions over typed observations: a backend (DuckDB worker, Snowflake emulator) only builds,
exports and loads; what it saw goes into `ScreenFacts` / `ProofInput`, and `judge` / `finish_proof`
decide. `judge` asks the backend for the measured facts of the changed tables through an
`Inspector` (they need queries); everything else is decided here.

Screening oracle (ade-bench's equality test): lower-cased column sets, then EXCEPT both ways over
columns cast to varchar, against the intact build; row counts are compared too, so equal sets with
different counts are "duplicates only" (dropped: the set-based test cannot see them). A build
error is observable only when the pattern's symptom is `build_error`. Tables whose two intact
builds differ (nondeterministic) are never evidence.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

from .contract import Observation, Proof
from .oracle import Evidence, TableDiff

DEFAULT_TEST_TIMEOUT = 30.0  # ade-bench's DEFAULT_TEST_TIMEOUT_SEC


@dataclass
class ScreenFacts:
    """What a backend saw when it built one mutant (model facts as in `Baseline.models`)."""

    uid: str                                   # the mutated model
    models: dict[str, dict]                    # uid -> {name, alias, materialized, ...}
    dist: dict[str, int]                       # rebuilt uid -> DAG distance from the mutated model
    symptom: str | None = None
    difficulty: str | None = None
    build_ok: bool = True
    errored: list[str] = field(default_factory=list)   # uids dbt reported as failing
    error_message: str | None = None           # dbt's message for the failure
    build_output: str = ""
    diffs: dict[str, TableDiff] = field(default_factory=dict)  # rebuilt uid -> comparison with intact
    unstable: set[str] = field(default_factory=set)  # uids whose two intact builds differ
    stopped: str | None = None                 # the build was stopped: "runaway: ..." / "not screenable: ..."
    relation_kind: dict | None = None          # {"table", "intact", "broken"}: the mutated model's object kinds
    details: dict = field(default_factory=dict)


class Inspector(Protocol):
    """Where `judge` gets measured facts (oracle.RelationInspector on a connection that sees both builds)."""

    def evidence(self, uid: str, diff: TableDiff) -> Evidence: ...

    def tables(self, visible: dict, compared: str, known: dict) -> list[dict]: ...


def choose_compared(uid: str, visible: dict, dist: dict, models: dict, difficulty: str | None) -> str:
    """The mutated model when it shows the change; for hard patterns the farthest changed
    downstream table (a mart), else the nearest changed table."""
    downstream = [u for u in visible if dist[u] > 0]
    if difficulty == "hard" and downstream:
        return max(downstream, key=lambda u: (dist[u], models[u]["alias"]))
    if uid in visible:
        return uid
    return min(visible, key=lambda u: (dist[u], models[u]["alias"]))


def _alias(models: dict, u: str) -> str:
    return models[u]["alias"]


def judge(facts: ScreenFacts, inspect: Inspector | None) -> Observation:
    """The Observation of one screened mutant. `inspect` is asked only when some table changed
    (None when nothing was compared): the compared table's evidence, then the facts of the few
    changed tables a prompt may name (`details["tables"]`)."""
    details = dict(facts.details)
    if facts.stopped:
        details["stopped"] = facts.stopped
        return Observation.dropped(facts.stopped, details)
    models, uid, symptom = facts.models, facts.uid, facts.symptom
    if uid not in models:
        return Observation.dropped(f"unknown model {uid}", details)
    m = models[uid]
    if not facts.build_ok or facts.errored:
        msg = " ".join(str(facts.error_message or "dbt failed").split())[:400]
        details["build_output"] = facts.build_output[-1500:]
        failing = [u for u in (facts.errored or [uid]) if u in facts.dist]
        intended = symptom == "build_error"
        reason = (f"build error as intended: {msg[:160]}" if intended else
                  f"build error, but the pattern's symptom is {symptom}: {msg[:160]}")
        return Observation(intended, reason, True, m["alias"] if m["materialized"] != "ephemeral" else None,
                           0, 0, [], {_alias(models, u): facts.dist[u] for u in failing}, msg, details)
    evidence_diffs = {u: d for u, d in facts.diffs.items() if u not in facts.unstable}
    visible = {u: d for u, d in evidence_diffs.items() if d.visible}
    ignored = sorted(_alias(models, u) for u, d in facts.diffs.items() if u in facts.unstable and d.visible)
    if ignored:
        details["ignored_nondeterministic"] = ignored
    changed = {_alias(models, u): facts.dist[u] for u in visible}
    kind = facts.relation_kind
    if kind and kind["intact"] != kind["broken"]:
        details["relation_kind"] = dict(kind)
        if not visible and symptom == "structure_wrong":
            return _kind_changed(facts, kind, details)
    if not visible:
        dups = {u: d for u, d in evidence_diffs.items() if d.duplicates_only}
        if dups:
            u, d = min(dups.items(), key=lambda kv: facts.dist[kv[0]])
            reason = (f"visible only as duplicate rows, which the set-based equality test ignores: "
                      f"{d.table} has {d.rows_mut} rows vs {d.rows_base}")
            details["duplicates_only"] = {_alias(models, x): [dd.rows_base, dd.rows_mut] for x, dd in dups.items()}
        elif ignored:
            reason = (f"differs only in nondeterministic table(s) {', '.join(ignored)} (two builds of the "
                      "intact project differ there), which are never evidence")
        else:
            reason = "equivalent on this data: every rebuilt table equals the intact build (set oracle and row counts)"
        if symptom == "build_error":
            reason = "the pattern expects a build error, but the mutant builds; " + reason
        return Observation(False, reason, False, None, 0, 0, [], changed, None, details)
    target = choose_compared(uid, visible, facts.dist, models, facts.difficulty)
    d = visible[target]
    ev = inspect.evidence(target, d)
    details["tables"] = inspect.tables(visible, target, {target: ev.details})
    details["rows_intact"], details["rows_broken"] = d.rows_base, d.rows_mut
    if symptom == "build_error":
        reason, observable = "the pattern expects a build error, but the mutant builds", False
    else:
        observable = True
        reason = (f"{d.table}: column set differs" if d.column_set_differs
                  else f"{d.table}: {d.rows_differing} row(s) differ under the equality oracle")
    return Observation(observable, reason, False, _alias(models, target), d.rows_differing, d.rows_base,
                       list(ev.columns_differ), changed, ev.example, details)


def _kind_changed(facts: ScreenFacts, kind: dict, details: dict) -> Observation:
    """Same data, another warehouse object (a materialization change): the pattern's own assertion
    test sees it, and the prompt reports the object kind of the model that changed."""
    table = kind["table"]
    d = facts.diffs.get(facts.uid)
    rows = (d.rows_base, d.rows_mut) if d is not None else (0, 0)
    details["tables"] = [{"table": table, "distance": 0,
                          "relation_kind": {"intact": kind["intact"], "broken": kind["broken"]},
                          "rows_intact": rows[0], "rows_broken": rows[1], "rows_differing": 0}]
    reason = f"{table}: built as a {kind['broken']} instead of a {kind['intact']}"
    return Observation(True, reason, False, table, 0, rows[0], [], {table: 0}, None, details)


# --------------------------------------------------------------------------- proofs

@dataclass
class TrialSummary:
    """One graded trial (agent none or sage) as the harness emulation reports it."""

    agent: str
    resolved: bool = False
    reason: str = ""
    expected: int | None = None
    summary: str = ""
    tail: str = ""
    seconds: dict = field(default_factory=dict)
    test_dbt_calls: int = 0
    unsupported: list[str] = field(default_factory=list)   # emulator gaps met
    timeouts: list[str] = field(default_factory=list)      # steps that timed out
    error: str | None = None                               # the trial could not run


@dataclass
class ProofInput:
    none: TrialSummary
    sage: TrialSummary
    seeds: list[str]
    excludes: dict[str, list[str]]
    current_timeout: float | None = None     # the task's max_test_timeout_sec
    extra_test_seconds: float = 0.0          # what the harness's CLI calls cost on top of ours
    notes: list[str] = field(default_factory=list)
    label: str | None = None                 # backend wording for a proven task (None: "proven")
    body_extra: str | None = None            # a backend's fixed remark (e.g. where seeds came from)
    solved_differs: str | None = None        # the solved state differs from the seeds' source
    fallback_note: str | None = None         # why the fast path was not taken


def test_timeout(sage: TrialSummary, extra: float, current: float | None) -> int | None:
    """~3x the test phase as the harness runs it, min 60, when the current timeout is too tight."""
    secs = float(sage.seconds.get("tests", 0.0)) + extra
    if 3 * secs > (current or DEFAULT_TEST_TIMEOUT):
        return max(60, int(math.ceil(3 * secs)))
    return None


test_timeout.__test__ = False  # not a pytest test


def finish_proof(inp: ProofInput, seconds: dict) -> Proof:
    """The Proof of one task from its two graded trials. The caller writes
    `proof.max_test_timeout_sec` into task.yaml when it is set."""
    trials = (inp.none, inp.sage)
    broken_fails, solved_passes = not inp.none.resolved, inp.sage.resolved
    expected = int(inp.sage.expected or 0)
    for t in trials:
        if t.error:
            return Proof(False, False, False, inp.seeds, 0, f"unproven: {t.agent} trial could not run: {t.error}",
                         inp.excludes, None, seconds)
    blockers = []
    unsupported = list(dict.fromkeys(u for t in trials for u in t.unsupported))
    timeouts = [f"{t.agent}: {x}" for t in trials for x in t.timeouts]
    if unsupported:
        blockers.append("the emulator cannot run: " + "; ".join(unsupported))
    if timeouts:
        blockers.append("dbt timed out (" + "; ".join(timeouts) + ")")
    if blockers:
        return Proof(False, broken_fails, solved_passes, inp.seeds, expected, "unproven: " + " and ".join(blockers),
                     inp.excludes, None, seconds)
    notes = list(inp.notes)
    if inp.solved_differs:
        notes.append(inp.solved_differs)
        solved_passes = False
    timeout = test_timeout(inp.sage, inp.extra_test_seconds, inp.current_timeout)
    body = " | ".join(x for x in (
        inp.none.summary, inp.sage.summary, inp.body_extra,
        f"excluded {inp.excludes}" if inp.excludes else None,
        f"max_test_timeout_sec={timeout}" if timeout else None,
        ("note: " + "; ".join(notes)) if notes else None, inp.fallback_note) if x)
    ok = broken_fails and solved_passes
    if ok:
        detail = f"{inp.label}: {body}" if inp.label else body
    else:
        bad = inp.none if not broken_fails else inp.sage
        what = ("the broken state passes the tests" if not broken_fails
                else "the solved state fails the tests" if not inp.sage.resolved
                else "the solved state differs from the intact build the seeds come from")
        detail = f"unproven: {what}: {body}\n--- {bad.agent} test output (tail) ---\n{bad.tail}"
    seconds["total"] = seconds.get("total", 0.0)
    return Proof(ok, broken_fails, solved_passes, inp.seeds, expected, detail, inp.excludes, timeout, seconds)
