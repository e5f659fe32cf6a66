"""The review page (adegen.report) for the example project's real, validated tasks: its content
from task folders alone and with a run record, the command line, and hostile task content."""
from __future__ import annotations

import copy
import hashlib
import subprocess
import sys
from pathlib import Path

import yaml
from report_kit import copy_tasks, task_sections, text_of, write_record

from adegen.report import dag, write_report
from adegen.report.records import _with_measured_facts, reason_bucket


def _task_yaml(out: Path, tid: str) -> dict:
    return yaml.safe_load((out / "tasks" / tid / "task.yaml").read_text())


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_page_from_task_folders_alone(acme_tasks_built, tmp_path):
    built, doc = acme_tasks_built
    out = copy_tasks(built, tmp_path)
    before = _tree(out / "tasks")
    page = write_report(out)
    assert page == out / "report.html"
    assert _tree(out / "tasks") == before  # the page only reads the tasks
    assert not [p for p in out.iterdir() if p.name.startswith(".report-")]  # no temp file left
    html = page.read_text()
    sections = task_sections(html)
    assert list(sections) == [t["task_id"] for t in doc["tasks"]]
    assert "No run record in this directory" in html
    for t in doc["tasks"]:
        summary, body = sections[t["task_id"]]
        text = text_of(body)
        data = _task_yaml(out, t["task_id"])
        for p in data["prompts"]:
            assert p["key"] in text and " ".join(p["prompt"].split()) in " ".join(text.split())
        patch = (out / "tasks" / t["task_id"] / "setup" / "changes.patch").read_text()
        for line in patch.splitlines():
            assert line in text, line
        # read from the folder: the model from the patch, the pattern from the description
        assert text_of(summary).split()[2] == t["model"]
        assert f"{t['pattern_id']} ({t['family']})" in text_of(summary)
        assert 'data-status="ready"' in summary and "proof not recorded" in text
        assert "Impact not recorded" in text and "DAG not recorded" in text
        for table in data["solution_seeds"]:
            assert f"seeds/solution__{table['table_name']}.csv" in text
            assert f"AUTO_{table['table_name']}_equality" in text


def test_the_build_writes_the_page(acme_tasks_built):
    built, doc = acme_tasks_built
    page = built / "report.html"
    assert doc["report"] == str(page) and page.is_file()
    assert list(task_sections(page.read_text())) == [t["task_id"] for t in doc["tasks"]]


def test_page_with_run_record(acme_tasks_built, acme_run_record, tmp_path):
    built, doc = acme_tasks_built
    out = copy_tasks(built, tmp_path)
    record = copy.deepcopy(acme_run_record)
    write_record(out, record)
    html = write_report(out).read_text()
    sections = task_sections(html)
    assert list(sections) == [t["task_id"] for t in doc["tasks"]]
    head = text_of(html[: html.index('<main id="tasks">')])
    assert record["run_id"] in head and "acme" in head
    for phase, secs in doc["timings_sec"].items():
        assert phase in head and f"{secs:.1f} s" in head
    for reason in {reason_bucket(d["reason"]) for d in doc["dropped_candidates"]}:
        assert reason in head
    parents: dict[str, set] = {}
    for a, b in record["graph"]["edges"]:
        parents.setdefault(b, set()).add(a)
    examples = paths = 0
    for t in record["tasks"]:
        summary, body = sections[t["task_id"]]
        assert f'data-layer="{t["layer"]}"' in summary and 'data-status="proven"' in summary
        # DAG: the changed model, the graded tables, the nearest tables where the screen saw the
        # symptom, and the model's parents (context) are nodes of the picture
        assert f'<g class="n changed" data-node="{t["model"]}">' in body
        graded = [s["table_name"] for s in _task_yaml(out, t["task_id"])["solution_seeds"]]
        for table in graded:
            assert f'class="n {"changed" if table == t["model"] else "graded"}" data-node="{table}"' in body
        obs = t["observation"]
        changed = sorted((x for x in obs["changed_tables"] if x != t["model"] and x not in graded),
                         key=lambda x: (obs["changed_tables"][x], x))
        for table in changed[: dag.MAX_SYMPTOMS]:
            assert f'data-node="{table}"' in body
        if len(changed) > dag.MAX_SYMPTOMS:
            assert f"+{len(changed) - dag.MAX_SYMPTOMS} more tables where the symptom shows" in body
        for parent in sorted(parents.get(t["model"], ()))[: dag.CONTEXT]:
            assert f'data-node="{parent}"' in body
        if changed or set(graded) - {t["model"]}:
            assert 'class="e hot"' in body
            paths += 1
        text = text_of(body)
        # impact: rows differing of the compared table and the evidence row (broken vs intact)
        assert f"{obs['compared_table']}" in text
        assert str(obs["rows_differing"]) in text and str(obs["rows_total"]) in text
        ex = _with_measured_facts(obs)["details"]  # the record holds the measured facts per table
        if "example_column" in ex:
            assert f"{ex['key']} = {ex['example_key_value']}, broken build vs intact build" in text
            assert str(ex["example_observed"] if ex["example_observed"] is not None else "NULL") in text
            assert str(ex["example_expected"] if ex["example_expected"] is not None else "NULL") in text
            examples += 1
        total = t["proof_seconds"]["total"]
        assert f"{total:.1f} s" in text  # proof seconds
    # the example project's screens name a key and a value for most slips (a purposeful change's
    # observation is its own measure, without one; it takes two of the five slots)
    slips = sum(t["family"] != "purposeful-change" for t in record["tasks"])
    assert examples * 2 > slips, (examples, slips)
    assert paths >= 1  # and at least one bug shows downstream of the changed model


def test_newest_record_wins_and_bad_records_are_named(acme_tasks_built, acme_run_record, tmp_path):
    built, _doc = acme_tasks_built
    out = copy_tasks(built, tmp_path)
    old = copy.deepcopy(acme_run_record)
    old["run_id"] = "20250101T000000Z-1"
    for t in old["tasks"]:
        t["layer"] = "old-layer"
    write_record(out, old)
    write_record(out, acme_run_record)
    runs = out / ".adegen" / "runs"
    (runs / "20990101T000000Z-9.json").write_text("{not json")
    (runs / "20990101T000000Z-8.json").write_text("[1, 2]")
    html = write_report(out).read_text()
    assert "old-layer" not in "".join(s for s, _ in task_sections(html).values())
    assert "20990101T000000Z-9.json skipped: JSONDecodeError" in html
    assert "20990101T000000Z-8.json skipped: not a JSON object" in html


def test_hostile_task_content_stays_text(acme_tasks_built, tmp_path):
    """Prompts, SQL and seed values are escaped: nothing can close the inert script that holds a
    task's details, start a comment, or add markup."""
    built, doc = acme_tasks_built
    out = copy_tasks(built, tmp_path)
    tid = doc["tasks"][0]["task_id"]
    task = out / "tasks" / tid
    data = _task_yaml(out, tid)
    evil = "</script><script>alert(1)</script><!-- <img src=x onerror=alert(2)>"
    data["prompts"].append({"key": "medium", "prompt": evil})
    (task / "task.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    (task / "tests").mkdir(exist_ok=True)
    (task / "tests" / "amount_positive.sql").write_text(
        "-- </script>\nselect * from {{ ref('fct_orders') }} where amount < 0\n")
    html = write_report(out).read_text()
    _summary, body = task_sections(html)[tid]
    assert "</script" not in body.lower() and "<!--" not in body and "<img" not in body
    text = text_of(body)
    assert evil in text and "medium" in text
    assert "tests/amount_positive.sql" in text and "{{ ref('fct_orders') }}" in text


def _run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "adegen.report", *map(str, args)], capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)


def test_command_line(acme_tasks_built, tmp_path):
    built, doc = acme_tasks_built
    out = copy_tasks(built, tmp_path / "ok")
    r = _run_cli(out)
    assert r.returncode == 0, r.stderr
    assert (out / "report.html").is_file() and str(out / "report.html") in r.stdout
    missing = _run_cli(tmp_path / "nope")
    assert missing.returncode == 2 and "is not a directory" in missing.stderr
    assert "Traceback" not in missing.stderr and len(missing.stderr.strip().splitlines()) == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    r = _run_cli(empty)
    assert r.returncode == 2 and "nothing to report" in r.stderr and "Traceback" not in r.stderr
    assert list(empty.iterdir()) == []
    r = _run_cli(out, "--bogus")
    assert r.returncode == 2 and "command line" in r.stderr


def test_command_line_draws_dags_from_a_fresh_discovery(acme_tasks_built, example_project, tmp_path):
    built, doc = acme_tasks_built
    out = copy_tasks(built, tmp_path)
    before = _tree(example_project)
    r = _run_cli(out, "--project", example_project)
    assert r.returncode == 0, r.stderr
    assert _tree(example_project) == before  # discovery ran on a scratch copy
    sections = task_sections((out / "report.html").read_text())
    for t in doc["tasks"]:
        _summary, body = sections[t["task_id"]]
        assert f'<g class="n changed" data-node="{t["model"]}">' in body and "DAG not recorded" not in body


def test_run_doc_in_memory_is_not_counted_twice(acme_tasks_built, acme_run_record, tmp_path):
    built, doc = acme_tasks_built
    out = copy_tasks(built, tmp_path)
    write_record(out, acme_run_record)
    html = write_report(out, run_doc=acme_run_record).read_text()
    assert html.count(f"<code>{acme_run_record['run_id']}</code>") == 1
    # the --json document alone (no run_id) still shows the run and its proposals' evidence
    html = write_report(copy_tasks(built, tmp_path / "plain"), run_doc=copy.deepcopy(doc)).read_text()
    for t in doc["tasks"]:
        _s, body = task_sections(html)[t["task_id"]]
        assert "Impact not recorded" not in body
