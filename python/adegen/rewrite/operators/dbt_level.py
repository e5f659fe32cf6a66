"""dbt-level operators: they edit inside Jinja on purpose (`ref()`, `source()`, `config()`)."""
from __future__ import annotations

import difflib
import re

from adegen.rewrite.text import Candidate, Edit
from adegen.rewrite.operators.registry import operator


_REF_RE = re.compile(r"\bref\(\s*(['\"])([^'\"\s]+)\1\s*\)")


_SRC_RE = re.compile(r"\bsource\(\s*(['\"])([^'\"\s]+)\1\s*,\s*(['\"])([^'\"\s]+)\3\s*\)")


_CFG_RE = re.compile(r"\bconfig\(")


_MAT_RE = re.compile(r"materialized\s*=\s*(['\"])([a-z_]+)\1")


_JINJA_BLOCK = re.compile(r"(?s)\{#.*?#\}|\{\{.*?\}\}|\{%.*?%\}")


def _jinja_blocks(S):
    """(start, end) of every Jinja expression and statement, also those inside SQL comments
    (dbt renders them: `-- depends_on: {{ ref('x') }}`), never Jinja comments."""
    return [(m.start(), m.end()) for m in _JINJA_BLOCK.finditer(S.raw) if not m.group().startswith("{#")]


def _similar(name, options, k=2):
    return sorted(options, key=lambda o: (-difflib.SequenceMatcher(None, name, o).ratio(), o))[:k]


@operator("swap_ref")
def swap_ref(S, args, ctx):
    """ref('a') -> ref('b'): b is another model of the project (not this model, not downstream of
    it), the most similar names first (up to 2 alternatives per ref)."""
    out = []
    for a, b in _jinja_blocks(S):
        for m in _REF_RE.finditer(S.raw, a, b):
            name = m.group(2)
            opts = [x for x in ctx.sibling_models if x not in (name, ctx.name)]
            for alt in _similar(name, opts):
                out.append(Candidate((m.start(), alt), [Edit(m.start(2), m.end(2), alt)], f"ref {name} -> {alt}",
                                     placeholders={"original_ref": name, "wrong_ref": alt}, touches_jinja=True))
    return out


@operator("bypass_staging")
def bypass_staging(S, args, ctx):
    """ref('stg_x') -> what stg_x itself reads, when that is one seed (`ref('raw_x')`) or one
    source (`source('s', 'x')`): the staging model's renames, conversions and filters are skipped."""
    staged = dict(ctx.staged_inputs)
    out = []
    for a, b in _jinja_blocks(S):
        for m in _REF_RE.finditer(S.raw, a, b):
            name, q = m.group(2), m.group(1)
            if name not in staged:
                continue
            kind, target = staged[name]
            if kind == "ref":
                edit, read, wrong = Edit(m.start(2), m.end(2), target), target, {"wrong_ref": target}
            else:
                src, tbl = target
                edit = Edit(m.start(), m.end(), f"source({q}{src}{q}, {q}{tbl}{q})")
                read = f"{src}.{tbl}"
                wrong = {"wrong_source": read}
            out.append(Candidate(m.start(), [edit], f"ref {name} -> its input {read}",
                                 placeholders={"original_ref": name, **wrong}, touches_jinja=True))
    return out


@operator("swap_source")
def swap_source(S, args, ctx):
    """source('s', 't1') -> source('s', 't2') (another table of the same source; another source's
    table when the source has only one)."""
    out = []
    for a, b in _jinja_blocks(S):
        for m in _SRC_RE.finditer(S.raw, a, b):
            src, tbl = m.group(2), m.group(4)
            same = [t for s, t in ctx.source_tables if s == src and t != tbl]
            if same:
                for alt in _similar(tbl, same):
                    out.append(Candidate((m.start(), alt), [Edit(m.start(4), m.end(4), alt)], f"source {src}.{tbl} -> {src}.{alt}",
                                         placeholders={"original_source": f"{src}.{tbl}", "wrong_source": f"{src}.{alt}"}, touches_jinja=True))
            else:
                others = [(s, t) for s, t in ctx.source_tables if s != src]
                for s2, t2 in sorted(others, key=lambda st: (-difflib.SequenceMatcher(None, tbl, st[1]).ratio(), st))[:2]:
                    out.append(Candidate((m.start(), s2, t2), [Edit(m.start(2), m.end(2), s2), Edit(m.start(4), m.end(4), t2)],
                                         f"source {src}.{tbl} -> {s2}.{t2}",
                                         placeholders={"original_source": f"{src}.{tbl}", "wrong_source": f"{s2}.{t2}"}, touches_jinja=True))
    return out


MAT_SWAP = {"table": "view", "view": "table", "incremental": "table", "ephemeral": "view"}


@operator("set_materialization")
def set_materialization(S, args, ctx):
    """materialized='table' -> 'view' (view -> table, incremental -> table) in the model's
    config(); without one, a `{{ config(materialized=...) }}` line is added on top."""
    out = []
    cur = ctx.materialized
    for a, b in _jinja_blocks(S):
        for m in _CFG_RE.finditer(S.raw, a, b):
            mm = _MAT_RE.search(S.raw, m.end(), b)
            if mm:
                new = MAT_SWAP.get(mm.group(2))
                if new:
                    out.append(Candidate(m.start(), [Edit(mm.start(2), mm.end(2), new)], f"materialized {mm.group(2)} -> {new}",
                                         placeholders={"original_materialization": mm.group(2), "wrong_materialization": new}, touches_jinja=True))
            elif cur in MAT_SWAP:
                new = MAT_SWAP[cur]
                out.append(Candidate(m.start(), [Edit(m.end(), m.end(), f"materialized='{new}', " if S.raw[m.end():b].strip(" )}") else f"materialized='{new}'")],
                                     f"materialized {cur} -> {new}",
                                     placeholders={"original_materialization": cur, "wrong_materialization": new}, touches_jinja=True))
    if not out and cur in MAT_SWAP:
        new = MAT_SWAP[cur]
        nl = "\r\n" if "\r\n" in S.raw else "\n"
        out.append(Candidate("top", [Edit(0, 0, "{{ config(materialized='%s') }}%s" % (new, nl))], f"materialized {cur} -> {new}",
                             placeholders={"original_materialization": cur, "wrong_materialization": new}))
    return out


# `unique_key='id'` with one comma that separates it from the other arguments (the one before it,
# else the one after it): removing both leaves the config() call well formed
_UNIQUE_KEY_ARG = re.compile(r",\s*unique_key\s*=\s*(['\"])[^'\"]*\1|unique_key\s*=\s*(['\"])[^'\"]*\2\s*,?\s*")


@operator("drop_unique_key")
def drop_unique_key(S, args, ctx):
    """config(..., unique_key='id') -> without it: an incremental model's runs append the rows its
    filter selects instead of replacing the ones with the same key (one-column keys only)."""
    out = []
    for a, b in _jinja_blocks(S):
        for m in _CFG_RE.finditer(S.raw, a, b):
            k = _UNIQUE_KEY_ARG.search(S.raw, m.end(), b)
            if k:
                out.append(Candidate(k.start(), [Edit(k.start(), k.end(), "")], "unique_key dropped",
                                     touches_jinja=True))
    return out
