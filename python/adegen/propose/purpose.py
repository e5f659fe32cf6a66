"""Purposeful changes as task candidates (issue 51): for each of the project's own models, what a
stakeholder could ask of it (rewrite/purposes: a new count, a category left out), which column and
value the data supports, and whether the slip really changes the table - all measured on the
validator's intact build, as the catalog's preconditions are.

The model's raw SQL takes the change (the task's patches); its compiled SQL takes the same change
(the scopes are found by name in both) and is run read-only on the intact build: the column's
values, the broken and the right state's tables. A candidate is kept only when the right state's
table differs from the broken one (the slip shows) and, for an exclusion, from today's (the purpose
does something). The prompts (text as data, PROMPTS) report what a stakeholder sees since the
change, never the fix."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from adegen.prompts import words
from adegen.propose.candidate_sites import encode, endings_of
from adegen.realism.probe import ProbeDB
from adegen.rewrite.purposes import EXCLUSION, KINDS, METRIC, Ask, change, metric_name, reaches_output
from adegen.rewrite.purposes import docs
from adegen.rewrite.purposes import scopes as sc
from adegen.rewrite.stories.base import Model
from adegen.rewrite.stories.ctes import top_ctes
from adegen.sql.quote import ident

MAX_COLUMNS = 8          # text columns probed per scope
MAX_VALUES = 12          # a column with more distinct values is no category
SHARE = (0.05, 0.6)      # the value's share of the scope's rows (a category, not noise nor the bulk)
MAX_KEYS = 4            # key columns probed for a scope's grain
_KEY = re.compile(r"(?:^|_)(?:id|key)\Z", re.I)
NULL_SHARE = 0.3         # an exclusion's column: NULL in a few rows (a slip that drops most rows is no slip one misses)
# words in a column name that say it holds a category
HINT = re.compile(r"status|state|type|category|channel|segment|kind|tier|plan|source|method|stage|priority|role|tag", re.I)
DIFFICULTY = "medium"
TAGS = ["dbt", "debugging", "purposeful-change"]
SUBJECTS = {
    METRIC: "Add {name} to {model}: the number of {value} {nouns}",
    EXCLUSION: "Leave the {value} {nouns} out of {model}",
}
# The prompt levels (text as data): what a stakeholder sees since the change, never the fix. They say
# what the change set out to do in business words ("a count of the shipped orders", "leave the
# email orders out"), never the condition as code: "the records whose status is 'shipped'" restated
# the WHERE the slip sits in, and blind reviewers rated that task easy because the message disclosed
# the change (issue 51). How far the table moved is said in rough words (prompts.words), never
# "it has 77 rows where 128 were expected"
PROMPTS = {
    METRIC: {
        "base": ("We added `{name}` to `{table}` so we can see how many {value} {nouns} are behind each row. "
                 "Since that went in, the rest of `{table}` looks wrong: {example}. The new column should "
                 "stay. Can you find out what happened and fix it?"),
        "hard": ("Since `{name}` was added to `{table}` (it stays), its other numbers are off. "
                 "Could you take a look?"),
    },
    EXCLUSION: {
        "base": ("We changed `{table}` so it leaves the {value} {nouns} out. Since then more has changed than "
                 "that: {example}. Only the {value} ones were meant to go; please sort this out."),
        "hard": "`{table}` lost more than the {value} {nouns} we meant to leave out. What went wrong there?",
    },
}
# the measured example each kind's base prompt gives, in rough words (rows: the row count differs;
# values: it does not). No frame is shared between the kinds: two purposeful tasks of one run must not
# read as one template
EXAMPLES = {
    METRIC: {"rows": "it has {change} it should", "values": "{amount} different numbers now",
             "has": ("has", "have")},
    EXCLUSION: {"rows": "we count {change} we expected", "values": "{amount} wrong now",
                "has": ("is", "are")},
}


@dataclass(frozen=True)
class ModelText:
    """One of the project's own models: unique id, name, path, raw and compiled SQL, layer, and the
    properties file that documents it ((path, text), or None)."""

    unique_id: str
    name: str
    path: str
    raw: str
    compiled: str
    layer: str = ""
    properties: tuple[str, str] | None = None


@dataclass(frozen=True)
class Purposeful:
    """One measured purposeful change of one model, and the task it makes."""

    ask: Ask
    model: ModelText
    broken: str
    fixed: str
    facts: dict = field(default_factory=dict)   # what was measured (rows today / broken / right, ...)
    documented: str | None = None               # the properties file with the purpose written in (docs)

    @property
    def kind(self) -> str:
        return self.ask.kind

    def subject(self) -> str:
        return SUBJECTS[self.kind].format(name=self.ask.name, model=self.model.name, value=self.ask.value,
                                          nouns=things(self.model.raw, self.ask))

    def prompts(self) -> list[tuple[str, str]]:
        fields = dict(name=self.ask.name, table=self.model.name, value=self.ask.value,
                      nouns=things(self.model.raw, self.ask), example=self.example())
        return [(k, t.format(**fields)) for k, t in PROMPTS[self.kind].items()]

    def example(self) -> str:
        """How the table moved, in a person's rough words: "it has a few dozen fewer rows than it
        should", "most of its rows have different numbers now"."""
        f, bank = self.facts, EXAMPLES[self.kind]
        change = words.count_change(f.get("rows_fixed") or 0, f.get("rows_broken"), "row")
        if change:
            return bank["rows"].format(change=change)
        amount = words.amount(int(f.get("rows_differ") or 0), int(f.get("rows_fixed") or 0), "row")
        return bank["values"].format(amount=amount.verb(*bank["has"])) if amount else "its numbers changed"

    def assertions(self) -> list[dict]:
        """The task's assertion tests beside the AUTO equality tests: none (the table's rows show it)."""
        return []

    def graded_tables(self) -> list[str]:
        """The tables the task grades: the model's own (the purpose changes it)."""
        return [self.model.name]

    def rebuild_models(self) -> list[str]:
        """The models test_setup and solution.sh rebuild."""
        return [self.model.name]

    def zero_or_null(self) -> list[str]:
        """Columns the grade accepts NULL or 0 in where nothing matches: a new count (`count(case ...)`
        and `sum(case ... then 1 end)` both do it right; the broken state shows NULL there), issue 52."""
        return [self.ask.name] if self.kind == METRIC else []

    def files(self) -> tuple[tuple[str, bytes, bytes, bytes], ...]:
        """(path, today's text, the broken text, the right text) of each file the change touches:
        the model, then its properties file when the purpose is documented there (the same text in
        both states: the slip is in the SQL)."""
        raw = self.model.raw
        own = ((self.model.path, encode(raw), encode(endings_of(raw, self.broken)), encode(endings_of(raw, self.fixed))),)
        if self.documented is None or self.model.properties is None:
            return own
        path, text = self.model.properties
        documented = encode(endings_of(text, self.documented))
        return own + ((path, encode(text), documented, documented),)


def scope_noun(raw: str, scope: str) -> str:
    """What a row of the scope is by the name of the relation it reads, in words ("order" for
    stg_orders, "subscription" for fct_subscription_revenue: its layer prefix, a measure or a build
    word is no thing a row is), "row" when unknown."""
    s = sc.scopes(raw).get(scope)
    word = words.table_entity(sc.relation_name(s.relation)) if s else "row"
    return "row" if word in words.GENERIC else word


def things(raw: str, ask: Ask) -> str:
    """What the prompts call the rows the change counts or leaves out, plural: the grain the data
    shows (`Ask.entity`, from the scope's unique key: "subscriptions"), else for an exclusion the
    column's own words ("the email marketing channel"), else the relation's entity. Never the model's
    name pluralised ("how many Enterprise subscription revenues", "the email channel_orders": blind
    reviewers read nouns made from relation names as a program's, issue 51)."""
    if ask.entity:
        return words.plural(ask.entity)
    said = words.column_words(ask.column)
    if ask.kind == EXCLUSION and said.split()[-1] not in _BARE:
        return said
    word = scope_noun(raw, ask.scope)
    return words.plural(word) if word != "row" else "rows"


# a column's words that name no thing on their own ("leave the returned status out"): the relation's
# entity says it better ("the returned orders")
_BARE = frozenset({"status", "state", "type", "kind", "category", "class", "group", "flag", "code", "value", "name",
                   "label"})


def grain(db: ProbeDB, rows: str, columns: Sequence[str], relation: str) -> str:
    """What one row of `rows` is, as its data shows it: the entity of a key column (`*_id`, `*_key`,
    `id`) that is unique and never NULL there ("subscription" for subscription_id), the one named
    like the relation first; "" when no such column (a row per channel and month)."""
    rel = sc.relation_name(relation)
    keys = [c for c in columns if _KEY.search(c)]
    own = words.table_entity(rel)
    keys.sort(key=lambda c: (words.entity_of_key(c, rel) != own, len(c)))
    keys = keys[:MAX_KEYS]
    if not keys:
        return ""
    got = db.one("select count(*), " + ", ".join(f"count(distinct {ident(c)}) = count(*) and count({ident(c)}) = count(*)"
                                                for c in keys) + f" from ({rows})")
    if not got or not got[0]:
        return ""
    for c, unique in zip(keys, got[1:]):
        e = words.entity_of_key(c, rel)
        if unique and e and e not in words.GENERIC and not words.date_grain(c):
            return e
    return ""


DOCS = {  # what the engineer writes in the properties file (text as data)
    METRIC: "Number of {noun}s whose {column} is '{value}'.",
    EXCLUSION: "Leaves out the {noun}s whose {column} is '{value}'.",
}


def document(ask: Ask, m: ModelText) -> str | None:
    """The model's properties file with the purpose written in (the new column documented, the
    exclusion said in the description), or None (no file, or it cannot be edited as text)."""
    if m.properties is None:
        return None
    word = ask.entity or scope_noun(m.raw, ask.scope)
    word = word if word.isalpha() else "row"  # a name of two words is no word of the docs
    text = DOCS[ask.kind].format(noun=word, column=ask.column, value=ask.value)
    if ask.kind == METRIC:
        return docs.document_column(m.properties[1], m.name, ask.name, text)
    return docs.document_exclusion(m.properties[1], m.name, text)


def _with_prefix(compiled: str) -> str:
    """The compiled model's WITH clause (through its last CTE), or "" when it has none."""
    ctes = top_ctes(Model(compiled, ""))
    return compiled[:ctes[-1].end] if ctes else ""


def rows_sql(compiled: str, s: sc.Scope, select: str) -> str:
    """A query over the rows the scope reads (its FROM, JOINs and WHERE) with the CTEs it can see."""
    body = f"select {select} " + compiled[s.from_start:s.where_end or s.from_end]
    head = _with_prefix(compiled)
    probe = f"__adegen_rows as (\n{body}\n)"
    return (f"{head},\n{probe}" if head else f"with {probe}") + "\nselect * from __adegen_rows"


def _values(db: ProbeDB, rows: str, column: str) -> tuple[int, int, int, list[str]] | None:
    """(rows, NULL rows, distinct values, the values whose share is in SHARE, most rows first)."""
    c = ident(column)
    got = db.one(f"with p as ({rows}\n), g as (select {c} as v, count(*) as n from p group by all) "
                 f"select (select count(*) from p), (select count(*) from p where {c} is null), "
                 f"(select count(*) from g where v is not null), "
                 f"(select list(v order by n desc, v) from g, (select count(*) as t from p) "
                 f"where v is not null and n between {SHARE[0]} * t and {SHARE[1]} * t)")
    if got is None or not got[0]:
        return None
    return int(got[0]), int(got[1]), int(got[2]), [str(v) for v in (got[3] or []) if is_label(str(v))]


# A value a person would name in a request: a label ("returned", "EMEA"), not a hash, a UUID, a number
# or a long free text (hashed or pseudonymised data holds categories no one would type: "leave the
# 'f4b016bb8e1a...' rows out" is a program's request; so is a URL or an e-mail address)
_NOT_LABEL = re.compile(r"[0-9a-f]{12,}|[0-9a-f]{8}-[0-9a-f]{4}-.*|[\d\W_]*", re.I)


def is_label(value: str) -> bool:
    v = value.strip()
    return (0 < len(v) <= 40 and not _NOT_LABEL.fullmatch(v)
            and not any(mark in v for mark in ("://", "@", "www."))  # an address is no category
            and len(v.split()) <= 4 and not v.endswith((".", "!", "?")))  # nor a sentence of free text


def _shown(raw: str, s: sc.Scope) -> set[str]:
    """The words of the scope's select list and of its clauses after the WHERE (GROUP BY ...)."""
    tail = raw[s.list_start:s.list_end] + " " + raw[(s.where_end or s.from_end):s.end]
    return set(re.findall(r"[a-z_][a-z0-9_]*", tail.lower()))


def asks_for(m: ModelText, db: ProbeDB) -> list[Ask]:
    """What could be asked of this model, the data permitting (at most one ask per kind and scope)."""
    raw_scopes, comp_scopes = sc.scopes(m.raw), sc.scopes(m.compiled)
    out: list[Ask] = []
    for name, s in raw_scopes.items():
        cs = comp_scopes.get(name)
        if cs is None:
            continue
        rows = rows_sql(m.compiled, cs, f"{cs.qualifier}.*" if cs.qualifier else "*")
        cols = db.columns(f"({rows})") or {}
        text_cols = [c for c, t in cols.items() if t.upper().startswith("VARCHAR") and re.fullmatch(r"[A-Za-z_]\w*", c)]
        text_cols.sort(key=lambda c: (not HINT.search(c), c))
        want = {k for k in KINDS if k != METRIC or (s.grouped and s.aggregates and reaches_output(m.raw, name))}
        shown = _shown(m.raw, s)
        entity = grain(db, rows, list(cols), s.relation) if want else ""
        for col in text_cols[:MAX_COLUMNS]:
            if not want:
                break
            got = _values(db, rows, col)
            if got is None:
                continue
            total, nulls, distinct, values = got
            if not values or not 2 <= distinct <= MAX_VALUES:
                continue
            if METRIC in want and col.lower() not in shown:  # a count of one group value within its own groups: no ask
                word = entity or scope_noun(m.raw, name)
                out.append(Ask(METRIC, name, col, values[0], metric_name(values[0], s.relation, word), entity))
                want.discard(METRIC)
            if EXCLUSION in want and 0 < nulls <= NULL_SHARE * total:
                out.append(Ask(EXCLUSION, name, col, values[-1], entity=entity))
                want.discard(EXCLUSION)
    return out


def wrap(sql: str) -> str:
    """A query as a parenthesised relation to select from."""
    return "(\n" + sql.strip().rstrip(";") + "\n)"


def measure(ask: Ask, m: ModelText, db: ProbeDB) -> dict | None:
    """The facts of the change on the intact build, or None when the slip does not show (or the
    change cannot be run)."""
    comp = change(m.compiled, ask)
    if comp is None:
        return None
    broken, fixed = (wrap(x) for x in comp)
    keep = f"* exclude ({ident(ask.name)})" if ask.kind == METRIC else "*"
    a, b = f"(select {keep} from {fixed})", f"(select {keep} from {broken})"
    got = db.one(f"select (select count(*) from {wrap(m.compiled)}), (select count(*) from {broken}), "
                 f"(select count(*) from {fixed}), (select count(*) from ({a} except all {b})), "
                 f"(select count(*) from ({b} except all {a}))")
    if got is None or not (got[3] or got[4]):
        return None
    facts = {"rows_today": int(got[0]), "rows_broken": int(got[1]), "rows_fixed": int(got[2]),
             "rows_differ": int(got[3])}  # rows of the right table the broken one lacks or has otherwise
    if ask.kind == METRIC:
        n = db.one(f"select count(*) from {fixed} where {ident(ask.name)} > 0")
        if not n or not n[0]:
            return None  # the new count is zero everywhere: nothing was asked
        facts["rows_counted"] = int(n[0])
    else:
        today = wrap(m.compiled)
        d = db.one(f"select count(*) from ((select * from {today}) except all (select * from {fixed}))")
        if not d or not d[0]:
            return None  # leaving the value out changes nothing: no purpose
        facts["rows_left_out"] = int(d[0])
    return facts


def candidates(models: Sequence[ModelText], db: ProbeDB, say: Callable[[str], None] = lambda _: None
               ) -> list[Purposeful]:
    """Every measured purposeful change of `models` (in the order given), kinds interleaved: the
    first of each kind, then the second of each, ... (a run's tasks are not all of one kind)."""
    by_kind: dict[str, list[Purposeful]] = {k: [] for k in KINDS}
    seen: set[tuple] = set()
    for m in models:
        for ask in asks_for(m, db):
            key = (m.unique_id, ask.kind, ask.column)
            if key in seen:
                continue  # the same ask in a CTE and in the final SELECT (any value): one change
            seen.add(key)
            texts = change(m.raw, ask)
            facts = measure(ask, m, db) if texts else None
            if texts is None or facts is None:
                continue
            by_kind[ask.kind].append(Purposeful(ask, m, texts[0], texts[1], facts, document(ask, m)))
            say(f"purposeful change: {m.name}: {ask.kind} on {ask.column} = {ask.value!r} ({facts})")
    for found in by_kind.values():  # a column named as a category first, a mart first, then as found
        found.sort(key=lambda c: (not HINT.search(c.ask.column), c.model.layer != "marts"))
    return take_turns(list(by_kind.values()))


def take_turns(groups: Sequence[list]) -> list:
    """The groups' items taking turns, each group's order kept: the first of each, then the second, ..."""
    return [g[i] for i in range(max(map(len, groups), default=0)) for g in groups if i < len(g)]
