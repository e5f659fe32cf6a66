"""Same tasks before and after a behaviour-neutral change.

`build` runs adegen on the example project and the three practice projects (each copied to a scratch
folder first) and writes every task file's bytes under OUT; `diff` compares two such folders and
exits 1 when a task differs. Run `build` at the old commit (a worktree, PYTHONPATH=<it>/python) and
at the new one, then `diff`:

    git worktree add /tmp/old <rev>
    PYTHONPATH=/tmp/old/python python bench/same_tasks.py build /tmp/same-old
    python bench/same_tasks.py build /tmp/same-new
    python bench/same_tasks.py diff /tmp/same-old /tmp/same-new

What is compared: every file of every task folder (task.yaml, prompts, patches, setup and solution
scripts, tests, solution seeds), task.yaml's measured max_test_timeout_sec excepted. What is not: the run records, the review page and the project copy's
database, which carry timings, paths or DuckDB's page layout.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"

# name -> (project folder under the corpus, or None for the example; db name, or None for the example's
# profiles.yml default)
PROJECTS: dict[str, tuple[str | None, str | None]] = {
    "example": (None, None),
    "jaffle_shop": ("jaffle_shop_duckdb", "jaffle_shop"),
    "helixops_saas": ("adebench_helixops_saas", "helixops_saas"),
    "intercom": ("adebench_intercom", "intercom"),
}

# Task-folder files that hold run-dependent bytes.
SKIPPED_SUFFIXES = (".duckdb", ".wal")
# task.yaml's max_test_timeout_sec is measured from the proof's own test run (a multiple of its wall time,
# so it moves with the machine's load): compared as a placeholder.
MEASURED = re.compile(rb"^(max_test_timeout_sec:) *\d+$", re.M)


def _build_one(name: str, src: Path, db_name: str | None, scratch: Path, out: Path) -> int:
    if db_name is None:
        project = src  # the example installs adegen as `local: ../`: it builds where it stands
    else:
        project = scratch / name
        shutil.copytree(src, project, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages"))
    tasks_out = scratch / f"{name}-tasks"
    cmd = [sys.executable, "-m", "adegen.build", str(project), "--output-dir", str(tasks_out),
           "--pick", "all", "--yes", "--no-report"]
    if db_name:
        cmd += ["--db-path", str(project), "--db-name", db_name]
    print(f"[{name}] {' '.join(cmd)}", flush=True)
    rc = subprocess.call(cmd, stdout=subprocess.DEVNULL)
    digest = _digest(tasks_out / "tasks") if (tasks_out / "tasks").is_dir() else {}
    if digest:  # the files themselves, for `diff -r` when a digest differs
        shutil.rmtree(out / name, ignore_errors=True)
        shutil.copytree(tasks_out / "tasks", out / name, ignore=shutil.ignore_patterns(*("*" + s for s in SKIPPED_SUFFIXES)))
    (out / f"{name}.json").write_text(json.dumps({"rc": rc, "files": digest}, indent=1, sort_keys=True))
    print(f"[{name}] exit {rc}, {len(digest)} task files", flush=True)
    return rc


def _digest(tasks_dir: Path) -> dict[str, str]:
    files: dict[str, str] = {}
    for path in sorted(tasks_dir.rglob("*")):
        if path.is_file() and not path.name.endswith(SKIPPED_SUFFIXES):
            data = path.read_bytes()
            if path.name == "task.yaml":
                data = MEASURED.sub(rb"\1 <measured>", data)
            files[str(path.relative_to(tasks_dir))] = hashlib.sha256(data).hexdigest()
    return files


def build(out: Path, only: list[str], corpus: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    env_note = os.environ.get("PYTHONPATH", "")
    print(f"adegen from: {env_note or 'the installed package'}", flush=True)
    # One fixed scratch folder, so paths written into tasks are the same in both runs (run them one
    # after the other, not side by side).
    scratch = Path(tempfile.gettempdir()) / "adegen-same-tasks"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    worst = 0
    try:
        for name, (folder, db) in PROJECTS.items():
            if only and name not in only:
                continue
            src = corpus / folder if folder else REPO / "integration_tests"
            worst = max(worst, _build_one(name, src, db, scratch, out))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return worst


def diff(old: Path, new: Path) -> int:
    differ = 0
    for name in PROJECTS:
        a, b = old / f"{name}.json", new / f"{name}.json"
        if not (a.exists() and b.exists()):
            print(f"{name}: missing in {'old' if not a.exists() else 'new'}")
            continue
        fa, fb = json.loads(a.read_text()), json.loads(b.read_text())
        changed = sorted(k for k in set(fa["files"]) | set(fb["files"])
                         if fa["files"].get(k) != fb["files"].get(k))
        status = "identical" if not changed and fa["rc"] == fb["rc"] else "DIFFERENT"
        print(f"{name}: {status} ({len(fb['files'])} files, exit {fa['rc']} -> {fb['rc']})")
        for k in changed[:20]:
            print(f"  {k}")
        if changed and (old / name).is_dir() and (new / name).is_dir():
            print(f"  (diff -r {old / name} {new / name})")
        differ += bool(changed) or fa["rc"] != fb["rc"]
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("out", type=Path)
    b.add_argument("--only", nargs="*", default=[], choices=list(PROJECTS))
    b.add_argument("--corpus", type=Path, default=CORPUS, help="the practice corpus (default: %(default)s)")
    d = sub.add_parser("diff")
    d.add_argument("old", type=Path)
    d.add_argument("new", type=Path)
    args = parser.parse_args()
    if args.cmd == "build":
        return build(args.out, args.only, args.corpus)
    return diff(args.old, args.new)


if __name__ == "__main__":
    sys.exit(main())
