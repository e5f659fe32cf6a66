"""Three hint levels from the measured diff: (request) -> ordered {key: prompt} + the tables named.

- `base`: the table nearest the change that shows it, with a concrete observation.
- `medium`: the symptom as a table further downstream shows it (concrete), else the same table
  with the kind of problem only.
- `hard`: the business-level symptom on the farthest changed downstream table (or two of them);
  left out when no downstream table changed.

Every text passes the leak check, reads like a person (no tool words), names only tables that
differ in the broken state, and differs from every text in `avoid` and from the other keys.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from adegen.facts import measured
from adegen.facts.measured import Sides, TableFacts, read_table
from adegen.prompts import checks, frames, mechanisms, pairs, phrases, render, words
from adegen.prompts.findings import NOT_DATA, Detail, Finding, classify, main_finding

LEVELS = ("base", "medium", "hard")
# the pattern's guess, used only when nothing was measured (--no-validate)
GUESS = {"rows_missing": "rows_lost", "extra_rows": "rows_added", "values_too_high": "values_high",
         "values_too_low": "values_low", "values_null": "values_blank", "values_wrong": "values_changed",
         "build_error": "build_failed"}


@dataclass(frozen=True)
class PromptRequest:
    """Everything the prompt writer may use. `observation` is the screening's Observation (its
    details hold the measured facts, adegen.facts.measured); None when nothing was run."""
    seed: str                                  # task id or any stable string
    model: str                                 # the mutated model
    project_name: str = ""
    pattern: Any = None
    site: Any = None
    model_path: str | None = None
    observation: Any = None
    table: str | None = None                   # compared table (used when nothing was measured)
    column: str | None = None                  # the changed column, when the change has one
    model_materialized: str | None = None
    project_models: tuple = ()                 # every model name: nothing unchanged may be named
    layer: str = ""                            # the model's layer in words ("marts")
    convention: bool = False                   # its layer mostly uses the original materialization
    avoid: frozenset = frozenset()             # texts already used (this run, surveyed tasks)
    unstable: frozenset = frozenset()          # tables that differ between two intact builds
    order: int | None = None                   # the task's place in its run (spreads the detail)
    start: str | None = None                   # the table the base report names (a mart downstream of
                                               # the change), None: the nearest table that shows it
    sibling: str | None = None                 # the table a sibling model's same mistake shows on
                                               # (adegen.propose.siblings): every report names it too
    distinct: bool = False                     # the sibling table shows another slip (a compound task,
                                               # adegen.propose.compound): never "the same problem"


def _voice(req: PromptRequest) -> render.Voice:
    return render.Voice.for_seed(req.seed, req.layer, req.convention, req.project_name, req.order)


@dataclass
class PromptSet:
    prompts: dict[str, str] = field(default_factory=dict)     # ordered: base, medium, hard
    tables: list[str] = field(default_factory=list)           # tables the prompts name (grade them)
    sources: dict[str, str] = field(default_factory=dict)     # key -> "adegen" | "command" | ...
    rejected: list[tuple[str, str, list[str]]] = field(default_factory=list)  # (key, text, reasons)
    findings: dict[str, str] = field(default_factory=dict)    # key -> "kind on table"
    named: dict[str, list[str]] = field(default_factory=dict)  # key -> tables it names
    columns: dict[str, str | None] = field(default_factory=dict)  # key -> the column its finding is about
    request: Any = None                                        # the PromptRequest it answers

    @property
    def base(self) -> str | None:
        return self.prompts.get("base")

    @property
    def about_data(self) -> bool:
        """Whether the base report is about the table's data: a materialization, a build error
        or a column set is not, and quotes no values."""
        kind = self.findings.get("base", "").split(" ", 1)[0]
        return bool(kind) and kind not in NOT_DATA


def norm(text: str) -> str:
    """Two prompts are "the same" when they differ only in case, spacing or punctuation."""
    return " ".join(re.findall(r"[a-z0-9_]+", str(text).lower()))


@dataclass
class _Plan:
    key: str
    finding: Finding
    levels: tuple                 # specific | general | business, tried in order
    second: Finding | None = None
    also: Finding | None = None   # a sibling table with the same problem, said after the body


def measured_facts(req: PromptRequest) -> list[dict]:
    """The facts of the tables a prompt may use, as measured (adegen.facts.measured's wire dicts: what
    a --prompt-command reads); unstable tables and columns left out."""
    obs = req.observation
    if obs is None:
        return []
    if getattr(obs, "build_error", False):
        table = getattr(obs, "compared_table", None) or req.table or req.model
        return [measured.build_failed(table, clean_dbt_message(str(getattr(obs, "example", "") or ""),
                                                               req.model_path))]
    return measured.usable_tables(obs, req.unstable)


def plan(req: PromptRequest, facts: list[TableFacts]) -> list[_Plan]:
    by_table = []
    for f in sorted(facts, key=lambda f: (f.distance, f.table)):
        found = main_finding(classify(f), req.column)
        if found is not None:
            by_table.append(found)
    if not by_table:
        return []
    lend_labels(by_table)
    if req.sibling:
        return _pair_plans(req, by_table)
    root = by_table[0]
    measured_model = str(req.model_materialized or "").lower() not in ("ephemeral", "")
    if root.distance > 0 and measured_model and not measured.model_rows_changed(req.observation):
        # the mutated model's own table is unchanged: downstream differences can only be chance
        # (unless its rows changed in number only: duplicates a set comparison does not list)
        return []
    # the voice fixes the frame of the report (a statement, a rule, a question, a story) and how
    # concrete it is (nothing, an entity's name, its values); medium and hard say less
    voice = _voice(req)
    start = next((f for f in by_table if req.start and f.table == req.start), None)
    if start is not None and start.distance > 0:
        # reported where people look: the base names a table downstream, later levels go further
        root = start
        by_table = [root] + [f for f in by_table if f.distance > root.distance]
    plans = [_Plan("base", root, voice.levels("base"))]
    down = [f for f in by_table[1:] if f.distance > 0] if root.kind not in (
        "relation_kind", "build_failed", "column_added") else []
    if down:
        plans.append(_Plan("medium", down[0], voice.levels("medium")))
        far = down[-1]
        if len(down) >= 2 and render.spin(req.seed, "several", 2):
            plans.append(_Plan("hard", far, ("business",), second=down[-2]))
        else:
            plans.append(_Plan("hard", far, ("business",)))
    elif root.kind not in ("table_empty", "table_gone"):  # "X is empty" has no vaguer version
        plans.append(_Plan("medium", root, ("general",)))
    return plans


def _pair_plans(req: PromptRequest, found: list[Finding]) -> list[_Plan]:
    """One mistake in two sibling models: the base reports the first table's finding and says the
    sibling's table has the same problem; the medium names both tables, less precisely. (No hard
    level: with two tables to name, nothing vaguer is left that still points at both.)"""
    mine = next((f for f in found if f.table == (req.start or req.model)), None)
    theirs = next((f for f in found if f.table == req.sibling), None)
    if mine is None or theirs is None:
        return []
    voice = _voice(req)
    return [_Plan("base", mine, voice.levels("base"), also=theirs),
            _Plan("medium", mine, ("business",), second=theirs)]


def lend_labels(found: list[Finding]) -> None:
    """A row without a name column gets the name another changed table gives the same key value
    (account A1002 of int_account_billing_snapshot is "Summit Foods" in mart_account_health):
    people name the entity, not its id."""
    names: dict[tuple[str, str], str] = {}
    for f in found:
        if len(f.key) == 1:
            for s in f.samples + list(f.detail.extra_samples):
                if s.label and s.key:
                    names.setdefault((f.key[0].lower(), str(s.key[0])), str(s.label))
    for f in found:
        if len(f.key) == 1:
            f.samples = [s if s.label or not s.key else
                         replace(s, label=names.get((f.key[0].lower(), str(s.key[0])))) for s in f.samples]


def template_text(req: PromptRequest) -> str | None:
    """Nothing measured: the pattern's own `symptom_template`, filled (None when a placeholder
    has no value)."""
    tmpl = str(getattr(req.pattern, "symptom_template", "") or "")
    if not tmpl:
        return None
    table = req.table or req.model
    values = {"model": req.model, "table": table, "project_name": req.project_name}
    if req.column:
        values["column"] = req.column
    values.update({k: str(v) for k, v in (getattr(req.site, "placeholders", None) or {}).items()
                   if isinstance(v, str)})
    text = render.fill(tmpl, values)
    return render.cap_sentences(text.strip()) if text else None


def guessed_plan(req: PromptRequest) -> list[_Plan]:
    """Nothing measured: one `base` prompt from the pattern's direction, no concrete values."""
    symptom = str(getattr(req.pattern, "symptom", "") or "values_wrong")
    table = req.table or req.model
    if symptom == "structure_wrong":
        kind = "column_gone" if req.column else "values_changed"
    else:
        kind = GUESS.get(symptom, "values_changed")
    f = Finding(kind, table, column=req.column if kind != "rows_lost" else None)
    ph = getattr(req.site, "placeholders", None) or {}
    kinds = {"view": "view", "table": "table", "incremental": "table"}
    if symptom == "structure_wrong" and ph.get("wrong_materialization"):
        before = kinds.get(str(ph.get("original_materialization")))
        after = kinds.get(str(ph.get("wrong_materialization")))
        if before and after and before != after:
            f = Finding("relation_kind", table, detail=Detail(relation=Sides(before, after)))
    return [_Plan("base", f, ("general",))]


def _allowed(req: PromptRequest, p: _Plan) -> set[str]:
    allowed = {req.model, req.project_name, p.finding.table, *(p.finding.key or [])}
    # a literal the change writes where the model already wrote it (`like 'cancel%' then 'cancelled'`
    # -> `= 'cancelled' then 'cancelled'`): a label the table showed before, not a trace of the edit
    allowed |= {str(x).lower() for x in (getattr(req.site, "placeholders", None) or {}).get("intact_literals", ())}
    for f in (p.finding, p.second, p.also):
        if f is None:
            continue
        allowed.add(f.table)
        # the words of a named table and its entity noun ("products" of dim_products) are plain
        # English here, even when the SQL uses the same word as an alias
        allowed |= set(f.table.lower().split("_"))
        for key_col in f.key or []:
            allowed |= set(key_col.lower().split("_"))
        entity = words.table_entity(f.table)
        allowed |= {entity, words.plural(entity)}
        if f.column:
            allowed |= {f.column, *f.column.lower().split("_")}
        allowed |= set(f.detail.columns)
        if f.kind == "labels_new" and req.site is not None:
            # a label the broken table shows is what anyone reading it sees (a raw code where the
            # mapping was); only a label the change itself writes would point at the line
            added = checks.added_literals(req.site)
            allowed |= {str(x).lower() for x in (*f.detail.only_broken, *f.detail.labels)
                        if str(x).strip().lower() not in added}
        if f.kind == "build_failed":  # dbt's own words are the symptom a user pastes
            allowed |= set(re.findall(r"[a-z_][a-z0-9_]*", str(f.detail.message or "").lower()))
    return {a for a in allowed if a}


def slip_mechanisms(req: PromptRequest) -> tuple:
    """The classes of the task's slip (prompts.mechanisms): by its pattern's family, else by the
    SQL tokens it changes."""
    family = str(getattr(req.pattern, "family", "") or "")
    found = mechanisms.slip_classes(family)
    if found or req.site is None:
        return found
    return mechanisms.slip_classes(family, set().union(*checks.changed_tokens(req.site)))


def reasons_against(text: str, req: PromptRequest, changed_tables, allowed, kind: str = "") -> list[str]:
    """Why a text cannot be used: leaks, a stated fix, words that name the slip's mechanism
    (`kind`: the finding the text reports), tool words, or a named table that did not change. Runs
    on every prompt key of every task (adegen's own and --prompt-command's): none of the keys is
    a hint at the fix, each reports a symptom."""
    why = checks.leaks(text, site=req.site, pattern=req.pattern, model_path=req.model_path, allowed=allowed)
    why += checks.states_fix(text, req.site, req.pattern)
    why += mechanisms.mechanism_words(text, slip_mechanisms(req), kind, allowed)
    why += checks.tool_words(text)
    why += checks.unchanged_tables_named(text, changed_tables, req.project_models)
    return why


def write_prompts(req: PromptRequest) -> PromptSet:
    """The prompts of one task, base first. No `base` key = nothing honest and safe to say."""
    facts = [read_table(f) for f in measured_facts(req)]
    plans = plan(req, facts) if facts else ([] if req.observation is not None else guessed_plan(req))
    changed = {f.table for f in facts} or {req.table or req.model}
    out = PromptSet(request=req)
    taken = {norm(t) for t in req.avoid}
    used: dict[str, tuple[str, str]] = {}   # key -> (table, level) it was written at
    templates: set[str] = set()              # sentences already used by this task's other keys
    said = [_gist(t) for t in req.avoid]     # the texts of other tasks (this task's own come later)
    for p in plans:
        if p.key != "base" and "base" not in out.prompts:
            break
        if p.key == "medium" and used.get("base") == (p.finding.table, "general"):
            continue  # base already had to stay general on this table: nothing less specific left
        found = _choose(p, req, _Pick(changed, _allowed(req, p), taken, templates, said), out)
        if found is None:
            continue
        level, text, tpl = found
        out.prompts[p.key] = text
        out.sources[p.key] = "adegen" if facts else "adegen (pattern, not measured)"
        out.findings[p.key] = f"{p.finding.kind} on {p.finding.table} ({level})"
        named = [p.finding.table] + [f.table for f in (p.second, p.also) if f is not None]
        out.named[p.key] = named
        out.columns[p.key] = p.finding.column
        out.tables += [t for t in named if t not in out.tables]
        taken.add(norm(text))
        used[p.key] = (p.finding.table, level)
        templates.add(tpl)
    return out


def _gist(text: str) -> str:
    """A text's words without the ones a voice adds around a name ("the X table", "the X model")."""
    return " " + " ".join(w for w in norm(text).split() if w not in ("the", "table", "model")) + " "


@dataclass
class _Pick:
    changed: set
    allowed: set
    taken: set        # norm() of every text already used (the run's, surveyed tasks', this task's)
    templates: set    # sentences this task's other keys used
    said: list        # _gist() of the other tasks' texts, to spot a body another task already said


def _choose(p: _Plan, req: PromptRequest, pick: _Pick, out: PromptSet):
    """(level, text, template) of the first candidate that passes every check and is new. A text
    that repeats a frame or an opening of another task of the run (prompts.frames), or a body
    another task already said word for word (the same table, the same sentence, only the closing
    request differs), is kept only when nothing else is left."""
    done: set[str] = set()  # bodies refused or already kept as a last resort: _texts skips the rest of them
    checked: set[str] = set()
    fallback = vague = framed = None
    # the frames and openings the run's other tasks used: a text repeating one is kept only when
    # nothing fresh is left (reviewers read a frame seen twice in a set as a program's)
    used = frames.Used.of(tuple(sorted(req.avoid)), frozenset(
        str(n).lower() for n in (*pick.allowed, *req.project_models)))
    for level, body, text, tpl in _texts(p, req, pick.templates, tuple(out.prompts.values()), skip=done):
        if body in done:
            continue
        if body not in checked:
            checked.add(body)
            why = reasons_against(body, req, pick.changed, pick.allowed, p.finding.kind)
            if why:
                done.add(body)
                out.rejected.append((p.key, body, why))
                continue
        if norm(text) in pick.taken:
            continue
        if text != body and reasons_against(text, req, pick.changed, pick.allowed, p.finding.kind):
            continue  # the request's own words (a column, an entity) may give something away
        if p.key == "base" and p.finding.column and p.finding.column.lower() not in body.lower():
            # "the data in X doesn't look right" as the whole first report gives the agent nothing
            # to start from: the base names the column it is about (kept only as a last resort)
            vague = vague or (level, text, tpl)
            done.add(body)  # its other compositions could only be this body's vague text again
            continue
        gist = _gist(body)
        if any(gist in t for t in pick.said):
            fallback = fallback or (level, text, tpl)
            done.add(body)
            continue
        if used.frame(body) or used.opens(text):
            # every composition of the body repeats the frame; all but the rare lead-ins its opening
            framed = framed or (level, text, tpl)
            done.add(body)
            continue
        return level, text, tpl
    return framed or fallback or vague


def _texts(p: _Plan, req: PromptRequest, templates: set, earlier: tuple = (), skip: set = frozenset()):
    """(level, body, whole text, template) in order of preference; a sentence another key of the
    task already used comes after every fresh one of the same level. `earlier`: this task's texts
    so far (a request its base closed with comes last for medium and hard, as one another task
    used does). A body the caller puts in `skip` (read between yields) gets no more texts."""
    voice = _voice(req)
    place = render.Place(p.key, p.second, tuple(f" {norm(t)} " for t in (*req.avoid, *earlier)))
    asks = render.requests(p.finding, voice, place)
    data = p.finding.kind not in NOT_DATA
    guess = template_text(req) if req.observation is None else None
    if guess:  # the pattern's description first, then adegen's general sentences
        lower_ok = not str(getattr(req.pattern, "symptom_template", "")).lstrip().startswith("{")
        for text in render.compositions(render.Body(guess, lower_ok, data), voice, p.key, asks):
            if guess in skip:
                break
            yield "pattern", guess, text, guess
    for level, (body, lower_ok, tpl) in _ordered(p, voice, place, templates):
        if p.also is not None:  # "... The same goes for driver_points."
            # salted with the template's old spelling, so the sibling sentence stays what it was
            salt = f"{p.key}:{phrases.old_spelling(tpl)}"
            body = f"{body} {pairs.also(p.also, voice, salt, p.also.kind == p.finding.kind and not req.distinct)}"
        for text in render.compositions(render.Body(body, lower_ok, data), voice, p.key, asks):
            if body in skip:
                break
            yield level, body, text, tpl


def _ordered(p: _Plan, voice: render.Voice, place: render.Place, templates: set):
    """(level, body) pairs, lazily, in order of preference: the key's detail before the frame (a report
    in another frame with the detail this task gives comes before its own frame with more or
    less), a sentence of this task's other keys or a frame another task used later; then the
    older levels."""
    order, worn = render.FALLBACK[voice.detail_for(p.key)], render.Worn.of(place.said)
    framed, older = [], []
    for level in p.levels:
        tpls, vals = render.body_templates(p.finding, level, voice, place)
        found = [(level, tpl, vals) for tpl in tpls]
        if level in render.SHAPES:
            framed += found
        else:
            older += [x for x in found if x[1] not in templates] + [x for x in found if x[1] in templates]
    # the order depends on the templates alone (a stable sort, so the same as sorting the filled
    # bodies): only the bodies the caller reads get filled
    framed.sort(key=lambda x: (order.index(render.detail_of(x[1])), x[1] in templates, worn(x[1])))
    for level, tpl, vals in framed + older:
        body = render.body_of(tpl, p.finding, vals)
        if body is not None:
            yield level, body


_PATHS = re.compile(r"\s*\((?:models|analyses|tests|snapshots|macros)/[^)]*\)|\s*compiled code at \S+|"
                    r"\s*See .*?for details\.?", re.I)


def clean_dbt_message(message: str, model_path: str | None = None) -> str:
    """dbt's own error as a user pastes it: the error lines, without file paths or compiled-code
    pointers (they give the file away) and without the SQL excerpt DuckDB appends."""
    msg = " ".join(str(message).split())
    msg = _PATHS.sub("", msg)
    msg = re.split(r"\s+LINE \d+:", msg)[0]
    if model_path:
        msg = msg.replace(model_path, "").replace(model_path.rsplit("/", 1)[-1], "")
    msg = re.sub(r"^(Runtime|Database|Compilation) Error in model (\S+)\s*", r"\1 Error in model \2\n  ", msg)
    return msg.strip()[:400]


def model_facts(model: dict, discovery: dict) -> dict:
    """PromptRequest fields that come from discovery: the model's materialization, its layer in
    words, whether its layer mostly shares that materialization, and every model name."""
    models = [m for m in discovery.get("models", []) if m.get("enabled", True)]
    layer = str(model.get("layer") or "")
    mat = str(model.get("materialized") or "")
    peers = [m for m in models if m.get("layer") == layer and m.get("name") != model.get("name")]
    same = sum(1 for m in peers if m.get("materialized") == mat)
    return {"model_materialized": mat or None, "layer": "" if layer in ("", "other") else layer,
            "convention": len(peers) >= 2 and same >= 0.6 * len(peers),
            "project_models": tuple(sorted({str(m["name"]) for m in models}))}
