"""Phase 3: the contents of one task directory (task.yaml, setup.sh, solution.sh, patches, tests/).

Everything here is pure: it returns file contents; `output.py` writes them atomically."""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

NO_NEWLINE = b"\\ No newline at end of file\n"
MAX_TEST_NAME = 55


# ---------------------------------------------------------------------------------------------
# unified diffs, byte-exact


def _split_lines(data: bytes) -> list[bytes]:
    """Lines keeping their endings (\\n or \\r\\n); a lone \\r stays inside its line like GNU diff."""
    out = data.split(b"\n")
    lines = [l + b"\n" for l in out[:-1]]
    if out[-1]:
        lines.append(out[-1])
    return lines


def unified_diff(old: bytes, new: bytes, rel_path: str, context: int = 3) -> bytes:
    """`diff -u` of one file with `a/` `b/` headers, exact bytes (CRLF kept, no-newline markers)."""
    a, b = _split_lines(old), _split_lines(new)
    if a == b:
        return b""
    # compare without the final-newline difference being hidden: lines are compared as bytes
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    out = [b"--- " + _header_name("a/" + rel_path) + b"\n", b"+++ " + _header_name("b/" + rel_path) + b"\n"]
    for group in sm.get_grouped_opcodes(context):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        out.append(f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@\n".encode())
        for tag, ai1, ai2, bj1, bj2 in group:
            if tag == "equal":
                for line in a[ai1:ai2]:
                    out.append(_emit(b" ", line))
                continue
            for line in a[ai1:ai2]:
                out.append(_emit(b"-", line))
            for line in b[bj1:bj2]:
                out.append(_emit(b"+", line))
    return b"".join(out)


def _header_name(name: str) -> bytes:
    """A file name for a `---`/`+++` header. GNU patch cuts an unquoted name at whitespace, so a
    name holding whitespace, a double quote, a backslash or a control character is written the way
    GNU diff does: C-quoted (`"a/models/my dir/x.sql"`), which GNU patch reads back exactly."""
    raw = name.encode("utf-8", errors="surrogateescape")
    if not re.search(rb'[\s"\\\x00-\x1f\x7f]', raw):
        return raw
    esc = {0x5C: b"\\\\", 0x22: b'\\"', 0x09: b"\\t", 0x0A: b"\\n", 0x0D: b"\\r"}
    body = b"".join(esc.get(c) or (b"\\%03o" % c if c < 0x20 or c == 0x7F else bytes([c])) for c in raw)
    return b'"' + body + b'"'


def _range(start: int, stop: int) -> str:
    length = stop - start
    first = start + 1
    if length == 0:
        first -= 1  # empty range: line before
        return f"{first},0"
    if length == 1:
        return f"{first}"
    return f"{first},{length}"


def _emit(prefix: bytes, line: bytes) -> bytes:
    if line.endswith(b"\n"):
        return prefix + line
    return prefix + line + b"\n" + NO_NEWLINE


# ---------------------------------------------------------------------------------------------
# task.yaml and scripts


def _yq(s: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(s, ensure_ascii=False)


def _block(text: str, indent: str) -> str:
    return "\n".join((indent + line) if line.strip() else "" for line in text.splitlines())


@dataclass
class TaskSpec:
    task_id: str
    description: str
    prompt: str
    difficulty: str
    tags: list[str]
    test_setup_models: list[str]
    solution_tables: list[str]
    db_type: str
    db_name: str
    project_name: str
    project_dir: str
    db_dir: str | None = None
    seed_based: bool = False
    status: str = "ready"
    exclude_columns: dict[str, list[str]] = field(default_factory=dict)
    max_test_timeout_sec: float | None = None
    solution_rebuild: list[str] = field(default_factory=list)


def render_task_yaml(spec: TaskSpec) -> str:
    lines = [
        f"task_id: {spec.task_id}",
        f"status: {spec.status}",
        f"description: {_yq(spec.description)}",
        "prompts:",
        "  - key: base",
        "    prompt: |-",
        _block(spec.prompt.strip("\n"), "      "),
        "author_name: ade-bench-plugin",
        'author_email: ""',
        f"difficulty: {spec.difficulty}",
        "tags:",
    ]
    lines += [f"  - {_yq(t) if not re.fullmatch(r'[A-Za-z0-9_-]+', t) else t}" for t in spec.tags]
    lines.append("")
    setup_cmds = []
    if spec.seed_based:
        setup_cmds.append("dbt seed")
    setup_cmds.append("dbt run --select " + " ".join(spec.test_setup_models))
    lines += ["test_setup: |-"] + ["  " + c for c in setup_cmds]
    lines.append("")
    lines.append("solution_seeds:")
    for t in spec.solution_tables:
        lines.append(f"  - table_name: {t}")
        excl = spec.exclude_columns.get(t)
        if excl:
            lines.append("    exclude_columns:")
            lines += [f"      - {c}" for c in excl]
    if spec.max_test_timeout_sec:
        lines.append("")
        lines.append(f"max_test_timeout_sec: {int(spec.max_test_timeout_sec)}")
    lines += [
        "",
        "variants:",
        f"- db_type: {spec.db_type}",
        f"  db_name: {spec.db_name}",
        "  project_type: dbt",
        f"  project_name: {spec.project_name}",
        f"  project_dir: {_yq(spec.project_dir)}",
    ]
    if spec.db_dir and spec.db_type == "duckdb":
        lines.append(f"  db_dir: {_yq(spec.db_dir)}")
    return "\n".join(lines) + "\n"


def render_setup_sh(seed_based: bool, build_may_fail: bool = False) -> str:
    run = "dbt run || true" if build_may_fail else "dbt run"
    body = ["#!/bin/bash", "patch -p1 < '/app/setup/changes.patch'", "",
            "# Run dbt to materialize the broken state", "dbt deps"]
    if seed_based:
        body.append("dbt seed")
    body.append(run)
    return "\n".join(body) + "\n"


def render_solution_sh(rebuild: list[str]) -> str:
    body = ["#!/bin/bash", "patch -p1 < '/sage/solutions/changes.patch'"]
    if rebuild:
        body += ["", "dbt run --select " + " ".join(_shq(m) for m in rebuild)]
    return "\n".join(body) + "\n"


def _shq(s: str) -> str:
    return s if re.fullmatch(r"[A-Za-z0-9_.+:/@=-]+", s) else "'" + s.replace("'", "'\\''") + "'"


def assertion_file_name(task_id: str, purpose: str, used: set[str]) -> str:
    """`<task_id>_<purpose>.sql`, never AUTO_, at most 55 characters (without .sql), unique."""
    purpose = re.sub(r"[^a-z0-9_]+", "_", purpose.lower()).strip("_") or "assertion"
    base = f"{task_id}_{purpose}"
    if base.upper().startswith("AUTO_"):
        base = "t_" + base
    base = base[:MAX_TEST_NAME].rstrip("_")
    name, k = base, 2
    while name in used:
        suffix = f"_{k}"
        name = base[: MAX_TEST_NAME - len(suffix)] + suffix
        k += 1
    used.add(name)
    return name + ".sql"


@dataclass
class TaskFiles:
    """Relative path -> bytes for one task directory."""

    files: dict[str, bytes]

    def text(self, rel: str) -> str:
        return self.files[rel].decode("utf-8", errors="replace")


def build_task_files(spec: TaskSpec, setup_patch: bytes, solution_patch: bytes,
                     tests: list[tuple[str, str]], build_may_fail: bool = False) -> TaskFiles:
    files: dict[str, bytes] = {
        "task.yaml": render_task_yaml(spec).encode(),
        "setup.sh": render_setup_sh(spec.seed_based, build_may_fail).encode(),
        "solution.sh": render_solution_sh(spec.solution_rebuild).encode(),
        "setup/changes.patch": setup_patch,
        "solutions/changes.patch": solution_patch,
    }
    used: set[str] = set()
    for purpose, sql in tests:
        files["tests/" + assertion_file_name(spec.task_id, purpose, used)] = sql.encode()
    return TaskFiles(files)


def relpath_posix(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()
