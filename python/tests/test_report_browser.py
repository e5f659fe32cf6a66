"""The review page in a real headless browser: Debian's Chromium (/usr/bin/chromium, installed by
.ci/run) driven by playwright's Python package, which needs no browser download. Skipped, with the
reason, where playwright is missing or Chromium cannot start.

Checked: the example project's page loads from the file system with no console error and no
request but the file itself, every task opens and draws its DAG, the filters work, a screenshot is
left in test-artifacts/report/; a synthetic 500-task bulk page loads (numbers in
test-artifacts/report/report-500.json and bench/RESULTS.md)."""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import pytest
from report_kit import artifacts_dir, copy_tasks, write_record

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import report_page  # noqa: E402  (bench/report_page.py: browser launch, synthetic bulk output)

from adegen.report import write_report  # noqa: E402

# Issue 14 asks for < 2 s (measured: bench/RESULTS.md). This bound only catches a regression of
# an order of magnitude on a shared CI machine whose load moves wall time 2-3x between runs.
LOAD_LIMIT_S = 10.0


@pytest.fixture(scope="session")
def browser():
    pytest.importorskip("playwright.sync_api", reason="playwright (the test extra) is not installed")
    if not Path(report_page.CHROMIUM).exists():
        pytest.skip(f"no Chromium at {report_page.CHROMIUM}: install Debian's chromium package "
                    "(.ci/run does: apt-get install -y chromium)")
    cm = report_page.chromium_browser()
    try:
        ctx = cm.__enter__()
    except Exception as exc:  # noqa: BLE001 - any launch failure means "cannot run here"
        pytest.skip(f"Chromium cannot start here: {str(exc).strip().splitlines()[0]}")
    yield ctx
    cm.__exit__(None, None, None)


def _errors(console: list[str]) -> list[str]:
    return [m for m in console if m.startswith(("error", "warning", "pageerror"))]


def test_example_page_in_chromium(browser, acme_tasks_built, acme_run_record, tmp_path):
    built, doc = acme_tasks_built
    out = copy_tasks(built, tmp_path)
    write_record(out, acme_run_record)
    page_file = write_report(out)
    url = page_file.as_uri()
    r = report_page.load_seconds(browser, url)
    page = r["page"]
    assert _errors(r["console"]) == []
    assert r["requests"] == [url]  # nothing but the file itself: no network, no other file
    tasks = doc["tasks"]
    assert page.inner_text("#f-shown") == f"{len(tasks)} of {len(tasks)} tasks"
    for t in tasks:
        box = page.locator(f"#task-{t['task_id']}")
        box.locator("summary").first.click()
        node = box.locator(f'svg.dag g.n.changed[data-node="{t["model"]}"]')
        node.wait_for()
        assert node.is_visible() and box.locator("pre.hl").first.is_visible()
        assert t["model"] in box.locator("svg.dag").text_content()
    # filters: a family keeps its tasks only; the search box narrows to one id
    family = tasks[0]["family"]
    page.select_option("#f-family", family)
    want = sum(1 for t in tasks if t["family"] == family)
    assert page.inner_text("#f-shown") == f"{want} of {len(tasks)} tasks"
    assert page.locator("details.task:visible").count() == want
    page.click("#f-reset")
    page.fill("#f-text", tasks[-1]["task_id"])
    assert page.locator("details.task:visible").count() == 1
    page.click("#f-reset")
    page.evaluate("window.scrollTo(0, 0)")
    shot = artifacts_dir() / "report-acme.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 20_000
    # the README's picture (docs/report-example.png): the overview and the first task open
    for t in tasks[1:]:
        page.locator(f"#task-{t['task_id']}").evaluate("d => { d.open = false; }")
    page.screenshot(path=str(artifacts_dir() / "report-acme-first-task.png"), full_page=True,
                    clip={"x": 0, "y": 0, "width": 1400, "height": 1750})
    assert _errors(r["console"]) == [] and r["requests"] == [url]  # still none after every interaction
    page.close()


def test_500_task_bulk_page_loads(browser, acme_tasks_built, tmp_path):
    built, _doc = acme_tasks_built
    out = report_page.make_synthetic_output(built, tmp_path / "bulk", tasks=500, models=500)
    page_file = write_report(out)
    loads, walls = [], []
    for _ in range(3):
        r = report_page.load_seconds(browser, page_file.as_uri())
        page = r["page"]
        assert _errors(r["console"]) == [] and len(r["requests"]) == 1
        loads.append(r["load_event_end"])
        walls.append(r["wall"])
        page.close()
    page = report_page.load_seconds(browser, page_file.as_uri())["page"]
    page.select_option("#f-status", "dev")
    dev = sum(1 for d in (out / "tasks").iterdir() if "status: dev" in (d / "task.yaml").read_text())
    assert page.inner_text("#f-shown") == f"{dev} of 500 tasks"
    page.locator("details.task:visible > summary").first.click()
    page.wait_for_selector("details.task[open] svg.dag g.n.changed")
    page.close()
    numbers = {"tasks": 500, "models": 500, "file_bytes": page_file.stat().st_size,
               "load_event_end_s": loads, "wall_s": walls, "median_load_s": statistics.median(loads)}
    (artifacts_dir() / "report-500.json").write_text(json.dumps(numbers, indent=2))
    print(f"500-task page: {numbers['file_bytes']:,} bytes, load event {numbers['median_load_s']:.2f} s (median of 3)")
    assert numbers["median_load_s"] < LOAD_LIMIT_S
