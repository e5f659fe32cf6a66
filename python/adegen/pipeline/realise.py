"""Stages "prove" and "write" for one task: `realise_task` turns one proposal into a task
directory - patches, task spec, tests, atomic write, patch round trip, execution proof, commit -
or into nothing at all. It is the one unit the build (and a later bulk mode) calls per task."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from adegen.tasks import output as out
from adegen.tasks.assertions import render_assertions, resolve_placeholders
from adegen.core.errors import AdegenError
from adegen.tasks.patchcheck import TaskPatches, check_task
from adegen.tasks.shape import shape_of
from adegen.propose.facts import models_between
from adegen.tasks.task_yaml import PromptEntry, SeedEntry, Variant, read_task_yaml, update_task_yaml
from adegen.tasks.rebuild import TAG as INCREMENTAL_TAG, Refresh, refresh_for
from adegen.tasks.taskgen import LateRowsStep, TaskPlan, build_task_files, render_solution_sh, unified_diff
from adegen.catalog.retired import check_task as check_retired
from adegen.pipeline.context import RunContext
from adegen.pipeline.record import task_details


@dataclass
class TaskJob:
    """One task to write: the proposal, its id, and its rendered assertion tests (purpose, sql)."""

    proposal: object  # proposals.Proposal
    task_id: str
    tests: list[tuple[str, str]]


def render_tests(ctx: RunContext, proposals: list) -> dict[int, list[tuple[str, str]]]:
    """Assertion SQL for every selected proposal, in one renderer call (the package's macros).
    A renderer failure is dbt's error on a project discovery already parsed: it ends the run
    (exit 2) rather than writing tasks whose pattern needs an assertion without it."""
    entries, owners = [], []
    for p in proposals:
        for t in p.assertion_tests:
            try:
                args = resolve_placeholders(t["args"], t["context"])
            except AdegenError as exc:
                ctx.ui.warn(f"{p.pattern_id}: assertion {t['type']} skipped ({exc})")
                continue
            entries.append({"type": t["type"], "args": args})
            owners.append(p.number)
    out: dict[int, list[tuple[str, str]]] = {p.number: [] for p in proposals}
    if not entries:
        return out
    rendered = render_assertions(ctx.project.project_dir, ctx.project.name, entries)
    for owner, item in zip(owners, rendered):
        out[owner].append(item)
    return out


def task_plan(ctx: RunContext, job: TaskJob):
    """The TaskPlan of one job: every prompt level, every graded table (the compared table and
    the tables a medium/hard prompt names, each rebuilt by test_setup), the run's variant."""
    p, plan, project, opts = job.proposal, ctx.output, ctx.project, ctx.opts
    variant = Variant(db_type=project.adapter_type, db_name=project.db_name, project_name=project.name,
                      project_dir=plan.project_dir_field, extra=ctx.backend.variant_fields(opts))
    tables = p.graded_tables()
    rebuild = _models_to_rebuild(ctx, p, tables)
    return TaskPlan(
        task_id=job.task_id, description=p.description,
        prompts=[PromptEntry(lv.key, lv.text) for lv in p.prompt_levels()],
        difficulty=p.difficulty, tags=p.tags, test_setup_models=rebuild,
        solution_seeds=[SeedEntry(t) for t in tables], variant=variant, seed_based=plan.seed_based,
        status="ready" if ctx.validator is not None else "dev", solution_rebuild=p.solution_rebuild,
        max_test_timeout_sec=120 if plan.seed_based else None, late_rows=_late_rows(project.project_dir, p),
        # the proof grades the fix without this refresh too; `_settle_refresh` keeps it only where needed
        full_refresh=refresh_for(rebuild, ctx.discovery.get("models", [])),
    )


def _late_rows(project_dir, p) -> LateRowsStep | None:
    """The late rows the screen of an is_incremental() slip loaded (validate.duckdb.laterows); a
    seed's lines start on a line of their own (a CSV without a final newline gets one first)."""
    late = (getattr(getattr(p, "observation", None), "details", None) or {}).get("late_rows")
    if not late:
        return None
    seed, lines = str(late.get("seed_file") or ""), str(late.get("csv") or "")
    if seed:
        data = (Path(project_dir) / seed).read_bytes()
        newline = "\r\n" if data.endswith(b"\r\n") else "\n"
        lines = ("" if data.endswith(b"\n") or not data else newline) + lines.replace("\n", newline)
    return LateRowsStep(str(late.get("sql") or ""), seed, lines)


def _models_to_rebuild(ctx: RunContext, p, tables: list[str]) -> list[str]:
    """The proposal's test_setup models, plus the models between the mutated model and every other
    graded table (DAG order kept: depth, then name, as models_between orders them)."""
    out = list(p.test_setup_models)
    starts = {s.table: s.unique_id for s in getattr(p, "siblings", ())}  # a sibling's table: from its model
    for table in tables[1:]:
        out += [m for m in models_between(ctx.discovery, starts.get(table, p.model_unique_id), table) if m not in out]
    if len(tables) == 1:
        return out
    depth = {m["name"]: int(m.get("depth", 0) or 0) for m in ctx.discovery.get("models", [])}
    return sorted(out, key=lambda m: (depth.get(m, 0), m))


@dataclass
class PreparedTask:
    """A task written and proven in its temp dir, not yet renamed into place (`commit_task`)."""

    job: TaskJob
    writer: object  # output.TaskWriter
    files: object  # taskgen.TaskFiles
    check: object  # patchcheck.PatchCheck
    proven: bool
    detail: str
    proof: object  # validate Proof or None
    shape: object = None  # tasks.shape.Shape: the files and lines the change touches
    refresh: list = field(default_factory=list)  # what solution.sh rebuilds in full (tasks.rebuild)

    def discard(self) -> None:
        self.writer.discard()


def realise_task(ctx: RunContext, job: TaskJob) -> dict | None:
    """Write one task atomically and prove it; the task's --json entry, or None when the patch
    round trip fails (nothing is left behind and the id stays free). Needs ctx.output."""
    prepared = prepare_task(ctx, job)
    return None if prepared is None else commit_task(ctx, prepared)


def prepare_task(ctx: RunContext, job: TaskJob) -> PreparedTask | None:
    """Files, patch round trip and proof of one task in its temp dir (unproven: status dev there);
    None when the round trip fails (nothing left behind). Safe to call from several threads at
    once for different task ids: it touches only its own temp dir and the validator."""
    p, plan = job.proposal, ctx.output
    pattern = getattr(p.candidate, "pattern", None)
    check_retired(p.pattern_id, str((getattr(pattern, "rewrite", None) or {}).get("operator", "")))
    files = p.file_changes()
    shape = shape_of(files)
    setup_patch = b"".join(unified_diff(old, new, path) for path, old, new in files)
    solution_patch = b"".join(unified_diff(new, old, path) for path, old, new in files)
    spec = task_plan(ctx, job)
    task_files = build_task_files(spec, setup_patch, solution_patch, job.tests, build_may_fail=p.build_error)
    writer = out.TaskWriter(plan.tasks_dir, job.task_id)
    try:
        writer.write(task_files.files)
        patches = TaskPatches(job.task_id, writer.dir, tuple(files))
        check = check_task(plan.project_root, patches, p.test_setup_models + p.graded_tables(),
                           set(plan.known_models) | set(p.added_models()), workdir=ctx.workroot)
        if not check.ok:
            ctx.ui.warn(f"{job.task_id} dropped: {check.line()}")
            writer.discard()
            return None
        proven, detail, proof = _prove(ctx, job.task_id, writer.dir)
        refresh = _settle_refresh(spec, task_files, writer.dir, proof if proven else None)
        if not proven:
            update_task_yaml(writer.dir / "task.yaml", status="dev")
    except BaseException:
        writer.discard()
        raise
    return PreparedTask(job, writer, task_files, check, proven, detail, proof, shape, refresh)


def _settle_refresh(spec: TaskPlan, files, task_dir: Path, proof) -> list[str]:
    """settle_refresh for a proposal's task (`files`: its taskgen.TaskFiles)."""
    return settle_refresh(spec.full_refresh, spec.solution_rebuild, files.files, task_dir, proof)


def settle_refresh(refresh: Refresh, rebuild: list[str], files: dict[str, bytes], task_dir: Path, proof) -> list[str]:
    """Keep solution.sh's full refresh of incremental tables (tasks.rebuild) only when the task
    needs it: the proof graded the same fix without it and that failed (the broken run's rows stay
    in the table: tagged dbt-incremental). Else the ordinary solution (`rebuild`: its ordinary run)
    the proof graded as that third trial (when it passed) or an unproven task is written as it was
    before; a proof that could not grade that trial (None) keeps the solution it proved. `files`
    (path -> bytes, as written in `task_dir`) is kept equal to the directory. The models the kept
    refresh selects ([] when none is kept). Every kind of task goes through it: slips, purposeful
    changes and data changes."""
    if not refresh:
        return []
    fails = None if proof is None else proof.fixed_only_fails
    if fails is True:
        tags = read_task_yaml(task_dir / "task.yaml").tags
        update_task_yaml(task_dir / "task.yaml", tags=list(dict.fromkeys([*tags, INCREMENTAL_TAG])))
        files["task.yaml"] = (task_dir / "task.yaml").read_bytes()
        return list(refresh.select)
    if fails is None and proof is not None:
        return list(refresh.select)
    files["solution.sh"] = render_solution_sh(rebuild).encode()
    (task_dir / "solution.sh").write_bytes(files["solution.sh"])
    return []


def refresh_entry(refresh: list[str], proof) -> dict:
    """The --json entry's `full_refresh` (none when no refresh was kept): the models the solution
    rebuilds in full, and whether the same fix without it fails (the three states of such a proof)."""
    if not refresh:
        return {}
    return {"full_refresh": {"models": list(refresh),
                             "fix_without_it_fails": None if proof is None else proof.fixed_only_fails}}


def commit_task(ctx: RunContext, prepared: PreparedTask) -> dict:
    """Rename a prepared task into place; its --json entry (details for the run record kept)."""
    job, check, proven, detail, proof = prepared.job, prepared.check, prepared.proven, prepared.detail, prepared.proof
    p = job.proposal
    try:
        final = prepared.writer.commit()
    except BaseException:
        prepared.discard()
        raise
    proof_json = None if proof is None else proof_to_json(proof, ctx.backend)
    ctx.report.task_details[job.task_id] = task_details(p, proof)
    return {
        "task_id": job.task_id, "path": str(final), "model": p.model, "pattern_id": p.pattern_id,
        "family": p.family, "difficulty": p.difficulty, "proposal": p.number,
        "status": "ready" if proven else "dev", "proven": proven, "proof_detail": detail, "proof": proof_json,
        "proof_label": (detail if proven else "unproven"),
        "patch_check": {"setup": check.setup, "solution": check.solution, "roundtrip": check.roundtrip,
                        "models": check.models_ok, "line": check.line()},
        "files": sorted(str(Path(final, k).relative_to(final)) for k in prepared.files.files),
        "change": prepared.shape.to_json() if prepared.shape is not None else None,
        **refresh_entry(prepared.refresh, proof),
    }


def proof_to_json(proof, backend) -> dict:
    return {"ok": bool(proof.ok), "broken_fails": bool(proof.broken_fails),
            "solved_passes": bool(proof.solved_passes), "fixed_only_fails": proof.fixed_only_fails,
            "seeds": list(proof.seeds),
            "expected_tests": int(proof.expected_tests), "detail": str(proof.detail),
            "seconds": {k: round(float(v), 2) for k, v in (proof.seconds or {}).items()},
            "outcome": proof.outcome.id if proof.outcome else None, **backend.proof_fields}


def _prove(ctx: RunContext, task_id: str, task_dir: Path) -> tuple[bool, str, object]:
    """(proven, detail, Proof or None) of the task in its temp dir; never raises AdegenError."""
    validator, backend, plan = ctx.validator, ctx.backend, ctx.output
    if validator is None:
        return False, f"unproven: {ctx.unproven_reason()}", None
    if plan.db_file is None and backend.file_based:
        return False, "unproven: no database file to prove against", None
    ctx.ui.say(f"Proving {task_id} (broken must fail, solved must pass)...")
    try:
        proof = validator.prove(task_dir, plan.project_root, plan.db_file)
    except AdegenError as exc:
        return False, f"unproven: {exc}", None
    if not proof.ok:
        return False, proof.detail, proof  # validate.proof: "unproven: <why>"
    return True, backend.proof_label, proof  # Snowflake: "proven on emulator", never "on Snowflake"
