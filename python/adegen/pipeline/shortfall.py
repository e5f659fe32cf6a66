"""Why a run wrote fewer tasks than a project of its size should give, model by model (issue 53).

A run that writes fewer than `FEW` tasks says, for every model, what became of it: the tasks it
got, the candidates its SQL offered and why each kind was dropped (grouped, with counts), or that
no catalog pattern matched its SQL, and whether its tables are graded at all (a table that reads
the clock or changes between identical builds is never a solution seed). Each line ends by naming
the limit, so a user knows whether their project (its data, its clock, its size) or adegen (its
catalog, its checks) held the run back. Pure: the run's --json document in, {model: line} out;
the summary prints it and the run record keeps it (`shortfall`).
"""
from __future__ import annotations

from collections import Counter

from adegen.core.drops import DropCode

FEW = 5
# drops where the project leaves no room: its data does not show the mistake, its tables are not
# graded (clock, nondeterminism), the change makes no difference on its rows; the rest are adegen's
_PROJECT = frozenset({DropCode.PRECONDITION, DropCode.EQUIVALENT, DropCode.CLOCK_DEPENDENT,
                      DropCode.NONDETERMINISTIC_ONLY, DropCode.DUPLICATES_ONLY, DropCode.TYPE_ONLY,
                      DropCode.NO_LATE_ROWS, DropCode.NO_TABLE})
# drops that are the run's choices, not limits: another task took the place
_CHOICE = frozenset({DropCode.FAMILY_CAP, DropCode.SAME_MISTAKE, DropCode.KEPT_BACK, DropCode.OWN_CONVERSION,
                     DropCode.LAST_RESORT,
                     DropCode.COMPOUND_PLACE})


def _code(d: dict) -> DropCode | None:
    try:
        return DropCode.of(str(d.get("code") or d.get("reason") or ""))
    except StopIteration:
        return None


def _limit(codes: Counter, written: int, offered: int) -> str:
    if written:
        return "room used"
    if not offered:
        return "adegen's catalog is the limit"
    project = sum(n for c, n in codes.items() if c in _PROJECT)
    adegen = sum(n for c, n in codes.items() if c is not None and c not in _PROJECT | _CHOICE)
    if project and not adegen:
        return "the project is the limit"
    if adegen and not project:
        return "adegen is the limit"
    return "both: " + ("mostly the project" if project >= adegen else "mostly adegen")


def per_model(doc: dict, models: list[str]) -> dict[str, str]:
    """{model: one line} for every model of `models` (discovery's, in order) from the run's --json
    document (`doc`: tasks, proposals, dropped_candidates, runtime)."""
    tasks = Counter(str(t.get("model")) for t in doc.get("tasks") or [] if isinstance(t, dict))
    proposed = Counter(str(p.get("model")) for p in doc.get("proposals") or [] if isinstance(p, dict))
    drops: dict[str, Counter] = {}
    for d in doc.get("dropped_candidates") or []:
        if isinstance(d, dict):
            drops.setdefault(str(d.get("model")), Counter())[_code(d)] += 1
    rt = doc.get("runtime") or {}
    ungraded = {**{m: f"never graded: it changes between identical builds ({', '.join(c) or 'rows'})"
                   for m, c in (rt.get("nondeterministic") or {}).items()},
                **{m: f"never graded: {' '.join(str(why).split())}" for m, why in (rt.get("clock_dependent") or {}).items()}}
    out: dict[str, str] = {}
    for m in models:
        codes = drops.get(m, Counter())
        offered = sum(codes.values()) + proposed.get(m, 0)
        parts = [f"{tasks.get(m, 0)} task(s)"]
        if offered:
            parts.append(f"{offered} candidate(s)" + (f", {proposed[m]} proposed" if proposed.get(m) else ""))
            parts += [f"{n} {c.label if c else 'dropped'}" for c, n in
                      sorted(codes.items(), key=lambda kv: (-kv[1], kv[0].label if kv[0] else ""))]
        else:
            parts.append("no catalog pattern matches its SQL")
        if m in ungraded:
            parts.append(ungraded[m][:200])
        out[m] = "; ".join(parts) + f" ({_limit(codes, tasks.get(m, 0), offered)})"
    return out


def lines(shortfall: dict[str, str], written: int) -> list[str]:
    """The summary's block: a head line and one line per model."""
    if not shortfall:
        return []
    return [f"Fewer than {FEW} tasks ({written}): why, per model:", *(f"  {m}: {why}" for m, why in shortfall.items())]


def explain(ctx, written: int) -> None:
    """Fewer than FEW tasks written (or than --count asked, when it asked fewer): the per-model
    lines into the --json document (and so the run record) and the summary. `ctx`: the RunContext."""
    if written >= min(FEW, ctx.opts.count):
        return
    from adegen.pipeline import runtime  # the summary's own collector, run once
    if ctx.doc.runtime is None:
        ctx.doc.runtime = runtime.collect(ctx)
    models = [str(m["name"]) for m in (ctx.discovery or {}).get("models") or [] if isinstance(m, dict) and m.get("name")]
    ctx.doc.shortfall = per_model(ctx.doc.to_json(), models)
    ctx.ui.say()
    for line in lines(ctx.doc.shortfall, written):
        ctx.ui.say(line)
