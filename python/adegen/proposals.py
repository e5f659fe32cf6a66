"""Phase 2: candidates (model x pattern x site), novelty against existing tasks, spread, screening.

Flow: `enumerate_candidates` lists every applicable (model, pattern) pair with its sites (from the
model file's raw text, read from the project), dropping pairs that duplicate an existing task
(same model + same family). `rank` orders them (uncovered models first, joins, downstream
dependants, marts/intermediate, complexity). `compile_check` compiles all candidate mutants in
one dbt run. `select` then picks `count` proposals greedily for spread across families, layers and
models; with a screen function (the Validator) a dropped site/pattern is replaced by the next one."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import prompts
from .survey import Survey

LAYER_WEIGHT = {"marts": 3, "intermediate": 3, "other": 1, "staging": 0}
DIFFICULTIES = ["easy", "medium", "hard"]
MAX_SITES_PER_PAIR = 3
MAX_MUTANTS = 240


class _LazySites:
    """Rewrite sites of one model for its matched patterns, computed on first use.

    Performance: `ModelContext.from_discovery` + `sites_for_model` cost O(models) each (sibling
    ranking over every model), so computing them for every model of a 5,000-model project is
    quadratic. Ranking needs no sites, and only the candidates a selection actually reaches are
    realised, so sites are computed for those models only. By the rewrite contract (find_sites is
    non-empty exactly when the macro matched the pattern) this gives the same candidates."""

    __slots__ = ("raw", "model", "discovery", "patterns", "db_type", "warn", "_sites")

    def __init__(self, raw, model, discovery, patterns, db_type, warn):
        self.raw, self.model, self.discovery = raw, model, discovery
        self.patterns, self.db_type, self.warn = patterns, db_type, warn
        self._sites: dict[str, list] | None = None

    def get(self, pattern_id: str) -> list:
        if self._sites is None:
            try:
                self._sites = sites_for(self.raw, self.model, self.discovery, self.patterns, self.db_type)
            except Exception as exc:  # noqa: BLE001 - one model's rewrite problem must not end the run
                self.warn(f"{self.model['name']}: could not compute rewrite sites "
                          f"({exc.__class__.__name__}: {exc})")
                self._sites = {}
        return (self._sites.get(pattern_id) or [])[:MAX_SITES_PER_PAIR]


class Candidate:
    """model x pattern, with the rewrite sites (up to MAX_SITES_PER_PAIR); `sites` may be given
    as None with a `lazy` (_LazySites) that computes them on first access."""

    def __init__(self, model: dict, pattern: Any, sites: list | None, raw: str, raw_bytes: bytes,
                 score: float = 0.0, covered_by: str | None = None, compile_results: dict | None = None,
                 lazy: Any = None):
        self.model = model  # discovery model entry
        self.pattern = pattern  # adegen.patterns.Pattern
        self._sites = sites  # [Site]
        self.raw = raw  # model file text (utf-8, surrogateescape)
        self.raw_bytes = raw_bytes
        self.score = score
        self.covered_by = covered_by  # an existing task touching the same model (other family)
        self.compile_results = {} if compile_results is None else compile_results  # site index -> CompileResult
        self.lazy = lazy

    @property
    def sites(self) -> list:
        if self._sites is None:
            self._sites = self.lazy.get(self.pattern.id) if self.lazy is not None else []
        return self._sites

    @sites.setter
    def sites(self, value: list) -> None:
        self._sites = value

    def __repr__(self) -> str:
        return f"Candidate({self.name!r}, {getattr(self.pattern, 'id', self.pattern)!r}, score={self.score})"

    @property
    def name(self) -> str:
        return self.model["name"]

    @property
    def family(self) -> str:
        return str(getattr(self.pattern, "family", "") or getattr(self.pattern, "id", ""))


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
    prompt: str                    # the base prompt
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
    prompts: dict = field(default_factory=dict)   # {base, medium, hard}: the prompt keys, in order
    prompt_tables: list = field(default_factory=list)  # tables the prompts name: grade every one
    prompt_set: Any = None  # the PromptSet (sources, rejected texts; not serialised)

    def to_json(self) -> dict:
        obs = self.observation
        return {
            "number": self.number, "model": self.model, "model_unique_id": self.model_unique_id,
            "model_path": self.model_path, "layer": self.layer, "pattern_id": self.pattern_id,
            "pattern_name": self.pattern_name, "family": self.family, "difficulty": self.difficulty,
            "why_model": self.why_model, "realistic": self.realistic, "prompt": self.prompt,
            "prompt_source": self.prompt_source, "prompts": dict(self.prompts),
            "prompt_tables": list(self.prompt_tables),
            "prompt_sources": dict(getattr(self.prompt_set, "sources", None) or {}),
            "description": self.description,
            "assertion_tests": self.assertion_tests, "novelty": self.novelty,
            "closest_task": self.closest_task,
            "site": {"line": int(self.site.line), "before": str(self.site.before), "after": str(self.site.after)},
            "compared_table": self.compared_table, "test_setup_models": self.test_setup_models,
            "tags": self.tags,
            "screening": None if obs is None else {
                "observable": bool(obs.observable), "reason": str(obs.reason),
                "build_error": bool(obs.build_error), "compared_table": obs.compared_table,
                "rows_differing": int(obs.rows_differing or 0), "rows_total": int(obs.rows_total or 0),
                "columns_differ": list(obs.columns_differ or []), "example": obs.example,
            },
        }


@dataclass
class ProposalSet:
    proposals: list[Proposal]
    excluded: list[tuple[str, str, str]]  # (model, pattern_id, existing task id)
    dropped: list[tuple[str, str, str]]  # (model, pattern_id, reason) - compile/screen/prompt
    considered: int

    def excluded_line(self) -> str | None:
        if not self.excluded:
            return None
        m, p, t = self.excluded[0]
        return (f"Excluded {len(self.excluded)} candidate{'s' if len(self.excluded) != 1 else ''} that overlap "
                f"existing tasks (e.g. {p} on {m} is already covered by {t}).")


# ---------------------------------------------------------------------------------------------
# rewrite-engine access (the contract: adegen.rewrite)


def model_context(model: dict, discovery: dict):
    from .rewrite import ModelContext  # type: ignore

    return ModelContext.from_discovery(model, discovery)


def sites_for(raw: str, model: dict, discovery: dict, patterns: list, db_type: str) -> dict[str, list]:
    """pattern id -> [Site] for one model (`adegen.rewrite.sites_for_model`)."""
    from types import SimpleNamespace

    from .rewrite import sites_for_model  # type: ignore

    ctx = model_context(model, discovery)
    res = sites_for_model(raw, SimpleNamespace(patterns=list(patterns)), ctx, db_type)
    return {str(getattr(k, "id", k)): list(v) for k, v in res.items()}


def apply_site(raw: str, site) -> str:
    from .rewrite import apply_site as _apply  # type: ignore

    return _apply(raw, site)


def encode(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="surrogateescape")


# ---------------------------------------------------------------------------------------------
# enumeration and ranking


def _pattern_ok_for_db(pattern, db_type: str) -> bool:
    dbt = getattr(pattern, "db_types", "all")
    if dbt in (None, "all") or dbt == ["all"] or dbt == ("all",):
        return True
    return db_type in list(dbt)


def own_models(discovery: dict, project_name: str) -> list[dict]:
    return [m for m in discovery.get("models", [])
            if m.get("package_name", project_name) == project_name and m.get("enabled", True)
            and str(m.get("path", "")).endswith(".sql")]


def enumerate_candidates(project_dir: Path, discovery: dict, catalog, survey: Survey, db_type: str,
                         project_name: str, warn: Callable[[str], None] = lambda s: None
                         ) -> tuple[list[Candidate], list[tuple[str, str, str]]]:
    covered_pairs = survey.covered_pairs
    covered_models = survey.covered_models
    by_id = {p.id: p for p in catalog.patterns}
    cands: list[Candidate] = []
    excluded: list[tuple[str, str, str]] = []
    for m in own_models(discovery, project_name):
        pats = [by_id[pid] for pid in m.get("matched_patterns", []) if pid in by_id]
        pats = [p for p in pats if _pattern_ok_for_db(p, db_type)]
        if not pats:
            continue
        path = project_dir / m["path"]
        try:
            raw_bytes = path.read_bytes()
        except OSError as exc:
            warn(f"cannot read {path}: {exc}")
            continue
        raw = decode(raw_bytes)
        lazy = _LazySites(raw, m, discovery, pats, db_type, warn)
        fams = [str(getattr(p, "family", "") or p.id) for p in pats]
        if any((m["name"], fam) in covered_pairs for fam in fams):
            # an existing task covers this model: decide now (as before) which pairs have sites
            lazy.get("")
            if not lazy._sites:
                continue
        for p, fam in zip(pats, fams):
            if lazy._sites is not None and not lazy.get(p.id):
                continue
            if (m["name"], fam) in covered_pairs:
                excluded.append((m["name"], p.id, covered_pairs[(m["name"], fam)]))
                continue
            cands.append(Candidate(m, p, None, raw, raw_bytes, covered_by=covered_models.get(m["name"]),
                                   lazy=lazy))
    return cands, excluded


def _downstream(m: dict) -> int:
    d = m.get("downstream") or {}
    return int(d.get("transitive", 0) or 0) if isinstance(d, dict) else 0


def _has_join(m: dict) -> bool:
    return any("join" in f for f in m.get("features", []))


def score(c: Candidate, survey: Survey, _fams: Counter | None = None) -> float:
    m = c.model
    s = 0.0
    s += 4 if _has_join(m) else 0
    s += min(_downstream(m), 6)
    s += LAYER_WEIGHT.get(m.get("layer", "other"), 1)
    s += min(int(m.get("complexity", 0) or 0), 20) / 4
    s += min(len(m.get("refs", [])) + len(m.get("sources", [])), 4) / 2
    if c.covered_by:
        s -= 8  # an existing task already touches this model: ranked lower, not excluded
    fams = _fams if _fams is not None else _survey_families(survey)
    s -= 2 * fams.get(c.family, 0)
    return s


def _survey_families(survey: Survey) -> Counter:
    return Counter(ch.family for t in survey.tasks for ch in t.changes if ch.family)


def rank(cands: list[Candidate], survey: Survey) -> list[Candidate]:
    fams = _survey_families(survey)  # once, not once per candidate
    for c in cands:
        c.score = score(c, survey, fams)
    return sorted(cands, key=lambda c: (-c.score, c.name, str(c.pattern.id)))


# ---------------------------------------------------------------------------------------------
# difficulty, tables to compare, assertion context


def difficulty_for(pattern, model: dict, obs=None, compared_distance: int = 0) -> str:
    base = str(getattr(pattern, "difficulty", "medium") or "medium")
    level = DIFFICULTIES.index(base) if base in DIFFICULTIES else 1
    lines = int(model.get("line_count", 0) or 0)
    cx = int(model.get("complexity", 0) or 0)
    if lines < 12 or cx <= 2:
        level = min(level, 0)
    elif lines < 30 or cx < 6:
        level = min(level, 1)
    elif cx >= 14 and _downstream(model) >= 2:
        level = max(level, 1)
    if obs is not None:
        if getattr(obs, "build_error", False):
            level = 0
        else:
            total = int(getattr(obs, "rows_total", 0) or 0)
            diff = int(getattr(obs, "rows_differing", 0) or 0)
            if total and diff and diff / total < 0.05:
                level = min(level + 1, 2)
            if compared_distance >= 2:
                level = min(level + 1, 2)
    return DIFFICULTIES[level]


def models_between(discovery: dict, start_uid: str, end_name: str) -> list[str]:
    """Names of models on paths start -> end (inclusive), in DAG order; [start] if end == start."""
    models = {m["unique_id"]: m for m in discovery.get("models", [])}
    start = models.get(start_uid)
    if start is None:
        return [end_name]
    end = next((m for m in models.values() if m["name"] == end_name), None)
    if end is None or end["unique_id"] == start_uid:
        return [start["name"]]
    children: dict[str, list[str]] = {}
    for m in models.values():
        for dep in m.get("depends_on", []):
            children.setdefault(dep, []).append(m["unique_id"])
    # descendants of start
    desc, stack = {start_uid}, [start_uid]
    while stack:
        for ch in children.get(stack.pop(), []):
            if ch not in desc:
                desc.add(ch)
                stack.append(ch)
    # ancestors of end within desc
    anc, stack = {end["unique_id"]}, [end["unique_id"]]
    while stack:
        for dep in models.get(stack.pop(), {}).get("depends_on", []):
            if dep in desc and dep not in anc:
                anc.add(dep)
                stack.append(dep)
    keep = [models[u] for u in anc if u in models]
    keep.sort(key=lambda m: (int(m.get("depth", 0) or 0), m["name"]))
    return [m["name"] for m in keep]


def compared_table_for(model: dict, discovery: dict, obs=None) -> str | None:
    if obs is not None and getattr(obs, "compared_table", None):
        return str(obs.compared_table)
    if model.get("materialized") != "ephemeral":
        return model["name"]
    models = {m["unique_id"]: m for m in discovery.get("models", [])}
    for uid in model.get("downstream_models", []):
        child = models.get(uid)
        if child and child.get("materialized") != "ephemeral":
            return child["name"]
    return None


def assertion_context(model: dict, column: str | None, project_name: str) -> dict:
    return {
        "model": model["name"], "project_name": project_name, "column": column or "",
        "original_refs": list(model.get("refs", [])),
        "original_sources": [list(s) for s in model.get("sources", [])],
        "original_materialization": model.get("materialized", "table"),
    }


def pick_column(c: Candidate, site, obs=None) -> str | None:
    """The column the symptom names: the rewrite's own placeholder, the columns the screening saw
    differ, a documented column on the changed text, or the alias the changed select item produces."""
    import re

    ph = getattr(site, "placeholders", None) or {}
    if ph.get("column"):
        return str(ph["column"])
    if obs is not None and getattr(obs, "columns_differ", None):
        return str(obs.columns_differ[0])
    cols = [str(x) for x in c.model.get("columns", [])]
    text = " ".join(str(x) for x in (getattr(site, "note", "") or "", site.before, site.after)).lower()
    for col in cols:
        if re.search(rf"\b{re.escape(col.lower())}\b", text):
            return col
    line_start = c.raw.rfind("\n", 0, site.start) + 1
    line_end = c.raw.find("\n", site.end)
    line = c.raw[line_start: line_end if line_end != -1 else len(c.raw)]
    if not re.search(r"\b(from|join|on|where|using)\b", line, re.I):
        m = re.search(r"\bas\s+([A-Za-z_][A-Za-z0-9_]*)\s*,?\s*$", line.strip(), re.I)
        if m:
            return m.group(1)
    return None


FAMILY_TAGS = {"aggregat": "aggregation", "join": "join-logic", "filter": "filtering", "null": "data-hygiene",
               "dedup": "data-hygiene", "date": "dates", "window": "window-functions", "ref": "model-refactor",
               "cast": "data-types", "materializ": "dbt-materialization"}


def tags_for(pattern, project_name: str) -> list[str]:
    fam = str(getattr(pattern, "family", "") or "").lower()
    tags = ["dbt", "debugging"]
    for stem, tag in FAMILY_TAGS.items():
        if stem in fam and tag not in tags:
            tags.append(tag)
            break
    else:
        if fam:
            tags.append(fam.replace("_", "-"))
    tags.append(project_name)
    return tags


def why_model(m: dict, covered_by: str | None) -> str:
    bits = [f"{m.get('layer', 'other')} model"]
    feats = [f for f in m.get("features", []) if "join" in f]
    if feats:
        bits.append("joins (" + ", ".join(feats[:3]) + ")")
    dn = _downstream(m)
    if dn:
        bits.append(f"{dn} downstream model{'s' if dn != 1 else ''}")
    bits.append(f"complexity {m.get('complexity', 0)}, {m.get('line_count', 0)} lines")
    if covered_by:
        bits.append(f"already touched by {covered_by} (different mutation)")
    return "; ".join(bits)


def novelty_text(c: Candidate, survey: Survey, project_name: str) -> tuple[str, str | None]:
    if not survey.tasks:
        return f"no overlap - first task for {project_name}", None
    same_model = [t for t in survey.tasks if c.name in t.models]
    if same_model:
        t = same_model[0]
        fams = sorted({ch.family or "unclassified" for ch in t.changes if ch.model == c.name})
        return (f"closest: {t.task_id} also touches {c.name} ({', '.join(fams)}); this one is a "
                f"{c.family} bug with a different symptom"), t.task_id
    same_fam = [t for t in survey.tasks if any(ch.family == c.family for ch in t.changes)]
    if same_fam:
        t = same_fam[0]
        return f"closest: {t.task_id} ({c.family} on {', '.join(sorted(t.models)) or '?'}); different model", t.task_id
    t = survey.tasks[0]
    return f"no overlap: no existing task touches {c.name} or the {c.family} family (closest {t.task_id})", t.task_id


# ---------------------------------------------------------------------------------------------
# compile check and selection


def compile_check(project, cands: list[Candidate], *, workdir: Path | None = None,
                  progress: Callable[[str], None] = lambda s: None) -> int:
    """Compile all candidate mutants at once; returns how many were rejected."""
    from .mutant_compile import compile_mutants

    mutants = []
    for ci, c in enumerate(cands):
        for si, site in enumerate(c.sites):
            if len(mutants) >= MAX_MUTANTS:
                break
            try:
                text = apply_site(c.raw, site)
            except Exception as exc:  # noqa: BLE001
                c.compile_results[si] = _Result(False, f"rewrite failed: {exc}")
                continue
            mutants.append((f"{ci}:{si}", c.model["path"], text))
    progress(f"Compiling {len(mutants)} candidate mutants in one dbt run...")
    res = compile_mutants(project, mutants, workdir=workdir)
    bad = 0
    for key, r in res.items():
        ci, si = (int(x) for x in key.split(":"))
        cands[ci].compile_results[si] = r
        if r.ok is False:
            bad += 1
    return bad


@dataclass
class _Result:
    ok: bool | None
    reason: str = ""


def pool(cands: list[Candidate], survey: Survey, discovery: dict, *, size: int, project_name: str,
         prefer_db_specific: bool = False) -> list[Candidate]:
    """The `size` candidates a selection would try first (greedy spread, no compile/screen yet)."""
    dry = select(cands, survey, discovery, count=size, project_name=project_name,
                 prefer_db_specific=prefer_db_specific)
    return [p.candidate for p in dry.proposals]


def is_db_specific(pattern) -> bool:
    """A pattern limited to some database types (e.g. `db_types: [snowflake]`), not ANSI (`all`)."""
    dbt = getattr(pattern, "db_types", "all")
    if dbt in (None, "all"):
        return False
    return list(dbt) != ["all"]


ScreenFn = Callable[[Candidate, Any, str], Any]  # (candidate, site, mutant text) -> Observation | None


def select(cands: list[Candidate], survey: Survey, discovery: dict, *, count: int, project_name: str,
           screen: ScreenFn | None = None, excluded: list | None = None,
           progress: Callable[[str], None] = lambda s: None, taken: list | None = None,
           prefer_db_specific: bool = False) -> ProposalSet:
    """Greedy picks for spread; `taken` = proposals already chosen in an earlier round.

    `prefer_db_specific` (Snowflake projects, spec: "prefer bug patterns that use Snowflake-specific
    SQL when the model uses it ... but also include some ANSI SQL bugs"): at least half of all picks
    (`taken` included, rounded up) come from database-specific patterns while such candidates remain;
    picks alternate specific / ANSI so the set mixes both."""
    chosen: list[Proposal] = []
    dropped: list[tuple[str, str, str]] = []
    used_models: Counter = Counter()
    used_fams: Counter = Counter()
    used_layers: Counter = Counter()
    existing_layers = Counter()
    models_by_name = {m["name"]: m for m in discovery.get("models", [])}
    for t in survey.tasks:
        for mname in t.models:
            if mname in models_by_name:
                existing_layers[models_by_name[mname].get("layer", "other")] += 1
    avoid = {t for task in survey.tasks for t in (task.prompt_texts or [task.prompt]) if t}
    for p in taken or []:
        avoid |= set(p.prompts.values())
        used_models[p.model] += 1
        used_fams[p.family] += 1
        used_layers[p.layer] += 1
    remaining = list(cands)
    tried: set[int] = set()
    total = len(taken or []) + count
    want_specific = (total + 1) // 2 if prefer_db_specific else 0
    while len(chosen) < count:
        only_specific = False
        if want_specific:
            have = sum(1 for p in list(taken or []) + chosen
                       if is_db_specific(getattr(p.candidate, "pattern", None) if p.candidate else None))
            need = want_specific - have
            slots = count - len(chosen)
            if need > 0 and (need >= slots or (len(taken or []) + len(chosen)) % 2 == 0):
                only_specific = any(is_db_specific(c.pattern) for i, c in enumerate(remaining) if i not in tried)
        best, best_s = None, None
        for i, c in enumerate(remaining):
            if i in tried:
                continue
            if only_specific and not is_db_specific(c.pattern):
                continue
            s = c.score - 6 * used_models[c.name] - 4 * used_fams[c.family] \
                - 1.5 * used_layers[c.model.get("layer", "other")] - 1 * existing_layers[c.model.get("layer", "other")]
            if used_models[c.name] and used_fams[c.family]:
                s -= 100
            if best_s is None or s > best_s:
                best, best_s = i, s
        if best is None:
            break
        tried.add(best)
        c = remaining[best]
        prop = _realise(c, survey, discovery, project_name, screen, dropped, progress, avoid)
        if prop is None:
            continue
        avoid |= set(prop.prompts.values())
        prop.number = len(chosen) + 1
        chosen.append(prop)
        used_models[c.name] += 1
        used_fams[c.family] += 1
        used_layers[c.model.get("layer", "other")] += 1
    return ProposalSet(chosen, excluded or [], dropped, len(cands))


def _realise(c: Candidate, survey: Survey, discovery: dict, project_name: str, screen: ScreenFn | None,
             dropped: list, progress: Callable[[str], None], avoid: set | None = None) -> Proposal | None:
    """The first site of a candidate that compiles, screens observable and gets a safe prompt."""
    for si, site in enumerate(c.sites):
        r = c.compile_results.get(si)
        if r is not None and r.ok is False:
            dropped.append((c.name, c.pattern.id, f"line {site.line}: mutant does not compile/parse ({r.reason})"))
            continue
        try:
            mutant_text = apply_site(c.raw, site)
        except Exception as exc:  # noqa: BLE001
            dropped.append((c.name, c.pattern.id, f"rewrite failed: {exc}"))
            continue
        if mutant_text == c.raw:
            dropped.append((c.name, c.pattern.id, f"line {site.line}: rewrite changes nothing"))
            continue
        obs = None
        if screen is not None:
            obs = screen(c, site, mutant_text)
            if obs is not None and not obs.observable:
                dropped.append((c.name, c.pattern.id, f"line {site.line}: {obs.reason}"))
                continue
        compared = compared_table_for(c.model, discovery, obs)
        if compared is None:
            dropped.append((c.name, c.pattern.id, "no materialized table to compare (ephemeral, no child)"))
            continue
        column = pick_column(c, site, obs)
        pset = prompts.write_prompts(prompts.PromptRequest(
            seed=f"{project_name}:{c.name}:{c.pattern.id}:{site.line}", model=c.name, project_name=project_name,
            pattern=c.pattern, site=site, model_path=c.model["path"], observation=obs, table=compared,
            column=column, avoid=frozenset(avoid or ()), **prompts.model_facts(c.model, discovery)))
        if pset.base is None:
            why = "; ".join(sorted({r for _, _, rs in pset.rejected for r in rs})[:3])
            dropped.append((c.name, c.pattern.id, f"no prompt: {why or 'the diff shows no change a user would report'}"))
            continue
        between = models_between(discovery, c.model["unique_id"], compared)
        distance = 0
        if obs is not None and getattr(obs, "changed_tables", None):
            distance = int(obs.changed_tables.get(compared, 0) or 0)
        elif compared != c.name:
            distance = max(len(between) - 1, 1)
        diff = difficulty_for(c.pattern, c.model, obs, distance)
        novelty, closest = novelty_text(c, survey, project_name)
        ctx = assertion_context(c.model, column, project_name)
        for k, v in (getattr(site, "placeholders", None) or {}).items():
            ctx.setdefault(k, v)
        tests = []
        for entry in getattr(c.pattern, "assertion_tests", None) or []:
            e = dict(entry) if isinstance(entry, dict) else {"type": getattr(entry, "type"), "args": getattr(entry, "args")}
            tests.append({"type": e.get("type"), "args": e.get("args") or {}, "context": ctx})
        realistic = " ".join(c.pattern.realistic.split())  # how an engineer ships this bug (never guidance)
        return Proposal(
            number=0, model=c.name, model_unique_id=c.model["unique_id"], model_path=c.model["path"],
            layer=c.model.get("layer", "other"), pattern_id=c.pattern.id,
            pattern_name=str(getattr(c.pattern, "name", c.pattern.id)), family=c.family, difficulty=diff,
            why_model=why_model(c.model, c.covered_by), realistic=realistic or str(getattr(c.pattern, "mutation", "")),
            prompt=pset.base, prompt_source=pset.sources["base"], prompts=dict(pset.prompts),
            prompt_tables=list(pset.tables), prompt_set=pset,
            description=prompts.description_for(c.pattern, c.name, site),
            assertion_tests=tests, novelty=novelty, closest_task=closest, site=site, original=c.raw_bytes,
            mutant=encode(mutant_text), compared_table=compared, test_setup_models=between,
            solution_rebuild=between, tags=tags_for(c.pattern, project_name), observation=obs,
            build_error=bool(getattr(obs, "build_error", False)) if obs is not None else False,
            candidate=c,
        )
    return None
