"""The documentation half of a purposeful change: an engineer who adds a column to a documented model
documents it in the model's properties file, and one who leaves a category out of a model says so
in its description. A commit with a purpose touches both files (issue 51: "coordinated changes
across several files"); the slip stays in the SQL, so the solution keeps this part as it is.

Edited as text, the file's own layout kept (indentation, quoting, comments): the new column entry is
written after the model's last column entry with that entry's indentation; the sentence is appended
to a one-line plain `description:` of the model. Only where the result reads back as YAML with the
entry in place; a model with an enforced contract (its columns need types) or without a `columns:`
list is left undocumented (None: the change stays one file). Pure functions."""
from __future__ import annotations

import re

import yaml

_ENTRY = re.compile(r"^(?P<ind>[ \t]*)-[ \t]+name:[ \t]*['\"]?(?P<name>[A-Za-z0-9_]+)['\"]?[ \t]*(?:#.*)?$")
_KEY = re.compile(r"^(?P<ind>[ \t]*)(?P<key>[A-Za-z_]+):(?P<rest>.*)$")
# a description value that a sentence can be appended to as text: plain, one line, no YAML syntax
_PLAIN = re.compile(r"[^'\"|>&*!%@`#{\[][^#]*\Z")


def _model_block(lines: list[str], model: str) -> tuple[int, int, int] | None:
    """(first line, end line, indentation) of the `- name: <model>` entry of a `models:` list."""
    in_models = False
    for i, line in enumerate(lines):
        top = _KEY.match(line)
        if top and not top.group("ind"):
            in_models = top.group("key") == "models"
            continue
        m = _ENTRY.match(line)
        if in_models and m and m.group("name") == model:
            ind = len(m.group("ind"))
            end = i + 1
            while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > ind
                                        or lines[end].lstrip().startswith("#")):
                end += 1
            while end > i + 1 and not lines[end - 1].strip():
                end -= 1
            return i, end, ind
    return None


def documents(text: str, model: str) -> bool:
    """Whether the YAML text has `model`'s entry in its `models:` list (where a purpose is written)."""
    return _model_block(text.split("\n"), model) is not None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _entry_of(data, model: str) -> dict | None:
    for m in (data or {}).get("models") or []:
        if isinstance(m, dict) and m.get("name") == model:
            return m
    return None


def _reads_back(text: str, model: str) -> dict | None:
    try:
        return _entry_of(yaml.safe_load(text), model)
    except yaml.YAMLError:
        return None


def entry_of(text: str, model: str) -> dict | None:
    """`model`'s entry of the YAML text's `models:` list as YAML reads it, or None."""
    return _reads_back(text, model)


def _located(text: str, model: str) -> tuple[dict, list[str], tuple[int, int, int]] | None:
    """(the model's entry as YAML reads it, the file's lines, its block in them), or None."""
    entry = _reads_back(text, model)
    lines = text.split("\n")
    block = None if entry is None else _model_block(lines, model)
    return None if block is None else (entry, lines, block)


def document_column(text: str, model: str, column: str, description: str) -> str | None:
    """`text` with `column` documented under `model`'s columns, or None where it cannot be."""
    found = _located(text, model)
    if found is None:
        return None
    before, lines, (first, end, _) = found
    if not isinstance(before.get("columns"), list) or before.get("contract") \
            or (before.get("config") or {}).get("contract"):
        return None
    cols = next((i for i in range(first + 1, end) if (k := _KEY.match(lines[i])) and k.group("key") == "columns"), None)
    if cols is None:
        return None
    entries = [i for i in range(cols + 1, end) if _ENTRY.match(lines[i])]
    if not entries:
        return None
    ind = _ENTRY.match(lines[entries[0]]).group("ind")
    last = entries[-1]
    stop = last + 1
    while stop < end and (not lines[stop].strip() or _indent(lines[stop]) > len(ind)):
        stop += 1
    while not lines[stop - 1].strip():
        stop -= 1
    new = [f"{ind}- name: {column}", f"{ind}  description: {description}"]
    out = "\n".join(lines[:stop] + new + lines[stop:])
    after = _reads_back(out, model)
    if after is None or [c.get("name") for c in after.get("columns") or []][-1:] != [column]:
        return None
    return out


def document_exclusion(text: str, model: str, sentence: str) -> str | None:
    """`text` with `sentence` appended to `model`'s one-line description, or None where it cannot be."""
    found = _located(text, model)
    if found is None or not isinstance(found[0].get("description"), str):
        return None
    before, lines, (first, end, ind) = found
    for i in range(first + 1, end):
        k = _KEY.match(lines[i])
        if not k or k.group("key") != "description" or _indent(lines[i]) != ind + 2:
            continue  # the model's own key, not a column's
        value, comment = re.match(r"(.*?)(\s+#.*)?\Z", k.group("rest").strip()).groups()
        if not _PLAIN.match(value) or value != before["description"].strip():
            return None  # quoted, folded or spread over lines: not edited as text
        value += ("" if value.endswith(".") else ".") + " " + sentence
        lines[i] = f"{lines[i][:_indent(lines[i])]}description: {value}{comment or ''}"
        out = "\n".join(lines)
        after = _reads_back(out, model)
        return out if after is not None and after.get("description", "").endswith(sentence) else None
    return None
