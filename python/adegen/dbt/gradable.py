"""Make a project copy gradable by ade-bench's test procedure, whatever its layout.

ade-bench's scripts assume fixed directories under /app (shared/scripts/run-dbt-test.sh,
seed-schema.sh, merge_yaml.py; harness.py `_setup_test_env`):
- the task's tests are copied into `tests/` (after `rm -rf tests`): `test-paths` must include `tests`;
- the solution seeds and `_no-op.txt` are copied into `seeds/` and loaded by a plain `dbt seed`:
  `seed-paths` must include `seeds`;
- the AUTO equality macro is written to `macros/ade_bench_equality_test.sql`: `macro-paths` must
  include `macros`;
- `_no-op.txt` is deep-merged into `dbt_project.yml` at the project root (only when there is no
  `dbt_project/dbt_project.yml`), keyed by the project `name`, with `yaml.dump` (comments are
  lost, values kept).
dbt's defaults are exactly those directories, so only a project that sets one of the three keys
without the default needs a change. `make_gradable(text)` adds the missing directory to the key in
the copy's dbt_project.yml, keeping the rest of the text as it is; `no_copy_changes(project_dir)`
says what a `--no-copy` user must change by hand.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REQUIRED = (("test-paths", "tests", "the task's tests"), ("seed-paths", "seeds", "the solution seeds"),
            ("macro-paths", "macros", "the equality macro"))
# dbt before 1.0 named seed-paths `data-paths`; dbt 1.x still reads the old name (with a deprecation
# warning), so a project written then lists its seed directories there
ALIASES = {"seed-paths": "data-paths"}


@dataclass
class Gradable:
    text: str                                        # the dbt_project.yml text to write
    changes: list[str] = field(default_factory=list)  # what was (or must be) changed, for the summary
    problems: list[str] = field(default_factory=list)  # what could not be changed automatically


def _add_to_key(text: str, key: str, wanted: str) -> str | None:
    """`text` with `wanted` added to the top-level list `key` (flow, block or scalar), or None."""
    lines = text.splitlines(keepends=True)
    for i, ln in enumerate(lines):
        m = re.match(rf"^({re.escape(key)}\s*:\s*)(.*?)(\s*(#.*)?)(\r?\n)?$", ln)
        if not m:
            continue
        head, value, tail, nl = m.group(1), m.group(2), m.group(3) or "", m.group(5) or ""
        if value.startswith("[") and value.endswith("]"):
            inner = value[1:-1].strip()
            lines[i] = f"{head}[{inner + ', ' if inner else ''}\"{wanted}\"]{tail}{nl}"
            return "".join(lines)
        if value and not value.startswith(("&", "*", "|", ">")):
            lines[i] = f"{head}[{value}, \"{wanted}\"]{tail}{nl}"
            return "".join(lines)
        # block list: the following "- item" lines
        j, indent = i + 1, None
        while j < len(lines):
            item = re.match(r"^(\s*)-\s", lines[j])
            if item:
                indent = item.group(1)
                j += 1
            elif not lines[j].strip() or lines[j].lstrip().startswith("#"):
                j += 1
            else:
                break
        if indent is None:
            return None
        last = max(k for k in range(i + 1, j) if re.match(r"^\s*-\s", lines[k]))
        eol = "\r\n" if lines[last].endswith("\r\n") else "\n"
        if not lines[last].endswith(("\n", "\r\n")):
            lines[last] += eol
        lines.insert(last + 1, f"{indent}- {wanted}{eol}")
        return "".join(lines)
    return None


def make_gradable(text: str) -> Gradable:
    """The dbt_project.yml text with `tests`, `seeds` and `macros` in test-paths, seed-paths and
    macro-paths (added only where the key is set without them); pure."""
    out = Gradable(text)
    try:
        cfg = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        out.problems.append(f"dbt_project.yml is not valid YAML ({str(e).splitlines()[0]})")
        return out
    if not isinstance(cfg, dict):
        return out
    for key, wanted, what in REQUIRED:
        if cfg.get(key) is None and cfg.get(ALIASES.get(key, key)) is not None:
            key = ALIASES[key]
        value = cfg.get(key)
        if value is None:
            continue  # dbt's default is exactly the directory ade-bench uses
        values = [value] if isinstance(value, str) else list(value) if isinstance(value, list) else None
        if values is None or any("{{" in str(v) for v in values):
            out.problems.append(f"{key} is {value!r}: add \"{wanted}\" to it ({what} go there)")
            continue
        if any(str(v).strip().strip("/").removeprefix("./") == wanted for v in values):
            continue
        new = _add_to_key(out.text, key, wanted)
        check = None
        if new is not None:
            try:
                check = (yaml.safe_load(new) or {}).get(key)
            except yaml.YAMLError:
                check = None
        ok = isinstance(check, list) and wanted in check and all(v in check for v in values)
        if not ok:
            out.problems.append(f"{key} is {value!r}: add \"{wanted}\" to it ({what} go there)")
            continue
        out.text = new
        out.changes.append(f"added \"{wanted}\" to {key} in dbt_project.yml ({what} are copied to "
                           f"{wanted}/ by ade-bench's test script; the project keeps {values})")
    return out


def make_copy_gradable(copy_dir: Path) -> Gradable:
    """Apply `make_gradable` to `<copy_dir>/dbt_project.yml` in place (a copy, never the user's)."""
    p = Path(copy_dir) / "dbt_project.yml"
    raw = p.read_bytes().decode("utf-8")
    result = make_gradable(raw)
    if result.text != raw:
        p.write_bytes(result.text.encode("utf-8"))
    return result


def no_copy_changes(project_dir: Path) -> list[str]:
    """With --no-copy ade-bench grades the project itself: what the user must change in it."""
    p = Path(project_dir) / "dbt_project.yml"
    try:
        result = make_gradable(p.read_text(encoding="utf-8"))
    except OSError:
        return []
    return ([f"{p}: " + c.replace("added", "add", 1).split(" (")[0] for c in result.changes]
            + [f"{p}: {x}" for x in result.problems])
