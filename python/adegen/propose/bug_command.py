"""`--bug-command CMD`: an external bug writer (for example one asking a language model) offers a
bug as a unified diff with a story. Its diff is checked, compiled, screened and proven like
adegen's own candidates; a bad one is dropped with its reason.

CMD runs once per model (the best ranked own models first, at most `models_for`'s number) through
the shell (`core.shell.run_shell`: its own session, killed with its children at the timeout), with
one JSON document on stdin:

    {"version": 1,
     "project": {"name", "dir", "db_type"},
     "model": {"name", "unique_id", "path", "layer", "materialized", "sql",
               "columns": [documented columns], "tests": [...],
               "upstream": [{"name", "kind": model|source|seed|snapshot, "path"?}],
               "downstream": [{"name", "path"}]},
     "models": [{"name", "path", "layer"}],        # the files a diff may change
     "answer": {...}}                               # the format below, spelled out

and prints one JSON object `{"diff": "<unified diff against the project>", "story": "...",
"kind": "values" | "build_error"}`, or nothing (or `{}`) when it has no bug for this model. The
diff's paths are relative to the project directory (`a/`/`b/` prefixes, as git writes them, or
none); it may change the SQL files of any of the project's own models, and nothing else.
"""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from adegen.core.drops import Drop, DropCode
from adegen.core.shell import run_shell
from adegen.propose import ranking
from adegen.propose.diff_apply import apply_diff
from adegen.propose.diffs import KINDS, DiffBug
from adegen.propose.proposals import Scope, own_models
from adegen.core.graph import ProjectGraph

DEFAULT_TIMEOUT = 60.0
MAX_CHARS = 200_000  # of a diff: far past MAX_CHANGED_LINES, so the line count decides
JOBS = 4  # commands run side by side (each waits on its own program)
ANSWER = {"diff": "unified diff against the project (paths relative to its directory, a/ b/ prefixes or "
                  "none); only the SQL files of the models listed in `models`",
          "story": "how an engineer ends up shipping this bug (kept in the run record, never in a prompt)",
          "kind": "values (the build succeeds, some table's data is wrong) or build_error (the build fails)"}


@dataclass(frozen=True)
class BugCommand:
    command: str
    timeout: float = DEFAULT_TIMEOUT


def models_for(scope: Scope, count: int) -> list[dict]:
    """The own models CMD is asked about: the best ranked (`ranking.order_key`), 2 per task wanted."""
    return sorted(own_models(scope.discovery, scope.project_name), key=ranking.order_key)[:2 * count]


def _node_kind(uid: str) -> str:
    return uid.split(".", 1)[0]


def document(model: dict, scope: Scope, sql: str) -> dict:
    """The JSON document CMD reads on stdin about `model` (its raw SQL `sql`)."""
    discovery = scope.discovery
    by_uid = {m["unique_id"]: m for m in discovery.get("models", [])}
    sources = {s["unique_id"]: f"{s['source']}.{s['table']}" for s in discovery.get("sources", []) if "unique_id" in s}
    graph = ProjectGraph.from_models([*discovery.get("models", []), model])
    upstream = []
    for uid in graph.parents(model["unique_id"]):
        m = by_uid.get(uid)
        entry = {"name": m["name"] if m else sources.get(uid, uid.rsplit(".", 1)[-1]), "kind": _node_kind(uid)}
        if m and m.get("package_name") == scope.project_name:
            entry["path"] = m.get("path")
        upstream.append(entry)
    downstream = [{"name": by_uid[u]["name"], "path": by_uid[u].get("path")}
                  for u in graph.children(model["unique_id"]) if u in by_uid]
    return {
        "version": 1,
        "project": {"name": scope.project_name, "dir": str(scope.project_dir), "db_type": scope.db_type},
        "model": {"name": model["name"], "unique_id": model["unique_id"], "path": model["path"],
                  "layer": model.get("layer"), "materialized": model.get("materialized"), "sql": sql,
                  "columns": list(model.get("columns", []) or []), "tests": list(model.get("tests", []) or []),
                  "upstream": upstream, "downstream": downstream},
        "models": [{"name": m["name"], "path": m["path"], "layer": m.get("layer")}
                   for m in own_models(discovery, scope.project_name)],
        "answer": ANSWER,
    }


def parse_answer(text: str) -> dict | str | None:
    """The command's answer {diff, story, kind}; None when it offers nothing; else why it is unusable."""
    text = text.strip()
    if not text or text in ("{}", "null"):
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"output is not JSON ({exc.msg} at line {exc.lineno})"
    if not isinstance(data, dict):
        return "output is not a JSON object"
    diff, story, kind = data.get("diff"), data.get("story", ""), data.get("kind", "values")
    if not isinstance(diff, str) or not diff.strip():
        return "no `diff` in its output" if diff in (None, "") else "`diff` is not a string"
    if len(diff) > MAX_CHARS:
        return f"`diff` is longer than {MAX_CHARS} characters"
    if kind not in KINDS:
        return f"`kind` must be one of {', '.join(KINDS)}, got {kind!r}"
    return {"diff": diff, "story": " ".join(str(story or "").split())[:500], "kind": kind}


def ask(cmd: BugCommand, model: dict, scope: Scope) -> DiffBug | Drop | None:
    """CMD's bug for one model: a DiffBug (its diff applied to copies of the project's files), the
    Drop that says why its answer is unusable, or None when it offered nothing."""
    name, pid = model["name"], f"bug_command@{model['name']}"
    try:
        sql = (Path(scope.project_dir) / model["path"]).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return Drop(name, pid, f"--bug-command for {name}: cannot read {model['path']}: {exc}",
                    DropCode.BUG_COMMAND_FAILED)
    out, why = run_shell(cmd.command, json.dumps(document(model, scope, sql)), cmd.timeout)
    answer = parse_answer(out) if out is not None else f"the command failed: {why}"
    if answer is None:
        return None
    if isinstance(answer, str):
        return Drop(name, pid, f"--bug-command for {name}: {answer}", DropCode.BUG_COMMAND_FAILED)
    allowed = {m["path"] for m in own_models(scope.discovery, scope.project_name)}
    applied = apply_diff(Path(scope.project_dir), answer["diff"], allowed=allowed)
    if applied.problem is not None:
        return Drop(name, pid, f"--bug-command for {name}: {applied.problem[1]}", applied.problem[0])
    return DiffBug("bug_command", name, answer["story"], answer["kind"], applied.files, model=name)


def ask_all(cmd: BugCommand, models: list[dict], scope: Scope) -> list[DiffBug | Drop]:
    """`ask` for every model, JOBS at a time; answers in model order (offers of nothing left out)."""
    if not models:
        return []
    with ThreadPoolExecutor(max_workers=min(JOBS, len(models))) as pool:
        answers = list(pool.map(lambda m: ask(cmd, m, scope), models))
    return [a for a in answers if a is not None]
