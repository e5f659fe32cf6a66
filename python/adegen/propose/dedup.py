"""The dedup dropped as a cleanup, as a purposeful task candidate (issue 51; rewrite/purposes/dedup.py):
"simplify <model>: its input is unique on <key> now", and it is not.

The data precondition, measured on the validator's intact build: the change is run on the model's
compiled SQL, and kept only when the model without its dedup has more rows than today (the
deduplicated input really repeats the key today) and the same columns (the cleanup changes rows
only). Unlike the other purposeful kinds, the solved state is the original: the dedup restored.

The symptom is then screened like any slip's (the validator builds the model without its dedup and
every table downstream of it) and reported where it shows: on the nearest mart downstream whose rows
changed (`site.deep_table`, issue 51 item 5), in the prompt banks' own words (prompts.write_prompts),
never the fix (the `dedup_dropped` class of banks/mechanisms.yaml)."""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from adegen import prompts
from adegen.core.settings import get_settings
from adegen.propose.candidate_sites import encode, endings_of
from adegen.propose.diffs import span_site
from adegen.propose.facts import compared_table_for, models_between
from adegen.propose.model import PatternFace, levels_of
from adegen.propose.purpose import ModelText, wrap
from adegen.propose.site import deep_table, retarget, why_not_deeper
from adegen.realism.probe import ProbeDB
from adegen.rewrite.purposes import docs
from adegen.rewrite.purposes.dedup import DEDUP, DISTINCT, DedupSite, drop, sites

__all__ = ["DEDUP", "DedupChange", "PATTERN", "candidates", "reported"]

MAX_FOUND = 4   # dedup changes measured at most (a build writes one or two)
FAMILY = "dedup-dropped"
REPEATS = "dedup-set-ops"  # the catalog's family whose slips remove a dedup too (a DISTINCT dropped)
SUBJECTS = {  # the commit's subject (task.yaml's description): the purpose, as the engineer wrote it
    "row_number": "Simplify {model}: {source} is unique on {key} now, so it is read directly",
    "qualify": "Simplify {model}: its rows are unique on {key} now, so the QUALIFY goes",
    DISTINCT: "Simplify {model}: its rows are unique now, so the DISTINCT goes",
}
DOCS = {  # the sentence the engineer appends to the model's description (text as data)
    "row_number": "Reads {source} directly, as it has one row per {key} now.",
    "qualify": "Its input has one row per {key} now.",
    DISTINCT: "Its input has no repeated rows now.",
}


# what the screening and the prompt writer read of a pattern, for a dropped dedup
PATTERN = PatternFace(f"purpose:{DEDUP}", "dedup dropped as a cleanup", FAMILY, "extra_rows",
                      realistic="A dedup removed in a cleanup because the input was believed to be unique now.")


@dataclass(frozen=True)
class DedupChange:
    """One measured dropped dedup, and the task it makes (propose/purpose.Purposeful's shape). The
    prompts, the graded tables and the rebuilt models come from its screening (`reported`)."""

    ask: DedupSite
    model: ModelText
    broken: str
    facts: dict = field(default_factory=dict)
    documented: str | None = None
    levels: tuple = ()          # (key, text, tables it names)
    tables: tuple = ()          # graded: the table the base report names first
    rebuild: tuple = ()         # test_setup's models, in DAG order
    grain: dict | None = None   # a duplicates-only screening's key test (validate.verdict)

    @property
    def kind(self) -> str:
        return DEDUP

    @property
    def fixed(self) -> str:  # the solved state is the original: the dedup restored
        return self.model.raw

    def subject(self) -> str:
        a = self.ask
        return SUBJECTS[a.form].format(model=self.model.name, source=a.source, key=a.key)

    def prompts(self) -> list[tuple[str, str]]:
        return [(k, t) for k, t, _ in self.levels]

    def example(self) -> str:
        """The changed model's measured rows (the review page's impact example)."""
        return f"{self.model.name}: {self.facts['rows_broken']:,} rows where it had {self.facts['rows_today']:,}"

    def graded_tables(self) -> list[str]:
        return list(self.tables)

    def rebuild_models(self) -> list[str]:
        return list(self.rebuild)

    def zero_or_null(self) -> list[str]:
        """No column graded leniently: the change adds none."""
        return []

    def assertions(self) -> list[dict]:
        """The copies may be whole rows, which the set-based equality test passes: the screening's
        key test then grades them (as a duplicates-only slip's)."""
        return [] if not self.grain else [{"type": "columns_must_be_unique", "args": dict(self.grain)}]

    def files(self) -> tuple[tuple[str, bytes, bytes, bytes], ...]:
        """(path, today's text, the broken text, the right text = today's) of the model, then of
        its properties file when the cleanup is written there (the solution takes it back too)."""
        raw = self.model.raw
        own = ((self.model.path, encode(raw), encode(endings_of(raw, self.broken)), encode(raw)),)
        if self.documented is None or self.model.properties is None:
            return own
        path, text = self.model.properties
        return own + ((path, encode(text), encode(endings_of(text, self.documented)), encode(text)),)


# a description that speaks of the dedup itself ("de-duplicated to the first delivery of each
# event_id"): a sentence appended to it would contradict it, and rewriting a person's text is not
# ours to do, so such a file is left as it is (engineers forget docs too)
_SPEAKS_OF_IT = re.compile(r"de-?dup|duplicat|distinct|unique|first|latest|most recent", re.I)


def document(site: DedupSite, m: ModelText) -> str | None:
    """The properties file with the cleanup said in the model's description, or None."""
    if m.properties is None:
        return None
    entry = docs.entry_of(m.properties[1], m.name)
    if entry is None or _SPEAKS_OF_IT.search(str(entry.get("description") or "")):
        return None
    return docs.document_exclusion(m.properties[1], m.name, DOCS[site.form].format(source=site.source, key=site.key))


def measure(m: ModelText, site: DedupSite, db: ProbeDB) -> dict | None:
    """Rows of the model today and without its dedup (compiled SQL, intact build), or None when
    the input has no copies today (the rows do not change), the columns change, or it cannot run."""
    comp = next((s for s in sites(m.compiled) if (s.form, s.scope) == (site.form, site.scope)), None)
    broken = drop(m.compiled, comp) if comp is not None else None
    if broken is None:
        return None
    today, without = wrap(m.compiled), wrap(broken)
    cols_today, cols_broken = db.columns(today), db.columns(without)
    if not cols_today or cols_today != cols_broken:
        return None
    got = db.one(f"select (select count(*) from {today}), (select count(*) from {without})")
    if got is None or got[1] is None or int(got[1]) <= int(got[0]):
        return None  # the input is unique today: the cleanup would be right
    rows_today, rows_broken = int(got[0]), int(got[1])
    return {"rows_today": rows_today, "rows_broken": rows_broken, "rows_fixed": rows_today,
            "rows_differ": rows_broken - rows_today, "key": site.key or "(whole row)", "form": site.form}


def candidates(models: Sequence[ModelText], db: ProbeDB, say: Callable[[str], None] = lambda _: None
               ) -> list[DedupChange]:
    """Every measured dropped dedup of `models` (in the order given, one per model, MAX_FOUND at most)."""
    out: list[DedupChange] = []
    for m in models:
        for site in sites(m.raw):
            broken = drop(m.raw, site)
            facts = measure(m, site, db) if broken is not None else None
            if facts is None:
                continue
            out.append(DedupChange(site, m, broken, facts, document(site, m)))
            say(f"purposeful change: {m.name}: {DEDUP}: {site.form} on {site.column} ({facts})")
            break
        if len(out) >= MAX_FOUND:
            break
    return out


def reported(c: DedupChange, obs, discovery: dict, project_name: str, avoid: frozenset = frozenset()
             ) -> DedupChange | str:
    """The change with its prompts, graded tables and rebuilt models from its screening `obs`, or
    why it makes no task (not observable, no prompt)."""
    if obs is None or not obs.observable or getattr(obs, "build_error", False):
        return f"screening: {getattr(obs, 'reason', 'not screened')}"
    model = next((m for m in discovery.get("models", []) if m["unique_id"] == c.model.unique_id), None)
    if model is None:
        return "not in the discovery"
    deep = deep_table(model, obs, discovery)
    shown = retarget(obs, deep) if deep is not None else obs
    compared = compared_table_for(model, discovery, shown) or c.model.name
    pattern = PATTERN
    try:
        pset = prompts.write_prompts(prompts.PromptRequest(
            seed=f"{project_name}:{c.model.name}:{pattern.id}:{c.ask.scope}", model=c.model.name,
            project_name=project_name, pattern=pattern, site=span_site(pattern.id, c.model.raw, c.broken),
            model_path=c.model.path, observation=shown, table=compared, avoid=avoid, start=deep,
            **prompts.model_facts(model, discovery)))
    except Exception as exc:  # noqa: BLE001 - a bug in one change's wording, not a reason to end the run
        if get_settings().debug:
            raise
        return f"no prompt (internal error: {type(exc).__name__}: {exc})"
    if pset.base is None:
        why = "; ".join(sorted({r for _, _, rs in pset.rejected for r in rs})[:3])
        return f"no prompt: {why or 'the screening shows no change a user would report'}"
    levels = levels_of(pset, compared)
    tables = [compared] + [t for lv in levels for t in lv.tables if t != compared]
    rebuild: list[str] = []
    for t in dict.fromkeys(tables):
        rebuild += [m for m in models_between(discovery, c.model.unique_id, t) if m not in rebuild]
    depth = {m["name"]: int(m.get("depth", 0) or 0) for m in discovery.get("models", [])}
    facts = {**c.facts, "reported_on": compared, "reported_rows_differing": int(shown.rows_differing or 0),
             "reported_rows_total": int(shown.rows_total or 0),
             "shallow_because": None if deep is not None else why_not_deeper(model, obs, discovery)}
    return dataclasses.replace(c, levels=tuple((lv.key, lv.text, lv.tables) for lv in levels),
                               tables=tuple(dict.fromkeys(tables)), facts=facts,
                               rebuild=tuple(sorted(rebuild, key=lambda m: (depth.get(m, 0), m))),
                               grain=(getattr(obs, "details", None) or {}).get("grain_test"))
