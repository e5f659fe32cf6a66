"""Properties over every example-project model and the awkward fixtures (Jinja-heavy, CRLF, no
trailing newline, tabs, non-ASCII):

* find_sites is non-empty only when the dbt macro would match (applies_when + requires): the macro
  is the prefilter, an operator that reads meaning (a condition on the joined side only, related
  column names) finds sites in fewer of the models it lets through;
* every site's mutant differs, touches at most 2 lines, keeps line endings and the trailing
  newline state, and the inverse replacement restores the file byte for byte;
* mutants of a model whose (crudely rendered) SQL parses still parse.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from adegen.catalog.patterns import load_catalog
from adegen.rewrite import apply_site, check_parses, find_sites

from test_rewrite_support import (EXAMPLE_MODELS, SQL_FIXTURES, check_site, crude_render, example_models,
                             macro_matches, static_context)

CATALOG = load_catalog()
MODELS = example_models()
FIXTURES = sorted(SQL_FIXTURES.glob("*.sql"))
FIXTURE_NAMES = ["stg_orders", "stg_order_items", "stg_payments", "int_orders"]
FIXTURE_SOURCES = [("shop", "orders"), ("shop", "payments"), ("app", "events"), ("app", "sessions")]


def _example_sources():
    out = []
    for y in EXAMPLE_MODELS.rglob("*.yml"):
        data = yaml.safe_load(y.read_text()) or {}
        for s in data.get("sources", []) or []:
            for t in s.get("tables", []) or []:
                out.append((s["name"], t["name"]))
    return out


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")  # no newline translation: CRLF stays CRLF


def _variants(raw: str):
    yield "as-is", raw
    yield "crlf", raw.replace("\r\n", "\n").replace("\n", "\r\n")
    yield "no-trailing-newline", raw.rstrip("\r\n")
    yield "tabs", raw.replace("    ", "\t")


def _check_text(raw: str, ctx, *, parse: bool, dialect: str = "duckdb"):
    base_parses = parse and check_parses(crude_render(raw), dialect) is None
    n = 0
    for p in CATALOG.patterns:
        sites = find_sites(raw, p, ctx)
        assert not sites or macro_matches(raw, p.to_macro_dict(), ctx), (ctx.name, p.id)
        for s in sites:
            check_site(raw, s, p.max_lines)
            n += 1
            if base_parses and p.applies_to_db(dialect):
                mutant = apply_site(raw, s)
                err = check_parses(crude_render(mutant), dialect)
                assert err is None, (ctx.name, p.id, s.note, err)
    return n


@pytest.mark.skipif(not MODELS, reason="integration_tests/models has no models yet")
@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_example_models(path):
    names = [m.stem for m in MODELS]
    raw = _read(path)
    mat = "table" if "marts" in path.parts else "view"
    ctx = static_context(path, raw, names, _example_sources(), default_mat=mat)
    for label, text in _variants(raw):
        _check_text(text, ctx, parse=(label == "as-is"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_files(path):
    raw = _read(path)
    ctx = static_context(path, raw, FIXTURE_NAMES, FIXTURE_SOURCES, default_mat="table")
    total = 0
    for label, text in _variants(raw):
        dialect = "snowflake" if "snowflake" in path.name else "duckdb"
        total += _check_text(text, ctx, parse=(label == "as-is"), dialect=dialect)
    assert total > 0
    if path.name != "pattern_cases.yaml":
        assert check_parses(crude_render(raw), "snowflake" if "snowflake" in path.name else "duckdb") is None


def test_crlf_fixture_really_is_crlf():
    raw = _read(SQL_FIXTURES / "crlf_windows.sql")
    assert "\r\n" in raw and "\n" not in raw.replace("\r\n", "")
    assert not _read(SQL_FIXTURES / "no_trailing_newline.sql").endswith("\n")
    assert "\t" in _read(SQL_FIXTURES / "tabs_unicode.sql") and "ä" in _read(SQL_FIXTURES / "tabs_unicode.sql")


def test_crlf_line_deletion_keeps_crlf():
    raw = _read(SQL_FIXTURES / "crlf_windows.sql")
    p = CATALOG.by_id["where_predicate_dropped"]
    ctx = static_context(SQL_FIXTURES / "crlf_windows.sql", raw, FIXTURE_NAMES, FIXTURE_SOURCES)
    mutants = [apply_site(raw, s) for s in find_sites(raw, p, ctx)]
    assert "select\r\n    customer_id,\r\n" in mutants[-1]
    assert "    and status = 'paid'\r\n" not in mutants[-1]
    assert all("\n" not in m.replace("\r\n", "") for m in mutants)


def test_non_ascii_untouched():
    raw = _read(SQL_FIXTURES / "tabs_unicode.sql")
    ctx = static_context(SQL_FIXTURES / "tabs_unicode.sql", raw, FIXTURE_NAMES, FIXTURE_SOURCES)
    p = CATALOG.by_id["case_else_dropped"]
    (s,) = find_sites(raw, p, ctx)
    m = apply_site(raw, s)
    assert "when land = 'Österreich' then 'AT' end" in m and m.startswith("-- Umsätze je Kunde: naïve €")


def test_invariant_against_real_discovery(acme_discovery, example_project):
    """find_sites is non-empty only for patterns the dbt macro matched (real dbt run)."""
    from adegen.rewrite import ModelContext

    db = acme_discovery["project"].get("adapter_type", "duckdb")
    mismatches = []
    for m in acme_discovery["models"]:
        path = example_project / m["path"]
        if not path.is_file():
            continue
        raw = _read(path)
        ctx = ModelContext.from_discovery(m, acme_discovery)
        engine = {p.id for p in CATALOG.for_db(db) if find_sites(raw, p, ctx)}
        if not engine <= set(m["matched_patterns"]):
            mismatches.append((m["name"], sorted(engine - set(m["matched_patterns"])),
                               sorted(set(m["matched_patterns"]) - engine)))
    assert not mismatches
