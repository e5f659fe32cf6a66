"""Row-level preconditions: the change matters on the scope's own rows; joins miss keys; filters,
mapped codes and boundaries meet real rows; values are messy the way the mistake needs."""
from __future__ import annotations

from sqlglot import exp

from adegen.realism.measure_sql import (column_name, count_rows, either_where, in_join, nearest, scope_change,
                          scope_columns_differ, share, sql)
from adegen.realism.registry import CheckInput, Verdict, check


@check("rows_change", min_rows=1)
def rows_change(inp: CheckInput) -> Verdict:
    """The SELECT the mutation edits returns other rows on the intact data (a local oracle)."""
    got = scope_change(inp.probe, inp.scope)
    if got is None:
        shape = scope_columns_differ(inp.probe, inp.scope)
        if shape:
            return Verdict(True, f"the edited SELECT returns other columns ({shape})", {})
        return Verdict.unmeasured("the changed SELECT could not be run: " + _last_error(inp))
    total, differing = got
    ok = differing >= inp.params["min_rows"]
    # `differing` counts rows gone and rows added (a changed row twice), so it can exceed `total`
    fact = (f"{differing:,} row(s) gone or added in the edited SELECT (the intact one returns {total:,})" if ok
            else f"the edited SELECT returns the same {total:,} rows (nothing in the data meets the change)")
    return Verdict(ok, fact, {"rows": total, "differing": differing})


def _last_error(inp: CheckInput) -> str:
    return (inp.probe.errors[-1] if inp.probe is not None and inp.probe.errors else "no detail")[:200]


def _join_pair(inp: CheckInput) -> tuple[exp.Join, exp.Join] | None:
    b, a = inp.scope.before, inp.scope.after
    if isinstance(b, exp.Join) and isinstance(a, exp.Join):
        return b, a
    jb, ja = in_join(b), in_join(a)
    return (jb, ja) if jb is not None and ja is not None else None


def _side_keys(join: exp.Join, right: bool) -> list[exp.Column]:
    """The ON/USING columns of the joined table (right) or of the tables before it (left)."""
    alias = join.this.alias_or_name.lower()
    on = join.args.get("on")
    if on is not None:
        cols = [c for c in on.find_all(exp.Column) if c.table]
        return [c for c in cols if (c.table.lower() == alias) == right]
    using = join.args.get("using") or []
    name = alias if right else None
    return [exp.column(u.name, table=name) for u in using] if name else []


@check("unmatched_rows", min_rows=1, max_share=0.95)
def unmatched_rows(inp: CheckInput) -> Verdict:
    """The joined relation really misses keys: some rows of the outer join find no match."""
    pair = _join_pair(inp)
    if pair is None:
        return Verdict.unmeasured("the change is not a join")
    jb, ja = pair
    outer_is_intact = (jb.side or "").upper() in ("LEFT", "FULL", "RIGHT")
    join = jb if outer_is_intact else ja
    select = inp.scope.select if outer_is_intact else inp.scope.mutant_select
    # FULL -> LEFT loses the rows only the joined side has; LEFT/INNER changes lose the unmatched left rows
    lost_left_only = (jb.side or "").upper() == "FULL"
    keys = _side_keys(join, right=not lost_left_only)
    if not keys or select is None:
        return Verdict.unmeasured("no join key columns to test")
    cond = " and ".join(f"{sql(k)} is null" for k in keys)
    got = count_rows(inp.probe, select, [cond])
    if got is None:
        return Verdict.unmeasured("the join could not be measured: " + _last_error(inp))
    total, unmatched = got
    other = join.this.alias_or_name
    frac = unmatched / total if total else 0.0
    ok = unmatched >= inp.params["min_rows"] and frac <= inp.params["max_share"]
    fact = f"{share(unmatched, total)} rows find no match in {other}"
    return Verdict(ok, fact, {"rows": total, "unmatched": unmatched})


def _conjuncts(cond: exp.Expression | None) -> list[exp.Expression]:
    if cond is None:
        return []
    return list(cond.flatten()) if isinstance(cond, exp.And) else [cond]


def _row_counts(inp: CheckInput, what: str) -> tuple[int, int] | Verdict:
    """(rows of the intact SELECT, rows of the mutated one), or the unmeasured Verdict saying why
    (`what`: the thing measured, "the join", "the filter")."""
    si, sm = inp.scope.select, inp.scope.mutant_select
    if si is None or sm is None:
        return Verdict.unmeasured("the change is not inside a SELECT")
    a, b = count_rows(inp.probe, si, []), count_rows(inp.probe, sm, [])
    if a is None or b is None:
        return Verdict.unmeasured(f"{what} could not be measured: " + _last_error(inp))
    return a[0], b[0]


@check("outer_rows_filtered", min_rows=1, max_share=0.95)
def outer_rows_filtered(inp: CheckInput) -> Verdict:
    """A condition moved from a LEFT JOIN's ON to the WHERE loses rows: some rows have no joined row
    that meets it (none at all, or only rows that fail it); the left join kept them with empty
    columns, the WHERE drops them."""
    pair = _join_pair(inp)
    if pair is None or (pair[0].side or "").upper() != "LEFT":
        return Verdict.unmeasured("the change is not in a LEFT JOIN")
    jb, ja = pair
    kept = {sql(c) for c in _conjuncts(ja.args.get("on"))}
    moved = [c for c in _conjuncts(jb.args.get("on")) if sql(c) not in kept]
    if not moved or inp.scope.select is None or inp.scope.mutant_select is None:
        return Verdict.unmeasured("no condition left the join's ON")
    # the mutant keeps a subset of the intact rows (those with a joined row meeting the condition,
    # and unmatched ones the condition lets through on NULLs): the difference is what vanishes
    got = _row_counts(inp, "the join")
    if isinstance(got, Verdict):
        return got
    total, lost = got[0], got[0] - got[1]
    alias, pred = jb.this.alias_or_name, " and ".join(sql(c) for c in moved)
    ok = lost >= inp.params["min_rows"] and (lost / total if total else 0.0) <= inp.params["max_share"]
    fact = (f"{share(lost, total)} rows of the join have no {alias} row with {pred}: the left join keeps them "
            f"with empty {alias} columns, the filter in WHERE drops them")
    return Verdict(ok, fact, {"rows": total, "lost": lost})


@check("fans_out", min_rows=1)
def fans_out(inp: CheckInput) -> Verdict:
    """With the key part dropped, the join matches several rows per row (the grain breaks)."""
    got = _row_counts(inp, "the join")
    if isinstance(got, Verdict):
        return got
    intact, fanned = got
    ok = fanned - intact >= inp.params["min_rows"]
    # equal counts are the failing case: say "no fan-out" rather than "N rows instead of N"
    fact = (f"the join returns {fanned:,} rows instead of {intact:,}" if fanned != intact
            else f"the join returns the same {intact:,} rows without the key part: nothing fans out")
    return Verdict(ok, fact, {"rows": intact, "fanned": fanned})


def _removed_values(inp: CheckInput) -> tuple[exp.Expression, list[exp.Expression]] | None:
    b, a = inp.scope.before, inp.scope.after
    if isinstance(b, exp.In) and isinstance(a, exp.In):
        kept = {sql(x) for x in a.expressions}
        gone = [x for x in b.expressions if sql(x) not in kept]
        return (b.this, gone) if gone else None
    return None


@check("value_occurs", min_rows=1)
def value_occurs(inp: CheckInput) -> Verdict:
    """The code a mapping or list loses really occurs in the data (rows carry it)."""
    found = _removed_values(inp)
    if found is not None:
        lhs, gone = found
        cond = f"{sql(lhs)} in ({', '.join(sql(x) for x in gone)})"
        what = f"{column_name(lhs)} = {', '.join(sql(x) for x in gone)}"
    else:
        branch = _dropped_when(inp)
        if branch is None:
            return Verdict.unmeasured("no dropped list item or CASE branch")
        cond, what = branch
    select = inp.scope.select
    got = count_rows(inp.probe, select, [cond], where=either_where(inp.scope)) if select is not None else None
    if got is None:
        return Verdict.unmeasured("the code could not be counted: " + _last_error(inp))
    total, hits = got
    ok = hits >= inp.params["min_rows"]
    return Verdict(ok, f"{share(hits, total)} rows have {what}", {"rows": total, "hits": hits})


def _dropped_when(inp: CheckInput) -> tuple[str, str] | None:
    """(condition, words) for the rows a dropped CASE branch labelled: they meet its WHEN and no
    earlier one (a simple CASE compares its operand with each WHEN value)."""
    b, a = inp.scope.before, inp.scope.after
    if not (isinstance(b, exp.Case) and isinstance(a, exp.Case)):
        return None
    kept = {sql(x) for x in a.args.get("ifs") or []}
    ifs = b.args.get("ifs") or []
    gone = next((k for k, x in enumerate(ifs) if sql(x) not in kept), None)
    if gone is None:
        return None
    operand = b.this

    def test(branch: exp.If) -> str:
        return f"({sql(operand)} = {sql(branch.this)})" if operand is not None else f"({sql(branch.this)})"

    earlier = "".join(f" and not coalesce({test(x)}, false)" for x in ifs[:gone])
    what = test(ifs[gone])[1:-1] + (" and no earlier branch" if earlier else "")
    return f"coalesce({test(ifs[gone])}, false){earlier}", what


_BOUNDS = (exp.GTE, exp.GT, exp.LTE, exp.LT, exp.Between)


@check("rows_on_boundary", min_rows=1)
def rows_on_boundary(inp: CheckInput) -> Verdict:
    """Rows sit exactly on the boundary the comparison moves (so inclusive vs exclusive matters):
    rows the intact and the edited comparison decide differently, among the rows either side's
    WHERE keeps (for a join condition, the rows either side's join makes)."""
    node, moved = nearest(inp.scope.before, _BOUNDS), nearest(inp.scope.after, _BOUNDS)
    if node is None or moved is None:
        return Verdict.unmeasured("the change is not a comparison")
    cond = f"({sql(node)}) is distinct from ({sql(moved)})"
    selects = [inp.scope.select] + ([inp.scope.mutant_select] if in_join(node) is not None else [])
    counts = [count_rows(inp.probe, s, [cond], where=either_where(inp.scope)) for s in selects if s is not None]
    got = max((c for c in counts if c is not None), key=lambda c: c[1], default=None)
    if got is None:
        return Verdict.unmeasured("the boundary could not be measured: " + _last_error(inp))
    total, on = got
    ok = on >= inp.params["min_rows"]
    fact = f"{share(on, total)} rows sit exactly on the boundary {sql(node)}"
    if ok and inp.scope.select is not None:
        # `product_views > 0` made `>= 0` over counts that are never negative is a condition that
        # holds on every row: nobody writes it, however many rows sit on the boundary
        got = count_rows(inp.probe, inp.scope.select, [f"({sql(moved)}) is not true"], where=either_where(inp.scope))
        if got is not None and got[0] > 0 and got[1] == 0:
            return Verdict(False, f"{fact}, but {sql(moved)} holds on every row: a condition nobody writes",
                           {"rows": total, "on": on, "always": True})
    return Verdict(ok, fact, {"rows": total, "on": on})


@check("nulls_present", min_rows=1)
def nulls_present(inp: CheckInput) -> Verdict:
    """The value a COALESCE guards really is missing on some rows (for NULLIF: really holds the
    placeholder it blanks out, such as a zero divisor)."""
    call = nearest(inp.scope.before, (exp.Coalesce, exp.Nullif))  # the call, or its default made null
    if call is None:
        return Verdict.unmeasured("the change is not a COALESCE or NULLIF")
    arg = call.this
    if isinstance(call, exp.Nullif):
        cond, what = f"{sql(arg)} = {sql(call.expression)}", f"is {sql(call.expression)}"
    else:
        cond, what = f"{sql(arg)} is null", "is missing"
    select = inp.scope.select
    got = count_rows(inp.probe, select, [cond]) if select is not None else None
    if got is None:
        return Verdict.unmeasured("the values could not be counted: " + _last_error(inp))
    total, hits = got
    ok = hits >= inp.params["min_rows"]
    return Verdict(ok, f"{column_name(arg)} {what} on {share(hits, total)} rows", {"rows": total, "hits": hits})


@check("uncastable_values", min_rows=1)
def uncastable_values(inp: CheckInput) -> Verdict:
    """The raw values hold some that do not parse, which the tolerant cast let through."""
    call = inp.scope.before
    if not isinstance(call, exp.TryCast) and not (isinstance(call, exp.Cast) and call.args.get("safe")):
        return Verdict.unmeasured("the change is not a TRY_CAST")
    arg = call.this
    cond = f"{sql(arg)} is not null and {sql(call)} is null"
    select = inp.scope.select
    got = count_rows(inp.probe, select, [cond], where=False) if select is not None else None
    if got is None:
        return Verdict.unmeasured("the values could not be read: " + _last_error(inp))
    total, bad = got
    ok = bad >= inp.params["min_rows"]
    return Verdict(ok, f"{share(bad, total)} {column_name(arg)} values do not parse as {sql(call.to)}",
                   {"rows": total, "unparseable": bad})


@check("messy_text", min_rows=1)
def messy_text(inp: CheckInput) -> Verdict:
    """The raw text really has mixed case or padding, the thing LOWER/TRIM cleaned up (among the
    rows either side's WHERE keeps)."""
    node = inp.scope.before
    call = node if isinstance(node, (exp.Lower, exp.Upper, exp.Trim)) else None
    if call is None:
        return Verdict.unmeasured("the change is not a LOWER/UPPER/TRIM call")
    arg = sql(call.this)
    cond = f"{arg} is distinct from {sql(call)}"
    select = inp.scope.select
    got = count_rows(inp.probe, select, [cond], where=either_where(inp.scope)) if select is not None else None
    if got is None:
        return Verdict.unmeasured("the values could not be read: " + _last_error(inp))
    total, messy = got
    ok = messy >= inp.params["min_rows"]
    what = "padded" if isinstance(call, exp.Trim) else "mixed-case"
    return Verdict(ok, f"{share(messy, total)} {column_name(call.this)} values are {what}", {"rows": total, "messy": messy})


@check("excluded_share", min_rows=1, min_share=0.02, max_share=0.5)
def excluded_share(inp: CheckInput) -> Verdict:
    """The added exclusion filter drops some of the SELECT's rows, not most of them: a code that
    really occurs (at least min_share of the rows) and that nobody would mistake for the bulk of
    the data (at most max_share)."""
    got = _row_counts(inp, "the filter")
    if isinstance(got, Verdict):
        return got
    total, kept = got
    dropped = max(total - kept, 0)
    frac = dropped / total if total else 0.0
    ok = dropped >= inp.params["min_rows"] and inp.params["min_share"] <= frac <= inp.params["max_share"]
    return Verdict(ok, f"the filter drops {share(dropped, total)} rows", {"rows": total, "dropped": dropped})
