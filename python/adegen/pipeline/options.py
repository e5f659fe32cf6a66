"""The options of one run (the build's, and each project's in bulk mode and a plan): `Options`, and the
checks of the project, database and output arguments (`project_options`), each an `InputError` naming
the argument. The command lines that fill them are adegen.cli.build_args and adegen.cli.bulk."""
from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path

from adegen import backends
from adegen.core.errors import InputError
from adegen.core.settings import Settings, get_settings


@dataclass
class Options:
    project_dir: Path
    output_dir: Path
    no_copy: bool = False
    db_type: str | None = None
    db_name: str | None = None
    db_path: Path | None = None
    ade_bench_dir: Path | None = None
    patterns_dirs: list[Path] = field(default_factory=list)
    count: int = 5
    pick: str | None = None  # "all" or "1,3"
    yes: bool = False
    json: bool = False
    validate: bool = True
    profiles_dir: Path | None = None
    target: str | None = None
    emulate_snowflake: bool = False
    run_harness: bool = False
    verify_slow: bool = False  # re-prove each written task the plain way (pipeline/verify_slow.py)
    prompt_command: str | None = None  # shell command that writes the prompts (adegen.prompts.command)
    bug_command: str | None = None  # shell command that offers bugs as diffs (adegen.propose.bug_command)
    compound: str = "auto"  # one task of two independent slips on one lineage: auto | off (propose.compound)
    history: str = "auto"  # fixes of the git history undone as candidates: auto | on | off (propose.history)
    # purposeful-change tasks in the --count (pipeline/purpose.py): auto (the build's default: where they
    # can be proven, silently none elsewhere) | on (--purpose: says why when none can be made) | off
    purpose: str = "off"
    mix: str = "default"  # --mix: default | hard (propose/mix.py: the hard kinds, the hard prompt as base)
    data_change: bool = False  # --data-change: one upstream-data-change task instead (pipeline/datachange.py)
    report: bool = True  # write <output-dir>/report.html at the end (--no-report: don't)
    jobs: int = 2  # validator worker processes (the build: ADEGEN_BUILD_JOBS, 2; bulk mode: --jobs)
    executor: object = None  # bulk mode's --executor (validate.executor.ExecutorSpec; None: local pool)
    time_budget: float | None = None  # --time-budget: seconds of wall clock for the whole build
    settings: Settings = field(default_factory=get_settings)  # the ADEGEN_* environment, read once


def _check_writable(output_dir: Path) -> None:
    """The output directory, or the nearest existing directory it would be created in, must be
    writable (checked before any work; nothing is created here)."""
    probe = output_dir
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe != output_dir and not probe.is_dir():
        raise InputError(f"cannot be created: {probe} is not a directory", file=output_dir, field="--output-dir")
    if not os.access(probe, os.W_OK | os.X_OK):
        what = "is not writable" if probe == output_dir else f"cannot be created: {probe} is not writable"
        raise InputError(what, file=output_dir, field="--output-dir")


def project_options(ns: argparse.Namespace) -> Options:
    """Options from the arguments `add_project_args` defined, each checked (InputError naming it)."""
    project_dir = Path(ns.project_dir).expanduser()
    if not project_dir.exists():
        raise InputError("does not exist", file=project_dir, field="PROJECT_DIR")
    if not project_dir.is_dir():
        raise InputError("not a directory", file=project_dir, field="PROJECT_DIR")
    if not (project_dir / "dbt_project.yml").is_file():
        raise InputError("no dbt_project.yml in this directory", file=project_dir, field="PROJECT_DIR")
    project_dir = project_dir.resolve()
    output_dir = (Path(ns.output_dir).expanduser() if ns.output_dir
                  else project_dir.parent / "ade-bench-tasks")
    output_dir = output_dir.resolve()
    try:
        output_dir.relative_to(project_dir)
        raise InputError("must not be inside the dbt project (the project is never modified)",
                         file=output_dir, field="--output-dir")
    except ValueError:
        pass
    if output_dir.exists() and not output_dir.is_dir():
        raise InputError("exists and is not a directory", file=output_dir, field="--output-dir")
    _check_writable(output_dir)
    db_path = None
    if ns.db_path:
        backend = backends.get(ns.db_type) if ns.db_type else None
        if backend is not None and not backend.file_based:
            raise InputError(f"--db-path is for DuckDB only: {backend.title()} variants have no db_dir "
                             f"({backend.reached_how} {backend.reached_with}); drop --db-path", field="--db-path")
        db_path = Path(ns.db_path).expanduser()
        if not db_path.is_dir():
            raise InputError("directory does not exist", file=db_path, field="--db-path")
        db_path = db_path.resolve()
    ade_dir = None
    if ns.ade_bench_dir:
        ade_dir = Path(ns.ade_bench_dir).expanduser()
        if not ade_dir.is_dir():
            raise InputError("directory does not exist", file=ade_dir, field="--ade-bench-dir")
        ade_dir = ade_dir.resolve()
    patterns_dirs = []
    for d in ns.patterns_dir:
        pd = Path(d).expanduser()
        if not pd.is_dir():
            raise InputError("directory does not exist", file=pd, field="--patterns-dir")
        patterns_dirs.append(pd.resolve())
    if ns.db_name is not None and not ns.db_name.strip():
        raise InputError("must not be empty", field="--db-name")
    profiles_dir = None
    if ns.profiles_dir:
        profiles_dir = Path(ns.profiles_dir).expanduser().resolve()
        if not profiles_dir.is_dir():
            raise InputError("directory does not exist", file=profiles_dir, field="--profiles-dir")
    return Options(
        project_dir=project_dir, output_dir=output_dir, db_type=ns.db_type, db_name=ns.db_name, db_path=db_path,
        ade_bench_dir=ade_dir, patterns_dirs=patterns_dirs, json=ns.json, profiles_dir=profiles_dir,
        target=ns.target, emulate_snowflake=ns.emulate_snowflake, report=not ns.no_report,
        jobs=get_settings().build_jobs,
    )


def parse_pick(pick: str, n: int, *, at_most: bool = False) -> list[int]:
    """`all` or a comma list of 1-based numbers -> 0-based indexes (validated against n; `at_most`:
    n is only the upper bound --count sets, checked before the proposals exist)."""
    text = pick.strip().lower()
    if text in ("all", "a", "*"):
        return list(range(n))
    out: list[int] = []
    for part in text.replace(" ", ",").split(","):
        if not part:
            continue
        if "-" in part:
            lo, _, hi = part.partition("-")
            if not (lo.isdigit() and hi.isdigit()):
                raise InputError(f"expected 'all' or numbers like 1,3 - got {pick!r}", field="--pick")
            rng = range(int(lo), int(hi) + 1)
        elif part.isdigit():
            rng = range(int(part), int(part) + 1)
        else:
            raise InputError(f"expected 'all' or numbers like 1,3 - got {pick!r}", field="--pick")
        for k in rng:
            if not 1 <= k <= n:
                there = f"--count {n} proposes at most {n}" if at_most else f"there are {n}"
                raise InputError(f"proposal {k} does not exist ({there})", field="--pick")
            if k - 1 not in out:
                out.append(k - 1)
    if not out:
        raise InputError(f"expected 'all' or numbers like 1,3 - got {pick!r}", field="--pick")
    return out
