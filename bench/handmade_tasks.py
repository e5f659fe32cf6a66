"""The hand-made bug-fix tasks of ade-bench a blind task review mixes with adegen's, as data.

    python bench/task_review.py hand --ade-bench DIR@REV [DIR@REV ...] [--out FILE]

Each DIR holds ade-bench's `tasks/` (a checkout of dbt-labs/ade-bench, or a copy of some of its
task folders) and REV is the commit its files are from; a file is read from the first DIR that
has it and attributed to that DIR's REV. For every task of BUG_TASKS the builder takes the base
prompt from `tasks/<id>/task.yaml` and the diff from `tasks/<id>/setup/changes.patch`, byte for
byte, and writes `bench/data/handmade_bug_tasks.json` (the default --out): per task its id,
project, base prompt, diff, the task's own description, how the diff was taken, the files' origin
(`dbt-labs/ade-bench@REV:path`, Apache-2.0) and, for two tasks with one bug, `same_bug_as`.

Which tasks: the ones that break a working project with a change to its code and ask for a fix.
Feature requests (add a column, create a model) are not bug fixes; a break made only in the raw
data or in the shipped project itself has no injected diff to show (LEFT_OUT says why per task).

How the bundled file was made (2026-12): the helixops_saas tasks from
/work/shared/corpus/ade-bench-tasks (a copy of dbt-labs/ade-bench @ d739fc3); the other files read
one by one from a stored index of public GitHub repositories, which keeps one version per file,
written to one folder per commit (so every file carries the commit it was read at) and their
lengths checked against the index's.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

REPO = "dbt-labs/ade-bench"
LICENSE = "Apache-2.0"
DEFAULT_OUT = Path(__file__).resolve().parent / "data" / "handmade_bug_tasks.json"

_PATCHED = "setup/changes.patch as is; setup.sh applies it with `patch -p1` and runs dbt"
# task id -> how its diff was taken (what setup.sh does besides the patch, where it does more)
BUG_TASKS: dict[str, str] = {
    "f1004": _PATCHED,
    "f1005": _PATCHED,
    "f1006": "setup/changes.patch as is (the index holds no setup.sh of f1006; its siblings f1005 and "
             "f1007 apply their patch with `patch -p1`)",
    "f1007": _PATCHED,
    "airbnb001": _PATCHED,
    "analytics_engineering002": "setup/changes.patch as is (the index holds no setup.sh of this task)",
    "analytics_engineering005": "setup/changes.patch as is; setup.sh also inserts a second copy of the "
                                "raw inventory_transactions rows of even product_id, so the patch's "
                                "missing dedupe shows; the diff is the patch only",
    "helixops_saas005": _PATCHED,
    "helixops_saas011": _PATCHED,
}
# a task whose bug another bundled task already has: a sheet takes one of the two
SAME_BUG = {"f1006": "f1005"}

LEFT_OUT: dict[str, str] = {
    "helixops_saas013": "the break is an UPDATE of raw_invoice_line_items in setup.sh, no code change: "
                        "shown as a diff it would be the one SQL-statement entry of a sheet, and "
                        "'would an engineer ship this change by mistake' does not apply to it",
    "airbnb009": "no injected change: the bug ships in the project; the only diff is the solution, "
                 "whose reverse would remove a '-- THIS IS THE FIX' comment",
    "airbnb013": "no injected change (status draft): the bug ships in the project and setup.sh "
                 "injects same-date reviews with a python script; the solution is a whole file",
    "airbnb002": "the same patch and error message as airbnb001 (adds 'keep it backwards compatible')",
    "airbnb008": "setup.sh copies in a broken setup/agg.yml that the index does not hold",
    "airbnb006": "renames a CTE; the data does not change and the prompt asks for a naming clean-up",
    "analytics_engineering007": "the break is a type change of the raw products table in setup.sh SQL",
    "asana001": "the break is a type change of the raw task_data table in setup.sh SQL",
    "asana002": "the break is in the raw data, and the prompt asks to change the data",
    "quickbooks001": "the break is a type change of three raw tables in setup.sh SQL",
    "quickbooks003": "quickbooks001's raw-data break under a feature request",
    "helixops_saas001": "feature request ('Add billing_country to dim_accounts.'); so are "
                        "helixops_saas002/003/004/006/014/018",
    "intercom001": "feature request: setup.sh deletes every model and the prompt asks to create them; "
                   "so do intercom002/003",
}


def _read(roots: list[tuple[Path, str]], rel: str) -> tuple[str, str]:
    """The text of `rel` (a path under tasks/) from the first root holding it, with its origin."""
    for root, rev in roots:
        path = root / rel
        if path.is_file():
            return path.read_text(), f"{REPO}@{rev}:{rel}"
    raise FileNotFoundError(rel)


def _base_prompt(task_yaml: str) -> str:
    doc = yaml.safe_load(task_yaml) or {}
    return next(p["prompt"] for p in doc.get("prompts") or [] if p.get("key") == "base")


def task_entry(roots: list[tuple[Path, str]], task_id: str) -> dict:
    """One bundled task, read from the first root holding each of its two files."""
    task_yaml, yaml_from = _read(roots, f"tasks/{task_id}/task.yaml")
    diff, diff_from = _read(roots, f"tasks/{task_id}/setup/changes.patch")
    doc = yaml.safe_load(task_yaml) or {}
    entry = {"id": task_id, "project": (doc.get("variants") or [{}])[0].get("project_name"),
             "prompt": _base_prompt(task_yaml), "diff": diff, "description": doc.get("description"),
             "how": BUG_TASKS[task_id], "source": {"prompt": yaml_from, "diff": diff_from, "license": LICENSE}}
    if task_id in SAME_BUG:
        entry["same_bug_as"] = SAME_BUG[task_id]
    return entry


def parse_roots(specs: list[str]) -> list[tuple[Path, str]]:
    """`DIR@REV` arguments as (dir, rev); a DIR without `@REV` is refused (every file needs its commit)."""
    roots = []
    for spec in specs:
        folder, sep, rev = spec.rpartition("@")
        if not sep or not folder or not rev:
            raise SystemExit(f"--ade-bench wants DIR@REV (the commit DIR's files are from), got {spec!r}")
        roots.append((Path(folder), rev))
    return roots


def build(roots: list[tuple[Path, str]]) -> dict:
    """The whole bundled document: what it is, the tasks, and the tasks left out with why."""
    return {"about": __doc__.split("\n\n")[0].strip() + " Built by `python bench/task_review.py hand`; "
                     "see bench/handmade_tasks.py for how.",
            "tasks": [task_entry(roots, task_id) for task_id in BUG_TASKS],
            "left_out": LEFT_OUT}


def load(path: Path) -> list[dict]:
    """The bundled tasks of a hand file (the `tasks` list; a bare list is read as is)."""
    doc = json.loads(Path(path).read_text())
    return doc["tasks"] if isinstance(doc, dict) else doc


def write(roots: list[tuple[Path, str]], out: Path) -> int:
    try:
        doc = build(roots)
    except FileNotFoundError as missing:
        print(f"not found under any --ade-bench dir: {missing}", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(doc['tasks'])} hand-made bug-fix tasks -> {out}")
    return 0
