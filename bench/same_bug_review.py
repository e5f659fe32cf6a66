"""Same-bug blind review: adegen's prompts for the bugs of ade-bench's hand-written bug-fix tasks,
beside the hand-written prompts, with no bug on both sides of one sheet.

    python bench/same_bug_review.py print [--runs 2]
    python bench/same_bug_review.py sheets --hand HAND.tsv --out DIR [--sheets 6] [--seed 300]

Why: a mixed sheet of adegen's prompts on the practice projects beside ade-bench's hand-written
reports on Formula 1, Airbnb and inventory projects is split by project as much as by author
(docs/prompts.md). The databases of those projects are not here, so this script writes the
screening's findings for each task's bug by hand (what the task's patch breaks: a points column
doubled, a staging table losing most rows, a row per day and sentiment gone, duplicates per
inventory_id, an account missing) and lets adegen's prompt writer (`prompts.write_prompts`, the
code a build runs) word them. `sheets` splits the bugs in two halves per sheet: the hand-written
prompts (every level the task has) of one half, adegen's prompts at the same levels for the other,
alternating halves between sheets, so a reviewer never sees one bug told twice. HAND.tsv holds one
`task.key<TAB>prompt` per line (e.g. `f1005.base<TAB>...`, from ade-bench's tasks/*/task.yaml).
Score the answers with `python bench/prompt_review.py score RESULT DIR/sN/key.json ...`.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from adegen import prompts  # noqa: E402
from prompt_review import hand_prompts, make_sheet  # noqa: E402


def _values(table, distance, column, observed, expected, changed, total, key, label, **col):
    c = {"name": column, "type": "number", "changed": changed, "now_null": 0, "was_null": 0, "higher": changed,
         "lower": 0, "negated": 0, "rounded": 0,
         "sample": [{"key": [k for k in key.values()], "label": label, "observed": observed, "expected": expected}]}
    c.update(col)
    return {"table": table, "distance": distance, "rows_intact": total, "rows_broken": total,
            "rows_differing": 2 * changed, "key": list(key), "label": "name" if label else None,
            "missing": {"count": 0, "sample": []}, "extra": {"count": 0, "sample": []}, "columns": [c]}


def _lost(table, distance, before, after, key, sample):
    return {"table": table, "distance": distance, "rows_intact": before, "rows_broken": after,
            "rows_differing": before - after, "key": key, "label": None, "extra": {"count": 0, "sample": []},
            "missing": {"count": before - after, "sample": sample}, "columns": []}


def _double(n):
    return {"median": 2.0, "min": 2.0, "max": 2.0, "rows": n}


F1 = ("stg_f1_dataset__results", "driver_points", "constructor_points", "finishes_by_driver", "driver_wins_by_season")
AIRBNB = ("fct_reviews", "mom_agg_reviews", "wow_agg_reviews", "dim_listings_cleansed")
HELIX = ("stg_accounts", "dim_accounts", "fct_monthly_revenue", "mart_account_360")
# task id -> (mutated model, project models, changed tables as the screening measures them)
BUGS = {
    "f1004": ("finishes_by_driver", F1, [_values(
        "finishes_by_driver", 0, "podiums", "0", "197", 610, 857, {"driver_id": "1"}, "Lewis Hamilton",
        higher=0, lower=610)]),
    "f1005": ("constructor_points", F1, [_values(
        "constructor_points", 0, "points", "19245", "9622", 160, 211, {"constructor_id": "6"}, "Ferrari",
        ratio={"median": 2.0, "min": 1.4, "max": 3.1, "rows": 160})]),
    "f1006": ("stg_f1_dataset__results", F1, [
        _values("stg_f1_dataset__results", 0, "points", "50", "25", 7000, 26080, {"result_id": "20"}, None,
                ratio=_double(7000)),
        _values("driver_points", 1, "points", "9210", "4605", 350, 857, {"driver_id": "1"}, "Lewis Hamilton",
                ratio=_double(350)),
        _values("constructor_points", 1, "points", "19245", "9622", 160, 211, {"constructor_id": "6"}, "Ferrari",
                ratio=_double(160))]),
    "f1007": ("stg_f1_dataset__results", F1, [
        _lost("stg_f1_dataset__results", 0, 26080, 9800, ["result_id"], [{"key": ["7"], "label": None}]),
        _lost("driver_wins_by_season", 2, 1100, 0, ["driver_id", "season"], [])]),
    "airbnb009": ("mom_agg_reviews", AIRBNB, [_lost(
        "mom_agg_reviews", 0, 9300, 7100, ["aggregation_date", "review_sentiment"],
        [{"key": ["2019-04-14", "positive"], "label": None}])]),
    "airbnb013": ("fct_reviews", AIRBNB, [_lost(
        "fct_reviews", 0, 410000, 396500, ["review_id"], [{"key": ["51271"], "label": None}])]),
    "analytics_engineering005": ("fact_inventory", ("fact_inventory", "fact_sales", "dim_products"), [{
        **_lost("fact_inventory", 0, 3200, 4100, ["inventory_id"], []), "missing": {"count": 0, "sample": []},
        "duplicates": {"keys": 700, "max_copies": 3, "sample": [{"key": ["1043"], "label": None, "copies": 3}]}}]),
    "helixops_saas011": ("dim_accounts", HELIX, [{
        **_lost("dim_accounts", 0, 24, 23, ["account_id"], [{"key": ["A1007"], "label": "Falcon Works"}]),
        "label": "account_name"}]),
    "helixops_saas013": ("fct_monthly_revenue", HELIX, [_values(
        "fct_monthly_revenue", 0, "recurring_revenue_usd", "2700", "1200", 6, 180,
        {"account_id": "A1001", "revenue_month": "2025-01-01"}, "Helio Systems")]),
}


def _observation(tables: list[dict]) -> SimpleNamespace:
    return SimpleNamespace(observable=True, build_error=False, example=None, compared_table=tables[0]["table"],
                           changed_tables={t["table"]: t["distance"] for t in tables}, details={"tables": tables})


def adegen_prompts(run: int) -> dict[str, dict[str, str]]:
    """adegen's prompts (key -> text) for every bug, as one run of len(BUGS) tasks words them."""
    out = {}
    for order, (task, (model, models, tables)) in enumerate(BUGS.items()):
        req = prompts.PromptRequest(seed=f"{task}:{run}", model=model, project_name=task.rstrip("0123456789"),
                                    model_path=f"models/{model}.sql", observation=_observation(tables),
                                    table=model, model_materialized="table", project_models=models, order=order)
        out[task] = {k: " ".join(v.split()) for k, v in prompts.write_prompts(req).prompts.items()}
    return out


def sheets(hand: list[dict], count: int, seed: int) -> list[tuple[str, list[dict]]]:
    by_task: dict[str, dict[str, str]] = {}
    for row in hand:
        task, _, key = row["id"].partition(".")
        by_task.setdefault(task, {})[key or "base"] = row["text"]
    bugs = [b for b in BUGS if b in by_task]
    out = []
    for k in range(count):
        ours, theirs = adegen_prompts(seed + k), set(bugs[k % 2::2])
        items = []
        for bug in bugs:
            for key, text in by_task[bug].items():
                if bug in theirs:
                    items.append({"source": "hand", "id": f"{bug}.{key}", "text": text})
                elif key in ours[bug]:
                    items.append({"source": "adegen", "id": f"{bug}.{key}", "text": ours[bug][key]})
        out.append(make_sheet(items, f"same-bug:{seed + k}"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    pr = sub.add_parser("print")
    pr.add_argument("--runs", type=int, default=2)
    sh = sub.add_parser("sheets")
    sh.add_argument("--hand", type=Path, required=True)
    sh.add_argument("--out", type=Path, required=True)
    sh.add_argument("--sheets", type=int, default=6)
    sh.add_argument("--seed", type=int, default=300)
    args = ap.parse_args(argv)
    if args.cmd == "print":
        for run in range(args.runs):
            for task, keys in adegen_prompts(run).items():
                for key, text in keys.items():
                    print(f"{run}\t{task}.{key}\t{text}")
        return 0
    for n, (sheet, key) in enumerate(sheets(hand_prompts(args.hand), args.sheets, args.seed), 1):
        d = args.out / f"s{n}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "sheet.txt").write_text(sheet)
        (d / "key.json").write_text(json.dumps(key, indent=1))
        print(f"{d / 'sheet.txt'}: {sum(i['source'] == 'adegen' for i in key)} adegen, "
              f"{sum(i['source'] == 'hand' for i in key)} hand-written (key: {d / 'key.json'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
