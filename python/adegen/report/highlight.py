"""Syntax highlighting with Pygments: diff, SQL with Jinja, YAML. Output is HTML spans carrying
Pygments' short CSS classes; `stylesheet()` is the matching CSS, scoped under `.hl`."""
from __future__ import annotations

import re
from functools import lru_cache

from markupsafe import Markup, escape
from pygments import highlight as _pygmentize
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name

LEXERS = {"diff": "diff", "sql": "sql+jinja", "yaml": "yaml"}
STYLE = "friendly"


@lru_cache(maxsize=None)
def _lexer(kind: str):
    return get_lexer_by_name(LEXERS[kind], stripnl=False, ensurenl=False)


_FORMATTER = HtmlFormatter(nowrap=True, style=STYLE)
# Whitespace tokens carry no colour; unwrapping them keeps pages of hundreds of tasks small.
_WHITESPACE_SPAN = re.compile(r'<span class="w">([^<]*)</span>')


# Pygments' regex lexers slow down badly on very long lines (a generated model with a 250 kB
# line took minutes); such text is shown plain, escaped.
MAX_HIGHLIGHT_CHARS = 200_000
MAX_HIGHLIGHT_LINE = 2_000


def highlight(text: str, kind: str) -> Markup:
    """`text` as highlighted HTML (escaped by Pygments), for a `<pre class="hl">`; plain escaped
    text when it is too long to highlight quickly."""
    if len(text) > MAX_HIGHLIGHT_CHARS or any(len(line) > MAX_HIGHLIGHT_LINE for line in text.splitlines()):
        return escape(text)
    return Markup(_WHITESPACE_SPAN.sub(r"\1", _pygmentize(text, _lexer(kind), _FORMATTER)))


def stylesheet() -> str:
    return HtmlFormatter(style=STYLE).get_style_defs(".hl")
