"""Assertion SQL renderers from the spec's templates (stand-in for `adegen.assertions`, same signature).

`render_assertions(project_dir, project_name, entries) -> [(purpose, sql)]`, entries being
`{type, args}` with concrete args; `resolve(args, context)` fills placeholders (`{model}`,
`{project_name}`, `{column}`, `{original_refs}`, `{original_sources}`, `{original_materialization}`).
Used when the dbt-macro renderer cannot run."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

PURPOSES = {
    "refs_must_include": "refs",
    "refs_must_match_exactly": "refs_exact",
    "refs_must_not_include": "refs_forbidden",
    "sources_must_include": "sources",
    "materialization_must_be": "materialization",
    "column_must_exist": "column_exists",
    "model_must_exist": "model_exists",
}


def _project_name(project: Any) -> str:
    name = getattr(project, "name", None)
    if name:
        return str(name)
    p = Path(project)
    data = yaml.safe_load((p / "dbt_project.yml").read_text(encoding="utf-8")) or {}
    return str(data["name"])


_PH = re.compile(r"^\{(\w+)\}$")


def resolve(value: Any, context: dict[str, Any]) -> Any:
    """Substitute placeholders; a whole-string placeholder may become a list."""
    if isinstance(value, str):
        m = _PH.match(value.strip())
        if m and m.group(1) in context:
            return context[m.group(1)]
        return re.sub(r"\{(\w+)\}", lambda mm: str(context.get(mm.group(1), mm.group(0))), value)
    if isinstance(value, list):
        out: list = []
        for v in value:
            r = resolve(v, context)
            if isinstance(v, str) and _PH.match(v.strip()) and isinstance(r, list):
                out.extend(r)
            else:
                out.append(r)
        return out
    if isinstance(value, dict):
        return {k: resolve(v, context) for k, v in value.items()}
    return value


def _q(s: str) -> str:
    return str(s).replace("\\", "\\\\").replace("'", "\\'")


def _names(v: Any) -> list[str]:
    if v is None:
        return []
    if isinstance(v, str):
        return [x.strip() for x in v.split(",") if x.strip()]
    return [str(x) for x in v]


def _pairs(v: Any) -> list[tuple[str, str]]:
    out = []
    for x in v or []:
        if isinstance(x, (list, tuple)) and len(x) == 2:
            out.append((str(x[0]), str(x[1])))
        elif isinstance(x, str) and "." in x:
            a, _, b = x.partition(".")
            out.append((a, b))
    return out


def render_one(kind: str, args: dict, project_name: str) -> str:
    model = _q(args.get("model", ""))
    node = f'{{% set node = graph.nodes.get("model.{project_name}.{model}") %}}'
    dep = f"-- depends_on: {{{{ ref('{model}') }}}}"
    if kind == "refs_must_include":
        lines = [dep, node, "{% set actual = node.refs | map(attribute='name') | list if node else [] %}",
                 "{% if node is none %}", f"    select '{model} not found in graph' as error_message"]
        for r in _names(args.get("expected")):
            lines += [f"{{% elif '{_q(r)}' not in actual %}}", f"    select '{model} does not ref {_q(r)}' as error_message"]
        lines += ["{% endif %}", "union all select 'ok' as error_message where false"]
    elif kind == "refs_must_match_exactly":
        exp = ", ".join(f"'{_q(r)}'" for r in _names(args.get("expected")))
        lines = [dep, node, "{% if node is none %}", f"    select '{model} not found in graph' as error_message",
                 "{% else %}", "    {% set actual = node.refs | map(attribute='name') | list | sort %}",
                 f"    {{% set expected = [{exp}] | sort %}}", "    {% if actual != expected %}",
                 f"        select '{model} refs mismatch — actual: ' ~ actual ~ ', expected: ' ~ expected as error_message",
                 "    {% else %}", "        select 'ok' as error_message where false", "    {% endif %}", "{% endif %}"]
    elif kind == "refs_must_not_include":
        lines = [dep, node, "{% set actual = node.refs | map(attribute='name') | list if node else [] %}",
                 "{% if node is none %}", f"    select '{model} not found in graph' as error_message"]
        for f in _names(args.get("forbidden")):
            lines += [f"{{% elif '{_q(f)}' in actual %}}", f"    select '{model} must not ref {_q(f)}' as error_message"]
        lines += ["{% endif %}", "union all select 'ok' as error_message where false"]
    elif kind == "sources_must_include":
        lines = [dep, node, "{% set actual = node.sources if node else [] %}", "{% if node is none %}",
                 f"    select '{model} not found in graph' as error_message"]
        for src, tbl in _pairs(args.get("expected")):
            lines += [f"{{% elif ['{_q(src)}', '{_q(tbl)}'] not in actual %}}",
                      f"    select '{model} does not source {_q(src)}.{_q(tbl)}' as error_message"]
        lines += ["{% endif %}", "union all select 'ok' as error_message where false"]
    elif kind == "materialization_must_be":
        exp = _q(args.get("expected", ""))
        lines = [dep, node, "{% set actual = node.config.materialized if node else 'unknown' %}",
                 f"{{% if actual != '{exp}' %}}",
                 f"    select '{model} is materialized as ' ~ actual ~ ', expected {exp}' as error_message",
                 "{% else %}", "    select 'ok' as error_message where false", "{% endif %}"]
    elif kind == "column_must_exist":
        col = _q(args.get("column", ""))
        lines = [dep, f"select 'column {col} missing from {model}' as error_message", "where not exists (",
                 "    select 1", "    from information_schema.columns", f"    where lower(table_name) = lower('{model}')",
                 f"      and lower(column_name) = lower('{col}')", ")"]
    elif kind == "model_must_exist":
        lines = [f'{{% if "model.{project_name}.{model}" not in graph.nodes %}}',
                 f"    select '{model} does not exist in the graph' as error_message", "{% else %}",
                 "    select 'ok' as error_message where false", "{% endif %}"]
    else:
        raise ValueError(f"unknown assertion type {kind!r}")
    return "\n".join(lines) + "\n"


def render_assertions(project_dir: Any, project_name: str | None, entries: list[dict]) -> list[tuple[str, str]]:
    """Same signature as `adegen.assertions.render_assertions`: entries carry concrete args
    (resolve placeholders first with `resolve`)."""
    name = project_name or _project_name(project_dir)
    out: list[tuple[str, str]] = []
    for entry in entries or []:
        kind = str(entry.get("type"))
        args = dict(entry.get("args") or {})
        purpose = PURPOSES.get(kind, kind)
        if kind == "column_must_exist" and args.get("column"):
            purpose = "column_" + re.sub(r"[^a-z0-9_]+", "_", str(args["column"]).lower()).strip("_")
        out.append((purpose, render_one(kind, args, entry.get("project_name") or name)))
    return out
