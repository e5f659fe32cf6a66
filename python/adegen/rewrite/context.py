"""ModelContext: what the engine knows about one model (built from a discovery entry)."""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Callable, Optional

from adegen.core.graph import ProjectGraph


@dataclass(frozen=True)
class ModelContext:
    name: str
    path: str = ""
    refs: tuple = ()  # names
    sources: tuple = ()  # ((source, table), ...)
    materialized: str = "view"
    columns: tuple = ()  # documented column names
    sibling_models: tuple = ()  # other models a ref may point to (no self, no downstream), best first
    project_name: str = ""
    source_tables: tuple = ()  # every ((source, table), ...) of the project
    layer: str = "other"
    upstream_models: tuple = ()  # names of the models this one reads directly
    downstream_models: tuple = ()  # names of every model that reads this one, directly or not
    # column -> the values its accepted_values test lists (what a status can be)
    accepted_values: tuple = ()  # ((column, (value, ...)), ...)
    # the models this one refs that only stage raw data: (model, ("ref", seed)) or
    # (model, ("source", (source, table))) for a model whose one input is a seed or a source
    staged_inputs: tuple = ()
    # model name -> its raw SQL (None when unknown): operators that read another model's SQL
    # (convert_again) need it; without one they find no site
    model_sql: Optional[Callable[[str], Optional[str]]] = field(default=None, compare=False, hash=False, repr=False)

    @classmethod
    def from_discovery(cls, model: dict, discovery: dict,
                       model_sql: Optional[Callable[[str], Optional[str]]] = None) -> "ModelContext":
        models = [m for m in discovery.get("models", []) if m.get("enabled", True)]
        by_id = {m["unique_id"]: m for m in models}
        graph = ProjectGraph.from_models([*models, model])  # the entry's own parents, even when left out
        downstream = graph.descendants(model["unique_id"])
        layer = model.get("layer", "other")
        others = [
            m for m in models
            if m["unique_id"] != model["unique_id"] and m["unique_id"] not in downstream
            and m.get("package_name") == model.get("package_name")
        ]
        others.sort(key=lambda m: (m.get("layer") != layer,
                                   -difflib.SequenceMatcher(None, m["name"], model["name"]).ratio(),
                                   m["name"]))
        project = discovery.get("project", {}) or {}
        return cls(
            name=model["name"],
            path=model.get("path", ""),
            refs=tuple(model.get("refs", []) or []),
            sources=tuple(tuple(s) for s in model.get("sources", []) or []),
            materialized=model.get("materialized", "view"),
            columns=tuple(model.get("columns", []) or []),
            sibling_models=tuple(m["name"] for m in others),
            project_name=project.get("name", model.get("package_name", "")),
            source_tables=tuple((s["source"], s["table"]) for s in discovery.get("sources", []) or []),
            layer=layer,
            upstream_models=tuple(by_id[d]["name"] for d in graph.parents(model["unique_id"]) if d in by_id),
            downstream_models=tuple(sorted(by_id[d]["name"] for d in downstream if d in by_id)),
            accepted_values=tuple((col, tuple(vals)) for col, vals in
                                  sorted((model.get("accepted_values") or {}).items())),
            staged_inputs=_staged_inputs(model, models, graph),
            model_sql=model_sql,
        )


def _staged_inputs(model: dict, models: list[dict], graph: ProjectGraph) -> tuple:
    """For each model `model` refs that reads exactly one relation, a seed or a source: what it reads."""
    by_name = {m["name"]: m for m in models if m.get("package_name") == model.get("package_name")}
    out = []
    for name in dict.fromkeys(model.get("refs", []) or []):
        staged = by_name.get(name)
        deps = graph.parents(staged["unique_id"]) if staged is not None else ()
        if staged is None or len(deps) != 1:  # (dbt refuses a model that refs itself: a cycle)
            continue
        if deps[0].startswith("seed.") and len(staged.get("refs") or []) == 1:
            out.append((name, ("ref", staged["refs"][0])))
        elif deps[0].startswith("source.") and len(staged.get("sources") or []) == 1:
            out.append((name, ("source", tuple(staged["sources"][0]))))
    return tuple(out)


def requires_hold(requires: dict, ctx: ModelContext) -> bool:
    """The same checks as the dbt macro `ade_match_patterns`."""
    for key, value in (requires or {}).items():
        if key == "materialized":
            allowed = [value] if isinstance(value, str) else list(value)
            if ctx.materialized not in allowed:
                return False
        elif key == "min_refs":
            if len(ctx.refs) < value:
                return False
        elif key == "min_sources":
            if len(ctx.sources) < value:
                return False
        elif key == "min_columns":
            if len(ctx.columns) < value:
                return False
        else:
            raise KeyError(key)
    return True
