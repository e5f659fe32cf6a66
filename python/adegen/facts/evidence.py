"""Measured facts about the tables a mutant changed: what a person looking at them would see.

The prompt writer (adegen.prompts) chooses the symptom to report from these facts, never from the
bug pattern. `table_facts` writes them as plain data (str, int, float, lists, dicts) so they cross
process boundaries inside `Observation.details["tables"]` and can be handed to an external prompt
command as JSON: the wire form of `adegen.facts.measured.TableFacts`, whose docstring lists every key
(one place; `measured.read_table` refuses a key no record has). The verdict asks for them through
validate.inspector.
"""
from __future__ import annotations

import re

from adegen.facts.measured import ColumnFacts, Duplicates, Ratio, RowSet, Sample, Shift, Sides, TableFacts, wire
from adegen.sql import types as sql_types
from adegen.sql.quote import ident as q

MAX_TABLES = 4      # tables measured per mutant
MAX_COLUMNS = 6     # changed columns profiled per table
MAX_SCAN = 80       # columns checked one by one on tables without a key
SAMPLES = 3
LABELS_LISTED = 5   # a column's labels listed in full up to this many

_LABEL = re.compile(r"(^|_)(name|title|label)$|^company$", re.I)
_KEY_SUFFIXES = ("_id", "_key", "_pk")


def value_kind(sql_type: str) -> str:
    """number|date|timestamp|text|bool|other: the type's family (adegen.sql.types), every kind of
    number one kind here (the facts compare values, not storage)."""
    fam = sql_types.family(sql_type)
    return "number" if fam in sql_types.NUMBERS else fam


def column_types(con, rel: str) -> dict[str, str]:
    return {r[0]: str(r[1]) for r in con.execute(f"DESCRIBE SELECT * FROM {rel}").fetchall()}


def _one(con, sql: str):
    return con.execute(sql).fetchone()


MAX_KEYS = 4  # candidate keys compared on a changed table


def find_key_columns(con, rel: str, types: dict[str, str], mutant: str | None = None) -> list[str]:
    """Columns that identify a row of `rel`: an id-like unique non-null column, else the first
    column when it is unique, else a unique pair among the leading columns.

    With the broken relation `mutant`, the key the bug does not change is preferred among the
    unique candidates: the one on which the fewest rows differ. A surrogate key the mutated model
    computes (a row_number() whose ordering the bug flipped) is reassigned by the bug, so joined
    on it every affected row looks changed in every column; joined on the natural key only the
    surrogate column changes (issue 28: symptoms are described on a natural key)."""
    keys = candidate_keys(con, rel, types)
    if mutant is None or len(keys) < 2:
        return keys[0] if keys else []
    scored = [(_rows_differing_on(con, rel, mutant, k, list(types)), i) for i, k in enumerate(keys)]
    return keys[min(scored)[1]]


def candidate_keys(con, rel: str, types: dict[str, str]) -> list[list[str]]:
    """Up to MAX_KEYS unique non-null keys of `rel`, in order of preference: id-like columns, the
    first column, then a grain pair (an id with a period) and pairs of leading columns."""
    total = _one(con, f"select count(*) from {rel}")[0]
    if not total:
        return []
    cols = list(types)
    idlike = [c for c in cols if c.lower() == "id" or c.lower().endswith(_KEY_SUFFIXES)]
    usable = [c for c in cols if value_kind(types[c]) in ("text", "number", "date", "timestamp", "bool")
              and not sql_types.approximate(types[c])]
    keys: list[list[str]] = []
    for c in dict.fromkeys(idlike + usable[:1]):
        n, nn = _one(con, f"select count(distinct {q(c)}), count({q(c)}) from {rel}")
        if n == total and nn == total:
            keys.append([c])
            if len(keys) >= MAX_KEYS:
                return keys
    if keys:
        return keys
    # a grain table: an id with a period (account_id + invoice_month), then pairs of leading columns
    periods = [c for c in usable if value_kind(types[c]) in ("date", "timestamp")
               or re.search(r"(^|_)(date|day|week|month|quarter|year|period|season)$", c, re.I)]
    head = usable[:4]
    pairs = [(a, b) for a in (idlike + usable[:1])[:3] for b in periods[:3] if a != b]
    pairs += [(a, b) for i, a in enumerate(head) for b in head[i + 1:]]
    seen: set = set()
    for a, b in pairs:
        if (a, b) in seen or len(seen) >= 12:
            continue
        seen.add((a, b))
        n = _one(con, f"select count(*) from (select distinct {q(a)}, {q(b)} from {rel})")[0]
        if n == total:
            return [[a, b]]
    return []


def _rows_differing_on(con, base: str, mutant: str, key: list[str], cols: list[str]) -> int:
    """How much of `base` looks changed when joined to `mutant` on `key`: the values that differ
    (columns compared as text, names matched case-insensitively) plus, for a row that finds no
    match, every one of its values. A reassigned surrogate key makes every column of a moved row
    differ; the natural key shows only the surrogate column changed."""
    mcols = {c.lower() for c in column_types(con, mutant)}
    others = [c for c in cols if c not in key and c.lower() in mcols]
    on = " and ".join(f"b.{q(c)} is not distinct from m.{q(c)}" for c in key)
    lost = f"(m.{q(key[0])} is null and b.{q(key[0])} is not null)"
    cells = " + ".join(f"(cast(b.{q(c)} as varchar) is distinct from cast(m.{q(c)} as varchar))::int"
                       for c in others) or "0"
    return int(_one(con, f"select coalesce(sum(case when {lost} then {max(len(others), 1)} else {cells} end), 0) "
                         f"from {base} b left join {mutant} m on {on}")[0])


def find_label(con, rel: str, types: dict[str, str], key: list[str]) -> str | None:
    """A text column that names the entity of a row (account_name, title): mostly unique per row,
    or, for a two-column key, per value of its first column (the account of an account-month)."""
    total = _one(con, f"select count(*) from {rel}")[0]
    if not total or not key:
        return None
    first = key[0]
    for c, t in types.items():
        if c in key or value_kind(t) != "text" or not _LABEL.search(c):
            continue
        if len(key) == 1:
            n, nn = _one(con, f"select count(distinct {q(c)}), count({q(c)}) from {rel}")
            if nn >= 0.9 * total and n >= 0.8 * total:
                return c
            continue
        n, nk, pairs = _one(con, f"select count(distinct {q(c)}), count(distinct {q(first)}), "
                                 f"(select count(*) from (select distinct {q(first)}, {q(c)} from {rel})) from {rel}")
        if nk and pairs == nk and n >= 0.8 * nk:
            return c
    return None


def _kx(alias: str, cols: list[str]) -> str:
    if len(cols) == 1:
        return f"cast({alias}.{q(cols[0])} as varchar)"
    return "concat_ws(' | ', " + ", ".join(f"coalesce(cast({alias}.{q(c)} as varchar), '')" for c in cols) + ")"


def _vx(alias: str, col: str | None) -> str:
    return f"cast({alias}.{q(col)} as varchar)" if col else "null"


def _num(v):
    return None if v is None else float(v)


def table_facts(con, diff, base_rel: str, mut_rel: str, *, distance: int = 0) -> dict:
    """The facts of one changed table (see the module docstring)."""
    f = wire(TableFacts, table=diff.table, distance=int(distance), rows_intact=int(diff.rows_base),
             rows_broken=int(diff.rows_mut), rows_differing=int(diff.rows_differing))
    if diff.error:
        f |= wire(TableFacts, error=diff.error)
        return f
    if diff.column_set_differs:
        f |= wire(TableFacts, columns_missing=list(diff.columns_missing), columns_extra=list(diff.columns_extra))
        return f
    btypes = column_types(con, base_rel)
    mtypes_l = {c.lower(): (c, t) for c, t in column_types(con, mut_rel).items()}
    mnames = {c: mtypes_l[c.lower()][0] for c in btypes}
    key = find_key_columns(con, base_rel, btypes, mut_rel)
    label = find_label(con, base_rel, btypes, key)
    f |= wire(TableFacts, key=key, label=label)
    ctx = _Tables(con, base_rel, mut_rel, btypes, {c: mtypes_l[c.lower()][1] for c in btypes}, mnames)
    if key:
        _keyed(ctx, f, key, label)
    else:
        _unkeyed(ctx, f)
    return f


class _Tables:
    """The two relations of one comparison, their column types and the mutant's column names."""

    def __init__(self, con, b: str, m: str, btypes: dict, mtypes: dict, mnames: dict):
        self.con, self.b, self.m = con, b, m
        self.btypes, self.mtypes, self.mnames = btypes, mtypes, mnames

    def kinds(self, c: str) -> tuple[str, str]:
        return value_kind(self.btypes[c]), value_kind(self.mtypes[c])


def _keyed(t: _Tables, f: dict, key: list[str], label: str | None) -> None:
    con, b, m = t.con, t.b, t.m
    mkey = [t.mnames[c] for c in key]
    kb, km = _kx("b", key), _kx("m", mkey)
    keys_b = ", ".join(f"cast(b.{q(c)} as varchar)" for c in key)
    keys_m = ", ".join(f"cast(m.{q(c)} as varchar)" for c in mkey)
    n = len(key)
    mlabel = t.mnames.get(label) if label else None

    def rows(sql: str) -> tuple[int, list[dict]]:
        got = con.execute(sql).fetchall()
        return (int(got[0][-1]) if got else 0), [
            wire(Sample, key=list(r[:n]), label=r[n]) for r in got]

    cnt, sample = rows(f"select {keys_b}, {_vx('b', label)}, count(*) over () from {b} b anti join {m} m "
                       f"on {kb} = {km} order by {kb} limit {SAMPLES}")
    f |= wire(TableFacts, missing=wire(RowSet, count=cnt, sample=sample))
    cnt, sample = rows(f"select {keys_m}, {_vx('m', mlabel)}, count(*) over () from {m} m anti join {b} b "
                       f"on {kb} = {km} order by {km} limit {SAMPLES}")
    f |= wire(TableFacts, extra=wire(RowSet, count=cnt, sample=sample))
    if f["rows_broken"] > f["rows_intact"] - f["missing"]["count"] + f["extra"]["count"]:
        got = con.execute(
            f"select {keys_m}, any_value({_vx('m', mlabel)}), count(*) as copies, count(*) over (), "
            f"max(count(*)) over () from {m} m group by {keys_m} having count(*) > 1 "
            f"order by copies desc, {keys_m} limit {SAMPLES}").fetchall()
        if got:
            f |= wire(TableFacts, duplicates=wire(
                Duplicates, keys=int(got[0][n + 2]), max_copies=int(got[0][n + 3]),
                sample=[wire(Sample, key=list(r[:n]), label=r[n], copies=int(r[n + 1])) for r in got]))
    others = [c for c in t.btypes if c not in key]
    if not others:
        f |= wire(TableFacts, columns=[])
        return
    join = f"from {b} b join {m} m on {kb} = {km}"
    diffs = [_differs(t, c) for c in others]
    # numbers: a value that reads differently but is the same number (0 vs 0.0) is not a symptom,
    # not even when nothing else changed in the joined rows: ade-bench's test passes on it (issue 30)
    numeric = [f"try_cast(b.{q(c)} as double) is distinct from try_cast(m.{q(t.mnames[c])} as double)"
               if t.kinds(c) == ("number", "number") else None for c in others]
    conds = diffs + [n for n in numeric if n]
    counts = _one(con, "select " + ", ".join(f"count(*) filter (where {d})" for d in conds) + f" {join}")
    as_number = iter(counts[len(diffs):])
    counts = list(counts[:len(diffs)])
    for i, cond in enumerate(numeric):
        if cond:
            counts[i], diffs[i] = next(as_number), cond
    changed = sorted(((int(k), i) for i, k in enumerate(counts) if k), key=lambda x: (-x[0], x[1]))
    cols = []
    for k, i in changed[:MAX_COLUMNS]:
        c = others[i]
        where = f"{join} where {diffs[i]}"
        col = _keyed_column(t, c, k, where, (keys_b, kb, n), label)
        if t.btypes[c] != t.mtypes[c]:
            col |= wire(ColumnFacts, sql_type=wire(Sides, intact=t.btypes[c], broken=t.mtypes[c]))
        cols.append(col)
    f |= wire(TableFacts, columns=cols)


def common_type(con, b: str, bc: str, m: str, mc: str) -> str | None:
    """The type DuckDB's set operations bring column `bc` of `b` and `mc` of `m` to (what
    ade-bench's typed EXCEPT compares them as); None when there is none."""
    try:
        got = con.execute(f"DESCRIBE (select {q(bc)} as v from {b} union all select {q(mc)} as v from {m})")
        return str(got.fetchall()[0][1])
    except Exception:  # noqa: BLE001 - no common type: the equality test itself errors
        return None


def _differs(t: "_Tables", c: str) -> str:
    """The condition "column c's value changed" for a joined row, as ade-bench's equality test sees
    it: a column whose type changed is compared as the common type (0 and 0.0 are equal there, so a
    type-only change is never a symptom), others as text."""
    mc = t.mnames[c]
    if t.btypes[c].lower() != t.mtypes[c].lower():
        typ = common_type(t.con, t.b, c, t.m, mc)
        if typ:
            return f"cast(b.{q(c)} as {typ}) is distinct from cast(m.{q(mc)} as {typ})"
    return f"cast(b.{q(c)} as varchar) is distinct from cast(m.{q(mc)} as varchar)"


def _keyed_column(t: _Tables, c: str, changed: int, where: str, keys: tuple[str, str, int],
                  label: str | None) -> dict:
    """`keys`: the select list of the key columns, the key expression, the number of key columns."""
    con, mc = t.con, t.mnames[c]
    keys_b, kb, n = keys
    bk, mk = t.kinds(c)
    bc, mcx = f"b.{q(c)}", f"m.{q(mc)}"
    now_null, was_null = _one(con, f"select count(*) filter (where {mcx} is null), "
                                   f"count(*) filter (where {bc} is null) {where}")
    col = wire(ColumnFacts, name=c, type=bk if bk == mk else f"{bk}->{mk}", changed=changed,
               now_null=int(now_null), was_null=int(was_null))
    prefer_null = "true" if now_null * 2 > changed else "false"
    got = con.execute(
        f"select {keys_b}, {_vx('b', label)}, cast({mcx} as varchar), cast({bc} as varchar) {where} "
        f"order by (({mcx} is null) <> {prefer_null}), ({bc} is null), {kb} limit {SAMPLES}").fetchall()
    col |= wire(ColumnFacts, sample=[wire(Sample, key=list(r[:n]), label=r[n], observed=r[n + 1], expected=r[n + 2])
                                     for r in got])
    if bk == "number" and mk == "number":
        _numbers(t, col, c, where)
    elif bk in ("date", "timestamp") and mk in ("date", "timestamp"):
        r = _one(con, f"select median(s), min(s), max(s) from (select epoch(cast({mcx} as timestamp)) - "
                      f"epoch(cast({bc} as timestamp)) as s {where} and {mcx} is not null and {bc} is not null)")
        if r[0] is not None:
            col |= wire(ColumnFacts, shift_seconds=wire(Shift, median=_num(r[0]), min=_num(r[1]), max=_num(r[2])))
        col |= wire(ColumnFacts, grain=wire(Sides, intact=_grain(con, t.b, c), broken=_grain(con, t.m, mc)))
    if bk in ("text", "bool", "number", "other") and mk in ("text", "bool", "number", "other"):
        pairs = con.execute(f"select cast({bc} as varchar), cast({mcx} as varchar), count(*) {where} "
                            f"group by 1, 2 order by 3 desc, 1 nulls first, 2 nulls first limit 5").fetchall()
        col |= wire(ColumnFacts, pairs=[[a, z, int(k)] for a, z, k in pairs], distinct=_distinct(t, c))
    if bk == "text" and mk == "text":
        _new_labels(t, col, c, where)
    return col


def _new_labels(t: _Tables, col: dict, c: str, where: str) -> None:
    """Labels the broken column shows that the intact one never holds (raw source codes where a
    mapping was, another spelling): the first few, most rows first, and how many changed rows show
    one. A person sees these as values that do not belong ("'settled' isn't one of our statuses"),
    not as a per-row difference."""
    mcx = f"cast(m.{q(t.mnames[c])} as varchar)"
    new = (f"{where} and {mcx} is not null and {mcx} not in "
           f"(select cast({q(c)} as varchar) from {t.b} where {q(c)} is not null)")
    # a few samples, and the row total over every new label (free text has thousands of them)
    got = t.con.execute(f"select {mcx}, count(*), sum(count(*)) over () {new} "
                        f"group by 1 order by 2 desc, 1 limit {SAMPLES}").fetchall()
    if got:
        col |= wire(ColumnFacts, only_broken=[v for v, _n, _all in got], new_rows=int(got[0][2]))
        # the labels the column held, when they are few enough to list ("paid, past_due or open"):
        # what the person expects back, not how to map the new ones
        held = t.con.execute(f"select cast({q(c)} as varchar), count(*) from {t.b} where {q(c)} is not null "
                             f"group by 1 order by 2 desc, 1 limit {LABELS_LISTED + 1}").fetchall()
        if len(held) <= LABELS_LISTED:
            col |= wire(ColumnFacts, labels_intact=[v for v, _n in held])


def _numbers(t: _Tables, col: dict, c: str, where: str) -> None:
    con, mc = t.con, t.mnames[c]
    r = _one(con, f"""select count(*) filter (where mv > bv), count(*) filter (where mv < bv),
        median(mv / bv) filter (where bv <> 0 and mv is not null),
        min(mv / bv) filter (where bv <> 0 and mv is not null),
        max(mv / bv) filter (where bv <> 0 and mv is not null),
        count(*) filter (where bv <> 0 and mv = -bv),
        count(*) filter (where bv <> round(bv) and (mv = round(bv) or mv = trunc(bv) or mv = floor(bv))),
        count(*) filter (where bv <> 0 and mv is not null)
        from (select try_cast(b.{q(c)} as double) as bv, try_cast(m.{q(mc)} as double) as mv {where})""")
    col |= wire(ColumnFacts, higher=int(r[0]), lower=int(r[1]), negated=int(r[5]), rounded=int(r[6]))
    if r[2] is not None:
        col |= wire(ColumnFacts, ratio=wire(Ratio, median=_num(r[2]), min=_num(r[3]), max=_num(r[4]), rows=int(r[7])))
    col |= wire(ColumnFacts, total=_totals(t, c))


def _totals(t: _Tables, c: str) -> dict:
    ib = _one(t.con, f"select sum(try_cast({q(c)} as double)) from {t.b}")[0]
    im = _one(t.con, f"select sum(try_cast({q(t.mnames[c])} as double)) from {t.m}")[0]
    return wire(Sides, intact=_num(ib), broken=_num(im))


def _distinct(t: _Tables, c: str) -> dict:
    return wire(Sides, intact=int(_one(t.con, f"select count(distinct {q(c)}) from {t.b}")[0]),
                broken=int(_one(t.con, f"select count(distinct {q(t.mnames[c])}) from {t.m}")[0]))


def _grain(con, rel: str, c: str) -> str | None:
    """The coarsest calendar grain all non-null values of a date/timestamp column sit on."""
    r = _one(con, f"""select count({q(c)}),
        count(*) filter (where cast(cast({q(c)} as timestamp) as time) <> time '00:00:00'),
        count(*) filter (where day({q(c)}) <> 1),
        count(*) filter (where isodow({q(c)}) <> 1),
        count(*) filter (where month({q(c)}) not in (1, 4, 7, 10)),
        count(*) filter (where month({q(c)}) <> 1)
        from {rel} where {q(c)} is not null""")
    n, timed, not_first, not_monday, not_quarter, not_january = r
    if not n:
        return None
    if timed:
        return "time"
    if not_first:
        return "week" if not not_monday and n >= 3 else "day"
    if not not_january:
        return "year"
    if not not_quarter:
        return "quarter"
    return "month"


def _unkeyed(t: _Tables, f: dict) -> None:
    """No key: per column, the values only one side has (distinct, varchar-cast; a column whose type
    changed is brought to the common type first, so 0 and 0.0 are the same value, as in ade-bench's
    test)."""
    con, b, m = t.con, t.b, t.m
    cols = []
    for c in list(t.btypes)[:MAX_SCAN]:
        mc = t.mnames[c]
        typ = common_type(con, b, c, m, mc) if t.btypes[c].lower() != t.mtypes[c].lower() else None
        vb, vm = ((f"cast(cast({q(c)} as {typ}) as varchar)", f"cast(cast({q(mc)} as {typ}) as varchar)") if typ
                  else (f"cast({q(c)} as varchar)", f"cast({q(mc)} as varchar)"))
        ob, om = _one(con, f"select (select count(*) from (select {vb} from {b} except select {vm} from {m})), "
                           f"(select count(*) from (select {vm} from {m} except select {vb} from {b}))")
        if not (ob or om):
            continue
        col = wire(ColumnFacts, name=c, type=value_kind(t.btypes[c]), changed=int(ob + om))
        if len(cols) < MAX_COLUMNS:
            only_intact = [r[0] for r in con.execute(
                f"select v from (select {vb} as v from {b} except select {vm} from {m}) "
                f"order by v nulls first limit {SAMPLES}").fetchall()]
            only_broken = [r[0] for r in con.execute(
                f"select v from (select {vm} as v from {m} except select {vb} from {b}) "
                f"order by v nulls first limit {SAMPLES}").fetchall()]
            nb, nm = _one(con, f"select (select count(*) - count({q(c)}) from {b}), "
                               f"(select count(*) - count({q(mc)}) from {m})")
            col |= wire(ColumnFacts, only_intact=only_intact, only_broken=only_broken,
                        nulls=wire(Sides, intact=int(nb), broken=int(nm)))
            bk, mk = t.kinds(c)
            if bk == "number" and mk == "number":
                col |= wire(ColumnFacts, total=_totals(t, c))
            elif bk in ("date", "timestamp") and mk in ("date", "timestamp"):
                col |= wire(ColumnFacts, grain=wire(Sides, intact=_grain(con, b, c), broken=_grain(con, m, mc)))
            if bk in ("text", "bool") or (bk == "number" and mk == "number"):
                col |= wire(ColumnFacts, distinct=_distinct(t, c))
        cols.append(col)
    f |= wire(TableFacts, columns=cols)


def pick_tables(visible: dict, dist: dict, mutated, compared: str, limit: int = MAX_TABLES) -> list:
    """Which changed tables to measure: the mutated model, the compared table, the nearest and the
    farthest changed downstream table, then the others by distance (keys of `visible`). `mutated`:
    a uid, or a tuple of them when one mistake changed sibling models (each is measured: each is
    graded; the limit grows by one per sibling)."""
    roots = (mutated,) if isinstance(mutated, str) else tuple(mutated)
    limit += len(roots) - 1
    by_dist = sorted(visible, key=lambda u: (dist.get(u, 0), str(u)))
    down = [u for u in by_dist if dist.get(u, 0) > 0]
    order = [r for r in roots if r in visible] + [compared] + down[:1] + down[-1:] + by_dist
    out: list = []
    for u in order:
        if u in visible and u not in out:
            out.append(u)
    return out[:limit]


def relation_kind(con, catalog: str, schema: str, name: str) -> str | None:
    """"view" or "table" for a relation of an attached DuckDB catalog (None when absent)."""
    r = con.execute(
        "select table_type from information_schema.tables where table_catalog = ? "
        "and lower(table_schema) = lower(?) and lower(table_name) = lower(?)",
        [catalog, schema, name]).fetchone()
    if r is None:
        return None
    return "view" if str(r[0]).upper() == "VIEW" else "table"


def configured_kind(materialized: str | None) -> str | None:
    """The warehouse object a materialization config leaves (None: ephemeral/unknown)."""
    m = str(materialized or "").lower()
    if m == "view":
        return "view"
    if m in ("table", "incremental", "snapshot", "seed"):
        return "table"
    return None
