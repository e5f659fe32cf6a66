"""Stage "diff candidates" of the build: the candidates that come as a diff with a story (fixes of
the project's git history undone, `--bug-command`'s bugs; `adegen.propose.diffs`), made before the
proposal rounds and ranked with the pattern candidates, so they are compiled, screened, selected
and proven on the one path; afterwards each one's fate (proposed, dropped and why, not reached)
goes into --json `diff_candidates` (and the run record) and onto the console."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from adegen.core.drops import Drop
from adegen.pipeline.context import RunContext


@dataclass
class DiffOffer:
    """The run's diff candidates, the Drops of the diffs that could not become one, and notes."""

    candidates: list = field(default_factory=list)  # propose.diffs.DiffCandidate
    drops: list = field(default_factory=list)  # Drop
    notes: list = field(default_factory=list)
    quiet: bool = True  # nothing worth a line when nothing was offered (no repository, no command)


def offer(ctx: RunContext) -> DiffOffer:
    """The diff candidates of the run: the history's (--history, default: a project that is a git
    repository of its own) and --bug-command's."""
    from adegen.propose import bug_command, history
    from adegen.propose.diffs import DiffBug, candidate_for
    from adegen.propose.proposals import own_models

    t1 = time.monotonic()
    scope, opts, out = ctx.scope(), ctx.opts, DiffOffer()
    paths = {m["path"]: m["name"] for m in own_models(scope.discovery, scope.project_name)}
    scan = history.scan(opts.project_dir, paths, opts.history)
    out.notes.append(scan.note)
    out.quiet = not (scan.repository or opts.bug_command)
    bugs, out.drops = list(scan.bugs), list(scan.drops)
    if opts.bug_command:
        models = bug_command.models_for(scope, opts.count)
        ctx.ui.say(f"Asking --bug-command for a bug in {len(models)} model(s)...")
        for answer in bug_command.ask_all(bug_command.BugCommand(opts.bug_command), models, scope):
            (bugs if isinstance(answer, DiffBug) else out.drops).append(answer)
    for bug in bugs:
        made = candidate_for(bug, scope)
        (out.drops if isinstance(made, Drop) else out.candidates).append(made)
    if out.candidates or out.drops:
        ctx.timing("diff_candidates", t1)
    return out


def account(ctx: RunContext, offered: DiffOffer, pset) -> None:
    """Each diff's fate after the selection: --json `diff_candidates` and the console's lines."""
    if not (offered.candidates or offered.drops):
        if not offered.quiet:
            ctx.ui.say(f"No diff candidates ({'; '.join(offered.notes)}).")
        return
    proposed = {p.pattern_id: p.number for p in pset.proposals}
    last = {d.pattern_id: d for d in pset.dropped}
    entries, lines = [], []
    for c in offered.candidates:
        bug, pid = c.bug, c.pattern.id
        entry = {**bug.to_json(), "outcome": "not reached"}
        if pid in proposed:
            entry.update(outcome="proposed", proposal=proposed[pid])
            lines.append(f"{bug.label}: proposal {proposed[pid]}")
        elif pid in last:
            entry.update(outcome="dropped", reason=last[pid].reason, code=last[pid].code.id)
            lines.append(f"{bug.label}: dropped ({last[pid].code.label}): {last[pid].reason}")
        else:
            lines.append(f"{bug.label}: not reached (the run had its proposals first)")
        entries.append(entry)
    for d in offered.drops:
        source, _, ref = d.pattern_id.partition("@")
        entries.append({"source": source, "ref": ref, "pattern_id": d.pattern_id, "model": d.model,
                        "outcome": "dropped", "reason": d.reason, "code": d.code.id})
        lines.append(f"dropped ({d.code.label}): {d.reason}")
    ctx.doc.diff_candidates = entries
    ctx.ui.say(f"Diff candidates ({'; '.join(offered.notes)}):")
    for line in lines:
        ctx.ui.say(f"  {line}")
    ctx.ui.say()
