"""adegen's settings: every environment variable adegen reads for itself, each a documented field
with its default, read from the environment here and nowhere else, once per process
(`get_settings`). The command line's options carry the same object (`cli_args.Options.settings`),
so a run and the code it calls see the values the run started with.

`SETTINGS` is the table README's "Settings" section lists (a test keeps the two equal). Variables
that belong to a library (dbt's `DBT_PROFILES_DIR`, the credentials in `env_var()` calls, the
environment handed to a dbt process) are read where that library needs them;
`python/tests/test_structure.py` names those places and why."""
from __future__ import annotations

import contextlib
import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Mapping


@dataclass(frozen=True)
class Settings:
    package_dir: Path | None = None  # the adegen dbt package (macros, patterns); None: this checkout
    # discovery's scratch copies (dbt's partial parse)
    cache_dir: Path = dataclasses.field(default_factory=lambda: Path.home() / ".cache" / "adegen")
    debug: bool = False  # print the traceback of an internal error; re-raise a prompt writer's error
    dbt_runner: str = ""  # "subprocess" | "inprocess"; "": in-process when dbt-core imports
    mp_start: str = "spawn"  # how the validator's worker processes start (multiprocessing)
    prove_fast: bool = True  # the proof's fast path (prepared databases, in-process grading)
    compile_fresh_copy: bool = False  # compile mutants in a fresh copy with a dbt subprocess
    bind_check: bool = True  # plan every compiled mutant on the intact build before screening (propose.bind_check)
    budget_min_seconds: float = 30.0  # the least wall time a screen or proof build gets
    budget_factor: float = 10.0  # x the intact build's seconds of the rebuilt models
    budget_row_factor: float = 20.0  # a rebuilt table may hold this x its intact rows ...
    budget_row_floor: int = 100_000  # ... and at least this many
    budget_precount_min_rows: int = 10_000  # below this in every table, no row precount
    duckdb_memory_limit: str = ""  # DuckDB memory_limit per worker ("2GiB"); "": a share of RAM
    duckdb_temp_limit: str = ""  # DuckDB max_temp_directory_size per worker; "": a share of the disk
    ade_databases_dir: Path | None = None  # ade-bench's own variable: where its databases are
    time_budget_task_charge: float = 0.0  # tests: seconds each task adds to --time-budget's clock
    build_jobs: int = 2  # validator worker processes of a build (bulk mode: --jobs)
    shifted_clock: bool = True  # the determinism build runs 40 days ahead under faketime (validate.clockcheck)


@dataclass(frozen=True)
class Setting:
    """One environment variable: the field it sets, how its text is read, what it does."""

    env: str
    field: str
    parse: Callable[[str], object]
    help: str


def _path(text: str) -> Path:
    return Path(text).expanduser()


def _flag(text: str) -> bool:  # set to anything: on (ADEGEN_DEBUG=1)
    return bool(text)


def _number(default: float) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            return float(text)
        except ValueError:  # a typo keeps the default, as before
            return default

    return parse


SETTINGS: tuple[Setting, ...] = (
    Setting("ADEGEN_PACKAGE_DIR", "package_dir", lambda t: Path(t).resolve(),
            "the adegen dbt package (macros/, patterns/) for installs that are not editable checkouts"),
    Setting("ADEGEN_CACHE_DIR", "cache_dir", _path,
            "discovery's scratch copies (default `$XDG_CACHE_HOME/adegen`, else `~/.cache/adegen`)"),
    Setting("ADEGEN_DEBUG", "debug", _flag,
            "any value: an internal error prints its traceback, a prompt writer's error is raised"),
    Setting("ADEGEN_DBT_RUNNER", "dbt_runner", lambda t: t.strip().lower(),
            "`subprocess` runs dbt as a subprocess (default: in-process when dbt-core imports)"),
    Setting("ADEGEN_MP_START", "mp_start", str, "start method of the validator's workers (default `spawn`)"),
    Setting("ADEGEN_PROVE_FAST", "prove_fast", lambda t: t != "0",
            "`0` proves every task by the full emulation (every script step replayed)"),
    Setting("ADEGEN_COMPILE_FRESH_COPY", "compile_fresh_copy", lambda t: t in ("1", "true"),
            "`1` compiles mutants in a fresh copy with a dbt subprocess (the reference of the fast compile)"),
    Setting("ADEGEN_BIND_CHECK", "bind_check", lambda t: t != "0",
            "`0` skips the bind check: a compiled mutant that does not bind on the intact build is found by "
            "screening instead"),
    Setting("ADEGEN_BUDGET_MIN_SECONDS", "budget_min_seconds", _number(30.0),
            "the least wall time a screen or proof build gets (default 30)"),
    Setting("ADEGEN_BUDGET_FACTOR", "budget_factor", _number(10.0),
            "a build's wall time: this x the intact build of the models it rebuilds (default 10)"),
    Setting("ADEGEN_BUDGET_ROW_FACTOR", "budget_row_factor", _number(20.0),
            "a rebuilt table may hold this x its intact rows (default 20) ..."),
    Setting("ADEGEN_BUDGET_ROW_FLOOR", "budget_row_floor", lambda t: int(_number(100_000)(t)),
            "... and at least this many (default 100000)"),
    Setting("ADEGEN_BUDGET_PRECOUNT_MIN_ROWS", "budget_precount_min_rows", lambda t: int(_number(10_000)(t)),
            "below this many rows in every table, a screen skips the row precount (default 10000)"),
    Setting("ADEGEN_DUCKDB_MEMORY_LIMIT", "duckdb_memory_limit", str,
            "DuckDB memory_limit per worker, e.g. `2GiB` (default: a share of the machine, at most 4 GiB)"),
    Setting("ADEGEN_DUCKDB_TEMP_LIMIT", "duckdb_temp_limit", str,
            "DuckDB temp space per worker (default: a share of the free disk, at most 10 GiB)"),
    Setting("ADE_DATABASES_DIR", "ade_databases_dir", Path,
            "ade-bench's own variable: a task without db_dir finds its DuckDB file in `<dir>/duckdb`"),
    Setting("ADEGEN_TIME_BUDGET_TASK_CHARGE", "time_budget_task_charge", _number(0.0),
            "tests: seconds each task's write and proof adds to `--time-budget`'s clock (default 0)"),
    Setting("ADEGEN_BUILD_JOBS", "build_jobs", lambda t: max(1, int(_number(2)(t))),
            "validator worker processes of a build (default 2; bulk mode takes `--jobs`): 1 on a machine "
            "already busy with other builds, e.g. a test suite running builds side by side"),
    Setting("ADEGEN_SHIFTED_CLOCK", "shifted_clock", lambda t: t != "0",
            "`0` skips the shifted-clock check: the determinism build runs with today's clock in the validator's "
            "worker instead of a process under faketime (a dbt start and parse less per build; the summary says "
            "it was skipped)"),
)


def from_environ(environ: Mapping[str, str]) -> Settings:
    """The settings an environment gives (a variable set to the empty string counts as unset)."""
    values: dict[str, object] = {}
    for s in SETTINGS:
        text = environ.get(s.env, "")
        if text:
            values[s.field] = s.parse(text)
    if "cache_dir" not in values:
        xdg = environ.get("XDG_CACHE_HOME")
        values["cache_dir"] = (Path(xdg) if xdg else Path.home() / ".cache") / "adegen"
    return Settings(**values)


_current: Settings | None = None


def get_settings() -> Settings:
    """This process's settings, read from the environment on first use."""
    global _current
    if _current is None:
        _current = from_environ(os.environ)
    return _current


def reload() -> Settings:
    """Read the environment again (for a caller that has just changed it, e.g. a test session)."""
    global _current
    _current = None
    return get_settings()


@contextlib.contextmanager
def override(**changes) -> Iterator[Settings]:
    """This process's settings with `changes` for the length of a `with` block (tests)."""
    global _current
    before = get_settings()
    _current = dataclasses.replace(before, **changes)
    try:
        yield _current
    finally:
        _current = before
