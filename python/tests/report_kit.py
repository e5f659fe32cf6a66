"""Shared helpers of the review-page tests (test_report*.py): copies of built tasks, run records
written where the page reads them, and the page's task bodies."""
from __future__ import annotations

import html
import json
import os
import re
import shutil
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
