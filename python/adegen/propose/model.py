"""The proposal of a task as the build shows, stores and realises it: `Proposal` (one bug on one
model with its prompt levels), `PromptLevel`, `ProposalSet` (a run's proposals plus what was
excluded or dropped and why)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from adegen.core.drops import DropCode
from adegen.propose.candidate_sites import added_models as story_models


@dataclass(frozen=True)
class PromptLevel:
    """One prompt key of a task (ade-bench runs each key as its own trial). `tables`: tables the
    text names besides the compared table; each is graded too (solution_seeds + test_setup)."""

    key: str  # base | medium | hard
    text: str
    tables: tuple[str, ...] = ()


@dataclass(frozen=True)
class SiblingChange:
    """The same mistake in a sibling model (adegen.propose.siblings): its file before and after, and the
    table that shows it (graded beside the proposal's compared table)."""

    model: str
    unique_id: str
    path: str
    original: bytes
    mutant: bytes
    table: str
    line: int


@dataclass
class Proposal:
    number: int
    model: str
    model_unique_id: str
    model_path: str
    layer: str
    pattern_id: str
    pattern_name: str
    family: str
    difficulty: str
    why_model: str
    realistic: str
    prompt: str
    prompt_source: str
    description: str
    assertion_tests: list[dict]
    novelty: str
    closest_task: str | None
    site: Any
    original: bytes
    mutant: bytes
    compared_table: str
    test_setup_models: list[str]
    solution_rebuild: list[str]
    tags: list[str]
    observation: Any = None
    build_error: bool = False
    candidate: Any = None  # the Candidate it came from (not serialised)
    levels: list[PromptLevel] = field(default_factory=list)  # every prompt key; [] = base only
    prompt_set: Any = None  # the prompts.PromptSet the levels came from (sources, rejected; not serialised)
    precondition: list | None = None  # the pattern's data preconditions as measured (realism.Measured.to_json)
    siblings: tuple = ()  # SiblingChange per other model the same mistake changes (a multi-file task)
    story: Any = None  # the rewrite.stories.Story the slip was made in (None: the slip alone)
    shallow_because: str | None = None  # why the symptom is reported on the changed model (None: downstream)
    compound: list | None = None  # two independent slips (propose.compound): each slip's Slip.to_json()

    @property
    def upstream(self) -> bool:
        """The change is upstream of the table the base prompt names (the agent traces it back).
        That table is the compared one, except where a hard pattern's comparison is a mart far
        downstream while the base reports the model itself (RANK order flipped in dim_products)."""
        named = (getattr(self.prompt_set, "named", None) or {}).get("base") or [self.compared_table]
        # a CTE moved into a model of its own carries the slip: the named table reads that new model
        return named[0] != self.model or bool(self.added_files)

    @property
    def prompts(self) -> dict[str, str]:
        """{key: text} in level order (base first)."""
        return {lv.key: lv.text for lv in self.prompt_levels()}

    def use_prompt_set(self, pset) -> None:
        """Take every level (and the base prompt) from a PromptSet, e.g. after --prompt-command."""
        self.prompt_set, self.levels = pset, levels_of(pset, self.compared_table)
        self.prompt, self.prompt_source = pset.prompts["base"], pset.sources["base"]

    def prompt_levels(self) -> list[PromptLevel]:
        """The task's prompt keys in order (base first); just `prompt` when no levels were set."""
        return list(self.levels) or [PromptLevel("base", self.prompt)]

    def graded_tables(self) -> list[str]:
        """The compared table, then every other table a prompt level names (first mention order)."""
        out = [self.compared_table]
        for level in self.prompt_levels():
            out += [t for t in level.tables if t not in out]
        out += [s.table for s in self.siblings if s.table not in out]  # a one-file fix must fail
        return out

    def file_changes(self) -> list[tuple[str, bytes | None, bytes]]:
        """(path, original, mutant) of every file the bug changes: the proposal's own model first
        (whoever reads a task from its folder takes the patch's first file as the changed model),
        then its siblings, then the files its story adds (original None: not in the project)."""
        return ([(self.model_path, self.original, self.mutant)] + [(s.path, s.original, s.mutant) for s in self.siblings]
                + [(path, None, text.encode("utf-8", errors="surrogateescape")) for path, text in self.added_files])

    @property
    def added_files(self) -> tuple[tuple[str, str], ...]:
        """(path, text) of the model files the story adds (a CTE moved into a model of its own)."""
        return tuple(getattr(self.story, "files", None) or ())

    def added_models(self) -> list[str]:
        """The names of the models the story adds (propose.candidate_sites.added_models)."""
        return story_models(self.story)

    def to_json(self) -> dict:
        obs = self.observation
        return {
            "number": self.number, "model": self.model, "model_unique_id": self.model_unique_id,
            "model_path": self.model_path, "layer": self.layer, "pattern_id": self.pattern_id,
            "pattern_name": self.pattern_name, "family": self.family, "difficulty": self.difficulty,
            "why_model": self.why_model, "realistic": self.realistic, "prompt": self.prompt,
            "prompt_source": self.prompt_source, "description": self.description,
            "prompt_sources": dict(getattr(self.prompt_set, "sources", None) or {}),
            "prompt_levels": [{"key": lv.key, "prompt": lv.text, "tables": list(lv.tables)}
                              for lv in self.prompt_levels()],
            "assertion_tests": self.assertion_tests, "novelty": self.novelty,
            "closest_task": self.closest_task,
            "site": {"line": int(self.site.line), "before": str(self.site.before), "after": str(self.site.after)},
            "siblings": [{"model": s.model, "path": s.path, "table": s.table, "line": s.line} for s in self.siblings],
            "story": {"kind": self.story.kind, "subject": self.story.subject,
                      "files": [path for path, _ in self.added_files]} if self.story is not None else None,
            "compared_table": self.compared_table, "test_setup_models": self.test_setup_models,
            "upstream_of_prompt": self.upstream,
            "shallow_because": self.shallow_because,
            "compound": bool(self.compound), "slips": list(self.compound or []),
            "tags": self.tags,
            "precondition": self.precondition,
            "screening": None if obs is None else {
                "observable": bool(obs.observable), "reason": str(obs.reason),
                "build_error": bool(obs.build_error), "compared_table": obs.compared_table,
                "rows_differing": int(obs.rows_differing or 0), "rows_total": int(obs.rows_total or 0),
                "columns_differ": list(obs.columns_differ or []), "example": obs.example,
            },
        }


def levels_of(pset, compared: str) -> list[PromptLevel]:
    """The prompt levels of a prompts.PromptSet: each key with the tables its text names (the
    compared table is graded anyway)."""
    return [PromptLevel(key, text, tuple(t for t in (pset.named.get(key) or []) if t != compared))
            for key, text in pset.prompts.items()]


@dataclass
class ProposalSet:
    proposals: list[Proposal]
    excluded: list[tuple[str, str, str]]  # (model, pattern_id, existing task id)
    dropped: list  # [drops.Drop(model, pattern_id, reason, code)] - compile/screen/prompt
    considered: int
    # (proposal, its KEPT_BACK drop): realised, observable, held back for the deep quota; a run
    # that ends short takes them after all (`pipeline.propose.propose`)
    kept_back: list = field(default_factory=list)

    def excluded_line(self) -> str | None:
        if not self.excluded:
            return None
        m, p, t = self.excluded[0]
        return (f"Excluded {len(self.excluded)} candidate{'s' if len(self.excluded) != 1 else ''} that overlap "
                f"existing tasks (e.g. {p} on {m} is already covered by {t}).")

    def held_back_line(self) -> str | None:
        """Why a run has fewer proposals than asked while last-resort candidates were left."""
        held = [d for d in self.dropped if d.code is DropCode.LAST_RESORT]
        if not held:
            return None
        kinds = ", ".join(dict.fromkeys(d.pattern_id for d in held))
        return (f"Held back {len(held)} candidate{'s' if len(held) != 1 else ''} ({kinds}): edits that read "
                "as made up, used only when a run would otherwise have fewer than 3 tasks.")


@dataclass(frozen=True)
class PatternFace:
    """What the screening, the prompt writer and the task writer read of a catalog pattern, for a
    change that is no catalog pattern (a compound of two slips, a dropped dedup)."""

    id: str
    name: str
    family: str
    symptom: str
    realistic: str = ""
    mutation: str = ""
    difficulty: str = "medium"
    symptom_template: str = ""
    assertion_tests: tuple = ()
