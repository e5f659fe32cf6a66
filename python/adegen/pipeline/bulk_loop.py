"""Bulk mode's loop over the ordered candidates: compile check and screening ahead of the cursor
(batched, in the validator's worker pool), then steps of: realise the next candidates into
proposals (`proposals.select`, the build's own unit), prove up to --jobs of them side by side
(`realise.prepare_task` in threads; the proofs' dbt work runs in the validator's workers), commit
them in candidate order.

Same output for any --jobs: a step assumes that every proposal it starts gets proven (its task id
and the prompts later candidates must avoid follow from that). When one is not, the tasks after
it in that step are thrown away unwritten and the next step starts right after it - exactly the
decisions a one-job run makes, at the cost of re-proving those few.

Screening runs in the background: a batch is handed to the validator from a helper thread and
its observations are waited for only when a step needs them, and before a step's proofs start the
candidates after it are already handed over, so the workers screen them while the proofs' main-side
work (task files, patch round trip, seed export) runs. An observation depends only on the candidate,
never on when it was screened, so the decisions (and the output) are those of the one-batch-at-a-time
loop."""
from __future__ import annotations

import dataclasses
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from adegen.tasks import output as out
from adegen.propose import proposals as pp
from adegen.core.drops import Drop, DropCode
from adegen.propose.candidate_sites import added_files, story_files
from adegen.propose.siblings import changed_files
from adegen.discover.survey import ExistingTask
from adegen.pipeline import bulk_made, dataset
from adegen.pipeline.bulk_made import MadeJob, MadeUnit
from adegen.pipeline.bulk_units import unit_key
from adegen.pipeline.extra_task import prepare_extra
from adegen.pipeline.context import RunContext
from adegen.pipeline.propose import check_candidates
from adegen.pipeline.realise import TaskJob, commit_task, prepare_task, render_tests

COMPILE_BATCH = 48  # candidates compiled per dbt run (one compile per batch is the fixed cost)
SCREEN_AHEAD_MIN = 8  # candidates screened ahead of the cursor, at least

def family_cap_reason(unit, families: list, later: list, want: int) -> Drop | None:
    """Why a candidate is passed over: its family already has a fifth of the dataset (issue 28: the
    cheapest kind of bug must not fill it) while a later candidate of a family under the cap is
    left. None: it may be proposed."""
    cap = max(1, -(-want // 5))
    counts = Counter(families)
    fam = unit.family
    if counts[fam] < cap:
        return None
    if any(counts[u.family] < cap for u in later):
        return Drop(unit.name, unit.pattern, f"family cap: {fam} already has {counts[fam]} of the {want} tasks "
                                             "wanted (a fifth at most)", DropCode.FAMILY_CAP)
    return None


@dataclasses.dataclass
class LoopSetup:
    want: int  # --tasks
    jobs: int  # proofs side by side
    progress: object  # progress.Progress
    on_commit: object  # callable(): rewrite the dataset files


class BulkLoop:
    def __init__(self, ctx: RunContext, ledger, units: list, setup: LoopSetup):
        self.ctx, self.ledger, self.units, self.setup = ctx, ledger, units, setup
        self.compiled: set[str] = set()
        self.observations: dict[str, object] = {}
        self.pending: dict[str, tuple[Future, int]] = {}  # key -> (background batch, position in it)
        self.tests: dict[str, list] = {}
        self.screener = ThreadPoolExecutor(max_workers=4, thread_name_prefix="adegen-screen")

    def run(self) -> None:
        try:
            while len(self.ledger.tasks) < self.setup.want and self.ledger.cursor < len(self.units):
                span = self.look_ahead(self.ledger.cursor, self.window())
                self.step(span)
        finally:
            for fut, _ in self.pending.values():
                fut.cancel()
            self.screener.shutdown(wait=False)

    # -- compile check and screening ahead of the cursor ---------------------------------------------

    def window(self, started: int = 0) -> int:
        """How many candidates to have screened ahead, with `started` proposals of a step in flight."""
        led, setup = self.ledger, self.setup
        need = setup.want - len(led.tasks) - started
        return min(max(2 * setup.jobs, 2 * need), max(SCREEN_AHEAD_MIN, 4 * setup.jobs), COMPILE_BATCH) if need > 0 else 0

    def look_ahead(self, start: int, span: int) -> int:
        """Compile-check the candidates [start, start + span) and hand the ones not screened yet to
        the validator in the background; returns span."""
        ahead = [u for u in self.units[start:start + span] if not isinstance(u, MadeUnit)]  # made: not screened
        # compiled in fixed blocks of the ordered list: which mutants share a dbt compile never
        # depends on where a step (or a resumed run) starts
        for block in sorted({i // COMPILE_BATCH for i in range(start, min(start + span, len(self.units)))
                             if self.units[i].key not in self.compiled and not isinstance(self.units[i], MadeUnit)}):
            batch = [u for u in self.units[block * COMPILE_BATCH:(block + 1) * COMPILE_BATCH]
                     if u.key not in self.compiled and not isinstance(u, MadeUnit)]
            check_candidates(self.ctx, [u.candidate for u in batch])
            self.compiled |= {u.key for u in batch}
        items, keys = [], []
        for u in ahead:
            c = u.candidate
            result = c.compile_results.get(0)
            if u.key in self.observations or u.key in self.pending or (result is not None and result.ok is False):
                continue
            if 0 in c.preconditions and c.preconditions[0].drop_reason():
                continue  # select() records the failed precondition as the drop reason
            try:
                text, story = pp.storied_mutant(c, 0)  # what select() proposes: the slip inside its story
            except Exception:  # noqa: BLE001 - select() records the rewrite failure as the drop reason
                continue
            items.append((c.model["unique_id"], c.model["path"], text, c.pattern, result,
                          changed_files(c.sites[0]) + added_files(story)))
            keys.append(u.key)
        if items:
            self.ctx.ui.say(f"Screening {len(items)} candidates by execution...")
            fut = self.screener.submit(self.ctx.validator.screen_many, items, progress=self.ctx.ui.progress)
            self.pending.update({k: (fut, i) for i, k in enumerate(keys)})
        return span

    def screen(self, c, site, text):
        key = unit_key(c, site)
        if key not in self.observations and key in self.pending:
            fut, i = self.pending.pop(key)
            self.observations[key] = fut.result()[i]
        if key not in self.observations:
            self.observations[key] = self.ctx.validator.screen(c.model["unique_id"], c.model["path"], text, c.pattern,
                                                               changed_files(site) + story_files(c, site))
        return self.observations[key]

    # -- one step: propose, prove side by side, commit in order ---------------------------------------

    def step(self, span: int) -> None:
        led, setup = self.ledger, self.setup
        taken: list[tuple[str, list[str]]] = [(t["id"], t["prompt_texts"]) for t in led.tasks]
        events, started = [], []
        index = led.cursor
        while (index < min(len(self.units), led.cursor + span) and len(started) < setup.jobs
               and len(led.tasks) + len(started) < setup.want):
            unit = self.units[index]
            families = [t.get("family") for t in led.tasks] + [_family(j) for j in started]
            prop, why = None, family_cap_reason(unit, families, self.units[index + 1:], setup.want)
            task_id = out.format_task_id(self.ctx.project.name, led.next_number() + len(started))
            if why is None and isinstance(unit, MadeUnit):
                prop, why = bulk_made.start(self.ctx, unit, task_id, self.taken_texts(taken))
                if prop is not None:
                    started.append(prop)
                    taken.append((task_id, unit.prompt_texts()))
            elif why is None:
                prop, why = self.propose(unit, index, taken)
                if prop is not None:
                    started.append(TaskJob(prop, task_id, []))
                    taken.append((task_id, [lv.text for lv in prop.prompt_levels()]))
            events.append((unit, prop, why))
            index += 1
        if started:  # the next candidates, screened while this step's proofs are prepared
            self.look_ahead(index, self.window(len(started)))
        prepared = self.prove(started)
        try:
            self.commit(events, prepared)
        finally:
            for p in prepared:
                if p is not None:
                    p.discard()  # the ones committed are gone from their temp dir already

    def propose(self, unit, index: int, taken: list[tuple[str, list[str]]]):
        """(Proposal, None) or (None, drops.Drop) for one candidate; prompts of `taken` (the run's
        tasks, including the ones this step assumes proven) and of surveyed tasks are avoided."""
        ctx = self.ctx
        # the task's index places it in the cycle of report details (`taken` holds texts, not
        # findings, so a materialization task ahead of it counts too)
        pset = pp.select([unit.candidate], dataclasses.replace(ctx.scope(), survey=_survey_with(ctx.survey, taken),
                                                               order=index), count=1, screen=self.screen)
        if pset.proposals:
            prop = pset.proposals[0]
            prop.number = index + 1
            return prop, None
        c = unit.candidate
        return None, pset.dropped[-1] if pset.dropped else Drop(c.name, c.pattern.id, "not proposed",
                                                                 DropCode.NOT_PROPOSED)

    def taken_texts(self, taken: list[tuple[str, list[str]]]) -> set[str]:
        """Every prompt text a new task must not repeat: the run's (`taken`) and the surveyed tasks'."""
        return {t for _, texts in taken for t in texts} | {
            t for task in self.ctx.survey.tasks for t in (task.prompts or [task.prompt]) if t}

    def prove(self, jobs: list) -> list:
        """prepare_task (a proposal's TaskJob) or prepare_extra (a whole candidate's MadeJob) for
        each job, side by side; results in job order (None: round trip failed)."""
        if not jobs:
            return []
        pending = [j for j in jobs if isinstance(j, TaskJob) and j.proposal.assertion_tests
                   and self.unit_key(j) not in self.tests]
        if pending:
            rendered = render_tests(self.ctx, [j.proposal for j in pending])
            for j in pending:
                self.tests[self.unit_key(j)] = rendered.get(j.proposal.number, [])
        for j in jobs:
            if isinstance(j, TaskJob):
                j.tests = self.tests.get(self.unit_key(j), [])
        with ThreadPoolExecutor(max_workers=self.setup.jobs, thread_name_prefix="adegen-bulk") as pool:
            futures = [pool.submit(prepare_task, self.ctx, j) if isinstance(j, TaskJob) else
                       pool.submit(prepare_extra, self.ctx, j.task) for j in jobs]
        results, error = [], None
        for f in futures:
            try:
                results.append(f.result())
            except BaseException as exc:  # noqa: BLE001 - re-raised once every temp dir is discarded
                results.append(None)
                error = error or exc
        if error is not None:
            for r in results:
                if r is not None:
                    r.discard()
            raise error
        return results

    @staticmethod
    def unit_key(job: TaskJob) -> str:
        c = job.proposal.candidate
        return f"{c.model['unique_id']}|{c.pattern.id}|{job.proposal.site.index}"

    def commit(self, events: list, prepared: list) -> None:
        led, progress = self.ledger, self.setup.progress
        results = iter(prepared)
        for unit, prop, drop in events:
            if prop is None:
                led.drop(drop.code)
                progress.update(len(led.tasks), led.drops_by_label(), f"dropped {unit.name} / {unit.pattern}: {drop.reason[:120]}")
                continue
            task = next(results)
            if task is None or not task.proven:
                code = DropCode.ROUND_TRIP_FAILED if task is None else DropCode.UNPROVEN
                detail = code.label if task is None else task.detail  # "unproven: <why>"
                where = "" if isinstance(prop, MadeJob) else f" line {prop.site.line}"
                self.ctx.ui.say(f"{unit.name} / {unit.pattern}{where}: {detail}")  # the log
                led.drop(code)
                progress.update(len(led.tasks), led.drops_by_label(), f"dropped {unit.name} / {unit.pattern}: {detail[:200]}")
                return  # later tasks of this step assumed this one written: the next step redoes them
            if isinstance(prop, MadeJob):
                row = unit.row(prop.task_id, task.proof, self.ctx.discovery)
                led.begin_commit(row)
                entry = unit.entry(self.ctx, prop.task, task.commit(self.ctx))
            else:
                row = dataset.task_row(prop, task.job.task_id, task.proof, self.ctx.discovery)
                led.begin_commit(row)
                entry = commit_task(self.ctx, task)
            led.end_commit()
            self.ctx.report.tasks.append(entry)
            self.setup.on_commit()
            progress.update(len(led.tasks), led.drops_by_label(), f"{row['id']}: {row['model']} / {row['pattern']} "
                                                      f"({row['difficulty']}) proven in {row['proof_seconds']}s")


def _family(job) -> str:
    return job.family if isinstance(job, MadeJob) else job.proposal.family


def _survey_with(survey, taken: list[tuple[str, list[str]]]):
    """The survey plus the run's own tasks as far as prompts go (select avoids their prompts)."""
    extra = [ExistingTask(task_id=tid, task_dir=Path(tid), location="bulk", description="", prompt=texts[0],
                          tags=[], difficulty="", prompts=list(texts)) for tid, texts in taken if texts]
    return dataclasses.replace(survey, tasks=list(survey.tasks) + extra)
