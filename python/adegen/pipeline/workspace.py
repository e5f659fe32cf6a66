"""Stage "write", part one: what every task of the run shares - the standalone project copy
(`<output>/projects/<name>`), the database ade-bench will need, the facts the task files name.
Called with the run lock held."""
from __future__ import annotations

from pathlib import Path

from ..errors import AdegenError
from .context import OutputPlan, RunContext


def prepare(ctx: RunContext) -> OutputPlan:
    """ctx.output: the project copy (or the original with --no-copy) and the database."""
    from .. import output as out

    opts = ctx.opts
    tasks_dir = opts.output_dir / "tasks"
    out.clean_stale_temp(tasks_dir)
    project_root, project_dir_field = _project_copy(ctx)
    validator = ctx.validator
    seed_based = (bool(validator.seed_based()) if validator is not None
                  else looks_seed_based(ctx.project, ctx.discovery))
    plan = OutputPlan(tasks_dir=tasks_dir, project_root=project_root, project_dir_field=project_dir_field,
                      seed_based=seed_based, known_models={m["name"] for m in ctx.discovery.get("models", [])})
    plan.db_file, plan.db_note = _database(ctx)
    ctx.doc["database"] = {"db_file": str(plan.db_file) if plan.db_file else None, "note": plan.db_note}
    ctx.output = plan
    return plan


def _project_copy(ctx: RunContext) -> tuple[Path, str]:
    from .. import output as out
    from ..paths import package_root

    opts, ui, project = ctx.opts, ctx.ui, ctx.project
    if opts.no_copy:
        ui.warn("--no-copy: task.yaml points at the original project; the output is not self-contained")
        ctx.report.warnings.append("--no-copy: output is not self-contained")
        return opts.project_dir, str(opts.project_dir.parent)
    dest = opts.output_dir / "projects" / project.name
    profiles = out.render_profiles(project.profile_name, project.target_name, project.adapter_type,
                                   project.db_name, project.schema, project.target_config)
    created, notes = out.copy_project(opts.project_dir, dest, profiles_yml=profiles, adegen_root=package_root())
    for note in notes:
        ui.say(note)
    ui.say(f"Project copy: {dest}" + ("" if created else " (existing copy kept)"))
    return dest, str(opts.output_dir / "projects")


def _database(ctx: RunContext) -> tuple[Path | None, str | None]:
    """(the database file proofs run against, what the user must do so ade-bench finds it)."""
    opts, project, ade = ctx.opts, ctx.project, ctx.ade
    if project.adapter_type != "duckdb":
        return None, None
    if opts.db_path is not None:
        db_file = opts.db_path / f"{project.db_name}.duckdb"
        return db_file, (f"db_dir is set to {opts.db_path}; it must contain {project.db_name}.duckdb"
                         + ("" if db_file.is_file() else " (it does not yet)"))
    target = (f"{ade.path}/shared/databases/duckdb/{project.db_name}.duckdb" if ade.path
              else f"<ade-bench>/shared/databases/duckdb/{project.db_name}.duckdb")
    if ctx.validator is not None:
        try:
            db_file = ctx.validator.prepare_database(opts.output_dir / "databases")
            return db_file, (f"copy {db_file} to {target} (db_dir is not set, so the harness looks there), "
                             f"or re-run with --db-path {db_file.parent}")
        except AdegenError as exc:
            ctx.ui.warn(f"could not prepare the database: {exc}")
    src = project.db_path or f"{project.db_name}.duckdb"
    return None, (f"the harness expects {target}; build the project's database ({src}), save it with "
                  "DuckDB storage version v1.0.0 and copy it there, or re-run with --db-path DIR")


def looks_seed_based(project, discovery) -> bool:
    """Without a validator: raw data comes from `dbt seed` when a model depends on a seed or a
    source's identifier is the name of a seed CSV of the project."""
    if any(str(d).startswith("seed.") for m in discovery.get("models", []) for d in m.get("depends_on", [])):
        return True
    stems = set()
    for sp in project.seed_paths or ["seeds"]:
        d = Path(project.project_dir) / sp
        if d.is_dir():
            stems |= {p.stem.lower() for p in d.rglob("*.csv")}
    return any(str(s.get("identifier") or s.get("table") or "").lower() in stems
               for s in discovery.get("sources", []))
