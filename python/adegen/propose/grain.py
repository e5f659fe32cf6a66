"""The join at the wrong grain as a purposeful task candidate (issue 51; rewrite/purposes/grain.py):
"bring <column> into <model> from <relation>", where the relation repeats the key.

The data precondition, measured on the validator's intact build: a key column of the scope's first
relation (`*_id`, `*_key`) is also a column of another of the project's models (not the model
itself, nothing downstream of it: a ref there would close a circle) whose rows repeat that key, and
that model has a column the key determines there (one value per key: an order's status on every one
of its items) that the changed model does not have yet. Then the change is run on the compiled SQL:
kept only when the broken table has other rows than today's (the slip shows) and the right one has
today's rows and columns exactly, the new column filled on some rows (the purpose is done).
The prompts report the row count and a total a reader sees grow, never the fix."""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from typing import Callable, Sequence

from adegen.core.graph import ProjectGraph
from adegen.prompts import words
from adegen.propose.candidate_sites import encode, endings_of
from adegen.propose.purpose import DIFFICULTY, HINT, ModelText, rows_sql, wrap
from adegen.realism.probe import ProbeDB
from adegen.rewrite.purposes import scopes as sc
from adegen.rewrite.purposes.grain import GRAIN, GrainAsk, change, taken
from adegen.sql.quote import ident

__all__ = ["DIFFICULTY", "GRAIN", "Side", "GrainChange", "candidates"]

KEY = re.compile(r"(?:_id|_key)\Z", re.I)
_PREFIX = re.compile(r"^(?:stg|int|fct|fact|dim|rpt|base|src|raw|mart|agg)_+", re.I)
MAX_SIDES = 12        # other relations probed per key
# a column is brought into an intermediate or a mart (a project without layers: any model), from a
# relation of its own layer or a lower one (a staging model does not read a mart)
RANK = {"staging": 0, "intermediate": 1, "marts": 2}
MAX_PER_MODEL = 1     # grain changes kept per model
MAX_FOUND = 4         # grain changes measured at most (a build writes one or two: the search stops there)
SIDES_TRIED = 2       # sides offered per scope and key (the first one measured is kept)
NUMERIC = ("INTEGER", "INT", "BIGINT", "HUGEINT", "SMALLINT", "TINYINT", "DOUBLE", "FLOAT", "DECIMAL", "REAL", "UBIGINT")
SUBJECT = "Bring {column} into {model} from {source}"
# The prompt levels (text as data): what a reader of the table sees since the change, in rough words,
# never the fix. Three base frames, one per change by a stable hash: two grain tasks of a run must not
# read as one template (blind review: "templated like task 9").
BASES = (
    "We started pulling `{column}` into `{table}` from `{source}`. Now `{table}` has {change} it used "
    "to{total}. We want to keep `{column}`; can you sort out what went wrong?",
    "Since `{column}` (from `{source}`) went into `{table}`, the table has {change} before{total}. The "
    "column is meant to stay. Could you fix it?",
    "`{table}` got a new column, `{column}`, read from `{source}`. Since then it has {change} it "
    "should{total}. Keep the column, but please get the rest back to what it was.",
)
# a hard mix writes this as the base prompt: it still says the column stays (removing it is no fix)
HARD = "Since `{column}` was added to `{table}` (we keep it), its numbers don't add up anymore. Can you fix it?"


@dataclass(frozen=True)
class Side:
    """A model a column may be brought from: unique id, name, and its relation as compiled SQL names it."""

    unique_id: str
    name: str
    compiled: str
    layer: str = ""


@dataclass(frozen=True)
class GrainChange:
    """One measured join at the wrong grain, and the task it makes (propose/purpose.Purposeful's shape)."""

    ask: GrainAsk
    model: ModelText
    broken: str
    fixed: str
    facts: dict = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return GRAIN

    def subject(self) -> str:
        return SUBJECT.format(column=self.ask.column, model=self.model.name, source=self.ask.source)

    def prompts(self) -> list[tuple[str, str]]:
        f = self.facts
        total = ""
        if f.get("measure"):
            total = f", and the `{f['measure']}` total has gone {'up' if f.get('sum_up', True) else 'down'} with it"
        change = words.count_change(f["rows_today"], f["rows_broken"], "row") or "other rows than"
        fields = dict(column=self.ask.column, table=self.model.name, source=self.ask.source, change=change,
                      total=total)
        base = BASES[zlib.crc32(f"{self.model.name}:{self.ask.column}".encode()) % len(BASES)]
        return [("base", base.format(**fields)), ("hard", HARD.format(**fields))]

    def example(self) -> str:
        """The measured row counts (the review page's impact example)."""
        return f"{_num(self.facts['rows_broken'])} rows where it had {_num(self.facts['rows_today'])}"

    def files(self) -> tuple[tuple[str, bytes, bytes, bytes], ...]:
        raw = self.model.raw
        return ((self.model.path, encode(raw), encode(endings_of(raw, self.broken)), encode(endings_of(raw, self.fixed))),)

    def graded_tables(self) -> list[str]:
        return [self.model.name]

    def rebuild_models(self) -> list[str]:
        return [self.model.name]

    def assertions(self) -> list[dict]:
        """The task's assertion tests (tasks/assertion_types.py entries): the model's key is unique."""
        return [{"type": "columns_must_be_unique",
                 "args": {"model": self.model.name, "columns": [self.facts["unique_key"]]}}]

    def zero_or_null(self) -> list[str]:
        """No column graded leniently: the brought-in column is a value, not a count."""
        return []


def cte_name(text: str, source: str) -> str | None:
    """The new CTE's name: the source's name without its layer prefix, else the whole name; None
    when both are taken in the model."""
    for name in (_PREFIX.sub("", source), source):
        if name and not taken(text, name):
            return name
    return None


class _Sides:
    """The other side's facts, measured once per (model, key) and shared by every changed model."""

    def __init__(self, db: ProbeDB):
        self.db, self._cols, self._fd = db, {}, {}

    def columns(self, side: Side) -> dict[str, str]:
        if side.unique_id not in self._cols:
            self._cols[side.unique_id] = {c.lower(): t for c, t in (self.db.columns(side.compiled) or {}).items()}
        return self._cols[side.unique_id]

    def determined(self, side: Side, key: str) -> list[str]:
        """The columns of `side` that hold one value per `key` (NULL counted as a value) and at
        least two values in all, when `key` repeats there; [] when it does not."""
        got = self._fd.get((side.unique_id, key))
        if got is not None:
            return got
        cols = [c for c in self.columns(side) if c != key and re.fullmatch(r"[a-z_][a-z0-9_]*", c)]
        out: list[str] = []
        if cols:
            k = ident(key)
            per = ", ".join(f"count(distinct {ident(c)}) + max(({ident(c)} is null)::int) as d{i}"
                            for i, c in enumerate(cols))
            glob = ", ".join(f"count(distinct {ident(c)})" for c in cols)
            maxes = ", ".join(f"max(d{i})" for i in range(len(cols)))
            row = self.db.one(f"with s as (select * from {side.compiled} where {k} is not null), "
                              f"g as (select {k}, count(*) as n, {per} from s group by {k}) "
                              f"select * from (select max(n), {maxes} from g), (select {glob} from s)")
            if row is not None and row[0] is not None and int(row[0]) > 1:
                n = len(cols)
                out = [c for i, c in enumerate(cols) if row[1 + i] is not None and int(row[1 + i]) <= 1
                       and int(row[1 + n + i] or 0) >= 2]
        self._fd[(side.unique_id, key)] = out
        return out


def _rank(column: str, typ: str) -> tuple:
    """Which column to bring in first: a category-like text column, then text, then a date, ids last."""
    t = typ.upper()
    return (bool(KEY.search(column)), not t.startswith("VARCHAR"), not HINT.search(column),
            not ("DATE" in t or "TIMESTAMP" in t), column)


def asks_for(m: ModelText, sides: Sequence[Side], facts: _Sides) -> list[GrainAsk]:
    """The grain changes the data allows in this model: per scope and key, the first SIDES_TRIED sides
    (in the order given) that repeat the key and hold a column it determines."""
    out: list[GrainAsk] = []
    output_cols = {c.lower() for c in (facts.db.columns(wrap(m.compiled)) or {})}
    comp_scopes = sc.scopes(m.compiled)
    for name, s in sc.scopes(m.raw).items():
        cs = comp_scopes.get(name)
        if cs is None or s.grouped:
            continue
        first = facts.db.columns(f"({rows_sql(m.compiled, cs, f'{cs.qualifier}.*' if cs.qualifier else '*')})") or {}
        every = facts.db.columns(f"({rows_sql(m.compiled, cs, '*')})") or {}
        have = output_cols | {c.lower() for c in every}
        for key in (c.lower() for c in first if KEY.search(c)):
            tried = 0
            for side in [x for x in sides if key in facts.columns(x)][:MAX_SIDES]:
                types = facts.columns(side)
                cols = sorted((c for c in facts.determined(side, key) if c not in have and not taken(m.raw, c)),
                              key=lambda c: _rank(c, types.get(c, "")))
                cte = cte_name(m.raw, side.name) if cols else None
                if cols and cte and not taken(m.compiled, cte):
                    out.append(GrainAsk(name, side.name, key, cols[0], cte))
                    tried += 1
                    if tried >= SIDES_TRIED:
                        break
    return out


def _num(v) -> str:
    f = float(v)
    return f"{int(f):,}" if f.is_integer() else f"{f:,.2f}"


def _total(nums: list[str], today: list | None, broken: list | None) -> dict:
    """The numeric column whose total grows the most (relative): its name, today's and the broken total."""
    best, gain = {}, 0.0
    for c, a, b in zip(nums, today or [], broken or []):
        if a is None or b is None or not a or a == b:
            continue
        g = abs(float(b) - float(a)) / abs(float(a))
        if g > gain:
            best, gain = {"measure": c, "sum_today": _num(a), "sum_broken": _num(b), "sum_up": float(b) > float(a)}, g
    return best


def measure(ask: GrainAsk, m: ModelText, side: Side, db: ProbeDB) -> dict | None:
    """The facts of the change on the intact build, or None when the slip does not show, the right
    state is not today's table with the new column beside it, the column stays empty, or it equals
    a column the model already has wherever it is filled (`order_status` beside `status`: nobody
    asks for it). One query: each state is computed once (MATERIALIZED)."""
    comp = change(m.compiled, ask, side.compiled)
    if comp is None:
        return None
    today, broken, fixed = wrap(m.compiled), *(wrap(x) for x in comp)
    cols = db.columns(today) or {}
    if not cols:
        return None
    keep = ", ".join(ident(c) for c in cols)
    new = ident(ask.column)
    nums = [c for c, t in cols.items() if t.upper().split("(")[0] in NUMERIC and not KEY.search(c)][:12]
    sums = "[" + ", ".join(f"sum({ident(c)})::double" for c in nums) + "]"
    same = "[" + ", ".join(f"count(*) filter (where {new}::varchar is distinct from {ident(c)}::varchar)"
                           for c in cols) + "]"
    keys = sorted((c for c in cols if re.fullmatch(r"[a-z_][a-z0-9_]*", c)), key=lambda c: not KEY.search(c))[:12]
    unique = "[" + ", ".join(f"count(distinct {ident(c)}) = count(*) and count({ident(c)}) = count(*)"
                             for c in keys) + "]"
    got = db.one(f"with __t as materialized (select * from {today}), __b as materialized (select * from {broken}), "
                 f"__f as materialized (select * from {fixed}) "
                 f"select (select count(*) from __t), (select count(*) from __b), (select count(*) from __f), "
                 f"(select count(*) from (select * from __t except all select {keep} from __f)), "
                 f"(select count(*) from (select {keep} from __f except all select * from __t)), "
                 f"(select count(*) from __f where {new} is not null), "
                 f"(select {same} from __f where {new} is not null), "
                 f"(select {sums} from __t), (select {sums} from __b), (select {unique} from __t)")
    if got is None:
        return None
    rows_today, rows_broken, rows_fixed, lost, extra, filled = (int(x) for x in got[:6])
    if rows_broken == rows_today or rows_fixed != rows_today or lost or extra or not filled:
        return None
    if any(int(v) == 0 for v in got[6] or []):
        return None
    # The repeated rows are whole copies (the column is one value per key), which ade-bench's
    # set-based equality test cannot see: the task grades the table's own key as unique too
    # (assertion columns_must_be_unique, as the screening's duplicates-only verdict does).
    unique = next((c for c, ok in zip(keys, got[9] or []) if ok), None)
    if unique is None:
        return None
    return {"rows_today": rows_today, "rows_broken": rows_broken, "rows_fixed": rows_fixed,
            "rows_differ": abs(rows_broken - rows_fixed),
            "rows_filled": filled, "key": ask.key, "unique_key": unique, **_total(nums, got[7], got[8])}


def candidates(models: Sequence[ModelText], sides: Sequence[Side], graph: ProjectGraph | None, db: ProbeDB,
               say: Callable[[str], None] = lambda _: None) -> list[GrainChange]:
    """Every measured grain change of `models` (in the order given, at most MAX_PER_MODEL each).
    The sides of a model: its own ancestors first (nearest first: the relations its lineage
    already reads), then the others by name; never itself nor anything downstream of it."""
    facts, out = _Sides(db), []
    by_id = {s.unique_id: s for s in sides}
    for m in models:
        if m.layer == "staging":
            continue
        below = graph.descendants(m.unique_id) if graph is not None and m.unique_id in graph else set()
        up = graph.upstream(m.unique_id) if graph is not None and m.unique_id in graph else []
        order = [by_id[u] for u in up if u in by_id] + sorted(
            (s for s in sides if s.unique_id not in up), key=lambda s: s.name)
        mine = [s for s in order if s.unique_id != m.unique_id and s.unique_id not in below
                and RANK.get(s.layer, 0) <= RANK.get(m.layer, 2)]
        kept = 0
        for ask in asks_for(m, mine, facts):
            side = next(s for s in mine if s.name == ask.source)
            texts = change(m.raw, ask, "{{ ref('" + side.name + "') }}")
            found = measure(ask, m, side, db) if texts else None
            if texts is None or found is None:
                continue
            out.append(GrainChange(ask, m, texts[0], texts[1], found))
            say(f"purposeful change: {m.name}: {GRAIN}: {ask.column} from {side.name} on {ask.key} ({found})")
            kept += 1
            if kept >= MAX_PER_MODEL:
                break
        if len(out) >= MAX_FOUND:
            break
    out.sort(key=lambda c: c.model.layer != "marts")
    return out
