"""Stages "discover" (the dbt package's ade_discover on a scratch copy) and "survey" (the pattern
catalog and the tasks that already exist for this project)."""
from __future__ import annotations

import time

from adegen.discover import survey as sv
from adegen.discover.payload import run_discovery
from adegen.core.errors import InputError
from adegen.core.paths import optional_patterns_dir
from adegen.catalog.patterns import load_catalog
from adegen.pipeline.context import RunContext


def discover(ctx: RunContext) -> None:
    """ctx.discovery; a project whose models are all disabled is bad input."""
    opts, ui = ctx.opts, ctx.ui
    ui.say("Running discovery...")
    t1 = time.monotonic()
    discovery = run_discovery(opts.project_dir, patterns_dirs=opts.patterns_dirs, project=ctx.project)
    ctx.timing("discovery", t1)
    name = ctx.project.name
    if not any(m.get("package_name") == name and m.get("enabled", True) for m in discovery.get("models", [])):
        raise InputError("the project has no enabled models (every model is disabled)",
                         file=opts.project_dir / "dbt_project.yml", field="models")
    ui.say(discovery_summary(discovery))
    ui.say()
    ctx.discovery = discovery


def discovery_summary(d: dict) -> str:
    proj = d.get("project", {})
    db = d.get("database", {})
    models = d.get("models", [])
    own = [m for m in models if m.get("package_name", proj.get("name")) == proj.get("name")]
    layers: dict[str, int] = {}
    for m in own:
        layers[m.get("layer", "other")] = layers.get(m.get("layer", "other"), 0) + 1
    layer_txt = ", ".join(f"{n} {k}" for k, n in sorted(layers.items(), key=lambda kv: -kv[1]))
    where = db.get("path") or db.get("database") or "?"
    pk = d.get("packages") or []
    return "\n".join([
        f"Found dbt project: {proj.get('name')}",
        f"Database: {db.get('type')} at {where}",
        f"Models: {len(own)} ({layer_txt})",
        f"Sources: {len(d.get('sources', []))} source tables",
        f"Packages: {', '.join(pk) if pk else 'none'}",
        f"Top task candidates: {len(d.get('candidates', []))} models identified",
    ])


def survey(ctx: RunContext) -> None:
    """ctx.catalog and ctx.survey (existing tasks in ade-bench's tasks/ and the output's tasks/)."""
    ui = ctx.ui
    ctx.catalog = load_catalog(ctx.opts.patterns_dirs)
    # existing tasks are classified against every family adegen knows, the optional ones included
    known = load_catalog([*ctx.opts.patterns_dirs, optional_patterns_dir()])
    found = sv.survey(sv.task_locations(ctx.ade, ctx.opts.output_dir), ctx.project.name, known)
    for w in found.warnings:
        ui.warn(w)
    ctx.report.warnings.extend(found.warnings)
    ui.say(found.brief())
    ui.say()
    ctx.doc.survey = {
        "locations": [str(p) for p in found.locations],
        "tasks": [{"task_id": t.task_id, "location": t.location, "difficulty": t.difficulty,
                   "description": t.description, "prompt": t.prompt, "tags": t.tags,
                   "changes": [{"file": c.file, "start": c.start, "end": c.end, "before": c.before,
                                "after": c.after, "family": c.family} for c in t.changes],
                   "patch_problem": t.patch_problem} for t in found.tasks],
    }
    ctx.survey = found
