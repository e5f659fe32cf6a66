"""The example project's validated build (`acme_tasks_built`) yields one compound task (two slips on
one lineage, adegen.propose.compound): proven, recorded with both slips, and graded by ade-bench's
procedure (emulated) as unresolved when the agent fixes only one of the two files."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from adegen.adebench.procedure.emulate import run_harness


def _compound(doc: dict) -> dict:
    tasks = [t for t in doc["tasks"] if t.get("proposal") and doc["proposals"][t["proposal"] - 1].get("compound")]
    assert len(tasks) == 1, [t["pattern_id"] for t in doc["tasks"]]
    return tasks[0]


def test_one_compound_task_proven_and_recorded(acme_tasks_built, acme_run_record):
    _out, doc = acme_tasks_built
    task = _compound(doc)
    assert task["proven"] and task["status"] == "ready", task["proof_detail"]
    assert [c["outcome"] for c in doc["compound"]][-1] == "proposed"
    rec = next(t for t in acme_run_record["tasks"] if t["task_id"] == task["task_id"])
    assert rec["compound"] is True and len(rec["slips"]) == 2
    a, b = rec["slips"]
    assert a["model"] != b["model"] and a["family"] != b["family"]
    assert {a["table"], b["table"]} <= set(rec["graded_tables"])
    # its slips are none of the run's other tasks (issue 51: tasks 001 and 003 read again inside 005)
    others = {(t["model"], t["pattern_id"]) for t in doc["tasks"] if t["task_id"] != task["task_id"]}
    assert not {(s["model"], s["pattern_id"]) for s in rec["slips"]} & others, (rec["slips"], others)
    prop = doc["proposals"][task["proposal"] - 1]
    assert prop["compound"] is True and prop["slips"] == rec["slips"]
    # the message reports both slips, each as its own report: an agent is asked only what it is told
    # (joined as one person's message: the second report may follow the first in its paragraph, "Also, ...")
    assert all(s["table"] in prop["prompt"] for s in rec["slips"]), prop["prompt"]


def _file_sections(patch: str) -> list[str]:
    lines, out = patch.splitlines(keepends=True), []
    for line in lines:
        if line.startswith("--- ") or not out:
            out.append("")
        out[-1] += line
    return out


def test_fixing_one_slip_alone_fails_the_grade(acme_tasks_built, tmp_path):
    out, doc = acme_tasks_built
    task = Path(_compound(doc)["path"])
    db = Path(doc["database"]["db_file"])
    project = out / "projects" / doc["project"]["name"]
    sections = _file_sections((task / "solutions" / "changes.patch").read_text())
    assert len(sections) == 2
    for i, section in enumerate(sections):
        one = tmp_path / f"{task.name}_fix{i}"
        shutil.copytree(task, one)
        (one / "solutions" / "changes.patch").write_text(section)
        res = run_harness(one, project, db, "sage", workdir=tmp_path / f"w{i}", mode="inprocess")
        assert not res.resolved, f"fixing only {section.splitlines()[0]} passed: {json.dumps(res.tests)}"
