"""A task made outside the proposals (an upstream data change, a purposeful change): its files
written atomically, its patch check, its proof, its commit - the steps `realise.realise_task` takes
for a proposal, shared by the stages that make such tasks (pipeline/datachange.py,
pipeline/purpose.py), which differ only in their files and their patch check."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from adegen.core.errors import AdegenError
from adegen.pipeline.context import RunContext
from adegen.pipeline.realise import refresh_entry, settle_refresh
from adegen.pipeline.workspace import prepare
from adegen.tasks import output as out
from adegen.tasks.patchcheck import PatchCheck
from adegen.tasks.rebuild import Refresh
from adegen.tasks.shape import run_figure
from adegen.tasks.task_yaml import update_task_yaml


@dataclass(frozen=True)
class ExtraTask:
    """One task to write: its id, its files (path in the task -> bytes), the patch check of the
    written task directory, and what the proof line says it is."""

    task_id: str
    files: dict[str, bytes]
    check: Callable[[Path], PatchCheck]
    what: str            # "Proving <id> (<what>: broken must fail, <solved> must pass)..."
    solved: str = "solved"
    # the incremental tables solution.sh rebuilds in full (tasks.rebuild; kept only where the fix
    # without it fails: realise.settle_refresh) and its ordinary run of the changed models
    refresh: Refresh = field(default_factory=Refresh)
    rebuild: tuple[str, ...] = ()


@dataclass
class Written:
    """A task written, checked, proven (or not) and committed."""

    path: Path
    check: PatchCheck
    proven: bool
    detail: str
    proof: object        # the validator's Proof, or None
    refresh: list = field(default_factory=list)  # the models solution.sh rebuilds in full


def write_and_prove(ctx: RunContext, task: ExtraTask) -> Written | None:
    """Write, check, prove and commit one task (unproven: status dev); None when its patch check
    fails (nothing is left behind and the id stays free)."""
    prepared = prepare_extra(ctx, task)
    return None if prepared is None else prepared.commit(ctx)


@dataclass
class PreparedExtra:
    """A task written, checked and proven (or not) in its temp dir, not yet renamed into place:
    bulk mode proves several side by side and commits them in order (`commit`)."""

    task: ExtraTask
    writer: object       # output.TaskWriter
    check: PatchCheck
    proven: bool
    detail: str
    proof: object        # the validator's Proof, or None
    refresh: list = field(default_factory=list)  # the models solution.sh rebuilds in full

    def discard(self) -> None:
        self.writer.discard()

    def commit(self, ctx: RunContext) -> Written:
        try:
            final = self.writer.commit()
        except BaseException:
            self.writer.discard()
            raise
        ctx.ui.say(f"{self.task.task_id}: {'proven' if self.proven else self.detail.splitlines()[0]}")
        return Written(final, self.check, self.proven, self.detail, self.proof, self.refresh)


def prepare_extra(ctx: RunContext, task: ExtraTask) -> PreparedExtra | None:
    """Files, patch check and proof of one task in its temp dir (unproven: status dev there); None
    when the patch check fails (nothing left behind). Safe in several threads for different ids:
    it touches only its own temp dir and the validator."""
    plan = ctx.output
    writer = out.TaskWriter(plan.tasks_dir, task.task_id)
    try:
        writer.write(task.files)
        check = task.check(writer.dir)
        if not check.ok:
            ctx.ui.warn(f"{task.task_id} dropped: {check.line()}")
            writer.discard()
            return None
        ctx.ui.say(f"Proving {task.task_id} ({task.what}: broken must fail, {task.solved} must pass)...")
        try:
            proof = ctx.validator.prove(writer.dir, plan.project_root, plan.db_file)
            proven, detail = bool(proof.ok), (ctx.backend.proof_label if proof.ok else proof.detail)
        except AdegenError as exc:
            proof, proven, detail = None, False, f"unproven: {exc}"
        refresh = settle_refresh(task.refresh, list(task.rebuild), task.files, writer.dir, proof if proven else None)
        if not proven:
            update_task_yaml(writer.dir / "task.yaml", status="dev")
    except BaseException:
        writer.discard()
        raise
    return PreparedExtra(task, writer, check, proven, detail, proof, refresh)


def entry(task: ExtraTask, w: Written, **fields) -> dict:
    """The task's --json entry: its own `fields` (model, pattern_id, family, difficulty, ...) and
    what every task's entry says of its status, proof, patch check and files."""
    return {"task_id": task.task_id, "path": str(w.path), **fields, "status": "ready" if w.proven else "dev",
            "proven": w.proven, "proof_detail": w.detail,
            "patch_check": {"setup": w.check.setup, "solution": w.check.solution, "roundtrip": w.check.roundtrip,
                            "models": w.check.models_ok, "line": w.check.line()},
            "files": sorted(task.files), **refresh_entry(w.refresh, w.proof)}


def proof_seconds(proof) -> dict | None:
    return None if proof is None else {k: round(float(v), 2) for k, v in (proof.seconds or {}).items()}


def write_until_proven(ctx: RunContext, items: Sequence, realise: Callable[[object, str], dict | None],
                       want: int) -> list[str]:
    """Under the run lock, `realise(item, task_id)` each item in order (its --json entry, or None when
    its id was not used) until `want` tasks are proven or --time-budget is spent; the ids written. The run's task list and its
    change figures are updated as the build's own stage updates them."""
    written: list[str] = []
    lock = out.RunLock(ctx.opts.output_dir)
    lock.acquire()
    try:
        plan = ctx.output or prepare(ctx)  # the build's proposals may have prepared it
        number = max(ctx.survey.highest_number, out.highest_task_number(plan.tasks_dir, ctx.project.name))
        proven = 0
        for item in items:
            if ctx.budget_spent():  # --time-budget: no new proof starts (each is a full emulation)
                ctx.budget.stopped_at = "tasks"
                ctx.ui.say("Time budget reached: no further task of this kind started.")
                break
            task_id = out.format_task_id(ctx.project.name, number + 1)
            made = realise(item, task_id)
            if ctx.budget is not None:
                ctx.budget.task_done()
            if made is None:
                continue  # the id was not used
            number += 1
            ctx.report.tasks.append(made)
            written.append(task_id)
            proven += bool(made["proven"])
            if proven >= want:
                break
    finally:
        lock.release()
    ctx.doc.tasks = ctx.report.tasks
    ctx.doc.change_shape = run_figure(ctx.doc.tasks)
    return written
