"""Phase 3: the contents of one task directory (task.yaml, setup.sh, solution.sh, patches, tests/).

Everything here is pure: it returns file contents; `output.py` writes them atomically. task.yaml
is rendered by `task_yaml.TaskYaml` (its one writer) from the task's `TaskPlan`."""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from adegen.tasks import stand_in_tests
from adegen.tasks.rebuild import Refresh, refresh_lines
from adegen.adebench.limits import MAX_TEST_NAME
from adegen.tasks.task_yaml import PromptEntry, SeedEntry, TaskYaml, Variant

NO_NEWLINE = b"\\ No newline at end of file\n"


# ---------------------------------------------------------------------------------------------
# unified diffs, byte-exact


def _split_lines(data: bytes) -> list[bytes]:
    """Lines keeping their endings (\\n or \\r\\n); a lone \\r stays inside its line like GNU diff."""
    out = data.split(b"\n")
    lines = [l + b"\n" for l in out[:-1]]
    if out[-1]:
        lines.append(out[-1])
    return lines


def unified_diff(old: bytes | None, new: bytes | None, rel_path: str, context: int = 3) -> bytes:
    """`diff -u` of one file with `a/` `b/` headers, exact bytes (CRLF kept, no-newline markers).
    None for `old` / `new`: the file does not exist on that side (`/dev/null`, as `diff -N` writes
    it; GNU patch creates / removes the file)."""
    if old == new:
        return b""
    a, b = _split_lines(old or b""), _split_lines(new or b"")
    # compare without the final-newline difference being hidden: lines are compared as bytes
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    out = [b"--- " + (b"/dev/null" if old is None else _header_name("a/" + rel_path)) + b"\n",
           b"+++ " + (b"/dev/null" if new is None else _header_name("b/" + rel_path)) + b"\n"]
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


@dataclass(frozen=True)
class LateRowsStep:
    """Rows that arrive between setup.sh's first `dbt run` and its second. In a source table: `sql`
    through ade-bench's run_sql.sh. In a seed: `csv` lines appended to `seed_file`, then `dbt seed`
    (a table insert would not survive the agent's `dbt seed` or `dbt build`)."""

    sql: str = ""
    seed_file: str = ""   # project-relative CSV path
    csv: str = ""


@dataclass
class TaskPlan:
    """Everything one task directory is rendered from (task.yaml through `task_yaml()`)."""

    task_id: str
    description: str
    prompts: list[PromptEntry]  # in order: base, then medium/hard when there are more levels
    difficulty: str
    tags: list[str]
    test_setup_models: list[str]  # rebuilt by test_setup before grading, in DAG order
    solution_seeds: list[SeedEntry]  # the graded tables
    variant: Variant
    seed_based: bool = False  # raw data from `dbt seed`: setup.sh and test_setup seed first
    # the task's setup changes the data (tasks/datachange.py): test_setup must not seed, as that
    # would load the seed files over the changed raw table before the graded tables are rebuilt
    data_change: bool = False
    status: str = "ready"
    max_test_timeout_sec: int | None = None
    solution_rebuild: list[str] = field(default_factory=list)  # models solution.sh rebuilds
    # an is_incremental() slip: the rows setup.sh adds between the first run and the second
    # (validate.duckdb.laterows); None for every other task
    late_rows: LateRowsStep | None = None
    # incremental models the broken run may have filled with wrong rows: solution.sh rebuilds them
    # in full after its ordinary run (tasks.rebuild); test_setup stays an ordinary run
    full_refresh: Refresh = field(default_factory=Refresh)

    def test_setup(self) -> str:
        cmds = ["dbt seed"] if self.seed_based and not self.data_change else []
        cmds.append("dbt run --select " + " ".join(self.test_setup_models))
        return "\n".join(cmds)

    def task_yaml(self) -> TaskYaml:
        """The task.yaml document; a graded table whose AUTO test names would be too long for
        ade-bench's parser has its AUTO tests excluded (short-named stand-ins grade it instead)."""
        seeds = []
        for s in self.solution_seeds:
            if stand_in_tests.needs_stand_ins(s.table_name):
                s = replace(s, exclude_tests=list(dict.fromkeys([*s.exclude_tests, *stand_in_tests.EXCLUDED])))
            seeds.append(s)
        return TaskYaml(
            task_id=self.task_id, status=self.status, description=self.description, prompts=list(self.prompts),
            difficulty=self.difficulty, tags=list(self.tags), variants=[self.variant],
            test_setup=self.test_setup(), solution_seeds=seeds, max_test_timeout_sec=self.max_test_timeout_sec,
        )


def render_task_yaml(plan: TaskPlan) -> str:
    return plan.task_yaml().render()


# setup.sh leaves nothing that tells the changed file from the others. Its patch writes no backup
# (.orig) or reject (.rej) file, and no "patching file <path>" line in the terminal: ade-bench runs
# setup.sh in the tmux session the agent then works in.
SETUP_PATCH = "patch -p1 --silent --no-backup-if-mismatch --reject-file=- < '/app/setup/changes.patch'"
# The patched file (and its directory) would still be the newest of the project, so setup.sh ends by
# giving every file and directory under /app the modification time of dbt_project.yml (symlinks
# themselves, not their targets; GNU find and touch, as in ade-bench's Debian image). Only /app itself
# changes afterwards: ade-bench removes setup.sh and setup/ from it.
SAME_MTIME = "find . -exec touch -h -r dbt_project.yml {} +"


LATE_SQL, LATE_CSV = "setup/late_rows.sql", "setup/late_rows.csv"


def late_rows_lines(late: LateRowsStep) -> list[str]:
    """The lines that add the late rows: ade-bench's own SQL runner (its run_sql.py reads the
    statements from stdin), or the seed's CSV gains them and `dbt seed` loads them."""
    if late.seed_file:
        return [f"cat '/app/{LATE_CSV}' >> {_shq(late.seed_file)}", "dbt seed"]
    return [f"bash /scripts/run_sql.sh \"$@\" < '/app/{LATE_SQL}'"]


def render_setup_sh(seed_based: bool, build_may_fail: bool = False, late_rows: LateRowsStep | None = None) -> str:
    """setup.sh: the patch, the build; for an is_incremental() slip (`late_rows`) the way production
    meets it: that first run, rows arriving late at the newest loaded timestamp, the next run."""
    run = "dbt run || true" if build_may_fail else "dbt run"
    body = ["#!/bin/bash", SETUP_PATCH, "",
            "# Run dbt to materialize the broken state", "dbt deps"]
    if seed_based:
        body.append("dbt seed")
    body.append(run)
    if late_rows is not None:
        body += ["", "# Rows arrive late, at the newest timestamp already loaded; the next scheduled run loads them",
                 *late_rows_lines(late_rows), run]
    body += ["", "# One modification time for every file, so the changed one does not stand out", SAME_MTIME]
    return "\n".join(body) + "\n"


def render_solution_sh(rebuild: list[str], refresh: Refresh = Refresh()) -> str:
    """solution.sh: the reverse patch, the ordinary run of the changed models; with `refresh`, then
    the full refresh of the incremental tables the broken run wrote into (tasks.rebuild)."""
    body = ["#!/bin/bash", "patch -p1 < '/sage/solutions/changes.patch'"]
    if rebuild:
        body += ["", "dbt run --select " + " ".join(_shq(m) for m in rebuild)]
    body += refresh_lines(refresh, _shq)
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


def build_task_files(spec: TaskPlan, setup_patch: bytes, solution_patch: bytes,
                     tests: list[tuple[str, str]], build_may_fail: bool = False) -> TaskFiles:
    doc = spec.task_yaml()
    files: dict[str, bytes] = {
        "task.yaml": doc.render().encode(),
        "setup.sh": render_setup_sh(spec.seed_based, build_may_fail, spec.late_rows).encode(),
        "solution.sh": render_solution_sh(spec.solution_rebuild, spec.full_refresh).encode(),
        "setup/changes.patch": setup_patch,
        "solutions/changes.patch": solution_patch,
    }
    late = spec.late_rows
    if late is not None:
        files.update({LATE_CSV: late.csv.encode()} if late.seed_file else {LATE_SQL: late.sql.encode()})
    for rel, text in stand_in_tests.render_all(doc.solution_seeds).items():
        files[rel] = text.encode()
    used: set[str] = {Path(rel).stem for rel in files if rel.startswith("tests/")}
    for purpose, sql in tests:
        files["tests/" + assertion_file_name(spec.task_id, purpose, used)] = sql.encode()
    return TaskFiles(files)


def relpath_posix(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()
