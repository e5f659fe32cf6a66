"""Stages "inputs": every check that can end the run with exit 2 before anything is written, in
the order `load_project` (the project, its profile, the options, its files), `locate_ade_bench`
(once per run: its databases directory can hold the project's database), `check_inputs` (the
database, the packages); then `offer_ade_bench` (where it was found, or the spec's install offer)."""
from __future__ import annotations

import tempfile
from pathlib import Path

from adegen import backends
from adegen.adebench import install as ade_bench
from adegen.dbt.gradable import no_copy_changes
from adegen.core.errors import InputError
from adegen.tasks.output import rewrite_packages
from adegen.core.paths import package_root
from adegen.discover.project import check_project_files
from adegen.discover.project import load_project as load
from adegen.pipeline.context import RunContext


def load_project(ctx: RunContext) -> None:
    """ctx.project and ctx.backend; a missing/broken project, profile or option: InputError (exit 2)."""
    opts = ctx.opts
    ctx.doc.project_dir, ctx.doc.output_dir = str(opts.project_dir), str(opts.output_dir)
    ctx.doc.validation.requested = opts.validate
    project = load(opts.project_dir, profiles_dir=opts.profiles_dir, target=opts.target,
                   db_type=opts.db_type, db_name=opts.db_name)
    backend = backends.for_project(project)
    backend.check_options(project, opts)
    if opts.no_copy and opts.project_dir.name != project.name:
        raise InputError(f"with --no-copy the directory name must equal the dbt project name {project.name!r} "
                         f"(ade-bench finds the project as <project_dir>/<project_name>); got "
                         f"{opts.project_dir.name!r}", file=opts.project_dir / "dbt_project.yml", field="name")
    check_project_files(project)  # non-UTF-8 files, no models: exit 2 before dbt runs
    ctx.doc.project = {"name": project.name, "db_type": project.adapter_type, "db_name": project.db_name,
                          "profile": project.profile_name, "target": project.target_name}
    ctx.project, ctx.backend = project, backend


def locate_ade_bench(ctx: RunContext) -> None:
    """ctx.ade: where ade-bench is (`--ade-bench-dir`, else `ade` on PATH, else ~/.ade-bench),
    found once; the later stages read it from here."""
    ctx.ade = ade_bench.detect_ade_bench(ctx.opts.ade_bench_dir)


def check_inputs(ctx: RunContext) -> None:
    """The database (with validation on) and the packages; a bad one: InputError (exit 2). Then a
    --db-path database ade-bench's image cannot open is copied into one it can
    (`Backend.ship_database`: the one thing this stage writes). The warnings the options call for."""
    opts, project, backend = ctx.opts, ctx.project, ctx.backend
    backend.check_database(project, opts, ctx.ade)  # e.g. a missing, corrupt or locked DuckDB file: exit 2 now
    ctx.db_conversion = backend.ship_database(project, opts)  # e.g. a DuckDB 2 file ade-bench cannot open
    if ctx.db_conversion:
        ctx.ui.say(f"Database: {ctx.db_conversion}")
    with tempfile.TemporaryDirectory(prefix="adegen-pkgcheck-") as tmpd:
        # refuses local: packages outside the project
        notes = rewrite_packages(project.project_dir, Path(tmpd), package_root())
    if opts.no_copy and notes:
        ctx.ui.warn("--no-copy: the project's packages.yml lists adegen itself; ade-bench runs `dbt deps` on the "
                    "project as it is, so remove that entry (or drop --no-copy) before running the tasks")
    if opts.no_copy:
        for change in no_copy_changes(project.project_dir):  # ade-bench's test script needs tests/, seeds/, macros/
            ctx.ui.warn(f"--no-copy: ade-bench cannot grade the tasks until you change {change}")
            ctx.report.warnings.append(f"--no-copy: change {change}")
    ctx.doc.validation.emulate_snowflake = bool(opts.emulate_snowflake)
    ctx.doc.backend_fields, warnings = backend.option_notes(opts)
    for w in warnings:
        ctx.ui.warn(w)


def offer_ade_bench(ctx: RunContext) -> None:
    """Where ade-bench was found (ctx.ade); when it is missing, the spec's install offer (commands
    are printed, never run)."""
    ui, ade = ctx.ui, ctx.ade
    ctx.doc.ade_bench = {"found": ade.found, "path": str(ade.path) if ade.path else None, "how": ade.how}
    if ade.found:
        ui.say(f"ade-bench: found ({ade.how}{', ' + str(ade.path) if ade.path else ''})")
        return
    ui.say(ade_bench.INSTALL_MESSAGE)
    choice = "skip"
    if ctx.opts.yes:
        choice = "install"
    elif ui.interactive:
        ans = ui.ask("Install at ~/.ade-bench [i], pick a different location [p], or skip [s]?", "s").lower()
        choice = {"i": "install", "install": "install", "p": "pick", "pick": "pick"}.get(ans, "skip")
    if choice in ("install", "pick"):
        loc = "~/.ade-bench"
        if choice == "pick" and ui.interactive:
            loc = ui.ask("Location:", "~/.ade-bench") or "~/.ade-bench"
        ui.say("Installing needs the internet, so here are the exact commands to run yourself:")
        for c in ade_bench.install_commands(loc) + ctx.backend.install_extras(loc):
            ui.say(f"  {c}")
    else:
        ui.say("Skipping the install; task generation works either way.")
    ctx.report.warnings.append("ade-bench is not installed")
