"""How the emulation runs a task's script in-process (`plan_script`): a script of plain lines is
split into bash steps and top-level `dbt ...` lines, each dbt line then runs in-process
(adebench/procedure/emulate.py); anything with control flow, `cd`, variables or an expanding
here-document runs whole with bash."""
from __future__ import annotations

import re
import shlex

_CONTROL = re.compile(r"^\s*(if|then|elif|else|fi|for|while|until|do|done|case|esac|function|select)\b"
                      r"|^\s*[\w-]+\s*\(\)\s*\{?|[{}]\s*$|^\s*cd\b|^\s*export\b|^\s*source\b|^\s*\.\s"
                      r"|^\s*[A-Za-z_]\w*=|<<|^\s*set\s+-\w*e")
_DBT_LINE = re.compile(r"^\s*dbt\s+(?P<args>[^|;&<>$`()\\]*?)\s*(?P<ignore>\|\|\s*true)?\s*$")

# a command reading a here-document with a quoted delimiter (`run_sql.sh "$@" << 'SQL'`): its body
# is not expanded, so the command and its body are one self-contained bash step
_HEREDOC = re.compile(r"""^(?P<cmd>[^<'"]*?"\$@"[^<'"]*|[^<'"$]*)<<-?\s*(?P<q>['"])(?P<delim>\w+)(?P=q)\s*$""")


def plan_script(text: str) -> list[tuple] | None:
    """Split a script into ("bash", text) and ("dbt", args) steps, or None if it must run whole.
    A here-document with a quoted delimiter rides in its bash step whole."""
    steps: list[tuple] = []
    pending: list[str] = []
    lines = iter(text.splitlines())
    for line in lines:
        stripped = line.strip()
        doc = _HEREDOC.match(line)
        if doc and not _CONTROL.search(doc.group("cmd")) and not re.search(r"(^|[\s;&|])dbt\s", doc.group("cmd")):
            body = [line]
            for more in lines:
                body.append(more)
                if more.rstrip() == doc.group("delim"):
                    break
            else:
                return None  # no end of the here-document
            pending.append("\n".join(body))
            continue
        if not stripped or stripped.startswith("#"):
            continue
        m = _DBT_LINE.match(line)
        if m:
            try:
                args = shlex.split(m.group("args"))
            except ValueError:
                return None
            if pending:
                steps.append(("bash", "\n".join(pending)))
                pending = []
            steps.append(("dbt", args))
            continue
        if _CONTROL.search(line) or line.rstrip().endswith("\\") or re.search(r"(^|[\s;&|])dbt\s", line):
            return None
        pending.append(line)
    if pending:
        steps.append(("bash", "\n".join(pending)))
    return steps
