"""Aggregate preconditions: what the aggregated column means within its groups.

MAX -> SUM is a real mistake only over a column that must not be added up inside a group (a value
repeated per entity by a join, a running total, a balance); SUM -> MAX or MIN <-> MAX only where
the select already has the aggregate someone copied from; COUNT(DISTINCT) -> COUNT only where the
counted value repeats inside groups."""
from __future__ import annotations

import re

from sqlglot import exp

from adegen.rewrite.names import is_identifier
from adegen.realism.measure_sql import column_name, count_rows, projection_alias, share, sql
from adegen.realism.probe import groups_query
from adegen.realism.registry import CheckInput, Verdict, check

# names of columns that hold a level, not an amount: adding them up inside a group is wrong. Whole
# words of a snake_case name (page_views holds no "age", session_duration no "ratio")
_NON_ADDITIVE = re.compile(r"(?:^|_)(?:cumulative|running|lifetime|balance|to_date|ytd|mtd|qtd|snapshot|latest|current|"
                           r"prices?|rates?|pct|percent|percentage|ratio|scores?|age|tiers?|levels?|rank|"
                           r"days_since)(?:_|$)|^total_|_total$|_at$|_date$|_count$|^num_|^n_", re.I)


def _error(inp: CheckInput) -> str:
    return (inp.probe.errors[-1] if inp.probe.errors else "no detail")[:200]


def _aggregate(inp: CheckInput) -> exp.AggFunc | None:
    node = inp.scope.before
    if isinstance(node, exp.AggFunc):
        return node
    return node.find_ancestor(exp.AggFunc) if node is not None else None


def _group_stats(inp: CheckInput, arg: exp.Expression, measures: list[str]) -> tuple | None:
    select = inp.scope.select
    if select is None:
        return None
    per_group = ["count(*)", f"count({sql(arg)})", f"count(distinct {sql(arg)})"]
    return inp.probe.one(groups_query(select, per_group, measures))


@check("non_additive", min_share=0.5, min_groups=1)
def non_additive(inp: CheckInput) -> Verdict:
    """The aggregated column is a level, not an amount: it repeats within groups (a value per entity)
    or its name says it is cumulative, a balance, a price, a rate."""
    agg = _aggregate(inp)
    if agg is None or agg.this is None:
        return Verdict.unmeasured("the change is not an aggregate")
    arg = agg.this
    if isinstance(arg, exp.Column) and is_identifier(arg.name):
        # max(customer_id) picks the session's one customer; nobody writes sum(customer_id)
        return Verdict(False, f"{arg.name} is an identifier: nobody adds ids up", {})
    # groups with several values (where SUM and MAX can differ); constant: all of them one value,
    # also where some rows have none (a value per entity, null on the rows a left join missed)
    got = _group_stats(inp, arg, ["count(*) filter (where g1 > 1)",
                                  "count(*) filter (where g1 > 1 and g2 = 1)"])
    if got is None:
        return Verdict.unmeasured("the groups could not be measured: " + _error(inp))
    multi, constant = int(got[0] or 0), int(got[1] or 0)
    names = f"{column_name(arg)} {projection_alias(agg) or ''}"
    named = bool(_NON_ADDITIVE.search(column_name(arg))) or bool(_NON_ADDITIVE.search(projection_alias(agg) or ""))
    repeated = multi and constant / multi >= inp.params["min_share"]
    ok = multi >= inp.params["min_groups"] and bool(repeated or named)
    if repeated:
        fact = (f"{column_name(arg)} repeats unchanged within {share(constant, multi)} groups with several values "
                "(a value per group, not an amount)")
    elif named:
        fact = f"{names.strip()} names a level, not an amount ({multi:,} groups have several values)"
    else:
        fact = (f"{column_name(arg)} varies within its groups like an amount ({share(constant, multi)} groups "
                "with several values repeat it)")
    return Verdict(ok, fact, {"multi_row_groups": multi, "constant_groups": constant})


_COUNTERPART = {exp.Max: (exp.Min, exp.Max), exp.Min: (exp.Max,), exp.Sum: (exp.Max, exp.Min)}


@check("copied_aggregate")
def copied_aggregate(inp: CheckInput) -> Verdict:
    """The select already uses the aggregate the mistake writes (the line someone copied), and the
    two aggregates give different values in some groups (MIN/MAX where the column varies, SUM/MAX
    where a group has several values)."""
    agg, mutant = _aggregate(inp), inp.scope.after
    if agg is None or not isinstance(mutant, exp.AggFunc):
        return Verdict.unmeasured("the change is not an aggregate swap")
    select = inp.scope.select
    models = [a for a in select.find_all(type(mutant)) if a is not agg] if select is not None else []
    if not models:
        return Verdict(False, f"no {type(mutant).__name__.upper()} in the same select to copy from", {})
    differ = f"({sql(agg)}) is distinct from ({sql(mutant)})"
    got = inp.probe.one(groups_query(select, [differ], ["count(*) filter (where g0)", "count(*)"]))
    if got is None:
        return Verdict.unmeasured("the groups could not be measured: " + _error(inp))
    varying, groups = int(got[0] or 0), int(got[1] or 0)
    model, names = sql(models[0]), f"{type(agg).__name__.upper()} and {type(mutant).__name__.upper()}"
    ok = varying > 0
    return Verdict(ok, f"copied from {model} nearby; {names} differ in {share(varying, groups)} groups",
                   {"groups": groups, "varying": varying})


@check("repeats_in_group", min_groups=1)
def repeats_in_group(inp: CheckInput) -> Verdict:
    """The counted value repeats inside groups (e.g. after a join), so DISTINCT matters."""
    agg = _aggregate(inp)
    if not isinstance(agg, exp.Count):
        return Verdict.unmeasured("the change is not a COUNT")
    arg = agg.this.expressions[0] if isinstance(agg.this, exp.Distinct) and agg.this.expressions else agg.this
    got = _group_stats(inp, arg, ["count(*) filter (where g1 > g2)", "count(*)"])
    if got is None:
        return Verdict.unmeasured("the groups could not be measured: " + _error(inp))
    repeated, groups = int(got[0] or 0), int(got[1] or 0)
    ok = repeated >= inp.params["min_groups"]
    return Verdict(ok, f"{column_name(arg)} repeats within {share(repeated, groups)} groups",
                   {"groups": groups, "repeating": repeated})


@check("amounts_not_flags", min_rows=1)
def amounts_not_flags(inp: CheckInput) -> Verdict:
    """SUM over real amounts (not 0/1 flags), so counting the rows instead gives another number."""
    agg = _aggregate(inp)
    if agg is None or agg.this is None:
        return Verdict.unmeasured("the change is not an aggregate")
    select = inp.scope.select
    arg = sql(agg.this)
    got = count_rows(inp.probe, select, [f"{arg} is not null and {arg} not in (0, 1)"]) if select is not None else None
    if got is None:
        return Verdict.unmeasured("the values could not be read")
    total, amounts = got
    ok = amounts >= inp.params["min_rows"]
    # sum(case when x = 'a' then 1 else 0 end) sums the CASE's values, not x's
    what = column_name(agg.this) if isinstance(agg.this, exp.Column) else "summed"
    return Verdict(ok, f"{share(amounts, total)} {what} values are amounts other than 0/1",
                   {"rows": total, "amounts": amounts})
