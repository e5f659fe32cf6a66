"""Shared helpers for the rewrite/pattern tests (no tests here; no dbt needed)."""
from __future__ import annotations

import re
from pathlib import Path

from adegen.rewrite import ModelContext
from adegen.rewrite.engine import revert_site
from adegen.rewrite.text import touched_lines

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_MODELS = REPO / "integration_tests" / "models"
SQL_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "sql"

_REF = re.compile(r"ref\(\s*['\"]([^'\"\s]+)['\"]\s*\)")
_SRC = re.compile(r"source\(\s*['\"]([A-Za-z0-9_]+)['\"]\s*,\s*['\"]([A-Za-z0-9_]+)['\"]\s*\)")
_MAT = re.compile(r"materialized\s*=\s*['\"]([a-z_]+)['\"]")


def example_models() -> list[Path]:
    return sorted(EXAMPLE_MODELS.rglob("*.sql")) if EXAMPLE_MODELS.is_dir() else []


def static_context(path: Path, raw: str, all_names=(), source_tables=(), default_mat="view") -> ModelContext:
    """A ModelContext read straight from the file (what discovery would report, roughly)."""
    m = _MAT.search(raw)
    name = path.stem
    return ModelContext(
        name=name, path=str(path), refs=tuple(_REF.findall(raw)), sources=tuple(_SRC.findall(raw)),
        materialized=m.group(1) if m else default_mat, columns=("a", "b"),
        sibling_models=tuple(n for n in all_names if n != name), project_name="acme",
        source_tables=tuple(source_tables),
    )


def check_site(raw: str, site, max_lines: int = 2) -> None:
    from adegen.rewrite import apply_site

    mutant = apply_site(raw, site)
    assert mutant != raw, site
    assert site.before.strip(), site  # never a blank anchor (leak check, task summaries)
    n = touched_lines(raw, mutant)
    assert n <= max_lines, (site, n)
    assert revert_site(mutant, site) == raw
    # line endings and trailing-newline state are kept
    assert ("\r\n" in mutant) == ("\r\n" in raw) or "\r\n" not in raw
    assert mutant.count("\r\n") == raw.count("\r\n") or abs(mutant.count("\n") - raw.count("\n")) <= max(2, max_lines)
    assert mutant.endswith("\n") == raw.endswith("\n")
    if "\r\n" in raw:
        assert mutant.replace("\r\n", "").count("\n") == raw.replace("\r\n", "").count("\n")


def macro_matches(raw: str, macro_dict: dict, ctx: ModelContext) -> bool:
    """Emulates macros/discover/ade_match_patterns.sql on Pattern.to_macro_dict(): substring search
    of ' tok tok ' in ' ' + ' '.join(lexer.token_texts(raw)) + ' ', then `requires`."""
    from adegen.sql import lexer
    from adegen.rewrite import requires_hold

    text = " " + " ".join(lexer.token_texts(raw)).lower() + " "
    needles = [" " + " ".join(seq).lower() + " " for seq in macro_dict["applies_when"]]
    return all(n in text for n in needles) and requires_hold(macro_dict["requires"], ctx)


def crude_render(sql: str) -> str:
    """Jinja removed well enough for sqlglot: config() gone, other {{ }} -> an identifier."""
    sql = re.sub(r"(?s)\{#.*?#\}", "", sql)
    sql = re.sub(r"(?s)\{%.*?%\}", "", sql)
    sql = re.sub(r"(?s)\{\{\s*config\(.*?\}\}", "", sql)
    return re.sub(r"(?s)\{\{.*?\}\}", "jx", sql)
