"""Stage "write", part one: what every task of the run shares - the standalone project copy
(`<output>/projects/<name>`), the database ade-bench will need, the facts the task files name.
Called with the run lock held."""
from __future__ import annotations

from pathlib import Path

from adegen.tasks import output as out
from adegen.core.graph import ProjectGraph
from adegen.core.paths import package_root
from adegen.pipeline import record
from adegen.pipeline.context import OutputPlan, RunContext


def prepare(ctx: RunContext) -> OutputPlan:
    """ctx.output: the project copy (or the original with --no-copy) and the database."""
    opts = ctx.opts
    tasks_dir = opts.output_dir / "tasks"
    out.clean_stale_temp(tasks_dir)
    record.clean_stale(opts.output_dir)
    project_root, project_dir_field = _project_copy(ctx)
    validator = ctx.validator
    seed_based = (bool(validator.seed_based()) if validator is not None
                  else looks_seed_based(ctx.project, ctx.discovery))
    plan = OutputPlan(tasks_dir=tasks_dir, project_root=project_root, project_dir_field=project_dir_field,
                      seed_based=seed_based, known_models={m["name"] for m in ctx.discovery.get("models", [])})
    plan.db_file, plan.db_note = ctx.backend.database(ctx)
    ctx.doc.database = {"db_file": str(plan.db_file) if plan.db_file else None, "note": plan.db_note,
                        **({"conversion": ctx.db_conversion} if ctx.db_conversion else {})}
    ctx.output = plan
    return plan


def _project_copy(ctx: RunContext) -> tuple[Path, str]:
    opts, ui, project = ctx.opts, ctx.ui, ctx.project
    if opts.no_copy:
        ui.warn("--no-copy: task.yaml points at the original project; the output is not self-contained")
        ctx.report.warnings.append("--no-copy: output is not self-contained")
        return opts.project_dir, str(opts.project_dir.parent)
    dest = opts.output_dir / "projects" / project.name
    created, notes = out.copy_project(opts.project_dir, dest, profiles_yml=ctx.backend.copy_profile(project),
                                      adegen_root=package_root())
    for note in notes:
        ui.say(note)
    ui.say(f"Project copy: {dest}" + ("" if created else " (existing copy kept)"))
    return dest, str(opts.output_dir / "projects")


def looks_seed_based(project, discovery) -> bool:
    """Without a validator: raw data comes from `dbt seed` when a model depends on a seed or a
    source's identifier is the name of a seed CSV of the project."""
    if any(str(d).startswith("seed.") for d in ProjectGraph.from_discovery(discovery).inputs()):
        return True
    stems = {p.stem.lower() for p in project.seed_files()}
    return any(str(s.get("identifier") or s.get("table") or "").lower() in stems
               for s in discovery.get("sources", []))
