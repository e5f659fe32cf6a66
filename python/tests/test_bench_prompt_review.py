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


def test_score_pools_reviews_and_cues_split_by_wording(tmp_path):
    """Two reviews of two sheets: `score` pools them per source (numbers of the two sheets kept
    apart), `cues` gives the program share of adegen's prompts with and without each cue."""
    key_a = [{"n": 1, "source": "adegen", "id": "a1", "text": "orders is empty; it had 9 rows."},
             {"n": 2, "source": "adegen", "id": "a2", "text": "Why is amount in stg_payments so high?"},
             {"n": 3, "source": "hand", "id": "h1", "text": "Fix the failing model."}]
    key_b = [{"n": 1, "source": "adegen", "id": "a3", "text": "customers is a view now; it should be a table."},
             {"n": 2, "source": "hand", "id": "h2", "text": "The project is broken."}]
    files = []
    for name, key, labels in (("a", key_a, ["program\t3\t4", "person\t4\t2", "person\t5\t1"]),
                              ("b", key_b, ["program\t2\t5", "person\t4\t1"])):
        (tmp_path / f"{name}.json").write_text(json.dumps(key))
        (tmp_path / f"{name}.tsv").write_text("".join(f"{i}\t{lab}\n" for i, lab in enumerate(labels, 1)))
        files += [str(tmp_path / f"{name}.tsv"), str(tmp_path / f"{name}.json")]
    run = subprocess.run([sys.executable, str(BENCH / "prompt_review.py"), "score", *files],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "adegen: 3 prompts, labelled program 67%, natural 3.00, useful 3.67" in run.stdout
    assert "hand: 2 prompts, labelled program 0%" in run.stdout
    run = subprocess.run([sys.executable, str(BENCH / "prompt_review.py"), "cues", *files],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    semicolon = next(line for line in run.stdout.splitlines() if line.startswith("semicolon"))
    assert semicolon.split()[1:4] == ["2", "100%", "/"] and semicolon.split()[4] == "0%"
    rows = [r for res, key in ((files[0], files[1]), (files[2], files[3]))
            for r in prompt_review.labelled(Path(res).read_text().splitlines(), json.loads(Path(key).read_text()))]
    question = next(c for c in prompt_review.cues(rows) if c["cue"] == "question lead")
    assert question["n"] == 1 and question["program_with"] == 0 and question["useful_with"] == 2


def test_same_bug_sheets_never_tell_one_bug_twice(tmp_path):
    """bench/same_bug_review.py: each sheet holds the hand-written prompts of half the bugs and
    adegen's (written by the prompt writer a build runs, from the modelled findings) of the other
    half, alternating between sheets; adegen's texts pass the checks a build applies."""
    import same_bug_review as sbr
    from adegen import prompts

    hand = tmp_path / "hand.tsv"
    hand.write_text("".join(f"{task}.base\tThe {task} table looks wrong, can someone look?\n" for task in sbr.BUGS)
                    + "f1007.hard\tA lot of stats models look wrong.\n")
    assert sbr.main(["sheets", "--hand", str(hand), "--out", str(tmp_path / "out"), "--sheets", "2"]) == 0
    halves = []
    for n in (1, 2):
        key = json.loads((tmp_path / "out" / f"s{n}" / "key.json").read_text())
        bugs = {s: {i["id"].split(".")[0] for i in key if i["source"] == s} for s in ("hand", "adegen")}
        assert bugs["hand"] and bugs["adegen"] and not bugs["hand"] & bugs["adegen"]
        assert bugs["hand"] | bugs["adegen"] == set(sbr.BUGS)
        for item in key:
            if item["source"] == "adegen":
                assert item["text"] and not prompts.tool_words(item["text"]), item
        halves.append(bugs["hand"])
    assert halves[0] != halves[1]  # the halves alternate
