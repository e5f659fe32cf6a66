"""SQL features and the complexity score: the single definition.

The discovery macro cannot import Python, so `adegen catalog-macros` writes this table
into the generated macro `macros/catalog/ade_lexer.sql`. The functions below are the Python
reference of exactly what the macro computes (a test compares the two on every example model).

How a model is matched (macro and reference alike):

* tokens = `lexer.token_texts(raw_sql)` (Jinja, comments and strings masked), lower-cased;
* text = " " + " ".join(tokens) + " "  (a single space before, between and after tokens);
* a feature is present when ANY of its `sequences` occurs as " " + " ".join(seq) + " " in text,
  or its `regex` (applied to text with `re.search`) matches.

Token sequences are contiguous: `count ( distinct` matches `COUNT(DISTINCT x)` and
`count( distinct x)`, but not `count(x)`.

`multi_key_join` is a heuristic: an `on` clause that contains `=`, then `and`, then `=` again
before the next clause keyword (join, where, group, order, select, from, union, on, having,
qualify, limit, window, `)` is not a stop: nested parentheses are allowed).

Complexity score (an integer, documented in the macro file and docs/architecture.md):

    complexity = line_count // 10 + 2*joins + 2*ctes + 3*windows + cases + aggregates + refs

* line_count: lines of the raw SQL (`str.splitlines()`),
* joins: occurrences of the token `join`,
* ctes: occurrences of `with|, <name> as (` (CTE_RE below),
* windows: occurrences of `over (` (counted as " over (" so adjacent ones all count),
* cases: occurrences of the token `case`,
* aggregates: occurrences of `sum (`, `count (`, `avg (`, `min (`, `max (`,
* refs: number of `ref()` calls dbt recorded for the model.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from adegen.sql import lexer


@dataclass(frozen=True)
class Feature:
    id: str
    doc: str
    sequences: tuple[tuple[str, ...], ...] = ()
    regex: str | None = None


def _seqs(*texts: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(lexer.split_sequence(t)) for t in texts)


_CLAUSE_STOP = r"(?:join|where|group|order|select|from|union|on|having|qualify|limit|window)"
# Within one ON clause (no clause keyword in between): "=" ... "and" ... "=".
MULTI_KEY_JOIN_RE = (
    r" on (?:(?! " + _CLAUSE_STOP + r" ).)*? = "
    r"(?:(?! " + _CLAUSE_STOP + r" ).)*? and "
    r"(?:(?! " + _CLAUSE_STOP + r" ).)*? = "
)

FEATURES: tuple[Feature, ...] = (
    Feature("left_join", "LEFT [OUTER] JOIN", _seqs("left join", "left outer join")),
    Feature("right_join", "RIGHT [OUTER] JOIN", _seqs("right join", "right outer join")),
    Feature("inner_join", "INNER JOIN or a bare JOIN after a table", _seqs("inner join"),
            regex=r" (?!left |right |full |outer |cross |inner |natural |lateral )\S+ join "),
    Feature("full_join", "FULL [OUTER] JOIN", _seqs("full join", "full outer join")),
    Feature("cross_join", "CROSS JOIN", _seqs("cross join")),
    Feature("multi_key_join", "a join ON clause with '=' ... 'and' ... '=' (heuristic)",
            regex=MULTI_KEY_JOIN_RE),
    Feature("group_by", "GROUP BY", _seqs("group by")),
    Feature("having", "HAVING", _seqs("having")),
    Feature("sum", "SUM(", _seqs("sum (")),
    Feature("count", "COUNT(", _seqs("count (")),
    Feature("count_distinct", "COUNT(DISTINCT", _seqs("count ( distinct")),
    Feature("avg", "AVG(", _seqs("avg (")),
    Feature("min", "MIN(", _seqs("min (")),
    Feature("max", "MAX(", _seqs("max (")),
    Feature("window", "a window function: OVER (", _seqs("over (")),
    Feature("partition_by", "PARTITION BY", _seqs("partition by")),
    Feature("row_number", "ROW_NUMBER(", _seqs("row_number (")),
    Feature("rank", "RANK( or DENSE_RANK(", _seqs("rank (", "dense_rank (")),
    Feature("lag_lead", "LAG( or LEAD(", _seqs("lag (", "lead (")),
    Feature("window_frame", "ROWS/RANGE BETWEEN", _seqs("rows between", "range between")),
    Feature("case", "CASE expression", _seqs("case")),
    Feature("coalesce", "COALESCE(", _seqs("coalesce (")),
    Feature("nullif", "NULLIF(", _seqs("nullif (")),
    Feature("where", "WHERE", _seqs("where")),
    Feature("between", "BETWEEN", _seqs("between")),
    Feature("in_list", "IN ( ... ) list (not a subquery)", regex=r" in \( (?!select )"),
    Feature("in_subquery", "IN ( SELECT", _seqs("in ( select")),
    Feature("like", "LIKE / ILIKE", _seqs("like", "ilike")),
    Feature("is_null", "IS NULL", _seqs("is null")),
    Feature("is_not_null", "IS NOT NULL", _seqs("is not null")),
    Feature("distinct", "SELECT DISTINCT", _seqs("select distinct")),
    Feature("union", "UNION (any)", _seqs("union")),
    Feature("union_all", "UNION ALL", _seqs("union all")),
    Feature("date_trunc", "DATE_TRUNC(", _seqs("date_trunc (")),
    Feature("dateadd", "DATEADD( / DATE_ADD(", _seqs("dateadd (", "date_add (")),
    Feature("datediff", "DATEDIFF( / DATE_DIFF(", _seqs("datediff (", "date_diff (")),
    Feature("interval", "INTERVAL", _seqs("interval")),
    Feature("cast", "CAST( / TRY_CAST( / ::", _seqs("cast (", "try_cast (", "::")),
    Feature("round", "ROUND(", _seqs("round (")),
    Feature("qualify", "QUALIFY", _seqs("qualify")),
    Feature("iff", "IFF(", _seqs("iff (")),
    Feature("flatten", "FLATTEN(", _seqs("flatten (")),
    Feature("cte", "a WITH clause", _seqs("with")),
    Feature("subquery", "a subquery: ( SELECT not right after AS (CTE bodies excluded)",
            regex=r"(?<! as) \( select "),
    Feature("order_by", "ORDER BY", _seqs("order by")),
    Feature("limit", "LIMIT", _seqs("limit")),
    Feature("comparison", "< > <= >= comparison", _seqs("<", ">", "<=", ">=")),
    Feature("not_equal", "<> / !=", _seqs("<>", "!=")),
    Feature("division", "division operator /", _seqs("/")),
    Feature("jinja", "a Jinja expression {{ ... }} in the SQL", _seqs("<jinja>")),
)

FEATURE_IDS = tuple(f.id for f in FEATURES)
assert len(set(FEATURE_IDS)) == len(FEATURE_IDS)

CTE_RE = r" (?:with|,) (?:recursive )?\S+ as \( "
AGGREGATE_SEQUENCES = _seqs("sum (", "count (", "avg (", "min (", "max (")
# The macro counts aggregates with one findall of this regex (same count as the str.count sum).
AGGREGATE_RE = " (?:" + "|".join(re.escape(" ".join(s)) for s in AGGREGATE_SEQUENCES) + ")"
COMPLEXITY_FORMULA = (
    "line_count // 10 + 2*joins + 2*ctes + 3*windows + cases + aggregates + refs"
)


def token_text(raw_sql: str) -> str:
    """" tok tok tok " as the macro builds it."""
    return " " + " ".join(lexer.token_texts(raw_sql)) + " "


def _needle(seq: tuple[str, ...] | list[str]) -> str:
    return " " + " ".join(seq) + " "


def detect(text: str) -> list[str]:
    """Feature ids present in a token text (see `token_text`), in FEATURES order."""
    found = []
    for f in FEATURES:
        if any(_needle(s) in text for s in f.sequences) or (f.regex and re.search(f.regex, text)):
            found.append(f.id)
    return found


def stats(raw_sql: str, text: str, n_refs: int) -> dict:
    joins = text.count(" join ")
    ctes = len(re.findall(CTE_RE, text))
    windows = text.count(" over (")
    cases = text.count(" case ")
    # Needles ending in "(" are counted without the trailing space so nested calls all count.
    aggregates = sum(text.count(_needle(s).rstrip()) for s in AGGREGATE_SEQUENCES)
    line_count = len(raw_sql.splitlines())
    complexity = line_count // 10 + 2 * joins + 2 * ctes + 3 * windows + cases + aggregates + n_refs
    return {"line_count": line_count, "join_count": joins, "complexity": complexity}


def to_macro_list() -> list[dict]:
    """The feature table as the macro reads it: [{id, needles: [" tok tok "], regex}]."""
    return [
        {"id": f.id, "needles": [_needle(s) for s in f.sequences], "regex": f.regex or ""}
        for f in FEATURES
    ]
