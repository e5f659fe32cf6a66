"""bench/prompt_review.py: the blind review sheet holds only the prompts (no source, no id), its key
says who wrote which, and the score counts labels per source."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import prompt_review  # noqa: E402


def _task(out: Path, task_id: str, base: str) -> None:
    folder = out / "tasks" / task_id
    folder.mkdir(parents=True)
    (folder / "task.yaml").write_text(
        "prompts:\n  - key: base\n    prompt: |-\n      " + base + "\n  - key: medium\n    prompt: not this one\n")


def test_sheet_mixes_sources_blind_and_score_counts_per_source(tmp_path):
    out = tmp_path / "build"
    _task(out, "shop001", "orders is empty.")
    _task(out, "shop002", "Why is amount in stg_payments so high?")
    _task(out, "shop003", "customers is a view now.")
    hand = tmp_path / "hand.tsv"
    hand.write_text("f1.base\tSomeone noticed the points look way too high.\nf2.base\tFix the failing model.\n")
    review = tmp_path / "review"
    run = subprocess.run([sys.executable, str(BENCH / "prompt_review.py"), "sheet", "--tasks", str(out),
                          "--per-project", "2", "--hand", str(hand), "--seed", "s", "--out", str(review)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    sheet = (review / "sheet.txt").read_text()
    key = json.loads((review / "key.json").read_text())
    # two tasks of the build (the first two by id, base key only) and both hand-written prompts
    assert sorted(k["id"] for k in key) == ["f1.base", "f2.base", "shop001", "shop002"]
    assert "not this one" not in sheet and "view now" not in sheet
    assert "shop00" not in sheet and "adegen" not in sheet and "hand" not in sheet  # nothing but the texts
    lines = sheet.splitlines()
    assert [line.split(". ", 1)[0] for line in lines] == ["1", "2", "3", "4"]
    assert {line.split(". ", 1)[1] for line in lines} == {k["text"] for k in key}

    by_source = {k["n"]: k["source"] for k in key}
    result = [f"{n}\t{'program' if src == 'adegen' else 'person'}\t{3 if src == 'adegen' else 5}\t4"
              for n, src in sorted(by_source.items())]
    result[0] = result[0].replace("program", "person").replace("\tperson", "\tprogram", 0)
    scored = prompt_review.score(result, key)
    first_source = by_source[1]
    assert scored["adegen"]["n"] == 2 and scored["hand"]["n"] == 2
    assert scored["adegen"]["natural"] == 3 and scored["hand"]["natural"] == 5
    expected = {"adegen": 1.0, "hand": 0.0}
    if first_source == "adegen":  # line 1 was relabelled person
        expected["adegen"] = 0.5
    assert scored["adegen"]["program_share"] == expected["adegen"]
    assert scored["hand"]["program_share"] == expected["hand"]


def test_sheet_without_prompts_is_one_clear_error(tmp_path):
    run = subprocess.run([sys.executable, str(BENCH / "prompt_review.py"), "sheet", "--tasks", str(tmp_path),
                          "--out", str(tmp_path / "review")], capture_output=True, text=True)
    assert run.returncode == 2 and "no base prompts" in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "review").exists()
