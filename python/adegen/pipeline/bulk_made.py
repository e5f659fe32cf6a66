"""Bulk mode's candidates that come whole, beside the catalog's (model, pattern, site) units: the
purposeful changes (pipeline/purpose.find: every change the build's search finds, one per model and
kind, where a build writes two of them) and the upstream data changes (pipeline/datachange.candidates:
each raw table's change), one unit each.

They are made and measured as the build makes them (the build's functions, not copies): no
screening (the change was measured on the intact build when found), the task's files from
`purpose.task_of` / `datachange.task_of`, proven by the validator as the build proves them (a
purposeful change on the prepared fast path, a data change by the full emulation), their --json
entries and run-record details from `purpose.finish` / `datachange.finish`. What bulk adds: a
stable key, the spread attributes, and the tasks.jsonl row."""
from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass
from typing import Callable

from adegen.core.drops import Drop, DropCode
from adegen.pipeline import datachange, dataset, purpose
from adegen.pipeline.context import RunContext
from adegen.pipeline.extra_task import ExtraTask, Written
from adegen.propose.candidate_sites import decode
from adegen.propose.dedup import DEDUP


@dataclass(frozen=True)
class Made:
    """How one kind of whole candidate becomes a task (its functions from the build's stage)."""

    family: str
    difficulty: str
    task: Callable[[RunContext, object, str], ExtraTask | None]   # (ctx, item, task id) -> files
    entry: Callable[[RunContext, "MadeUnit", ExtraTask, Written], dict]   # the committed task's --json entry


# what bulk draws its candidates from (--kinds): the catalog's (model, pattern, site) slips and the
# whole candidates of this module
KINDS = ("catalog", "purpose", "data-change")

PURPOSE = Made(purpose.FAMILY, purpose.DIFFICULTY, purpose.task_of,
               lambda ctx, unit, task, w: purpose.finish(ctx, unit.item, task, w))
DATA_CHANGE = Made(datachange.FAMILY, datachange.DIFFICULTY, datachange.task_of,
                   lambda ctx, unit, task, w: datachange.finish(ctx, unit.item, (task, w), str(unit.model.get("layer", ""))))


@dataclass(frozen=True)
class MadeUnit:
    """One whole candidate task: a Purposeful / GrainChange or a DataChange (`item`), the model
    it is told about (a discovery model entry), its pattern id (`purpose:<kind>`, the data change's
    kind) and how it is made."""

    key: str
    item: object
    model: dict
    pattern: str
    made: Made
    fingerprint: str  # the change's texts, hashed: a resumed run must see the same change

    @property
    def family(self) -> str:
        return self.made.family

    @property
    def name(self) -> str:
        return self.model["name"]

    def attrs(self) -> dict[str, str]:
        return {"model": self.model["unique_id"], "family": self.family, "pattern": self.pattern,
                "layer": str(self.model.get("layer", "other")), "difficulty": self.made.difficulty}

    def fingerprint_line(self) -> str:
        return f"{self.key}:{self.fingerprint}"

    def prompt_texts(self) -> list[str]:
        return [t for _, t in self.item.prompts()]

    def task(self, ctx: RunContext, task_id: str) -> ExtraTask | None:
        return self.made.task(ctx, self.item, task_id)

    def entry(self, ctx: RunContext, task: ExtraTask, w: Written) -> dict:
        return self.made.entry(ctx, self, task, w)

    def row(self, task_id: str, proof, discovery: dict) -> dict:
        """The ledger row (dataset.task_row's fields): the site is the first line the change
        touches in the model's file (a data change: the first line its fix changes)."""
        graded = self.graded_table()
        seconds = dict((proof.seconds or {}) if proof is not None else {})
        total = seconds.get("total", sum(float(v) for v in seconds.values()) if seconds else None)
        facts = getattr(self.item, "facts", None)
        rows = facts if isinstance(facts, dict) else {}  # a data change's facts are pairs, no row count
        distance = 0 if graded == self.name else dataset.distance(discovery, self.model["unique_id"], graded)
        prompts = self.item.prompts()
        return {"id": task_id, "model": self.name, "model_unique_id": self.model["unique_id"],
                "model_path": self.model["path"], "layer": str(self.model.get("layer", "other")),
                "pattern": self.pattern, "family": self.family, "difficulty": self.made.difficulty,
                "site": self.site(), "compared_table": graded, "graded_tables": {graded: distance},
                "dag_distance": distance,
                "rows_changed": int(rows["rows_differ"]) if "rows_differ" in rows else None,
                "prompt_keys": [k for k, _ in prompts],
                "proof_seconds": None if total is None else round(float(total), 2),
                "prompt_texts": [t for _, t in prompts]}

    def graded_table(self) -> str:
        return getattr(self.item, "graded", None) or self.item.model.name

    def site(self) -> dict:
        path, old, new = next(((p, o, n) for p, o, n in _edits(self.item) if p == self.model["path"]),
                              _edits(self.item)[0])
        return first_change(decode(old), decode(new))


def _edits(item) -> list[tuple[str, bytes, bytes]]:
    """(path, today's bytes, the changed bytes): a purposeful change's setup, a data change's fix."""
    if hasattr(item, "fixes"):
        return list(item.fixes)
    return [(p, o, b) for p, o, b, _ in item.files()]


def first_change(old: str, new: str) -> dict:
    """Where the change starts in `old`: {line (1-based), before, after} of its first changed line
    that is more than a comma moved (a new select item puts a comma after the line before it: the
    item is the change); an inserted line has before "" and the line it goes before."""
    a, b = old.splitlines(), new.splitlines()
    first = None
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        k = 0
        while i1 + k < i2 and j1 + k < j2 and _uncomma(a[i1 + k]) == _uncomma(b[j1 + k]):
            k += 1
        site = {"line": i1 + k + 1, "before": a[i1 + k].strip() if i1 + k < i2 else "",
                "after": b[j1 + k].strip() if j1 + k < j2 else ""}
        first = first or {"line": i1 + 1, "before": a[i1].strip() if i1 < i2 else "",
                          "after": b[j1].strip() if j1 < j2 else ""}
        if i1 + k < i2 or j1 + k < j2:
            return site
    return first or {"line": 1, "before": "", "after": ""}


def _uncomma(line: str) -> str:
    return line.strip().strip(",").strip()


def enumerate_made(ctx: RunContext, kinds: tuple[str, ...] = KINDS) -> tuple[list[MadeUnit], int]:
    """(every whole candidate of the `kinds` asked for, how many repeat a surveyed task's
    description and were left out). None where the build can make none: a database other than
    DuckDB (its `data_changes`: both kinds are proven on DuckDB only)."""
    if not ctx.backend.data_changes or ctx.validator is None:
        return [], 0
    by_uid = {m["unique_id"]: m for m in ctx.discovery.get("models", [])}
    by_name = {m["name"]: m for m in ctx.discovery.get("models", [])}
    surveyed = {t.description for t in ctx.survey.tasks}
    units: list[MadeUnit] = []
    skipped = 0
    for c in (purpose.find(ctx) if "purpose" in kinds else []):
        if c.kind == DEDUP:  # reported only after the validator screens it (pipeline/purpose._screened): build only
            continue
        if purpose.description(c) in surveyed:
            skipped += 1
            continue
        model = by_uid.get(c.model.unique_id)
        if model is not None:
            units.append(MadeUnit(f"{model['unique_id']}|purpose:{c.kind}|" + "/".join(map(str, vars(c.ask).values())),
                                  c, model, f"purpose:{c.kind}", PURPOSE, _hash(c)))
    for change in (datachange.candidates(ctx) if "data-change" in kinds else []):
        if change.description() in surveyed:
            skipped += 1
            continue
        model = by_name.get(change.readers[0])
        if model is not None:
            units.append(MadeUnit(f"{model['unique_id']}|{change.kind}|{change.relation}", change, model,
                                  change.kind, DATA_CHANGE, _hash(change)))
    return units, skipped


def _hash(item) -> str:
    h = hashlib.sha256()
    for path, old, new in _edits(item):
        h.update(path.encode() + b"\0" + old + b"\0" + new + b"\0")
    return h.hexdigest()[:16]


@dataclass
class MadeJob:
    """A whole candidate being written: its unit, its task id and its files."""

    unit: MadeUnit
    task_id: str
    task: ExtraTask

    @property
    def family(self) -> str:
        return self.unit.family


def start(ctx: RunContext, unit: MadeUnit, task_id: str, taken: list[str]) -> tuple[MadeJob | None, Drop | None]:
    """(the job, None), or (None, why not): a prompt another task has (`taken`: this run's and the
    surveyed tasks' prompt texts) or files that cannot be made (a grain change's test)."""
    texts = unit.prompt_texts()
    if any(t in taken for t in texts):
        return None, Drop(unit.name, unit.pattern, "a prompt repeats another task's", DropCode.PROMPT_REPEATS)
    task = unit.task(ctx, task_id)
    if task is None:
        return None, Drop(unit.name, unit.pattern, "its test could not be rendered", DropCode.TEST_NOT_RENDERED)
    return MadeJob(unit, task_id, task), None
