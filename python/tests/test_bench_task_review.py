"""bench/task_review.py: the blind task review sheet shows every task once as diff + prompt with
nothing of its source, the key stays out of the sheet's folder, and the score gives the means and
the share guessed program per source; bench/handmade_tasks.py builds the hand-made set."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import handmade_tasks  # noqa: E402
import task_review  # noqa: E402

GIT_HEADER = ("diff --git a/models/{m}.sql b/models/{m}.sql\nindex 1a2b3c4..5d6e7f8 100644\n"
              "--- a/models/{m}.sql\t2024-05-01 10:00:00.000000000 +0000\n"
              "+++ b/models/{m}.sql\t2024-05-01 10:00:01.000000000 +0000\n")
# per adegen task: model, the changed line's marker, base prompt, description
ADEGEN = {
    "shop001": ("orders", "amount_alpha", "Orders look doubled since yesterday.", "Join fanned out in orders"),
    "shop002": ("payments", "amount_beta", "Why did the refunds vanish from payments?", "Comment and filter gone"),
    "shop003": ("customers", "amount_gamma", "customers is a view now.", "Materialization changed"),
}
HAND = [
    {"id": "h_one", "project": "f1", "prompt": "Points look way too high. Can you fix it?",
     "diff": "--- a/models/points.sql\n+++ b/models/points.sql\n@@ -1,2 +1,2 @@\n-    max(points_delta) as p\n"
             "+    sum(points_delta) as p\n from s\n\\ No newline at end of file\n",
     "description": "Fix a calculation error", "source": {"license": "Apache-2.0"}},
    {"id": "h_two", "project": "shop", "prompt": "I got this error:\n\n> in macro surrogate_key\n> called by model x",
     "diff": "--- a/models/keys.sql\n+++ b/models/keys.sql\n@@ -3,1 +3,1 @@\n-\t{{ new_key_macro(['a']) }}\n"
             "+\t{{ old_key_macro(['a']) }}\n",
     "description": "Fix an outdated util", "source": {"license": "Apache-2.0"}},
]


def _patch(task_id: str, model: str, marker: str) -> str:
    if task_id == "shop001":  # git's header noise and timestamps, a hunk with a section name
        return GIT_HEADER.format(m=model) + f"@@ -1,3 +1,3 @@ select\n select\n-    sum(amount) as {marker}\n" \
            f"+    avg(amount) as {marker}\n from x\n"
    if task_id == "shop002":  # a removed SQL comment: a `---` line inside a hunk is no file header
        return f"--- a/models/{model}.sql\n+++ b/models/{model}.sql\n@@ -1,4 +1,2 @@\n select amount as {marker}\n" \
            "--- keep the refunds\n-where kind <> 'refund'\n from x\n"
    return f"--- a/models/{model}.sql\n+++ b/models/{model}.sql\n@@ -1,2 +1,3 @@\n" \
        f"+{{{{ config(materialized='view') }}}}\n select 1 as {marker}\n from x\n"


def _build(tmp_path: Path) -> Path:
    out = tmp_path / "build"
    for task_id, (model, marker, base, description) in ADEGEN.items():
        folder = out / "tasks" / task_id
        (folder / "setup").mkdir(parents=True)
        (folder / "task.yaml").write_text(
            f"task_id: {task_id}\ndescription: {description}\nprompts:\n  - key: base\n    prompt: |-\n      {base}\n"
            "  - key: medium\n    prompt: not this one\nauthor_name: Grace Hopper\nauthor_email: grace@example.com\n")
        (folder / "setup" / "changes.patch").write_text(_patch(task_id, model, marker))
    return out


def _hand_file(tmp_path: Path, tasks: list[dict] = HAND) -> Path:
    path = tmp_path / "hand.json"
    path.write_text(json.dumps({"tasks": tasks, "left_out": {}}))
    return path


def _sheet(tmp_path: Path, seed: str, name: str = "review") -> tuple[str, list[dict]]:
    build = tmp_path / "build" if (tmp_path / "build").exists() else _build(tmp_path)
    args = ["sheet", "--tasks", str(build), "--per-project", "3", "--hand-file", str(_hand_file(tmp_path)),
            "--hand-count", "2", "--seed", seed, "--out", str(tmp_path / name)]
    assert task_review.main(args) == 0
    return (tmp_path / name / "sheet.md").read_text(), json.loads((tmp_path / f"{name}-key" / "key.json").read_text())


def test_sheet_shows_every_task_once_and_nothing_of_its_source(tmp_path):
    sheet, key = _sheet(tmp_path, "s1")
    assert [p.name for p in (tmp_path / "review").iterdir()] == ["sheet.md"]  # the reviewer's folder: the sheet only
    assert not (tmp_path / "review-key").resolve().is_relative_to((tmp_path / "review").resolve())
    assert sorted(k["id"] for k in key) == ["h_one", "h_two", "shop001", "shop002", "shop003"]
    assert {k["source"] for k in key if k["id"].startswith("shop")} == {"adegen"}
    assert re.findall(r"^## Task (\d+)$", sheet, re.M) == ["1", "2", "3", "4", "5"]
    for text in ["avg(amount) as amount_alpha", "select amount as amount_beta", "select 1 as amount_gamma",
                 "max(points_delta)", "old_key_macro",
                 *(base for _, _, base, _ in ADEGEN.values()), "Points look way too high. Can you fix it?"]:
        assert sheet.count(text) == 1, text
    assert "I got this error:\n\n> in macro surrogate_key\n> called by model x\n" in sheet  # its own line breaks
    leaks = ["shop00", "h_one", "h_two", "adegen", "ade-bench", "hand-made", "handmade", "Grace", "grace@",
             "not this one", "Apache", "diff --git", "index 1a2b", "2024-05-01", "No newline", "@@ select",
             *(d for _, _, _, d in ADEGEN.values()), *(t["description"] for t in HAND)]
    for leak in leaks:
        assert leak not in sheet, leak
    # git's diff made plain
    assert "--- a/models/orders.sql\n+++ b/models/orders.sql\n@@ -1,3 +1,3 @@\n select\n" in sheet
    assert "\n--- keep the refunds\n-where kind <> 'refund'\n" in sheet  # a removed comment left as it is
    assert "\t" not in sheet.split("---\n\n## Task 1")[1]
    assert sheet.endswith("```\n") and not sheet.endswith("\n\n")


def test_same_seed_same_sheet_another_seed_another_order(tmp_path):
    first, key1 = _sheet(tmp_path, "s1", "a")
    again, key2 = _sheet(tmp_path, "s1", "b")
    other, key3 = _sheet(tmp_path, "s2", "c")
    assert first == again and key1 == key2
    order = [[k["id"] for k in key if k["source"] == "adegen"] for key in (key1, key3)]
    assert order[0] != order[1]  # the shuffle moves the build's tasks too, not only which hand tasks come
    assert sorted(k["id"] for k in key3) == sorted(k["id"] for k in key1) and len(other) == len(first)


def test_key_dir_inside_the_sheet_dir_is_refused(tmp_path, capsys):
    args = ["sheet", "--tasks", str(_build(tmp_path)), "--hand-count", "0", "--out", str(tmp_path / "r"),
            "--key-dir", str(tmp_path / "r" / "key")]
    assert task_review.main(args) == 2
    assert "could read it" in capsys.readouterr().err and not (tmp_path / "r").exists()


def test_a_sheet_never_holds_two_hand_tasks_with_one_bug(tmp_path):
    twin = {**HAND[0], "id": "h_twin", "same_bug_as": "h_one"}
    path = _hand_file(tmp_path, [HAND[0], twin, HAND[1]])
    for seed in ("a", "b", "c", "d", "e", "f"):
        picked = {t["id"] for t in task_review.hand_tasks(path, 3, seed)}
        assert len(picked) == 2 and "h_two" in picked and len(picked & {"h_one", "h_twin"}) == 1


def test_score_pools_reviews_per_source_and_reports_what_it_could_not_read(tmp_path, capsys):
    key_a = [{"n": 1, "source": "adegen", "id": "a1"}, {"n": 2, "source": "hand", "id": "h1"},
             {"n": 3, "source": "adegen", "id": "a2"}]
    key_b = [{"n": 1, "source": "hand", "id": "h2"}, {"n": 2, "source": "adegen", "id": "a3"}]
    result_a = ("Here are my answers:\n1\t2\t3\t1\t2\tprogram\n2, 4, 4, 3, 4, person\n"
                "3   3   2   2   3   Program  (the CASE edit felt generated)\n7\t1\t1\t1\t1\tperson\n"
                "Notes: task 3 looked generated.\n")
    result_b = "| 1 | 5 | 4 | 3 | 4 | program |\n2\t4\t5\tprogram\n"  # task 2: a rating short
    files = []
    for name, key, result in (("a", key_a, result_a), ("b", key_b, result_b)):
        (tmp_path / f"{name}.json").write_text(json.dumps(key))
        (tmp_path / f"{name}.txt").write_text(result)
        files += [str(tmp_path / f"{name}.txt"), str(tmp_path / f"{name}.json")]
    assert task_review.main(["score", *files, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # adegen: a1 (2,3,1,2, program), a2 (3,2,2,3, program); a3 unanswered
    assert doc["pooled"]["adegen"] == {"n": 2, "realism": 2.5, "fair": 2.5, "difficulty": 1.5, "value": 2.5,
                                       "program": 2, "program_share": 1.0}
    # hand: h1 (4,4,3,4, person), h2 (5,4,3,4, program)
    assert doc["pooled"]["hand"] == {"n": 2, "realism": 4.5, "fair": 4.0, "difficulty": 3.0, "value": 4.0,
                                     "program": 1, "program_share": 0.5}
    review_a, review_b = doc["reviews"]
    assert review_a["missing"] == [] and review_a["unread"] == [] and review_a["summary"]["adegen"]["n"] == 2
    assert review_b["missing"] == [2] and review_b["unread"] == ["2\t4\t5\tprogram"]
    assert set(review_b["summary"]) == {"hand"}
    assert task_review.main(["score", *files]) == 0
    text = capsys.readouterr().out
    assert re.search(r"^adegen\s+2\s+2\.50\s+2\.50\s+1\.50\s+2\.50\s+2 of 2\s+\(100%\)$", text, re.M), text
    assert re.search(r"^hand\s+2\s+4\.50\s+4\.00\s+3\.00\s+4\.00\s+1 of 2\s+\( 50%\)$", text, re.M), text
    assert "no answer for task(s) 2" in text and "not read: 2\t4\t5\tprogram" in text


def test_instructions_give_the_scale_and_the_answer_format(capsys):
    assert task_review.main(["instructions"]) == 0
    text = capsys.readouterr().out
    assert "number<TAB>realism<TAB>fair<TAB>difficulty<TAB>value<TAB>person|program" in text
    assert all(f"- {r}:" in text for r in task_review.RATINGS) and "written by people" in text


def test_hand_builder_reads_each_file_from_the_first_folder_holding_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(handmade_tasks, "BUG_TASKS", {"f1005": "patched", "f1006": "patched too"})
    first, second = tmp_path / "one", tmp_path / "two"
    for root, task_id in ((first, "f1005"), (second, "f1005"), (second, "f1006")):
        folder = root / "tasks" / task_id
        (folder / "setup").mkdir(parents=True, exist_ok=True)
        (folder / "task.yaml").write_text(f"description: d {root.name}\nprompts:\n  - key: hard\n    prompt: no\n"
                                          f"  - key: base\n    prompt: |-\n      base of {root.name}\n"
                                          "variants:\n- project_name: f1\n")
        if root is second:
            (folder / "setup" / "changes.patch").write_text(f"--- a/{task_id}\n")
    out = tmp_path / "hand.json"
    args = ["hand", "--ade-bench", f"{first}@{'1' * 40}", f"{second}@{'2' * 40}", "--out", str(out)]
    assert task_review.main(args) == 0
    tasks = {t["id"]: t for t in handmade_tasks.load(out)}
    assert tasks["f1005"]["prompt"] == "base of one" and tasks["f1005"]["project"] == "f1"
    assert tasks["f1005"]["source"] == {"prompt": f"dbt-labs/ade-bench@{'1' * 40}:tasks/f1005/task.yaml",
                                        "diff": f"dbt-labs/ade-bench@{'2' * 40}:tasks/f1005/setup/changes.patch",
                                        "license": "Apache-2.0"}
    assert tasks["f1006"]["same_bug_as"] == "f1005" and tasks["f1006"]["how"] == "patched too"
    assert task_review.main(["hand", "--ade-bench", f"{first}@{'1' * 40}", "--out", str(out)]) == 2
    assert "tasks/f1005/setup/changes.patch" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="DIR@REV"):
        task_review.main(["hand", "--ade-bench", str(first)])


def _changed_lines(diff: str) -> list[str]:
    return [line for line in diff.splitlines() if line.startswith(("+", "-")) and line[:4] not in ("--- ", "+++ ")]


def test_the_bundled_hand_made_tasks_are_whole_and_attributed():
    tasks = handmade_tasks.load(handmade_tasks.DEFAULT_OUT)
    ids = [t["id"] for t in tasks]
    assert 8 <= len(ids) <= 15 and len(set(ids)) == len(ids) and not set(ids) & set(handmade_tasks.LEFT_OUT)
    for task in tasks:
        assert task["prompt"].strip() and task["project"] and task["how"], task["id"]
        for part in ("prompt", "diff"):
            assert re.fullmatch(rf"dbt-labs/ade-bench@[0-9a-f]{{40}}:tasks/{task['id']}/\S+", task["source"][part])
        assert task["source"]["license"] == "Apache-2.0"
        assert task.get("same_bug_as") in (None, *ids)
        # the sheet keeps every changed line of the patch
        shown = _changed_lines(task_review.clean_diff(task["diff"]))
        assert [line.split() for line in _changed_lines(task["diff"])] == [line.split() for line in shown], task["id"]
