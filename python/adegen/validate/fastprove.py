"""The fast proof of the DuckDB Validator: when its assumptions hold, a proof only exports seeds and
grades both states with ade-bench's procedure replayed in one warm worker (architecture.md,
"prove fast path"). Anything else falls back to the full emulation, with the reason.

The database a task names may be the one `prepare_database` wrote, or the user's own file
(`--db-path`): ade-bench copies that file as is, model tables included, and runs setup.sh's `dbt run`
on it. That equals the intact build of the validator (which started from a copy of the same file,
model relations dropped) for every table and view model; it does not for incremental models whose
tables the file holds (they run incrementally from them) nor when a mutated model fails to build (the
file's old table stays): those fall back.
"""
from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ..dbt.gradable import make_gradable
from ..dbt.packages import package_entries
from ..dbt.scratch import differing_files, tree_stats
from ..harness.emulate import plan_script
from ..harness.seeds import export_solution_seeds
from ..harness.testgen import GradingSpec
from .contract import Proof
from .jobs import GradeJob, StateJob
from .taskyaml import update_task_yaml
from .verdict import ProofInput, finish_proof

DBT_CLI_STARTUP = 3.0        # seconds a dbt subprocess costs over an in-process call
_PATCH_LINE = {
    "setup": re.compile(r"""^patch\s+-p1\s*<\s*(['"]?)/app/setup/changes\.patch\1\s*$"""),
    "solution": re.compile(r"""^patch\s+-p1\s*<\s*(['"]?)/sage/solutions/changes\.patch\1\s*$"""),
}
# files a project copy may legitimately have different from the project
PROJECT_LOCAL = frozenset({"profiles.yml", "packages.yml", "package-lock.yml", "dependencies.yml"})


def _read(path: Path) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _lines(text: str) -> list[str]:
    return [x.strip() for x in text.splitlines() if x.strip() and not x.strip().startswith("#")]


def patched_paths(patch: Path) -> set[str]:
    out = set()
    for ln in _read(patch).splitlines():
        if ln.startswith(("+++ ", "--- ")):
            name = ln[4:].split("\t", 1)[0].strip()
            out.add(name if name == "/dev/null" else name.split("/", 1)[1] if "/" in name else name)
    return out


def mutant_key(rel_path: str, data: bytes) -> str:
    return hashlib.sha1(rel_path.encode() + b"\0" + data).hexdigest()[:24]


def ordered_union(a: list[str], b: list[str]) -> list[str]:
    return list(dict.fromkeys([*a, *b]))


def existing_excludes(spec: GradingSpec, table: str) -> list[str]:
    return next((list(s.exclude_columns or []) for s in spec.solution_seeds if s.table_name == table), [])


def fingerprint(path: Path) -> tuple[int, int] | None:
    try:
        st = Path(path).stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _database_ok(v, db_file: Path) -> str | None:
    """Why the fast path cannot start from `db_file` (None: it can)."""
    fp = fingerprint(db_file)
    if fp is None:
        return f"no database file {db_file}"
    if v._prepared.get(str(db_file.resolve())) == fp:
        return None
    if v.db_source is not None and db_file.resolve() == v.db_source.resolve():
        if v.db_fingerprint != fp:
            return "the database file changed since the run started"
        base = v._base
        held = {(s.lower(), a.lower()) for s, a in base.user_relations}
        incremental = sorted(m["alias"] for m in base.models.values() if m["materialized"] == "incremental"
                             and (m["schema"].lower(), m["alias"].lower()) in held)
        if incremental:
            return (f"the database file holds incremental model tables ({', '.join(incremental)}), which "
                    "ade-bench's `dbt run` updates incrementally from it")
        return None
    return "the database file was neither written by prepare_database nor the project's own"


@dataclass(frozen=True)
class ProveRequest:
    """One `Validator.prove` call."""

    task_dir: Path
    spec: GradingSpec
    project_copy: Path
    db_file: Path
    mode: str = "inprocess"


def eligible(v, req: ProveRequest) -> tuple[list[str] | None, str]:
    """The touched model paths when the fast path's assumptions hold, else (None, why)."""
    task_dir, spec, project_copy, db_file = req.task_dir, req.spec, req.project_copy, req.db_file
    base = v._base
    if base is None or not base.ok:
        return None, "no baseline"
    why = _database_ok(v, db_file)
    if why:
        return None, why
    if spec.db_name != v.project.db_name:
        return None, "the task names another database"
    setup = plan_script(_read(task_dir / "setup.sh"))
    if setup is None or not all(
            (k == "dbt" and val in (["deps"], ["seed"], ["run"])) or
            (k == "bash" and all(_PATCH_LINE["setup"].match(x) for x in _lines(val)))
            for k, val in setup):
        return None, "setup.sh is not the patch + dbt deps/seed/run script adegen writes"
    sol = plan_script(_read(task_dir / "solution.sh"))
    if sol is None or not all(k == "dbt" or all(_PATCH_LINE["solution"].match(x) for x in _lines(val))
                              for k, val in sol):
        return None, "solution.sh is not a patch + dbt script"
    if plan_script(spec.test_setup or "") is None:
        return None, "test_setup needs a shell"
    model_paths = {m["path"] for m in base.models.values() if m.get("path")}
    touched = patched_paths(task_dir / "setup" / "changes.patch")
    if not touched or touched != patched_paths(task_dir / "solutions" / "changes.patch"):
        return None, "the patches do not touch the same files"
    if not set(touched) <= model_paths:
        return None, "a patch touches files other than models"
    if not copy_identical(v, project_copy):
        return None, "the project copy differs from the validated project"
    return sorted(touched), "ok"


def copy_identical(v, copy: Path) -> bool:
    """Is `copy` the validated project (the shared copy policy; dbt_project.yml made gradable;
    profiles/packages files aside, packages a subset)?"""
    copy = Path(copy).resolve()
    sig = tuple(sorted((r, st.st_size, st.st_mtime_ns) for r, st in tree_stats(copy).items()))
    if v._copy_ok.get(str(copy)) == sig:
        return True
    orig = Path(v.project.project_dir).resolve()
    diff = differing_files(copy, orig, allowed=PROJECT_LOCAL)
    if diff and diff != ["dbt_project.yml"]:
        return False
    if diff and (copy / "dbt_project.yml").read_text() != make_gradable((orig / "dbt_project.yml").read_text()).text:
        return False
    p = v.project
    roots = tuple(str(d).rstrip("/") + "/" for a in ("model_paths", "macro_paths", "seed_paths", "test_paths")
                  for d in getattr(p, a, None) or []) + ("snapshots/", "analyses/")
    mine = tree_stats(copy)
    if any((rel == "dbt_project.yml" or rel.startswith(roots)) and rel not in mine for rel in tree_stats(orig)):
        return False
    if not all(e in package_entries(orig) for e in package_entries(copy)):
        return False
    v._copy_ok[str(copy)] = sig
    return True


def apply_patches(task_dir: Path, project_copy: Path, touched: list[str], scratch: Path
                  ) -> tuple[dict[str, bytes] | None, str]:
    """Apply setup/changes.patch to copies of the touched files ({path: mutant bytes}), and check
    that solutions/changes.patch restores them byte for byte."""
    for rel in touched:
        (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(project_copy / rel, scratch / rel)

    def patch(name: str) -> bool:
        with open(task_dir / name, "rb") as fin:
            return subprocess.run(["patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch"],
                                  cwd=scratch, stdin=fin, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL).returncode == 0

    if not patch("setup/changes.patch"):
        return None, "setup/changes.patch does not apply to the project copy"
    mutants = {rel: (scratch / rel).read_bytes() for rel in touched}
    if not patch("solutions/changes.patch") or any(
            (scratch / rel).read_bytes() != (project_copy / rel).read_bytes() for rel in touched):
        return None, "the solution patch is not the exact inverse of the setup patch"
    return mutants, ""


def _grade_both(v, grade: GradeJob) -> tuple[dict | None, str]:
    """none and sage graded at once, each in its own worker (each has its own grading root):
    ({"none": TrialSummary, "sage": TrialSummary}, "") or (None, why)."""
    from . import proving

    futs = {a: v.submit(proving.grade_job, v.cfg, replace(grade, agents=(a,)), deadline=v.prove_deadline())
            for a in grade.agents}
    res: dict = {}
    for agent, fut in futs.items():
        r = v.result(fut, f"grading ({agent})")
        if not r.get("ok"):
            return None, r.get("reason", "grading failed")
        res[agent] = r[agent]
    return res, ""


def prove_fast(v, req: ProveRequest, touched: list[str]) -> tuple[Proof | None, str]:
    """(Proof, "") or (None, why) when the caller must use the full emulation. The solved state
    is the intact build (seeds exported from it at once); the broken state is the screen's
    database of the same mutant when there is one, else rebuilt; unstable tables come from the
    determinism guard (validate.determinism)."""
    from . import proving

    task_dir, spec, project_copy, db_file = req.task_dir, req.spec, req.project_copy, req.db_file
    t0 = time.monotonic()
    base = v._base
    tables = [s.table_name for s in spec.solution_seeds] + [a for s in spec.solution_seeds for a in s.alternates or []]
    work = v.root / "prove" / task_dir.name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    tables_all = tuple(sorted({m["alias"].lower() for m in base.models.values() if m["materialized"] != "ephemeral"}))
    seconds: dict[str, float] = {}
    try:
        mutants, why = apply_patches(task_dir, project_copy, touched, work / "patched")
        if mutants is None:
            return None, why
        broken_db = None
        if len(touched) == 1:
            cached = v.root / "screens" / f"{mutant_key(touched[0], mutants[touched[0]])}.duckdb"
            if cached.is_file():
                broken_db = str(cached)
        state = StateJob("broken", str(task_dir), str(project_copy), str(work), tuple(touched), tuple(tables),
                         spec.project_name, tables_all, v.prove_budget())
        f_broken = None if broken_db else v.submit(proving.state_job, v.cfg, base, state, deadline=v.prove_deadline())
        problems, excludes = v.seed_tables(Path(base.baseline_db), tables)
        if problems:
            return Proof(False, False, False, [], 0, "; ".join(problems), excludes, None, seconds), ""
        export_solution_seeds(Path(base.baseline_db), tables, spec.project_name, task_dir / "seeds")
        seeds = [f"solution__{t}" for t in tables]
        merged = {t: ordered_union(existing_excludes(spec, t), cols) for t, cols in excludes.items()}
        if merged:
            update_task_yaml(task_dir / "task.yaml", exclude_columns=merged)
        if f_broken is not None:
            broken = v.result(f_broken, "the broken state's build")
            if not broken.get("ok"):
                return None, broken.get("reason", "broken state failed")
            if not broken.get("build_ok") and v.db_source is not None and db_file.resolve() == v.db_source.resolve():
                return None, "a mutated model fails to build: ade-bench keeps your database's old table"
            broken_db = broken["db"]
        seconds["solved_state"] = time.monotonic() - t0
        v.progress(f"validate: {task_dir.name}: grading none and sage (inprocess, prepared)")
        t1 = time.monotonic()
        grade = GradeJob(str(task_dir), str(project_copy), broken_db, bool(base.seed_based), base.baseline_db,
                         spec.project_name, tables_all)
        res, why = _grade_both(v, grade)
        seconds["grading"] = time.monotonic() - t1
        if res is None:
            return None, why
        # the harness runs dbt as CLI calls without partial parsing and reloads every seed
        calls = res["sage"].test_dbt_calls
        extra = (DBT_CLI_STARTUP * calls + calls * float(base.seconds.get("parse", 0.0))
                 + (float(base.seconds.get("seed", 0.0)) if base.seed_based else 0.0))
        note = v.volatile_note(tables)
        inp = ProofInput(res["none"], res["sage"], seeds, merged, spec.max_test_timeout_sec, extra,
                         [note] if note else [])
        seconds["total"] = time.monotonic() - t0
        proof = finish_proof(inp, seconds)
        if proof.max_test_timeout_sec:
            update_task_yaml(task_dir / "task.yaml", max_test_timeout_sec=proof.max_test_timeout_sec)
        return proof, ""
    finally:
        shutil.rmtree(work, ignore_errors=True)

