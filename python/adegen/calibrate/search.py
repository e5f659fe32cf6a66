"""`builtin:search`: a deterministic repair search, the no-model baseline agent.

It walks the models from the graded tables (the tables the task's tests compare, which the
prompts name) up their lineage, breadth first (distance, then name), read from the sandbox's
`target/manifest.json` (setup.sh's `dbt run` wrote it). In each model it enumerates the shipped
catalog's edit sites on that model's text in the intact project the task names
(`adegen.rewrite.engine.sites_for_model`, in catalog order) and tries each one's inverse: the
inverse applies when the sandbox's model text is exactly that edit's result. Every site examined
is one try. Every model whose inverse applies gets its intact text back (one mistake may span
sibling models: adegen.propose.siblings), then those models and their descendants are rebuilt (`dbt run
--select <model>+ ...`); the grade that follows decides whether the task is solved. Its tries are
the sites examined up to the last inverse found. No inverse applies anywhere: it stops unsolved,
having tried them all.

It reads the intact project, which an agent never sees: its tries measure the size of the catalog's
search space between the named table and the bug, not skill."""
from __future__ import annotations

import json
import time

from adegen.core.errors import InputError
from adegen.core.graph import ProjectGraph
from adegen.discover.layers import assign_layers, nodes_from_manifest
from adegen.catalog.patterns import load_catalog
from adegen.rewrite.context import ModelContext
from adegen.rewrite.engine import apply_site, sites_for_model
from adegen.rewrite.stories import Where, extract_cte, tell
from adegen.calibrate.agent import AgentRun
from adegen.calibrate.sandbox import Sandbox


def accepted_values(manifest: dict) -> dict[str, dict[str, list[str]]]:
    """Model unique_id -> {column: the string values its accepted_values test lists} (what the
    discovery macro gives each model as `accepted_values`)."""
    out: dict[str, dict[str, list[str]]] = {}
    for n in (manifest.get("nodes") or {}).values():
        meta = n.get("test_metadata") or {}
        values = (meta.get("kwargs") or {}).get("values")
        if n.get("resource_type") != "test" or meta.get("name") != "accepted_values" \
                or not n.get("attached_node") or not n.get("column_name") or not isinstance(values, list):
            continue
        out.setdefault(n["attached_node"], {})[n["column_name"]] = [v for v in values if isinstance(v, str)]
    return out


def model_contexts(manifest: dict, model_sql) -> dict[str, ModelContext]:
    """Model name -> the ModelContext the build gives it (from a discovery-like view of the
    manifest: layers, the DAG, accepted values), so the search sees the sites the build saw."""
    nodes = manifest.get("nodes") or {}
    layers = assign_layers(nodes_from_manifest(manifest))
    accepted = accepted_values(manifest)
    graph = ProjectGraph.from_manifest(manifest)
    models = [{"unique_id": uid, "name": n["name"], "package_name": n.get("package_name", ""),
               "path": n.get("original_file_path", ""), "depends_on": list(graph.parents(uid)),
               "refs": [r["name"] if isinstance(r, dict) else r[-1] for r in n.get("refs") or []],
               "sources": [list(s) for s in n.get("sources") or []],
               "materialized": (n.get("config") or {}).get("materialized", "view"),
               "layer": layers[uid].layer if uid in layers else "other",
               "accepted_values": accepted.get(uid, {})}
              for uid, n in nodes.items() if n.get("resource_type") == "model"]
    discovery = {"models": models, "project": {"name": manifest.get("metadata", {}).get("project_name", "")},
                 "sources": [{"source": s.get("source_name"), "table": s.get("name")}
                             for s in (manifest.get("sources") or {}).values()]}
    return {m["name"]: ModelContext.from_discovery(m, discovery, model_sql) for m in models}


def lineage(manifest: dict, tables: tuple[str, ...]) -> list[tuple[str, str]]:
    """(model name, file path) of the graded tables and every model upstream of them, nearest
    first (breadth first; ties by name). Only the project's own models (not packages')."""
    project = manifest.get("metadata", {}).get("project_name")
    graph = ProjectGraph.from_manifest(manifest, package=project)
    by_name = {n.name: uid for uid, n in graph.nodes.items()}
    order = graph.lineage(by_name[t] for t in tables if t in by_name)
    return [(graph.nodes[u].name, graph.nodes[u].path) for u in order]


def inverse_tries(intact: str, broken: str, ctx: ModelContext, catalog, where: Where | None = None
                  ) -> tuple[int, bool, tuple]:
    """(sites examined, whether one's inverse applies, the files its story added): the catalog's
    sites on `intact` in order, until one whose edit gives exactly `broken`, alone or inside the
    story a build makes it in (adegen.rewrite.stories: the same stable choice, so one try covers
    both), or inside a CTE moved into a model of its own (`where`: the model's path and the intact
    project's model names; the caller checks the added file and removes it)."""
    tries = 0
    for sites in sites_for_model(intact, catalog, ctx, "duckdb").values():
        for site in sites:
            tries += 1
            if apply_site(intact, site) == broken or tell(intact, site, ctx.name)[0] == broken:
                return tries, True, ()
            told, story = tell(intact, site, ctx.name, where, only=extract_cte.KIND) if where else (None, None)
            if story is not None and told == broken:
                return tries, True, story.files
    return tries, False, ()


def _text(path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def _manifest(sandbox: Sandbox) -> dict:
    path = sandbox.app / "target" / "manifest.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"builtin:search needs the manifest setup.sh's dbt run writes ({exc})",
                         file=path) from None


def search(sandbox: Sandbox) -> AgentRun:
    """Run the search in a prepared sandbox; the result records its tries."""
    t0 = time.monotonic()
    catalog = load_catalog()
    tries, notes, restored, last = 0, [], [], 0
    manifest = _manifest(sandbox)
    paths = {n["name"]: n.get("original_file_path", "") for n in (manifest.get("nodes") or {}).values()
             if n.get("resource_type") == "model"}

    def intact_sql(name: str) -> str | None:  # the intact project's text of a model (convert_again reads it)
        path = sandbox.task.project_dir / paths.get(name, "")
        return path.read_text(encoding="utf-8") if paths.get(name) and path.is_file() else None

    contexts = model_contexts(manifest, intact_sql)
    taken = frozenset(n for n, p in paths.items() if p and (sandbox.task.project_dir / p).is_file())
    for name, rel in lineage(manifest, sandbox.task.graded_tables):
        ref, mine = sandbox.task.project_dir / rel, sandbox.app / rel
        if not ref.is_file() or not mine.is_file():
            continue
        intact, broken = ref.read_text(encoding="utf-8"), mine.read_text(encoding="utf-8")
        ctx = contexts.get(name) or ModelContext(name=name, path=rel, model_sql=intact_sql)
        n, found, added = inverse_tries(intact, broken, ctx, catalog, Where(rel, taken))
        tries += n
        if found and all(_text(sandbox.app / p) == text for p, text in added):
            for p, _text_added in added:  # the move undone: the CTE back in its model, the new file gone
                (sandbox.app / p).unlink()
            mine.write_text(intact, encoding="utf-8")
            restored.append(name)
            last = tries
    if restored:
        ok, console = sandbox.dbt(["run", "--select", *(f"{n}+" for n in restored)])
        notes.append(f"inverse edit in {', '.join(restored)} (try {last}); dbt run {'ok' if ok else 'failed'}")
        return AgentRun(0 if ok else 1, round(time.monotonic() - t0, 2), False,
                        "" if ok else console[-2000:], tries=last, notes=notes)
    notes.append("no inverse edit of the catalog applies to any model upstream of the graded tables")
    return AgentRun(1, round(time.monotonic() - t0, 2), False, tries=tries, notes=notes)
