"""Shared helpers of the review-page tests (test_report*.py): copies of built tasks, a run record in
the documented shape (adegen.report's docstring) made from a real build and real screens of its
mutants, and the page's task bodies."""
from __future__ import annotations

import dataclasses
import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUN_ID = "20260101T120000Z-4242"


def artifacts_dir() -> Path:
    """Where browser tests leave screenshots and numbers (git-ignored; ADEGEN_TEST_ARTIFACTS overrides)."""
    d = Path(os.environ.get("ADEGEN_TEST_ARTIFACTS") or REPO / "test-artifacts") / "report"
    d.mkdir(parents=True, exist_ok=True)
    return d


def copy_tasks(built_out: Path, dest: Path) -> Path:
    """dest/tasks = a copy of the built tasks (the built output itself is shared, read-only)."""
    shutil.copytree(built_out / "tasks", dest / "tasks")
    return dest


def mutant_text(project: Path, task: Path, model_path: str, work: Path) -> str:
    """The model file as the task's setup patch leaves it (GNU patch, like setup.sh)."""
    dest = work / task.name
    (dest / model_path).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(project / model_path, dest / model_path)
    subprocess.run(["patch", "-p1", "-s", "-d", str(dest), "-i", str(task / "setup" / "changes.patch")],
                   check=True, capture_output=True)
    return (dest / model_path).read_text()


def screen_tasks(project: Path, built_out: Path, doc: dict, work: Path) -> dict[str, dict]:
    """task id -> the validator's Observation (as a dict) of its mutant, screened again on the
    example project: what a run record holds per task."""
    from adegen.patterns import load_catalog
    from adegen.project import load_project
    from adegen.validate import Validator

    catalog = load_catalog()
    proposals = {p["number"]: p for p in doc["proposals"]}
    items, ids = [], []
    for t in doc["tasks"]:
        prop = proposals[t["proposal"]]
        text = mutant_text(project, built_out / "tasks" / t["task_id"], prop["model_path"], work / "mutants")
        items.append((prop["model_unique_id"], prop["model_path"], text, catalog.by_id[t["pattern_id"]]))
        ids.append(t["task_id"])
    with Validator(load_project(project), db_dir=None, workdir=work / "validate", jobs=1) as v:
        v.baseline()
        return {tid: dataclasses.asdict(obs) for tid, obs in zip(ids, v.screen_many(items))}


def record_from_build(doc: dict, graph: dict, observations: dict[str, dict]) -> dict:
    """The run record of a build: its --json document plus what the record adds per task (layer,
    prompts, the screen's observation, proof seconds) and the discovery graph."""
    rec = json.loads(json.dumps(doc))
    rec.update(run_id=RUN_ID, command="build", started_at="2026-01-01T12:00:00Z", graph=graph)
    layers = {m["name"]: m["layer"] for m in graph["models"]}
    proposals = {p["number"]: p for p in rec["proposals"]}
    for t in rec["tasks"]:
        prop = proposals[t["proposal"]]
        t.update(layer=layers[t["model"]], model_path=prop["model_path"], pattern_name=prop["pattern_name"],
                 prompts=[{"key": "base", "prompt": prop["prompt"]}], proof_seconds=12.5,
                 observation=observations[t["task_id"]])
        t["proof"]["seconds"] = {"solved_state": 4.0, "grading": 8.0, "total": 12.5}
    return json.loads(json.dumps(rec))


def write_record(out: Path, record: dict) -> Path:
    runs = out / ".adegen" / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    path = runs / f"{record.get('run_id', RUN_ID)}.json"
    path.write_text(json.dumps(record))
    return path


_BODY = re.compile(r'<script type="text/x-adegen-task">(.*?)</script>', re.S)


def task_sections(page: str) -> dict[str, tuple[str, str]]:
    """task id -> (summary html, body html) of the page."""
    starts = [m for m in re.finditer(r'<details class="task" id="task-([^"]+)"', page)]
    end = page.index("</main>")
    out = {}
    for i, m in enumerate(starts):
        chunk = page[m.start(): starts[i + 1].start() if i + 1 < len(starts) else end]
        body = _BODY.search(chunk)
        out[m.group(1)] = (chunk[: body.start()] if body else chunk, body.group(1) if body else "")
    return out


def text_of(markup: str) -> str:
    """What a reader sees: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", markup))
