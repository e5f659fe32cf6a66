"""The fast proof of the DuckDB Validator (`PreparedProof`, a validate.proof strategy): when its
assumptions hold, a proof only exports seeds and grades both states with ade-bench's procedure
replayed in one warm worker (architecture.md, "prove fast path"). Anything else falls back to the
full emulation (validate.fullprove), with the reason.

The database a task names may be the one `prepare_database` wrote, or the user's own file
(`--db-path`): ade-bench copies that file as is, model tables included, and runs setup.sh's `dbt run`
on it. That equals the intact build of the validator (which started from a copy of the same file,
model relations dropped) for every table and view model; it does not for incremental models whose
tables the file holds (they run incrementally from them) nor when a mutated model fails to build (the
file's old table stays). When the file holds incremental model tables, the baseline is built from
the user's tables instead (validate.userbase: the file after one intact `dbt run`) and so is every
broken state, which reproduces both; otherwise those cases fall back.
"""
from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import replace
from pathlib import Path

from adegen.dbt.gradable import make_gradable
from adegen.dbt.packages import package_entries
from adegen.dbt.scratch import differing_files, tree_stats
from adegen.tasks.gnupatch import apply_patch
from adegen.tasks.taskgen import SAME_MTIME
from adegen.adebench.procedure.emulate import plan_script
from adegen.validate.duckdb import proving
from adegen.validate.duckdb.fullprove import DBT_CLI_STARTUP, DuckDBRun
from adegen.validate.duckdb.jobs import GradeJob, StateJob
from adegen.validate.rules.proof import Fallback, GradedTrials, ProveRequest, SolvedState

# setup.sh's patch may carry the options that leave no trace (taskgen.SETUP_PATCH): none changes
# what the patch does to the files
_QUIET = r"(?:\s+(?:--silent|--no-backup-if-mismatch|--reject-file=-))*"
_PATCH_LINE = {
    "setup": re.compile(r"^patch\s+-p1" + _QUIET + r"""\s*<\s*(['"]?)/app/setup/changes\.patch\1\s*$"""),
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
    """The project paths a patch touches (a file it adds or removes too; `/dev/null`, the other
    side of such a file, is none)."""
    out = set()
    for ln in _read(patch).splitlines():
        if ln.startswith(("+++ ", "--- ")):
            name = ln[4:].split("\t", 1)[0].strip()
            if name != "/dev/null":
                out.add(name.split("/", 1)[1] if "/" in name else name)
    return out


def mutant_key(rel_path: str, data: bytes) -> str:
    return hashlib.sha1(rel_path.encode() + b"\0" + data).hexdigest()[:24]


def fingerprint(path: Path) -> tuple[int, int] | None:
    try:
        st = Path(path).stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _database_ok(run: DuckDBRun, db_file: Path) -> str | None:
    """Why the fast path cannot start from `db_file` (None: it can)."""
    fp = fingerprint(db_file)
    if fp is None:
        return f"no database file {db_file}"
    files = run.files
    if files.prepared.get(str(db_file.resolve())) == fp:
        return None
    if files.source is not None and db_file.resolve() == files.source.resolve():
        if files.source_fingerprint != fp:
            return "the database file changed since the run started"
        base = run.base
        held = {(s.lower(), a.lower()) for s, a in base.user_relations}
        incremental = sorted(m["alias"] for m in base.models.values() if m["materialized"] == "incremental"
                             and (m["schema"].lower(), m["alias"].lower()) in held)
        if incremental and not base.from_user:
            return (f"the database file holds incremental model tables ({', '.join(incremental)}), which "
                    "ade-bench's `dbt run` updates incrementally from it")
        return None
    return "the database file was neither written by prepare_database nor the project's own"


def eligible(run: DuckDBRun, req: ProveRequest) -> tuple[list[str] | None, str]:
    """The touched paths (models, and a purposeful change's properties file) when the fast path's
    assumptions hold, else (None, why)."""
    task_dir, spec, project_copy, db_file = req.task_dir, req.spec, req.project_copy, req.db_file
    why = _database_ok(run, db_file)
    if why:
        return None, why
    if spec.db_name != run.project.db_name:
        return None, "the task names another database"
    setup = plan_script(_read(task_dir / "setup.sh"))
    if setup is None or not all(
            (k == "dbt" and val in (["deps"], ["seed"], ["run"])) or
            (k == "bash" and all(_PATCH_LINE["setup"].match(x) or x == SAME_MTIME for x in _lines(val)))
            for k, val in setup):
        return None, "setup.sh is not the patch + dbt deps/seed/run script adegen writes"
    sol = plan_script(_read(task_dir / "solution.sh"))
    if sol is None or not all(k == "dbt" or all(_PATCH_LINE["solution"].match(x) for x in _lines(val))
                              for k, val in sol):
        return None, "solution.sh is not a patch + dbt script"
    if plan_script(spec.test_setup or "") is None:
        return None, "test_setup needs a shell"
    model_paths = {m["path"] for m in run.base.models.values() if m.get("path")}
    touched = patched_paths(task_dir / "setup" / "changes.patch")
    solved = patched_paths(task_dir / "solutions" / "changes.patch")
    # a purposeful change (pipeline/purpose.py) also documents its purpose in a properties file the
    # solution keeps: a file `dbt run` builds nothing from, left out of both states' builds
    docs = touched - model_paths
    if not touched or not solved <= touched:
        return None, "the patches do not touch the same files"
    if not all(p.endswith((".yml", ".yaml")) for p in docs):
        return None, "a patch touches files other than models"
    if solved != touched - docs or not solved:
        return None, "the patches do not touch the same files"
    if not copy_identical(run, project_copy):
        return None, "the project copy differs from the validated project"
    return sorted(touched), "ok"


def copy_identical(run: DuckDBRun, copy: Path) -> bool:
    """Is `copy` the validated project (the shared copy policy; dbt_project.yml made gradable;
    profiles/packages files aside, packages a subset)?"""
    copy = Path(copy).resolve()
    sig = tuple(sorted((r, st.st_size, st.st_mtime_ns) for r, st in tree_stats(copy).items()))
    if run.files.identical.get(str(copy)) == sig:
        return True
    p = run.project
    orig = Path(p.project_dir).resolve()
    diff = differing_files(copy, orig, allowed=PROJECT_LOCAL)
    if diff and diff != ["dbt_project.yml"]:
        return False
    if diff and (copy / "dbt_project.yml").read_text() != make_gradable((orig / "dbt_project.yml").read_text()).text:
        return False
    roots = tuple(str(d).rstrip("/") + "/" for a in ("model_paths", "macro_paths", "seed_paths", "test_paths")
                  for d in getattr(p, a, None) or []) + ("snapshots/", "analyses/")
    mine = tree_stats(copy)
    if any((rel == "dbt_project.yml" or rel.startswith(roots)) and rel not in mine for rel in tree_stats(orig)):
        return False
    if not all(e in package_entries(orig) for e in package_entries(copy)):
        return False
    run.files.identical[str(copy)] = sig
    return True


def patched_states(task_dir: Path, project_copy: Path, touched: list[str], scratch: Path
                   ) -> tuple[tuple[dict[str, bytes], dict[str, bytes] | None] | None, str]:
    """({path: the text setup.sh's patch leaves}, None when the solution patch restores every file
    byte for byte, else {path: the text it leaves}: a purposeful change's solution keeps the purpose)."""
    for rel in touched:
        (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(project_copy / rel, scratch / rel)
    if not apply_patch(task_dir / "setup" / "changes.patch", scratch).ok:
        return None, "setup/changes.patch does not apply to the project copy"
    mutants = {rel: (scratch / rel).read_bytes() for rel in touched}
    if not apply_patch(task_dir / "solutions" / "changes.patch", scratch).ok:
        return None, "solutions/changes.patch does not apply after the setup patch"
    solved = {rel: (scratch / rel).read_bytes() for rel in touched}
    restores = all(solved[rel] == (project_copy / rel).read_bytes() for rel in touched)
    return (mutants, None if restores else solved), ""


def _model_tables(run: DuckDBRun) -> tuple:
    """(model name, where dbt builds it) of every model with a relation (the names a task's
    solution seeds take)."""
    return tuple(sorted(run.base.relations().by_name.items()))


class PreparedProof:
    """The fast path (validate.proof's `ProofStrategy`): the solved state is the intact build
    (seeds exported from it at once), or, for a purposeful change whose solution keeps the purpose,
    the intact build with the solved models and their downstream rebuilt in a worker (the broken
    state's job with the solved texts); the broken state is the screen's database of the same mutant
    when there is one, else rebuilt in a worker while the seeds are written; unstable tables come
    from the determinism guard (validate.determinism). Both states are graded in warm workers."""

    name = "prepared"
    grading = "(inprocess, prepared)"
    label = body_extra = None

    def __init__(self, run: DuckDBRun):
        self.run = run
        self._broken = None   # the broken state's database, or the future of its build

    def workdir(self, req: ProveRequest) -> Path:
        return self.run.workdir(req)

    def solved_state(self, req: ProveRequest, work: Path) -> SolvedState:
        run = self.run
        touched, why = eligible(run, req)
        if touched is None:
            raise Fallback(why)
        states, why = patched_states(req.task_dir, req.project_copy, touched, work / "patched")
        if states is None:
            raise Fallback(why)
        mutants, solved = states
        model_paths = {m["path"] for m in run.base.models.values()}
        models = [rel for rel in touched if rel in model_paths]
        cached = run.root / "screens" / f"{mutant_key(touched[0], mutants[touched[0]])}.duckdb"
        if len(touched) == 1 and solved is None and cached.is_file():
            self._broken = str(cached)
        else:
            self._broken = self._build(req, work, {rel: mutants[rel] for rel in models})
        # the solution restores the intact project: its state is the intact build; a purposeful
        # change's solution keeps the purpose: its models rebuilt on the intact build as the broken
        # state's are (the same job, the solved texts)
        db = Path(run.base.baseline_db) if solved is None else self._solved_db(
            self._build(req, work / "solved-state", {rel: solved[rel] for rel in models}))
        problems, excludes = run.seed_tables(db, req.tables)
        return SolvedState(db, problems, excludes, run.volatile_notes(req.tables), run.windows(req.tables))

    def _build(self, req: ProveRequest, work: Path, texts: dict[str, bytes]):
        """The future of a state job: the intact build, `texts` written, those models and their
        downstream rebuilt."""
        run = self.run
        state = StateJob("broken", str(req.task_dir), str(req.project_copy), str(work), tuple(texts.items()),
                         tuple(req.tables), req.spec.project_name, _model_tables(run), run.budget)
        return run.workers.submit(proving.state_job, run.cfg, run.base, state, deadline=run.deadline)

    def _solved_db(self, fut) -> Path:
        res = self.run.workers.result(fut, "the solved state's build")
        if not res.get("ok") or not res.get("build_ok"):
            raise Fallback("the solved state did not build on the intact one: "
                           + str(res.get("reason") or res.get("build_output") or "")[-300:])
        return Path(res["db"])

    def write_seeds(self, req: ProveRequest, solved: SolvedState) -> None:
        self.run.write_seeds(req, solved)

    def _broken_db(self, req: ProveRequest) -> str:
        if isinstance(self._broken, str):
            return self._broken
        run = self.run
        broken = run.workers.result(self._broken, "the broken state's build")
        if not broken.get("ok"):
            raise Fallback(broken.get("reason", "broken state failed"))
        source = run.files.source
        if (not broken.get("build_ok") and not run.base.from_user and source is not None
                and req.db_file.resolve() == source.resolve()):
            raise Fallback("a mutated model fails to build: ade-bench keeps your database's old table")
        return broken["db"]

    def grade(self, req: ProveRequest, solved: SolvedState, excludes: dict) -> GradedTrials:
        """none and sage graded at once, each in its own worker (each has its own grading root)."""
        run, base = self.run, self.run.base
        grade = GradeJob(str(req.task_dir), str(req.project_copy), self._broken_db(req), bool(base.seed_based),
                         base.baseline_db, req.spec.project_name, _model_tables(run))
        futs = {a: run.workers.submit(proving.grade_job, run.cfg, replace(grade, agents=(a,)), deadline=run.deadline)
                for a in grade.agents}
        if req.fixed_only is not None:  # the fix without its full refresh (tasks.rebuild): sage on the copy
            futs["fixed_only"] = run.workers.submit(proving.grade_job, run.cfg, replace(
                grade, task_dir=str(req.fixed_only), agents=("sage",)), deadline=run.deadline)
        res: dict = {}
        for agent, fut in futs.items():
            r = run.workers.result(fut, f"grading ({agent})")
            if not r.get("ok"):
                raise Fallback(r.get("reason", "grading failed"))
            res[agent] = r["sage" if agent == "fixed_only" else agent]
        # the harness runs dbt as CLI calls without partial parsing and reloads every seed
        calls = res["sage"].test_dbt_calls
        extra = (DBT_CLI_STARTUP * calls + calls * float(base.seconds.get("parse", 0.0))
                 + (float(base.seconds.get("seed", 0.0)) if base.seed_based else 0.0))
        return GradedTrials(res["none"], res["sage"], extra, fixed_only=res.get("fixed_only"))
