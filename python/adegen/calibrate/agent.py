"""Running one agent command: the placeholders, the process group killed at the timeout, and
what the agent printed about its own cost (tokens, turns) when it prints JSON.

Pure: `render` (a template's placeholders, each value shell-quoted) and `parse_usage` (token and
turn counts from the agent's output). I/O: `run_agent_command` (one shell, its own process group)."""
from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from adegen.core.errors import InputError

BUILTIN_SEARCH = "builtin:search"
PLACEHOLDERS = ("prompt", "prompt_file", "workdir", "project_dir", "task_id", "key")
_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
OUTPUT_TAIL = 4000  # characters of the agent's output kept in a run record


@dataclass(frozen=True)
class AgentContext:
    """The values of the placeholders for one run (`project_dir` is an alias of `workdir`)."""

    prompt: str
    prompt_file: Path
    workdir: Path
    task_id: str
    key: str

    def values(self) -> dict[str, str]:
        return {"prompt": self.prompt, "prompt_file": str(self.prompt_file), "workdir": str(self.workdir),
                "project_dir": str(self.workdir), "task_id": self.task_id, "key": self.key}


@dataclass
class AgentRun:
    """What one agent run did (before grading)."""

    exit_code: int | None  # None when killed at the timeout
    seconds: float
    timed_out: bool
    output_tail: str = ""
    tokens: int | None = None
    turns: int | None = None
    cost_usd: float | None = None
    tries: int | None = None  # builtin:search's search effort
    notes: list[str] = field(default_factory=list)


def check_template(template: str, flag: str = "--agent-command") -> str:
    """The template, or one InputError naming the flag and the unknown placeholder."""
    if not template.strip():
        raise InputError("the agent command is empty", field=flag)
    if template.strip() == BUILTIN_SEARCH:
        return BUILTIN_SEARCH
    unknown = sorted({m for m in _FIELD.findall(template) if m not in PLACEHOLDERS})
    if unknown:
        raise InputError(f"unknown placeholder {{{unknown[0]}}} (known: "
                         + ", ".join("{" + p + "}" for p in PLACEHOLDERS) + ")", field=flag)
    return template


def render(template: str, ctx: AgentContext) -> str:
    """The shell command: each `{placeholder}` replaced by its shell-quoted value; other braces
    (a shell `${VAR}`, JSON) are left as they are."""
    values = ctx.values()
    return _FIELD.sub(lambda m: shlex.quote(values[m.group(1)]) if m.group(1) in values else m.group(0),
                      template)


def run_agent_command(command: str, cwd: Path, timeout: float, env: dict | None = None) -> AgentRun:
    """`bash -c command` in `cwd`, in a new session (its own process group); at the timeout the
    whole group is killed (SIGKILL), children included."""
    t0 = time.monotonic()
    proc = subprocess.Popen(["bash", "-c", command], cwd=str(cwd), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_group(proc.pid)
        out, _ = proc.communicate()
    except BaseException:
        kill_group(proc.pid)
        proc.communicate()
        raise
    finally:
        kill_group(proc.pid)  # whatever the agent left running in its group
    text = (out or b"").decode("utf-8", "replace")
    run = AgentRun(None if timed_out else proc.returncode, round(time.monotonic() - t0, 2), timed_out,
                   text[-OUTPUT_TAIL:])
    run.tokens, run.turns, run.cost_usd = parse_usage(text)
    return run


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _json_documents(text: str) -> list[dict]:
    docs = []
    with contextlib.suppress(ValueError):
        doc = json.loads(text)
        if isinstance(doc, dict):
            return [doc]
        if isinstance(doc, list):
            return [d for d in doc if isinstance(d, dict)]
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            with contextlib.suppress(ValueError):
                doc = json.loads(line)
                if isinstance(doc, dict):
                    docs.append(doc)
    return docs


def _int(v) -> int | None:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def parse_usage(text: str) -> tuple[int | None, int | None, float | None]:
    """(tokens, turns, cost in USD) from the last JSON document the agent printed that has them:
    `usage.{input,output,cache_*}_tokens` or `total_tokens`/`tokens`, `num_turns`/`turns`,
    `total_cost_usd`/`cost_usd` (Claude Code's `--output-format json` prints all three)."""
    tokens = turns = cost = None
    for doc in _json_documents(text):
        usage = doc.get("usage") if isinstance(doc.get("usage"), dict) else {}
        parts = [_int(v) for k, v in usage.items() if k.endswith("tokens")]
        total = _int(doc.get("total_tokens")) or _int(doc.get("tokens")) or _int(usage.get("total_tokens"))
        if total is None and any(p is not None for p in parts):
            total = sum(p for p in parts if p is not None)
        tokens = total if total is not None else tokens
        turns = _int(doc.get("num_turns")) or _int(doc.get("turns")) or turns
        c = doc.get("total_cost_usd", doc.get("cost_usd"))
        cost = float(c) if isinstance(c, (int, float)) and not isinstance(c, bool) else cost
    return tokens, turns, cost
