"""`--run-harness`: the spec's Phase 5 with the real ade-bench harness.

For every generated task it runs (DuckDB) `ade run <id> --db duckdb --project-type dbt --agent sage
--seed --tasks-dir <out>/tasks`, then the same without `--seed` (the spec: "For DuckDB tasks with
--seed, run once more without --seed to confirm tests pass against the generated seeds"); on
Snowflake only the run without `--seed` (ade-bench's seed export is DuckDB-only). That needs a
working `ade` (`ade --help` succeeds) and a running Docker daemon (`docker info` succeeds);
`availability()` says exactly which of the two is missing and the build continues without it.

`triage(output, returncode)` reads ade's console output and classifies the result as the spec's
Phase 5 describes: PASS, or FAIL - setup error / solution error / test failure (AUTO equality) /
test failure (custom assertion) (plus "harness error" when ade itself could not run the trial)."""
from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from adegen import backends

CHECK_TIMEOUT = 30.0          # `ade --help`, `docker info`
RUN_TIMEOUT = 1800.0          # one `ade run`

PASS = "PASS"
FAIL = "FAIL"
SETUP_ERROR = "setup error"
SOLUTION_ERROR = "solution error"
AUTO_FAILURE = "test failure (AUTO equality)"
CUSTOM_FAILURE = "test failure (custom assertion)"
HARNESS_ERROR = "harness error"

ADVICE = {
    SETUP_ERROR: "dbt cannot run in the broken state; expected for some bug types (e.g. TRY_TO_* removal) - "
                 "verify the error is the intended symptom",
    SOLUTION_ERROR: "the fix does not work: investigate and fix the patches",
    AUTO_FAILURE: "seeds may need regeneration, or the solution does not fully restore the expected output",
    CUSTOM_FAILURE: "the custom assertion returned rows after the solution was applied: re-read it against "
                    "the post-solution state (placeholders resolved against the wrong values?)",
    HARNESS_ERROR: "ade could not run the trial (see its output)",
}

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
# ade-bench's DbtParser (standard dbt and dbt-fusion result lines)
_DBT_TEST = re.compile(r"\d+\s+of\s+\d+\s+(PASS|FAIL|ERROR)(?:\s+\d+)?\s+(\S+)\s+\.+\s+\[(PASS|FAIL|ERROR)")
_FUSION_TEST = re.compile(r"(Passed|Failed)\s+\[\s*[\d.]+s\]\s+test\s+(\S+)")
_FAILURE_IN_TEST = re.compile(r"(?:Failure|Error) in test (\S+)")
_FAILURE_MODE = re.compile(r"failure_mode[\"']?\s*[:=]\s*[\"']?(?:FailureMode\.)?([A-Za-z_]+)", re.I)
_RESOLVED = re.compile(r"is_resolved[\"']?\s*[:=]\s*[\"']?(true|false|none|null)", re.I)
_ACCURACY = re.compile(r"(?:accuracy|resolved)\s*[:=]?\s*(\d+(?:\.\d+)?)\s*%", re.I)

_SETUP_MARKERS = (
    re.compile(r"setup failed for task", re.I),
    re.compile(r"halted due to setup timeout", re.I),
    re.compile(r"\bsetup_(failed|timeout)\b", re.I),
    re.compile(r"/app/setup/changes\.patch.*(FAILED|rejects|can't find file)", re.I | re.S),
)
_SOLUTION_MARKERS = (
    re.compile(r"/sage/solutions/changes\.patch", re.I),
    re.compile(r"\b(unknown_agent_error|agent_timeout|agent_setup_timeout)\b", re.I),
    re.compile(r"error running agent for task", re.I),
)
_DBT_ERROR = re.compile(r"(Database|Compilation|Runtime|Parsing) Error in \S+ \S+[^\n]*(\n[^\n]*)?")
_PATCH_FAILED = re.compile(r"(Hunk #\d+ FAILED|can't find file to patch|\*\*\*\* malformed patch|"
                           r"Reversed \(or previously applied\) patch detected)", re.I)
_HARNESS_MARKERS = (
    re.compile(r"\b(unknown_harness_error|harness_panic|parse_error|test_timeout)\b", re.I),
    re.compile(r"harness execution failed", re.I),
    re.compile(r"Cannot connect to the Docker daemon", re.I),
    re.compile(r"Traceback \(most recent call last\)"),
)


@dataclass
class Triage:
    verdict: str                  # PASS | FAIL
    category: str | None          # None for PASS, else one of the categories above
    detail: str                   # one line: failing tests, the marker that decided it
    failed_tests: list[str] = field(default_factory=list)

    def line(self) -> str:
        if self.verdict == PASS:
            return f"PASS{': ' + self.detail if self.detail else ''}"
        return f"FAIL - {self.category}: {self.detail} ({ADVICE.get(self.category or '', '')})"

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "category": self.category, "detail": self.detail,
                "failed_tests": list(self.failed_tests), "line": self.line()}


def _tests(text: str) -> tuple[list[str], list[str]]:
    passed, failed = [], []
    for status, name, _ in _DBT_TEST.findall(text):
        (passed if status == "PASS" else failed).append(name)
    for status, name in _FUSION_TEST.findall(text):
        name = name.rsplit(".", 1)[-1]
        (passed if status == "Passed" else failed).append(name)
    for name in _FAILURE_IN_TEST.findall(text):
        name = name.strip("()'\"").rsplit(".", 1)[-1]
        if name not in failed:
            failed.append(name)
    return passed, list(dict.fromkeys(failed))


def _is_auto(name: str) -> bool:
    return name.split(".")[-1].upper().startswith("AUTO_")


def triage(output: str, returncode: int | None = 0) -> Triage:
    """Classify one `ade run ... --agent sage` result from its console output (stdout + stderr)."""
    text = _ANSI.sub("", output or "")
    passed, failed = _tests(text)
    modes = [m.lower() for m in _FAILURE_MODE.findall(text)]
    resolved = [r.lower() for r in _RESOLVED.findall(text)]
    for rx in _SETUP_MARKERS:
        m = rx.search(text)
        if m:
            line = text[text.rfind("\n", 0, m.start()) + 1: (text.find("\n", m.end()) + 1 or len(text) + 1) - 1]
            line = re.sub(r"^\s*(INFO|WARNING|ERROR|DEBUG)\s+", "", line.strip())
            err = _DBT_ERROR.search(text)
            detail = f"ade reports {' '.join(line.split())[:120]!r}"
            if err:
                detail += f"; first dbt error: {' '.join(err.group(0).split())[:160]}"
            return Triage(FAIL, SETUP_ERROR, detail, failed)
    solution_patch = re.search(r"/sage/solutions/changes\.patch", text, re.I)
    if (solution_patch and _PATCH_FAILED.search(text)) or any(
            rx.search(text) for rx in _SOLUTION_MARKERS[1:]):
        hit = _PATCH_FAILED.search(text) if solution_patch else None
        what = (f"solution patch did not apply ({hit.group(0)})" if hit else
                "the sage agent (solution.sh) failed: " + next(
                    (m.group(0) for rx in _SOLUTION_MARKERS[1:] for m in [rx.search(text)] if m), "?"))
        return Triage(FAIL, SOLUTION_ERROR, what, failed)
    if failed:
        auto = [f for f in failed if _is_auto(f)]
        custom = [f for f in failed if not _is_auto(f)]
        if custom:
            return Triage(FAIL, CUSTOM_FAILURE, "failing: " + ", ".join(custom + auto), failed)
        return Triage(FAIL, AUTO_FAILURE, "failing: " + ", ".join(auto), failed)
    if "dbt_compile" in text and re.search(r"dbt_compile[\"']?\s*[:=]\s*[\"']?failed", text, re.I):
        return Triage(FAIL, SOLUTION_ERROR, "dbt compile failed after the solution was applied", failed)
    for rx in _HARNESS_MARKERS:
        m = rx.search(text)
        if m:
            return Triage(FAIL, HARNESS_ERROR, f"ade reports {' '.join(m.group(0).split())[:80]!r}", failed)
    if any(mode not in ("none", "unset") for mode in modes):
        bad = next(mode for mode in modes if mode not in ("none", "unset"))
        return Triage(FAIL, HARNESS_ERROR, f"failure_mode {bad}", failed)
    if "false" in resolved:
        return Triage(FAIL, AUTO_FAILURE if passed or not failed else CUSTOM_FAILURE,
                      "ade reports the task unresolved", failed)
    acc = _ACCURACY.findall(text)
    if acc and float(acc[-1]) == 0.0 and not passed:
        return Triage(FAIL, HARNESS_ERROR, "ade reports 0% resolved and no test results", failed)
    if returncode not in (0, None):
        return Triage(FAIL, HARNESS_ERROR, f"ade exited with status {returncode}", failed)
    if passed or "true" in resolved or (acc and float(acc[-1]) > 0):
        n = len(passed)
        return Triage(PASS, None, f"{n} test{'s' if n != 1 else ''} passed" if n else "resolved")
    return Triage(FAIL, HARNESS_ERROR, "no test results in ade's output", failed)


# ---------------------------------------------------------------------------------------------
# availability and running


Runner = Callable[..., "subprocess.CompletedProcess[str]"]


def _check(cmd: Sequence[str], runner: Runner, timeout: float) -> tuple[bool, str]:
    exe = shutil.which(cmd[0])
    if exe is None:
        return False, f"`{cmd[0]}` is not on PATH"
    try:
        r = runner(list(cmd), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"`{' '.join(cmd)}` did not answer within {timeout:.0f}s"
    except OSError as exc:
        return False, f"`{' '.join(cmd)}` could not start ({exc})"
    if r.returncode != 0:
        tail = ([ln.strip() for ln in (r.stderr or "").splitlines() if ln.strip()]
                or [ln.strip() for ln in (r.stdout or "").splitlines() if ln.strip()])
        return False, f"`{' '.join(cmd)}` failed (exit {r.returncode}): {tail[-1][:200] if tail else 'no output'}"
    return True, "ok"


@dataclass
class Availability:
    ok: bool
    ade: tuple[bool, str]
    docker: tuple[bool, str]

    def reason(self) -> str:
        """Exactly which of the two prerequisites is missing (empty when both work)."""
        why = []
        if not self.ade[0]:
            why.append(f"ade-bench does not work: {self.ade[1]}")
        if not self.docker[0]:
            why.append(f"Docker is not available: {self.docker[1]}")
        return "; ".join(why)


def availability(runner: Runner = subprocess.run, timeout: float = CHECK_TIMEOUT) -> Availability:
    ade = _check(["ade", "--help"], runner, timeout)
    docker = _check(["docker", "info"], runner, timeout)
    return Availability(ade[0] and docker[0], ade, docker)


def commands(task_id: str, db_type: str, tasks_dir: Path, seed: bool = True) -> list[list[str]]:
    """Phase 5 commands for one task: `--seed` first where ade-bench can export seeds (DuckDB) and
    `seed`, then without; the database's backend decides."""
    return backends.get(db_type).harness_commands(task_id, tasks_dir, seed)


@dataclass(frozen=True)
class HarnessCall:
    """How `run_tasks` runs `ade run`: the process runner (tests pass a fake), the timeout of one
    run, and the availability when already checked (None: checked with `runner` first)."""

    runner: Runner = subprocess.run
    timeout: float = RUN_TIMEOUT
    avail: Availability | None = None
    no_seed: frozenset = frozenset()  # tasks whose seeds --seed cannot re-export (summary.seed_unreachable)


def run_tasks(task_ids: list[str], db_type: str, tasks_dir: Path, *, say: Callable[[str], None],
              call: HarnessCall = HarnessCall()) -> dict:
    """Runs Phase 5 when possible; returns {"ran": bool, "reason": str, "results": [...]}."""
    runner, timeout = call.runner, call.timeout
    avail = call.avail or availability(runner)
    if not avail.ok:
        why = avail.reason()
        say(f"--run-harness: not running ade-bench's harness: {why}. Continuing without it "
            "(the tasks are written; run the `ade run` commands below once that is fixed).")
        return {"ran": False, "reason": why, "results": []}
    out: list[dict] = []
    for tid in task_ids:
        for cmd in commands(tid, db_type, tasks_dir, tid not in call.no_seed):
            label = "with --seed" if "--seed" in cmd else "without --seed"
            say(f"--run-harness: {' '.join(cmd)}")
            try:
                r = runner(cmd, capture_output=True, text=True, timeout=timeout)
                text, rc = (r.stdout or "") + "\n" + (r.stderr or ""), r.returncode
            except subprocess.TimeoutExpired:
                text, rc = f"harness execution failed: ade run timed out after {timeout:.0f}s", None
            t = triage(text, rc)
            say(f"  {tid} ({label}): {t.line()}")
            out.append({"task_id": tid, "command": cmd, "seed": "--seed" in cmd, "returncode": rc,
                        **t.to_json()})
            if "--seed" in cmd and t.verdict != PASS:
                break  # no seeds: the run without --seed has nothing to compare against
    return {"ran": True, "reason": "ok", "results": out}
