"""The one result type of a dbt invocation, whichever backend ran it, and the payload capture.

`DbtResult` holds what every caller needs: success, the console text as a terminal shows it (ANSI
stripped; the harness parser reads it), the Jinja log messages macros emitted (payloads), dbt's
error texts, per-node statuses, seconds, and how the call ended (`status`). It is plain data
(picklable), so worker processes return it as is.

`capture_payload(result, operation)` applies the strict payload rule to it: exactly one
`<<ADEGEN:RESULT:v1>>{json}<</ADEGEN:RESULT:v1>>` on success, otherwise a `DbtError` carrying
dbt's own error text.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from adegen.core.errors import DbtError

MARKER_RE = re.compile(r"<<ADEGEN:RESULT:v1>>(.*?)<</ADEGEN:RESULT:v1>>", re.DOTALL)
SCHEMA_VERSION = 1
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")

# how a call ended
OK, FAILED, TIMEOUT = "ok", "failed", "timeout"


def strip_ansi(text: str) -> str:
    return _ANSI_RE.sub("", text)


@dataclass
class NodeStatus:
    """One node of a run/test/seed (what run_results.json holds)."""

    status: str                 # success | error | fail | skipped | pass | warn | ...
    message: str | None = None
    seconds: float = 0.0


@dataclass
class DbtResult:
    args: list[str]
    success: bool = False
    console: str = ""                                        # terminal text, ANSI stripped
    messages: list[str] = field(default_factory=list)        # JinjaLogInfo texts, in order
    errors: list[str] = field(default_factory=list)          # error-level event texts, in order
    log_lines: list[str] = field(default_factory=list)       # info/warn/error event texts
    nodes: dict[str, NodeStatus] = field(default_factory=dict)  # unique_id -> status
    seconds: float = 0.0
    exception: str | None = None                             # what dbt raised (in-process)
    backend: str = "inprocess"
    returncode: int | None = None                            # subprocess exit code (None: killed)
    status: str = FAILED                                     # ok | failed | timeout | (emulator) unsupported
    stderr: str = ""                                         # subprocess stderr when kept apart
    result: object = field(default=None, repr=False, compare=False)  # in-process: e.g. `dbt ls` lines
    unsupported: list = field(default_factory=list)          # emulator: fakesnow gaps found
    error_blocks: list = field(default_factory=list)         # emulator: classified error blocks

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def timed_out(self) -> bool:
        return self.status == TIMEOUT

    @property
    def duration(self) -> float:
        return self.seconds

    @property
    def output(self) -> str:
        """Everything the call printed (console, then stderr when it was kept apart)."""
        return self.console + ("\n" + self.stderr if self.stderr else "")

    def tail(self, n: int = 40) -> str:
        return "\n".join(self.output.rstrip().splitlines()[-n:])

    def summary(self) -> str:
        head = (f"dbt {' '.join(self.args)}: {self.status} (rc={self.returncode}, {self.seconds:.1f}s)")
        if self.unsupported:
            head += "; unsupported on emulator: " + "; ".join(u.id for u in self.unsupported)
        return head

    def errored_nodes(self) -> list[str]:
        return [u for u, s in self.nodes.items() if s.status in ("error", "fail", "runtime error")]

    def error_text(self) -> str:
        # dbt's own Python tracebacks (MainStackTrace) are left out: the message above them says it all
        parts = [e.strip() for e in self.errors
                 if e and e.strip() and not e.lstrip().startswith("Traceback (most recent call last)")]
        seen: list[str] = []
        for p in parts:  # "Encountered an error..." + the same text again as MainEncounteredError
            if p not in seen:
                seen.append(p)
        if self.exception and not seen:
            seen.append(self.exception)
        if not seen and self.output.strip():
            seen.append("dbt failed; last output:\n" + self.tail(15))
        return "\n".join(seen) or "dbt failed without an error message"

    def first_error(self) -> str:
        """The first error of the console text, in one line (what a screen reports)."""
        lines = [ln.split("  ", 1)[-1].strip() for ln in self.output.splitlines()]
        for i, ln in enumerate(lines):
            if ("Error" in ln and ("Compilation" in ln or "Database" in ln or "Runtime" in ln
                                   or "Parsing" in ln)) or ln.startswith("Failure in"):
                rest = [x for x in lines[i:i + 4] if x]
                return " ".join(rest)[:400]
        if self.errors:
            return " ".join(self.error_text().split())[:400]
        return next((ln for ln in lines if "ERROR" in ln), self.exception or "dbt failed")[:400]


def extract_envelopes(messages: list[str]) -> list[str]:
    """All marked payload strings in the messages (normally exactly one)."""
    out: list[str] = []
    for m in messages:
        out.extend(MARKER_RE.findall(m))
    return out


def capture_payload(run: DbtResult, operation: str) -> dict:
    """The payload of the one envelope `operation` emitted; `DbtError` otherwise."""
    if not run.success:
        raise DbtError(f"dbt run-operation {operation} failed:\n{run.error_text()}")
    bodies = extract_envelopes(run.messages)
    if len(bodies) != 1:
        tail = run.tail(10)
        raise DbtError(
            f"dbt run-operation {operation}: expected exactly one adegen payload, got {len(bodies)}"
            + (f"; last output:\n{tail}" if tail else "")
        )
    try:
        env = json.loads(bodies[0])
    except ValueError as e:
        raise DbtError(f"dbt run-operation {operation}: payload is not valid JSON: {e}") from None
    if not isinstance(env, dict) or env.get("schema_version") != SCHEMA_VERSION:
        raise DbtError(
            f"dbt run-operation {operation}: unsupported envelope schema_version "
            f"{env.get('schema_version') if isinstance(env, dict) else None!r} (expected {SCHEMA_VERSION}); "
            "the installed adegen dbt package and the Python package differ"
        )
    if env.get("operation") != operation.split(".")[-1]:
        raise DbtError(f"dbt run-operation {operation}: envelope is for {env.get('operation')!r}")
    return env["payload"]
