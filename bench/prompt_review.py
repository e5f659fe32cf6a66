"""Blind prompt review kit: a sheet a reviewer labels, and the score of the labels.

    python bench/prompt_review.py sheet --tasks OUT_DIR [OUT_DIR ...] [--per-project 6]
                                        [--hand FILE] [--seed S] --out DIR
    python bench/prompt_review.py score RESULT.tsv DIR/key.json [RESULT.tsv DIR/key.json ...]
    python bench/prompt_review.py cues RESULT.tsv DIR/key.json [RESULT.tsv DIR/key.json ...]

`sheet` takes the `base` prompt of up to --per-project tasks of every build output dir given
(real `python -m adegen.build` output: `OUT_DIR/tasks/*/task.yaml`), mixes them with the
hand-written prompts of --hand (one `id<TAB>prompt` per line, e.g. ade-bench's own bug-fix tasks;
leave it out for a single-source sheet), shuffles them with --seed and writes DIR/sheet.txt (what
the reviewer reads: numbered prompts, nothing else) and DIR/key.json (who wrote which).

The reviewer, who must know nothing of adegen, is asked to label each prompt person or program
and rate it natural and useful from 1 to 5, answering one `number<TAB>label<TAB>natural<TAB>useful`
line per prompt. `score` prints, per source, the share labelled program and the mean ratings
(pooled over several reviews when given several pairs). `cues` pools reviews and prints, for a
fixed list of wording cues (semicolons, "I'd expect", a story lead, quoted values, requests, ...),
the share of adegen's prompts labelled program with and without the cue, and their usefulness:
one review is noisy (the same texts get 54% and 62%), a few hundred labels are not.

Two designs, and what each measures (issue 12's reviews, docs/prompts.md): a *mixed* sheet asks
a reviewer to split two sources, so it measures how far adegen's set differs from the hand-written
set as a set (domain, kinds of task, slips and vagueness included); a *single-source* sheet
(adegen's prompts only, the reviewer not told that) measures whether the prompts read as machine
text on their own.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
from pathlib import Path

import yaml


def base_prompts(out_dir: Path, limit: int) -> list[dict]:
    """The `base` prompt of the first `limit` tasks of one build output, in task-id order."""
    rows = []
    for task_yaml in sorted((out_dir / "tasks").glob("*/task.yaml"))[:limit]:
        doc = yaml.safe_load(task_yaml.read_text()) or {}
        base = next((p.get("prompt") for p in doc.get("prompts") or [] if p.get("key") == "base"), None)
        if base:
            rows.append({"source": "adegen", "id": task_yaml.parent.name, "text": " ".join(str(base).split())})
    return rows


def hand_prompts(path: Path) -> list[dict]:
    rows = []
    for line in path.read_text().splitlines():
        if "\t" in line:
            task_id, text = line.split("\t", 1)
            rows.append({"source": "hand", "id": task_id.strip(), "text": " ".join(text.split())})
    return rows


def make_sheet(items: list[dict], seed: str) -> tuple[str, list[dict]]:
    """The numbered sheet and its key, in a seeded shuffle."""
    items = [dict(i) for i in items]
    random.Random(seed).shuffle(items)
    for n, item in enumerate(items, 1):
        item["n"] = n
    return "".join(f"{i['n']}. {i['text']}\n" for i in items), items


def labelled(result_lines: list[str], key: list[dict]) -> list[dict]:
    """The key's items with the reviewer's label and ratings, for the items the reviewer rated (a
    number answered twice counts once, with its last answer)."""
    by_n = {k["n"]: k for k in key}
    rated = {}
    for line in result_lines:
        parts = line.strip().split("\t")
        if len(parts) >= 4 and parts[0].strip().isdigit() and int(parts[0]) in by_n:
            rated[int(parts[0])] = {**by_n[int(parts[0])], "program": parts[1].strip().lower() == "program",
                                    "natural": int(parts[2]), "useful": int(parts[3])}
    return list(rated.values())


def summary(rows: list[dict]) -> dict[str, dict]:
    """Per source of labelled rows: how many prompts, the share labelled program, mean natural
    and useful."""
    out = {}
    for source in sorted({r["source"] for r in rows}):
        rated = [r for r in rows if r["source"] == source]
        out[source] = {"n": len(rated), "program_share": statistics.mean(r["program"] for r in rated),
                       "natural": statistics.mean(r["natural"] for r in rated),
                       "useful": statistics.mean(r["useful"] for r in rated)}
    return out


def score(result_lines: list[str], key: list[dict]) -> dict[str, dict]:
    """Per source: how many prompts, the share labelled program, mean natural and useful."""
    return summary(labelled(result_lines, key))


# wording cues blind reviewers named in issue 12's reviews, as predicates on a prompt's text
CUES: list[tuple[str, object]] = [
    ("semicolon", lambda t: ";" in t),
    ("\"I'd expect\"", lambda t: "I'd expect" in t),
    ("story lead (\"I was ...\")", lambda t: bool(re.match(r"I was\b", t))),
    ("question lead", lambda t: bool(re.match(r"(Why|What|How|Where|Is|Did|Anyone|Any)\b", t))),
    ("value now and should-be", lambda t: bool(re.search(r"\d", t)) and bool(
        re.search(r"\b(should|was|used to|expected|got|instead)\b", t))),
    ("request", lambda t: bool(re.search(r"\b(Can you|Could you|Please|please|Would you|Let me know|Can someone)\b", t))),
    ("rebuild request", lambda t: bool(re.search(r"rebuil|refresh|rerun|run it again|update the table", t))),
    ("rough count", lambda t: bool(re.search(
        r"\b(most|nearly all|almost every|a dozen or so|quite a few|roughly|a third|all the)\b", t))),
    ("strong words", lambda t: bool(re.search(r"way too|far too|so (high|low)|inflated", t))),
    ("over 25 words", lambda t: len(t.split()) > 25),
]


def cues(rows: list[dict], source: str = "adegen") -> list[dict]:
    """Per cue: how many of `source`'s rated prompts have it, and the share labelled program and
    the mean usefulness with and without it."""
    rows = [r for r in rows if r["source"] == source]
    out = []
    for name, has in CUES:
        split = {True: [r for r in rows if has(r["text"])], False: [r for r in rows if not has(r["text"])]}
        line = {"cue": name, "n": len(split[True])}
        for side, items in (("with", split[True]), ("without", split[False])):
            line[f"program_{side}"] = statistics.mean(r["program"] for r in items) if items else None
            line[f"useful_{side}"] = statistics.mean(r["useful"] for r in items) if items else None
        out.append(line)
    return out


def _pairs(paths: list[Path]) -> list[tuple[Path, Path]]:
    if len(paths) % 2:
        raise SystemExit("give RESULT KEY pairs")
    return list(zip(paths[::2], paths[1::2]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sh = sub.add_parser("sheet")
    sh.add_argument("--tasks", nargs="+", required=True, type=Path)
    sh.add_argument("--per-project", type=int, default=6)
    sh.add_argument("--hand", type=Path)
    sh.add_argument("--seed", default="review")
    sh.add_argument("--out", required=True, type=Path)
    for name in ("score", "cues"):
        sub.add_parser(name).add_argument("pairs", nargs="+", type=Path, metavar="RESULT KEY")
    args = ap.parse_args(argv)
    if args.cmd == "sheet":
        items = [row for d in args.tasks for row in base_prompts(d, args.per_project)]
        if not items:
            print("no base prompts found under " + ", ".join(str(d / "tasks") for d in args.tasks), file=sys.stderr)
            return 2
        if args.hand:
            items += hand_prompts(args.hand)
        sheet, key = make_sheet(items, args.seed)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "sheet.txt").write_text(sheet)
        (args.out / "key.json").write_text(json.dumps(key, indent=1))
        print(f"{len(key)} prompts -> {args.out / 'sheet.txt'} (key: {args.out / 'key.json'})")
        return 0
    pairs = _pairs(args.pairs)
    rows = [r for res, key in pairs for r in labelled(res.read_text().splitlines(), json.loads(key.read_text()))]
    if args.cmd == "cues":
        pct = lambda x: "  -" if x is None else f"{100 * x:3.0f}%"  # noqa: E731
        num = lambda x: "   -" if x is None else f"{x:.2f}"  # noqa: E731
        print(f"{len(pairs)} reviews, {sum(r['source'] == 'adegen' for r in rows)} labels of adegen prompts")
        print(f"{'cue':28s} {'n':>4s}  program with/without  useful with/without")
        for c in cues(rows):
            print(f"{c['cue']:28s} {c['n']:4d}  {pct(c['program_with'])} / {pct(c['program_without'])}"
                  f"          {num(c['useful_with'])} / {num(c['useful_without'])}")
        return 0
    result = summary(rows)
    for source, s in result.items():
        print(f"{source}: {s['n']} prompts, labelled program {100 * s['program_share']:.0f}%, "
              f"natural {s['natural']:.2f}, useful {s['useful']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
