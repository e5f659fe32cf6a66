"""The generated macros (catalog, lexer, features) are in sync with their Python sources and
their Jinja literals evaluate back to exactly the Python values."""
from __future__ import annotations

import subprocess
import sys

import jinja2
import pytest

from adegen.cli import catalog_macros as catalog_macro
from adegen.sql import features
from adegen.sql import lexer


def _eval(expr: str):
    return jinja2.Environment().compile_expression(expr)()


@pytest.mark.parametrize("value", [
    lexer.MASK_RE, lexer.MASK_REPL, lexer.TOKEN_RE, features.MULTI_KEY_JOIN_RE,
    "it's {{ x }} {% y %} {# z #} }} %} #} \\n \\\\ \n tab\t é ü 日本",
    "{", "}", "{{", "}}}", "\\", "'", "''",
])
def test_jinja_string_round_trip(value):
    lit = catalog_macro.jinja_string(value)
    for delim in ("{{", "{%", "{#", "}}", "%}", "#}"):
        assert delim not in lit
    assert _eval(lit) == value


def test_jinja_literal_round_trip():
    value = catalog_macro.lexer_dict()
    value["extra"] = {"a": [1, 2.5, True, False, None, ["{{", "''"]], "b": {}}
    assert _eval(catalog_macro.jinja_literal(value)) == value


def test_lexer_macro_embeds_the_lexer_verbatim(repo_root):
    text = (repo_root / "macros" / "catalog" / "ade_lexer.sql").read_text()
    assert catalog_macro.render_lexer_macro() == text
    # the regexes appear verbatim apart from doubled backslashes / escaped quotes
    assert lexer.TOKEN_RE.replace("\\", "\\\\").replace("'", "\\'") in text


def test_generated_files_in_sync():
    pytest.importorskip("adegen.catalog.patterns")
    assert catalog_macro.stale_files() == [], "run: adegen catalog-macros"


def test_check_cli_exit_code(tmp_path, repo_root):
    pytest.importorskip("adegen.catalog.patterns")
    env_ok = subprocess.run([sys.executable, "-m", "adegen", "catalog-macros", "--check"],
                            cwd=repo_root / "python", capture_output=True, text=True)
    assert env_ok.returncode == 0, env_ok.stderr
    # a stale copy of the package makes --check fail
    import os
    import shutil

    pkg = tmp_path / "pkg"
    shutil.copytree(repo_root / "macros", pkg / "macros")
    shutil.copytree(repo_root / "patterns", pkg / "patterns")
    shutil.copy(repo_root / "dbt_project.yml", pkg)
    (pkg / "macros" / "catalog" / "ade_lexer.sql").write_text("stale")
    res = subprocess.run([sys.executable, "-m", "adegen", "catalog-macros", "--check"], cwd=repo_root / "python",
                         capture_output=True, text=True, env={**os.environ, "ADEGEN_PACKAGE_DIR": str(pkg)})
    assert res.returncode == 1 and "ade_lexer.sql" in res.stderr


def test_features_reference_ignores_comments_strings_jinja():
    raw = ("-- left join sum(\n/* group by */ select 'union all', {{ 'qualify' }} {# where #}\n"
           "{% if having %} {% endif %} from t")
    assert features.detect(features.token_text(raw)) == ["jinja"]
    sql = "select a from x join y on x.a = y.a and x.b = y.b where x.c in (1, 2)"
    found = features.detect(features.token_text(sql))
    assert {"inner_join", "multi_key_join", "where", "in_list"} <= set(found)
    assert "multi_key_join" not in features.detect(features.token_text(
        "select * from x left join y on x.a = y.a where x.b = 1 and x.c = 2"))
