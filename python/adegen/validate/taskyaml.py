"""Small, format-preserving edits of a generated task.yaml.

Only two things are ever changed: `exclude_columns` of a `solution_seeds` item and the top-level
`max_test_timeout_sec`. Edits are made on the text (other lines, comments and quoting stay as they
are) and checked by re-parsing; if the text edit cannot be verified the file is re-dumped with
yaml.safe_dump (sort_keys=False) instead.
"""
from __future__ import annotations

import re
from pathlib import Path

import yaml


def update_task_yaml(path: Path, *, exclude_columns: dict[str, list[str]] | None = None,
                     max_test_timeout_sec: int | float | None = None) -> None:
    path = Path(path)
    text = path.read_text()
    data = yaml.safe_load(text) or {}
    want = _apply(data, exclude_columns, max_test_timeout_sec)
    new = text
    try:
        for table, cols in (exclude_columns or {}).items():
            new = _set_excludes_text(new, table, cols)
        if max_test_timeout_sec is not None:
            new = _set_top_level_text(new, "max_test_timeout_sec", max_test_timeout_sec)
        ok = yaml.safe_load(new) == want
    except (ValueError, yaml.YAMLError):
        ok = False
    if not ok:
        new = yaml.safe_dump(want, sort_keys=False, default_flow_style=False, allow_unicode=True)
    path.write_text(new)


def _apply(data: dict, excludes, timeout) -> dict:
    import copy

    data = copy.deepcopy(data)
    for table, cols in (excludes or {}).items():
        items = data.get("solution_seeds") or []
        for i, it in enumerate(items):
            if isinstance(it, str) and it == table:
                items[i] = {"table_name": table, "exclude_columns": list(cols)}
            elif isinstance(it, dict) and it.get("table_name") == table:
                it["exclude_columns"] = list(cols)
    if timeout is not None:
        data["max_test_timeout_sec"] = timeout
    return data


def _set_excludes_text(text: str, table: str, cols: list[str]) -> str:
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if re.match(r"^solution_seeds\s*:", ln)), None)
    if start is None:
        raise ValueError("no solution_seeds block")
    item_re = re.compile(r"^(\s*)-(\s+)table_name\s*:\s*['\"]?%s['\"]?\s*$" % re.escape(table))
    for i in range(start + 1, len(lines)):
        ln = lines[i]
        if ln.strip() and not ln[0].isspace() and not ln.startswith("-"):
            break  # next top-level key
        m = item_re.match(ln.rstrip("\n"))
        if not m:
            continue
        indent = len(m.group(1)) + 1 + len(m.group(2))
        pad = " " * indent
        # drop an existing exclude_columns entry of this item
        j = i + 1
        while j < len(lines):
            cur = lines[j]
            cur_indent = len(cur) - len(cur.lstrip(" "))
            if not cur.strip() or cur_indent < indent or cur.lstrip().startswith("- table_name"):
                break
            if cur_indent == indent and cur.strip().startswith("exclude_columns"):
                k = j + 1
                while k < len(lines) and (lines[k].strip() == "" or
                                          len(lines[k]) - len(lines[k].lstrip(" ")) > indent or
                                          (len(lines[k]) - len(lines[k].lstrip(" ")) == indent
                                           and lines[k].lstrip().startswith("- "))):
                    if lines[k].strip() == "":
                        break
                    k += 1
                del lines[j:k]
                continue
            j += 1
        nl = "\n"
        block = [f"{pad}exclude_columns:{nl}"] + [f"{pad}- {_scalar(c)}{nl}" for c in cols]
        if not lines[i].endswith("\n"):
            lines[i] += "\n"
        lines[i + 1:i + 1] = block
        return "".join(lines)
    raise ValueError(f"solution_seeds item {table} not found")


def _set_top_level_text(text: str, key: str, value) -> str:
    lines = text.splitlines(keepends=True)
    for i, ln in enumerate(lines):
        if re.match(rf"^{re.escape(key)}\s*:", ln):
            lines[i] = f"{key}: {value}\n"
            return "".join(lines)
    for i, ln in enumerate(lines):
        if re.match(r"^variants\s*:", ln):
            lines.insert(i, f"{key}: {value}\n\n")
            return "".join(lines)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    lines.append(f"{key}: {value}\n")
    return "".join(lines)


def _scalar(v: str) -> str:
    dumped = yaml.safe_dump(v, default_flow_style=True).strip()
    return dumped[:-4].strip() if dumped.endswith("...") else dumped
