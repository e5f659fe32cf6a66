"""`--verify-slow`: after the tasks are written, each one whose proof graded both states is re-proven
the plain way (validate.plain: ade-bench's procedure in script mode, without the proof's in-process
shortcuts), and any disagreement with its proof is reported: one line per task, a warning, and
`verify_slow` in the --json document. Nothing written is changed: a disagreement is a finding for
a person (or a bug report), not something the build can settle by itself.
"""
from __future__ import annotations

import time
from pathlib import Path

from adegen.validate.rules.contract import ProofOutcome
from adegen.validate.duckdb.plain import PlainCheck, Verdict, WrittenTask, check_task
from adegen.pipeline.context import RunContext

# outcomes whose broken_fails / solved_passes are the two trials' own results (the others stopped
# before grading, or overrode a trial's result, so there is no verdict to compare)
GRADED = frozenset({ProofOutcome.PROVEN.id, ProofOutcome.BROKEN_PASSES.id, ProofOutcome.SOLVED_FAILS.id})


def proof_verdict(task: dict) -> Verdict | None:
    """The verdict a written task's proof reached (None: it graded no trial to compare with)."""
    proof = task.get("proof") or {}
    if proof.get("outcome") not in GRADED:
        return None
    return Verdict(bool(proof["broken_fails"]), bool(proof["solved_passes"]))


def verify(ctx: RunContext) -> list[PlainCheck]:
    """Re-prove every written task the plain way; what was found goes to the console, the warnings
    and `ctx.doc.verify_slow`."""
    ui, plan, t0 = ctx.ui, ctx.output, time.monotonic()
    ui.say("Re-proving the written tasks the plain way (--verify-slow: ade-bench's procedure, "
           "script mode, no in-process shortcuts)")
    checks, skipped = [], []
    if not ctx.backend.file_based or plan is None or plan.db_file is None:
        skipped = [{"task_id": t["task_id"], "why": "no database file to run ade-bench's procedure on"}
                   for t in ctx.report.tasks]
    for t in ctx.report.tasks if not skipped else []:
        verdict = proof_verdict(t)
        if verdict is None:
            why = f"its proof graded no trial ({(t.get('proof') or {}).get('outcome') or 'not proven'})"
            skipped.append({"task_id": t["task_id"], "why": why})
            continue
        task = WrittenTask(t["task_id"], Path(t["path"]), plan.project_root, plan.db_file,
                           packages_from=Path(ctx.project.project_dir))
        check = check_task(task, verdict, ctx.workroot / "verify-slow")
        ui.say("  " + check.line())
        if check.disagreement:
            ctx.report.warnings.append(f"{t['task_id']}: --verify-slow: {check.disagreement}")
        checks.append(check)
    for s in skipped:
        ui.say(f"  {s['task_id']}: not checked ({s['why']})")
    ctx.doc.verify_slow = {"checked": len(checks), "disagree": sum(1 for c in checks if c.disagreement),
                           "results": [c.to_json() for c in checks], "skipped": skipped}
    ctx.timing("verify_slow", t0)
    ui.say()
    return checks
