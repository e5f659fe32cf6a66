"""Model layers: every convention of adegen/discover/layers.py, through the real discovery macro on a
generated project (real dbt), and the Python reference agreeing with the macro."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from adegen import dbt as dbt_layer
from adegen.discover import layers
from adegen.discover.payload import Scratch, run_discovery
from adegen.discover.layers import LayerLabel, ModelNode, assign_layers
from adegen.discover.project import load_project

REPO_ROOT = Path(__file__).resolve().parents[2]

SOURCES_YML = """version: 2
sources:
  - name: f1
    schema: main
    tables: [{name: circuits}]
  - name: shop
    schema: main
    tables: [{name: orders}, {name: customers}]
"""
SNAPSHOT = """{% snapshot orders_snapshot %}
{{ config(target_schema='main', unique_key='id', strategy='check', check_cols='all') }}
select * from {{ source('shop', 'orders') }}
{% endsnapshot %}
"""


def _src(source: str, table: str) -> str:
    return f"select * from {{{{ source('{source}', '{table}') }}}}\n"


def _refs(*names: str) -> str:
    froms = [f"{{{{ ref({', '.join(repr(p) for p in n.split('.'))}) }}}}" for n in names]
    return "select 1 as id from " + " cross join ".join(froms) + "\n"


# path under models/ -> (SQL, expected layer, expected rule)
ROOT_MODELS: dict[str, tuple[str, str, str]] = {
    # ade-bench f1: models/core/src_* are source views, models/stats/* reports over staging
    "core/src_circuits.sql": (_src("f1", "circuits"), "staging", "prefix:src_"),
    "core/races_view.sql": (_src("f1", "circuits"), "staging", "dag_sources"),
    "core/driver_standings.sql": (_refs("stg_f1__circuits"), "marts", "weak_folder:core"),
    "staging/f1_dataset/stg_f1__circuits.sql": (_refs("src_circuits"), "staging", "prefix:stg_"),
    "stats/most_wins.sql": (_refs("stg_f1__circuits", "races_view"), "marts", "folder:stats"),
    # folders naming layers (airbnb source/agg/dim/fact, analytics_engineering warehouse/analytics_obt)
    "staging/orders_cleaned.sql": (_src("shop", "orders"), "staging", "folder:staging"),
    "source/hosts.sql": (_src("shop", "customers"), "staging", "folder:source"),
    "agg/daily_agg_orders.sql": (_refs("orders_cleaned"), "marts", "folder:agg"),
    "dim/dim_hosts.sql": (_refs("hosts"), "marts", "prefix:dim_"),
    "fact/fct_orders.sql": (_refs("orders_cleaned", "dim_hosts"), "marts", "prefix:fct_"),
    "warehouse/fact_sales.sql": (_refs("fct_orders"), "marts", "prefix:fact_"),
    "warehouse/inventory.sql": (_refs("orders_cleaned"), "marts", "folder:warehouse"),
    "analytics_obt/obt_sales.sql": (_refs("fact_sales"), "marts", "prefix:obt_"),
    "analytics_obt/sales_wide.sql": (_refs("fact_sales"), "marts", "folder:analytics_obt"),
    "intermediate/orders_joined.sql": (_refs("orders_cleaned", "hosts"), "intermediate",
                                       "folder:intermediate"),
    # the top-most layer folder wins over a deeper one
    "intermediate/features/base/orders_base.sql": (_refs("orders_cleaned"), "intermediate",
                                                   "folder:intermediate"),
    # a prefix wins over the folder
    "marts/finance/stg_misplaced.sql": (_src("shop", "orders"), "staging", "prefix:stg_"),
    "marts/mart_customer_360.sql": (_refs("fct_orders"), "marts", "prefix:mart_"),
    "01_staging/payments_clean.sql": (_src("shop", "orders"), "staging", "folder:01_staging"),
    "reports/rpt_revenue.sql": (_refs("fct_orders"), "marts", "prefix:rpt_"),
    "reports/revenue_by_month.sql": (_refs("fct_orders"), "marts", "folder:reports"),
    # files at the top of a project that uses layer folders (Fivetran end models, jaffle_shop)
    "customer_enhanced.sql": (_refs("fct_orders", "dim_hosts"), "marts", "root_file"),
    "customer_metrics.sql": (_refs("customer_enhanced"), "marts", "root_file"),
    # no prefix, no layer folder: the DAG decides
    "context/events_hashed.sql": (_src("shop", "orders"), "staging", "dag_sources"),
    "context/countries_view.sql": (_refs("countries"), "staging", "dag_sources"),
    "context/orders_history.sql": (_refs("orders_snapshot"), "staging", "dag_sources"),
    "context/spine.sql": ("select 1 as id\n", "staging", "dag_start"),
    "context/events_joined.sql": (_refs("events_hashed", "spine", "countries_view"), "intermediate",
                                  "dag_middle"),
    "context/events_search.sql": (_refs("events_joined", "orders_history"), "marts", "dag_end"),
    "context/after_mart.sql": (_refs("fct_orders"), "marts", "dag_after_marts"),
    "context/after_mart_child.sql": (_refs("after_mart"), "marts", "dag_end"),
    "context/lonely.sql": ("select 1 as id\n", "other", "none"),
    "context/int_events.sql": (_refs("events_hashed"), "intermediate", "prefix:int_"),
    "context/base_events.sql": (_src("shop", "orders"), "staging", "prefix:base_"),
    "context/agg_events.sql": (_refs("int_events"), "marts", "prefix:agg_"),
    # built on a package's models (ade-bench intercom's end models read intercom_source's)
    "context/uses_package.sql": (_refs("orders_enriched"), "marts", "dag_end"),
    "context/reads_package_mart.sql": (_refs("acme_reports.order_report"), "marts", "dag_after_marts"),
    "context/reads_package_mart_child.sql": (_refs("reads_package_mart"), "marts", "dag_end"),
}

# package -> path under its models/ -> (SQL, layer, rule)
PACKAGE_MODELS: dict[str, dict[str, tuple[str, str, str]]] = {
    "acme_source": {  # a Fivetran-style source package
        "tmp/stg_acme__orders_tmp.sql": (_src("shop", "orders"), "staging", "prefix:stg_"),
        "stg_acme__orders.sql": (_refs("stg_acme__orders_tmp"), "staging", "prefix:stg_"),
        "orders_enriched.sql": (_refs("stg_acme__orders"), "staging", "package:acme_source"),
    },
    "acme_reports": {  # a transform package with a reporting folder and an end model at the top
        "reporting/order_report.sql": (_refs("acme_source.orders_enriched"), "marts", "folder:reporting"),
        "acme__orders_enhanced.sql": (_refs("order_report"), "marts", "root_file"),
    },
}


def write_project(root: Path) -> Path:
    """A small dbt project with a model for every layer convention, plus two local packages."""
    def put(rel: str, text: str) -> None:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)

    put("dbt_project.yml", 'name: layered\nversion: "1.0.0"\nconfig-version: 2\nprofile: layered\n'
                           'model-paths: ["models"]\nseed-paths: ["seeds"]\nsnapshot-paths: ["snapshots"]\n')
    put("profiles.yml", "layered:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n"
                        "      path: layered.duckdb\n      schema: main\n      threads: 1\n")
    put("packages.yml", "packages:\n  - local: vendor/acme_source\n  - local: vendor/acme_reports\n")
    put("models/_sources.yml", SOURCES_YML)
    put("seeds/countries.csv", "id,name\n1,France\n")
    put("snapshots/orders_snapshot.sql", SNAPSHOT)
    for rel, (sql, _, _) in ROOT_MODELS.items():
        put(f"models/{rel}", sql)
    for pkg, models in PACKAGE_MODELS.items():
        put(f"vendor/{pkg}/dbt_project.yml", f'name: {pkg}\nversion: "1.0.0"\nconfig-version: 2\n'
                                            'model-paths: ["models"]\n')
        for rel, (sql, _, _) in models.items():
            put(f"vendor/{pkg}/models/{rel}", sql)
    return root


def _stem(rel: str) -> str:
    return rel.rsplit("/", 1)[-1][:-4]


@pytest.fixture(scope="module")
def layered(tmp_path_factory) -> dict:
    proj = write_project(tmp_path_factory.mktemp("layered") / "layered")
    payload = run_discovery(proj)
    # the manifest of the same scratch copy, parsed into a separate target path
    scratch = Scratch(load_project(proj))
    target = tmp_path_factory.mktemp("layered-target")
    run = dbt_layer.run_dbt(["parse", "--project-dir", str(scratch.project), "--profiles-dir",
                              str(scratch.profiles), "--target-path", str(target),
                              "--log-path", str(target / "logs")])
    assert run.success, run.error_text()
    return {"payload": payload, "manifest": json.loads((target / "manifest.json").read_text())}


def test_root_model_layers(layered):
    got = {m["name"]: (m["layer"], m["layer_rule"]) for m in layered["payload"]["models"]}
    want = {_stem(rel): (layer, rule) for rel, (_, layer, rule) in ROOT_MODELS.items()}
    assert got == want


def test_package_model_layers(layered):
    got = {(m["package_name"], m["name"]): (m["layer"], m["layer_rule"])
           for m in layered["payload"]["package_models"]}
    want = {(pkg, _stem(rel)): (layer, rule)
            for pkg, models in PACKAGE_MODELS.items() for rel, (_, layer, rule) in models.items()}
    assert got == want
    paths = {m["name"]: m["path"] for m in layered["payload"]["package_models"]}
    assert paths["stg_acme__orders_tmp"] == "models/tmp/stg_acme__orders_tmp.sql"


def test_summary_counts_root_models(layered):
    from adegen.discover.payload import summary_lines

    counts = {layer: sum(1 for _, lay, _ in ROOT_MODELS.values() if lay == layer) for layer in layers.LAYERS}
    assert (f"Models: {len(ROOT_MODELS)} ({counts['staging']} staging, {counts['intermediate']} intermediate, "
            f"{counts['marts']} marts, {counts['other']} other)") in summary_lines(layered["payload"])


def test_python_reference_agrees_with_the_macro(layered):
    payload = layered["payload"]
    macro = {m["unique_id"]: LayerLabel(m["layer"], m["layer_rule"])
             for m in payload["models"] + payload["package_models"]}
    ref = assign_layers(layers.nodes_from_manifest(layered["manifest"]))
    assert ref == macro
    assert len(ref) == len(ROOT_MODELS) + sum(len(m) for m in PACKAGE_MODELS.values())


# --- the reference implementation alone (no dbt) ----------------------------------------------

def _node(uid: str, path: str, *parents: str, package: str = "p") -> ModelNode:
    return ModelNode(unique_id=f"model.{package}.{uid}", name=uid, package_name=package, path=path,
                     parents=tuple(parents))


def test_reference_flat_project_uses_the_dag():
    # no layer folder anywhere: a file at the top is not a root_file
    nodes = [_node("a", "a.sql", "source.p.raw.a"), _node("b", "b.sql", "model.p.a"),
             _node("c", "c.sql", "model.p.b"), _node("d", "d.sql")]
    got = {u.split(".")[-1]: (lab.layer, lab.rule) for u, lab in assign_layers(nodes).items()}
    assert got == {"a": ("staging", "dag_sources"), "b": ("intermediate", "dag_middle"),
                   "c": ("marts", "dag_end"), "d": ("other", "none")}


def test_reference_ignores_unknown_parents_and_handles_long_chains():
    # a parent that is no known model (disabled, other resource type) does not count
    assert assign_layers([_node("x", "x.sql", "model.p.gone")])["model.p.x"] == LayerLabel("other", "none")
    chain = [_node("n0", "n0.sql", "seed.p.s")] + [_node(f"n{i}", f"n{i}.sql", f"model.p.n{i - 1}")
                                                  for i in range(1, 3000)]
    got = assign_layers(chain)
    assert got["model.p.n0"].layer == "staging" and got["model.p.n2999"] == LayerLabel("marts", "dag_end")
    assert got["model.p.n1500"] == LayerLabel("intermediate", "dag_middle")


def test_rule_tables_are_consistent():
    assert {layer for _, layer, _ in layers.PREFIXES + layers.FOLDERS + layers.WEAK_FOLDERS} <= set(layers.LAYERS)
    for table in (layers.PREFIXES, layers.FOLDERS, layers.WEAK_FOLDERS):
        keys = [k for k, _, _ in table]
        assert len(keys) == len(set(keys))
        assert all(why for _, _, why in table)
    # folder words are single words: the word split would never find a key holding a separator
    assert all(not re.search(layers.WORD_SPLIT_RE, k) for k, _, _ in layers.FOLDERS + layers.WEAK_FOLDERS)
    assert not {k for k, _, _ in layers.FOLDERS} & {k for k, _, _ in layers.WEAK_FOLDERS}
    assert set(layers.DAG_RULE_LAYERS) | {"prefix", "folder", "package", "weak_folder"} == {r for r, _ in layers.ORDER}


def test_docs_list_every_rule():
    doc = (REPO_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Model layers"):]
    section = section[:section.index("\n## ", 1)]
    for rule, _ in layers.ORDER:
        assert f"`{rule}`" in section, rule
    for key, _, _ in layers.PREFIXES + layers.FOLDERS + layers.WEAK_FOLDERS:
        assert f"`{key}`" in section, key
