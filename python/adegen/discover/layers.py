"""Model layers (staging | intermediate | marts | other): the single definition of the rules.

The discovery macro cannot import Python, so `adegen catalog-macros` writes the tables
below into the generated macro `macros/catalog/ade_layer_rules.sql`; `macros/discover/
ade_model_layers.sql` applies them. `assign_layers` is the Python reference of exactly what the
macro computes (a test compares the two on a generated project and on the example project).

Rules, in order of precedence (the first one that says something wins; docs/architecture.md,
"Model layers", gives the reason for each):

1. ``prefix``      the model name starts with a layer prefix (PREFIXES): ``stg_orders`` is
                   staging wherever it sits.
2. ``folder``      the first folder of its path, from the top, that names a layer (FOLDERS; a
                   folder also names a layer when one of its words does: ``01_staging``,
                   ``analytics_obt``). The path is relative to the model path (dbt's
                   ``node.path``), so ``models/`` itself never counts.
3. ``package``     the model belongs to a source package (a package whose name ends with one of
                   SOURCE_PACKAGE_SUFFIXES, like Fivetran's ``intercom_source``): staging.
4. ``dag_sources`` it reads only sources, seeds and snapshots (no model): staging.
5. ``weak_folder`` its first ambiguous folder (WEAK_FOLDERS: ``core`` holds marts in some
                   projects and source views in others, so the DAG is asked first).
6. ``root_file``   it sits directly in the model path while the same package sorts other
                   models into layer folders (Fivetran packages, jaffle_shop): marts.
7. ``dag_end``     models feed it and no model reads it: marts.
8. ``dag_after_marts`` it reads a marts model and feeds others: marts.
9. ``dag_middle``  it reads models and feeds models: intermediate.
10. ``dag_start``  it reads nothing dbt knows (hard-coded tables, generated rows) and feeds
                   models: staging.
``none`` (layer ``other``) only for a model that reads nothing dbt knows and feeds nothing.

A label is ``{layer, rule}`` with ``rule`` = ``<rule id>`` or ``<rule id>:<evidence>``
(``prefix:stg_``, ``folder:stats``, ``package:intercom_source``, ``weak_folder:core``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from adegen.core.graph import ModelNode, ProjectGraph, node_parents

LAYERS = ("staging", "intermediate", "marts", "other")

# rule id -> why it sits at this place in the order (docs/architecture.md repeats these).
ORDER: tuple[tuple[str, str], ...] = (
    ("prefix", "a name prefix is chosen per model and is unambiguous; folders are shared by many "
               "models and are sometimes named after a domain, not a layer"),
    ("folder", "dbt's layout puts the layer first (staging/<source>, marts/<domain>), so the "
               "top-most folder naming a layer wins over sub-folders such as marts/core or "
               "intermediate/features/base"),
    ("package", "a source package (Fivetran's <connector>_source) only conforms raw tables"),
    ("dag_sources", "a model built only on sources, seeds or snapshots is source-conformed"),
    ("weak_folder", "an ambiguous folder name counts only once the DAG has had its say"),
    ("root_file", "where a package sorts models into layer folders, the files left at the top "
                  "are its outputs (Fivetran end models, jaffle_shop's customers/orders)"),
    ("dag_end", "a model nobody reads, downstream of other models, is an end product"),
    ("dag_after_marts", "a model built on a marts model is reporting on top of marts"),
    ("dag_middle", "a model between models is a transformation step"),
    ("dag_start", "a model at the start of the DAG conforms raw data for others"),
)

# (prefix, layer, where it is used). Matched case-insensitively on the model name, in order.
PREFIXES: tuple[tuple[str, str, str], ...] = (
    ("stg_", "staging", "dbt Labs style guide, Fivetran source packages, most projects"),
    ("src_", "staging", "source-conforming views (ade-bench f1 core/src_*, airbnb source/src_*)"),
    ("base_", "staging", "dbt Labs style guide: base models under staging"),
    ("stage_", "staging", "staging spelled out"),
    ("staging_", "staging", "staging spelled out"),
    ("source_", "staging", "source-conforming models"),
    ("raw_", "staging", "raw-table views"),
    ("ods_", "staging", "operational data store layer (ODS/DWD/DWS layering)"),
    ("int_", "intermediate", "dbt Labs style guide, Fivetran transform packages"),
    ("intermediate_", "intermediate", "intermediate spelled out"),
    ("prep_", "intermediate", "preparation models (GitLab's prep_ layer)"),
    ("dim_", "marts", "dimensional modelling: dimensions"),
    ("fct_", "marts", "dimensional modelling: facts (dbt Labs style guide)"),
    ("fact_", "marts", "facts spelled out (ade-bench analytics_engineering warehouse/fact_*)"),
    ("agg_", "marts", "aggregates"),
    ("rpt_", "marts", "reports (dbt-project-evaluator's report prefix)"),
    ("report_", "marts", "reports spelled out"),
    ("mart_", "marts", "marts (ade-bench helixops_saas mart_*)"),
    ("obt_", "marts", "one big table (ade-bench analytics_engineering analytics_obt/obt_*)"),
)

# Folder names (or words of a folder name) that name a layer.
FOLDERS: tuple[tuple[str, str, str], ...] = (
    ("staging", "staging", "dbt Labs layout"),
    ("stg", "staging", "short for staging"),
    ("stage", "staging", "staging"),
    ("base", "staging", "dbt Labs layout: staging/base"),
    ("source", "staging", "source-conforming models (ade-bench airbnb models/source)"),
    ("sources", "staging", "source-conforming models (GitLab models/sources)"),
    ("src", "staging", "source-conforming models"),
    ("raw", "staging", "raw-table views"),
    ("landing", "staging", "landing zone"),
    ("bronze", "staging", "medallion layout: bronze = raw"),
    ("ods", "staging", "operational data store"),
    ("intermediate", "intermediate", "dbt Labs layout"),
    ("int", "intermediate", "short for intermediate"),
    ("interim", "intermediate", "intermediate"),
    ("prep", "intermediate", "preparation models"),
    ("silver", "intermediate", "medallion layout: silver = cleaned and joined"),
    ("marts", "marts", "dbt Labs layout"),
    ("mart", "marts", "dbt Labs layout"),
    ("datamart", "marts", "marts"),
    ("datamarts", "marts", "marts"),
    ("gold", "marts", "medallion layout: gold = consumption"),
    ("reporting", "marts", "reports"),
    ("reports", "marts", "reports"),
    ("report", "marts", "reports"),
    ("analytics", "marts", "analysis-ready models (ade-bench analytics_engineering analytics_obt)"),
    ("obt", "marts", "one big table"),
    ("presentation", "marts", "presentation layer"),
    ("stats", "marts", "statistics over the warehouse (ade-bench f1 models/stats)"),
    ("statistics", "marts", "statistics"),
    ("metrics", "marts", "metric tables"),
    ("kpi", "marts", "KPI tables"),
    ("kpis", "marts", "KPI tables"),
    ("warehouse", "marts", "dimensional warehouse (ade-bench analytics_engineering)"),
    ("dw", "marts", "data warehouse"),
    ("dwh", "marts", "data warehouse"),
    ("dim", "marts", "dimensions (ade-bench airbnb models/dim)"),
    ("dims", "marts", "dimensions"),
    ("dimension", "marts", "dimensions"),
    ("dimensions", "marts", "dimensions (ade-bench slack_analytics)"),
    ("fact", "marts", "facts (ade-bench airbnb models/fact)"),
    ("facts", "marts", "facts (ade-bench slack_analytics)"),
    ("fct", "marts", "facts"),
    ("agg", "marts", "aggregates (ade-bench airbnb models/agg)"),
    ("aggs", "marts", "aggregates"),
    ("aggregate", "marts", "aggregates"),
    ("aggregates", "marts", "aggregates"),
    ("aggregations", "marts", "aggregates"),
    ("final", "marts", "final models"),
    ("serving", "marts", "serving layer"),
)

# Ambiguous folder names: used only after the DAG's "reads only sources" rule.
WEAK_FOLDERS: tuple[tuple[str, str, str], ...] = (
    ("core", "marts", "marts/core in dbt Labs' layout and many projects, but ade-bench f1's "
                      "models/core holds the src_* source views"),
)

SOURCE_PACKAGE_SUFFIXES = ("_source",)

# A folder names a layer when its whole (lower-cased) name or one of its words does; words are
# the pieces between anything that is not a letter ("01_staging" -> "staging").
WORD_SPLIT_RE = r"[^a-z]+"

# Parents that are data, not models (unique_id prefixes). The macro needs no such table: its DAG
# holds exactly the models, seeds, snapshots and sources.
INPUT_PREFIXES = ("source.", "seed.", "snapshot.")


# What the rules need to know about one model (of any package): the graph's ModelNode, whose
# `path` here is relative to the package's model path (dbt's node.path, as the macro reads it).


@dataclass(frozen=True)
class LayerLabel:
    layer: str
    rule: str


# One regex for all prefixes: the alternation tries them in table order, so the first prefix of
# the table that starts the name is the one that matches (one call per model in the macro).
PREFIX_RE = "^(" + "|".join(re.escape(p) for p, _, _ in PREFIXES) + ")"
_PREFIX_LAYER = {p: layer for p, layer, _ in PREFIXES}


def to_macro_dict() -> dict:
    """The rule tables as the macro reads them (`ade_layer_rules()`)."""
    return {
        "order": [r for r, _ in ORDER],
        "prefix_re": PREFIX_RE,
        "prefixes": dict(_PREFIX_LAYER),
        "folders": {f: layer for f, layer, _ in FOLDERS},
        "weak_folders": {f: layer for f, layer, _ in WEAK_FOLDERS},
        "source_package_suffixes": list(SOURCE_PACKAGE_SUFFIXES),
        "word_split_re": WORD_SPLIT_RE,
        "dag_rule_layers": dict(DAG_RULE_LAYERS),
    }


def _folder_layer(name: str, table: dict[str, str]) -> str | None:
    low = name.lower()
    if low in table:
        return table[low]
    for word in re.split(WORD_SPLIT_RE, low):
        if word in table:
            return table[word]
    return None


def folder_hits(path: str) -> tuple[tuple[str, str] | None, tuple[str, str] | None]:
    """((folder, layer) of the first strong folder, (folder, layer) of the first weak folder)."""
    strong_tab = {f: layer for f, layer, _ in FOLDERS}
    weak_tab = {f: layer for f, layer, _ in WEAK_FOLDERS}
    strong = weak = None
    for part in path.replace("\\", "/").split("/")[:-1]:
        if strong is None and (hit := _folder_layer(part, strong_tab)):
            strong = (part, hit)
        if weak is None and (hit := _folder_layer(part, weak_tab)):
            weak = (part, hit)
    return strong, weak


def prefix_hit(name: str) -> tuple[str, str] | None:
    """(prefix, layer) of the first prefix in PREFIXES that starts the (lower-cased) name."""
    hit = re.match(PREFIX_RE, name.lower())
    return (hit.group(1), _PREFIX_LAYER[hit.group(1)]) if hit else None


# The layer each structural rule gives (prefix/folder/package/weak_folder carry their own).
DAG_RULE_LAYERS = {"dag_sources": "staging", "root_file": "marts", "dag_end": "marts",
                   "dag_after_marts": "marts", "dag_middle": "intermediate", "dag_start": "staging"}


@dataclass(frozen=True)
class _Facts:
    """What the rules look at for one model (see `assign_layers`)."""
    model: ModelNode
    inputs: tuple[str, ...]          # parents in the DAG (models, sources, seeds, snapshots)
    model_parents: tuple[str, ...]
    has_model_children: bool
    strong: tuple[str, str] | None   # (folder, layer) from FOLDERS
    weak: tuple[str, str] | None     # (folder, layer) from WEAK_FOLDERS
    in_layered_package: bool         # its package puts some model into a layer folder


def _rule_label(rule: str, f: _Facts, done: dict[str, LayerLabel]) -> LayerLabel | None:
    """What `rule` says about a model, or None when it says nothing."""
    m = f.model
    if rule == "prefix":
        hit = prefix_hit(m.name)
        return LayerLabel(hit[1], f"prefix:{hit[0]}") if hit else None
    if rule == "folder":
        return LayerLabel(f.strong[1], f"folder:{f.strong[0]}") if f.strong else None
    if rule == "package":
        is_source = m.package_name.lower().endswith(SOURCE_PACKAGE_SUFFIXES)
        return LayerLabel("staging", f"package:{m.package_name}") if is_source else None
    if rule == "weak_folder":
        return LayerLabel(f.weak[1], f"weak_folder:{f.weak[0]}") if f.weak else None
    holds = {
        "dag_sources": bool(f.inputs) and not f.model_parents,
        "root_file": "/" not in m.path.replace("\\", "/") and f.in_layered_package,
        "dag_end": bool(f.model_parents) and not f.has_model_children,
        "dag_after_marts": any(done[p].layer == "marts" for p in f.model_parents),
        "dag_middle": bool(f.model_parents),
        "dag_start": f.has_model_children,
    }
    return LayerLabel(DAG_RULE_LAYERS[rule], rule) if holds[rule] else None


def assign_layers(models: Iterable[ModelNode]) -> dict[str, LayerLabel]:
    """{unique_id: LayerLabel} for every model given, sorted by unique_id. Give the models of all
    packages: a model's DAG rules look at the models it reads and the models that read it,
    wherever they live. Parents that are neither given models nor sources/seeds/snapshots are
    ignored (the macro ignores parents outside the DAG the same way)."""
    graph = ProjectGraph(models)
    by_id = graph.nodes
    inputs = {u: tuple(dict.fromkeys(p for p in graph.parents(u) if p in by_id or p.startswith(INPUT_PREFIXES)))
              for u in by_id}
    folders = {u: folder_hits(m.path) for u, m in by_id.items()}
    layered = {by_id[u].package_name for u, (strong, weak) in folders.items() if strong or weak}
    done: dict[str, LayerLabel] = {}
    # Parents first: `dag_after_marts` reads the labels of the model's parents.
    for uid in graph.topological():
        m = by_id[uid]
        facts = _Facts(model=m, inputs=inputs[uid],
                       model_parents=tuple(p for p in inputs[uid] if p in by_id),
                       has_model_children=bool(graph.children(uid)), strong=folders[uid][0],
                       weak=folders[uid][1], in_layered_package=m.package_name in layered)
        done[uid] = next((lab for rule, _ in ORDER if (lab := _rule_label(rule, facts, done))),
                         LayerLabel("other", "none"))
    return dict(sorted(done.items()))


def nodes_from_manifest(manifest: dict) -> list[ModelNode]:
    """The ModelNodes of every model in a dbt manifest.json (for the reference implementation)."""
    return [
        ModelNode(unique_id=uid, name=n["name"], package_name=n["package_name"], path=n["path"],
                  parents=node_parents(n))
        for uid, n in manifest["nodes"].items() if n["resource_type"] == "model"
    ]
