"""Discovery end to end: real dbt + DuckDB, no mocks.

Golden file: python/tests/golden/discovery_acme.json. Regenerate with
    ADEGEN_UPDATE_GOLDEN=1 python -m pytest python/tests/test_discover.py -k golden
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from adegen import dbt as dbt_layer
from adegen.sql import features
from adegen.discover import layers
from adegen.propose import ranking
from adegen.dbt.result import MARKER_RE, DbtResult
from adegen.dbt.runner import dbt_command
from adegen.discover.payload import TOP_LEVEL_KEYS, Scratch, run_discovery, summary_lines, validate_payload
from adegen.core.errors import DbtError
from adegen.discover.project import load_project

GOLDEN = Path(__file__).parent / "golden" / "discovery_acme.json"
TINY_CATALOG = [
    {"id": "lj", "family": "join", "difficulty": "medium", "db_types": "all",
     "applies_when": [["left", "join"]], "requires": {}},
    {"id": "sum_ref", "family": "agg", "difficulty": "easy", "db_types": ["duckdb"],
     "applies_when": [["sum", "("]], "requires": {"min_refs": 2, "materialized": ["table"]}},
    {"id": "sf_only", "family": "x", "difficulty": "easy", "db_types": ["snowflake"],
     "applies_when": [["select"]], "requires": {}},
    {"id": "in_comment", "family": "x", "difficulty": "easy", "db_types": "all",
     "applies_when": [["group", "by", "in", "a", "string"]], "requires": {}},
]


def _cli(*args, env=None, cwd=None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    full_env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1]) + os.pathsep + full_env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "adegen.discover", *args], capture_output=True, text=True,
                          env=full_env, cwd=cwd, timeout=300)


def _tree_digest(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_symlink():
            out[rel] = "symlink:" + os.readlink(p)
        elif p.is_file():
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
        elif p.is_dir():
            out[rel] = "dir"
    return out


def normalize(payload: dict) -> dict:
    """Drop what varies between machines and dbt versions."""
    p = json.loads(json.dumps(payload))
    p["project"].pop("dbt_version")
    p["project"]["project_dir"] = Path(p["project"]["project_dir"]).name
    if p["database"]["path"]:
        p["database"]["path"] = Path(p["database"]["path"]).name
    return p


# --- example project (integration_tests/) ------------------------------------------------------

def test_payload_shape(acme_discovery):
    assert tuple(sorted(acme_discovery)) == tuple(sorted(TOP_LEVEL_KEYS))
    validate_payload(acme_discovery)
    assert acme_discovery["project"]["name"] == "acme"
    assert acme_discovery["database"]["type"] == "duckdb"
    assert acme_discovery["database"]["path"].endswith("acme.duckdb")
    ids = [m["unique_id"] for m in acme_discovery["models"]]
    assert ids == sorted(ids)
    for c in acme_discovery["candidates"]:
        m = next(m for m in acme_discovery["models"] if m["unique_id"] == c["unique_id"])
        assert c["matched_patterns"] == m["matched_patterns"] and c["score"] == ranking.model_score(m)


def test_golden(acme_discovery):
    got = normalize(acme_discovery)
    if os.environ.get("ADEGEN_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=2, sort_keys=True) + "\n")
    assert GOLDEN.is_file(), "no golden file: run with ADEGEN_UPDATE_GOLDEN=1"
    assert got == json.loads(GOLDEN.read_text())


@pytest.fixture(scope="session")
def acme_manifest(example_project, tmp_path_factory) -> dict:
    """`dbt parse` of the discovery scratch copy into a separate scratch target path."""
    info = load_project(example_project)
    scratch = Scratch(info)
    assert scratch.project.is_dir(), "run after discovery"
    target = tmp_path_factory.mktemp("acme-parse-target")
    run = dbt_layer.run_dbt(["parse", "--project-dir", str(scratch.project), "--profiles-dir",
                              str(scratch.profiles), "--target-path", str(target),
                              "--log-path", str(target / "logs")])
    assert run.success, run.error_text()
    ls = dbt_layer.run_dbt(["ls", "--resource-type", "model", "--output", "json", "--output-keys",
                             "unique_id", "--project-dir", str(scratch.project), "--profiles-dir",
                             str(scratch.profiles), "--target-path", str(target)], backend="inprocess")
    assert ls.success, ls.error_text()
    manifest = json.loads((target / "manifest.json").read_text())
    return {"manifest": manifest, "ls_models": ls}


def test_models_and_edges_match_manifest(acme_discovery, acme_manifest, example_project):
    manifest = acme_manifest["manifest"]
    want = {uid: n for uid, n in manifest["nodes"].items()
            if n["resource_type"] == "model" and n["package_name"] == "acme"}
    got = {m["unique_id"]: m for m in acme_discovery["models"]}
    assert set(got) == set(want)
    for uid, n in want.items():
        assert sorted(got[uid]["depends_on"]) == sorted(n["depends_on"]["nodes"]), uid
        children = sorted(c for c in manifest["child_map"].get(uid, []) if c.startswith("model."))
        assert got[uid]["downstream_models"] == children, uid
        assert got[uid]["path"] == n["original_file_path"]
        assert got[uid]["materialized"] == n["config"]["materialized"]
        assert got[uid]["columns"] == list(n["columns"])
        tests = sorted(t for t in manifest["child_map"].get(uid, []) if t.startswith("test."))
        # generic tests by attached_node; singular tests (no attached_node) on every model they ref
        test_names = sorted({manifest["nodes"][t]["name"] for t in tests
                             if manifest["nodes"][t].get("attached_node") in (uid, None)})
        assert got[uid]["tests"] == test_names, uid
    # transitive counts and depth over models, seeds, snapshots and sources of every package
    dag = {u: list(n.get("depends_on", {}).get("nodes", [])) for u, n in manifest["nodes"].items()
           if n["resource_type"] in ("model", "seed", "snapshot")}
    dag.update({u: [] for u in manifest["sources"]})
    dag = {u: [p for p in ps if p in dag] for u, ps in dag.items()}
    kids: dict = {u: [] for u in dag}
    for u, ps in dag.items():
        for p in ps:
            kids[p].append(u)

    def closure(u, edges, seen=None):
        seen = set() if seen is None else seen
        for v in edges[u]:
            if v not in seen:
                seen.add(v)
                closure(v, edges, seen)
        return seen

    def depth(u):
        return 0 if not dag[u] else 1 + max(depth(p) for p in dag[u])

    for uid in want:
        assert got[uid]["upstream"] == {"direct": len(set(dag[uid])), "transitive": len(closure(uid, dag))}, uid
        assert got[uid]["downstream"] == {"direct": len(set(kids[uid])), "transitive": len(closure(uid, kids))}, uid
        assert got[uid]["depth"] == depth(uid), uid
    assert {s["unique_id"] for s in acme_discovery["sources"]} == {
        u for u, s in manifest["sources"].items() if s["package_name"] == "acme"}


def test_model_count_equals_dbt_ls(acme_discovery, acme_manifest):
    # `dbt ls --resource-type model` over the scratch copy (adegen ships no models)
    listed = [json.loads(line)["unique_id"] for line in acme_manifest["ls_models"].result]
    assert len(acme_discovery["models"]) == len(listed) > 0
    assert sorted(listed) == [m["unique_id"] for m in acme_discovery["models"]]


def test_features_and_complexity_match_python_reference(acme_discovery, example_project):
    for m in acme_discovery["models"]:
        raw = (example_project / m["path"]).read_text(encoding="utf-8")
        text = features.token_text(raw)
        assert m["features"] == features.detect(text), m["name"]
        st = features.stats(raw, text, len(m["refs"]))
        assert (m["complexity"], m["line_count"], m["join_count"]) == (
            st["complexity"], st["line_count"], st["join_count"]), m["name"]


def test_layers_match_python_reference(acme_discovery, acme_manifest):
    ref = layers.assign_layers(layers.nodes_from_manifest(acme_manifest["manifest"]))
    got = {m["unique_id"]: layers.LayerLabel(m["layer"], m["layer_rule"]) for m in acme_discovery["models"]}
    assert got == {u: lab for u, lab in ref.items() if u in got} and len(got) == 33
    # the example project names every layer by prefix, and its folders agree with the prefixes
    assert all(m["layer_rule"].startswith("prefix:") for m in acme_discovery["models"])
    folder_layer = {"staging": "staging", "intermediate": "intermediate", "marts": "marts"}
    assert all(m["layer"] == folder_layer[m["path"].split("/")[1]] for m in acme_discovery["models"])


def test_discovery_does_not_touch_project(example_project, acme_discovery):
    db = example_project / "acme.duckdb"
    before = _tree_digest(example_project)
    run_discovery(example_project)  # warm
    res = _cli(str(example_project), "--json")  # a fresh process too
    assert res.returncode == 0, res.stderr
    assert _tree_digest(example_project) == before
    if db.exists():
        assert "acme.duckdb" in before


def test_cli_human_and_json(example_project, acme_discovery):
    res = _cli(str(example_project))
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == summary_lines(acme_discovery)
    assert res.stdout.startswith("Found dbt project: acme\nDatabase: duckdb at ")
    res = _cli(str(example_project), "--json", "--top-n", "3")
    assert res.returncode == 0, res.stderr
    payload = json.loads(res.stdout)
    assert payload["candidates"] == acme_discovery["candidates"][:3]


# --- tiny fixtures -------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def tiny(fixtures_dir) -> dict:
    return run_discovery(fixtures_dir / "tiny_duckdb", catalog=TINY_CATALOG)


def test_tiny_features_ignore_comments_strings_jinja(tiny):
    by_name = {m["name"]: m for m in tiny["models"]}
    assert by_name["stg_orders"]["features"] == ["jinja"]  # left join / sum( / group by hidden
    assert "sum" not in by_name["customer_summary"]["features"]
    fct = by_name["fct_customer_orders"]
    assert {"left_join", "multi_key_join", "group_by", "sum", "count_distinct", "window",
            "partition_by", "row_number", "cte"} <= set(fct["features"])
    assert fct["complexity"] == 14  # 14//10 + 2*1 join + 2*2 ctes + 3*1 window + 2 aggregates + 2 refs


def test_tiny_patterns_dag_and_ranking(tiny):
    by_name = {m["name"]: m for m in tiny["models"]}
    assert by_name["fct_customer_orders"]["matched_patterns"] == ["lj", "sum_ref"]
    assert all(m["matched_patterns"] == [] for n, m in by_name.items() if n != "fct_customer_orders")
    assert tiny["candidates"] == [{"unique_id": "model.tiny.fct_customer_orders", "name": "fct_customer_orders",
                                   "score": ranking.model_score(by_name["fct_customer_orders"]),
                                   "matched_patterns": ["lj", "sum_ref"]}]
    stg = by_name["stg_orders"]
    assert stg["layer"] == "staging" and stg["sources"] == [["raw", "orders"]]
    assert stg["upstream"] == {"direct": 1, "transitive": 1}
    assert stg["downstream"] == {"direct": 1, "transitive": 2} and stg["depth"] == 1
    assert stg["tests"] == ["not_null_stg_orders_order_id", "unique_stg_orders_order_id"]
    assert stg["columns"] == ["order_id", "customer_id"]
    summ = by_name["customer_summary"]
    assert summ["depth"] == 3 and summ["upstream"] == {"direct": 1, "transitive": 5}
    assert tiny["packages"] == []  # adegen was injected, so it is not reported
    assert [s["identifier"] for s in tiny["sources"]] == ["raw_customers", "orders"]


def test_snowflake_without_credentials_or_network(fixtures_dir, tmp_path):
    # Any network attempt goes to a closed local port; no SNOWFLAKE_* credentials at all.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNOWFLAKE_")}
    env.update({"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
                "https_proxy": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9", "NO_PROXY": ""})
    proj = fixtures_dir / "tiny_snowflake"
    before = _tree_digest(proj)
    res = subprocess.run([sys.executable, "-m", "adegen.discover", str(proj), "--json"], capture_output=True,
                         text=True, env={**env, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
                         timeout=300)
    assert res.returncode == 0, res.stderr
    payload = json.loads(res.stdout)
    assert payload["database"] == {"type": "snowflake", "path": None, "database": "ANALYTICS", "schema": "CORE"}
    feats = {m["name"]: m["features"] for m in payload["models"]}
    assert {"qualify", "window", "cast"} <= set(feats["stg_events"])
    assert {"iff", "flatten", "date_trunc", "left_join"} <= set(feats["user_daily"])
    assert _tree_digest(proj) == before


def test_catalog_db_types_filter_on_snowflake(fixtures_dir):
    payload = run_discovery(fixtures_dir / "tiny_snowflake", catalog=TINY_CATALOG)
    by_name = {m["name"]: m for m in payload["models"]}
    assert "sf_only" in by_name["stg_events"]["matched_patterns"]
    assert "sum_ref" not in by_name["user_daily"]["matched_patterns"]


# --- failures -----------------------------------------------------------------------------------

def test_capture_failing_macro(fixtures_dir, tmp_path):
    proj = tmp_path / "boom"
    shutil.copytree(fixtures_dir / "tiny_duckdb", proj)
    (proj / "macros").mkdir()
    (proj / "macros" / "boom.sql").write_text(
        "{% macro boom() %}{{ exceptions.raise_compiler_error('adegen test: boom happened') }}{% endmacro %}\n")
    info = load_project(proj)
    scratch = Scratch(info)
    with scratch.lock():
        scratch.write_profiles()
        scratch.prepare()
    dirs = dbt_layer.DbtDirs(scratch.project, scratch.profiles, paths=(scratch.target_path, scratch.log_path))
    for backend in ("inprocess", "subprocess"):
        run = dbt_layer.run_operation("boom", {}, dirs, backend=backend)
        with pytest.raises(DbtError, match="adegen test: boom happened"):
            dbt_layer.capture_payload(run, "boom")
    # success without a payload is an error too (never "missing -> empty")
    run = dbt_layer.run_operation("adegen.ade_discover_missing", {}, dirs)
    with pytest.raises(DbtError, match="ade_discover_missing"):
        dbt_layer.capture_payload(run, "adegen.ade_discover_missing")
    empty = DbtResult(args=[], success=True, messages=["no payload here"])
    with pytest.raises(DbtError, match="exactly one adegen payload, got 0"):
        dbt_layer.capture_payload(empty, "adegen.ade_discover")


def test_subprocess_backend_same_payload(fixtures_dir, tiny):
    got = run_discovery(fixtures_dir / "tiny_duckdb", catalog=TINY_CATALOG, backend="subprocess")
    assert got == tiny


def test_project_that_fails_to_parse(fixtures_dir, tmp_path):
    proj = tmp_path / "broken"
    shutil.copytree(fixtures_dir / "tiny_duckdb", proj)
    (proj / "models" / "broken.sql").write_text("select * from {{ ref('does_not_exist') }}\n")
    with pytest.raises(DbtError, match="does_not_exist"):
        run_discovery(proj, catalog=TINY_CATALOG)
    res = _cli(str(proj))
    assert res.returncode == 2 and "does_not_exist" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize("kind", ["missing", "unsupported"])
def test_cli_bad_input(tmp_path, kind):
    proj = tmp_path / "p"
    if kind == "unsupported":
        proj.mkdir()
        (proj / "dbt_project.yml").write_text("name: p\nprofile: p\nconfig-version: 2\n")
        (proj / "profiles.yml").write_text("p:\n  target: dev\n  outputs: {dev: {type: postgres, host: h}}\n")
    res = _cli(str(proj), "--json")
    assert res.returncode == 2 and res.stdout == ""
    assert "Traceback" not in res.stderr
    assert ("only DuckDB and Snowflake are supported" if kind == "unsupported" else "does not exist") in res.stderr


# --- plain dbt usage: `cd integration_tests && dbt deps && dbt run-operation ade_discover` --------

def test_plain_dbt_run_operation_and_analysis(example_project, tmp_path, repo_root):
    proj = tmp_path / "integration_tests"
    shutil.copytree(example_project, proj, ignore=shutil.ignore_patterns(
        "target", "logs", "dbt_packages", "*.duckdb", "*.wal", "package-lock.yml"))
    pk = yaml.safe_load((proj / "packages.yml").read_text())
    pk["packages"] = [({"local": str(repo_root)} if "local" in e else e) for e in pk["packages"]]
    (proj / "packages.yml").write_text(yaml.safe_dump(pk))
    env = {**os.environ, "DO_NOT_TRACK": "1"}
    dbt = dbt_command()
    flags = ["--profiles-dir", str(proj), "--no-use-colors"]
    r = subprocess.run([*dbt, "deps", *flags], cwd=proj, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    for macro in ("ade_discover", "adegen.ade_discover"):
        r = subprocess.run([*dbt, "run-operation", macro, "--args", "{top_n: 3}", *flags], cwd=proj,
                           capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stdout + r.stderr
        out = r.stdout
        for line in ("Found dbt project: acme", "Database: duckdb at ./acme.duckdb", "Models: ",
                     "Sources: ", "Packages: adegen", "Top task candidates: "):
            assert line in out
        bodies = MARKER_RE.findall(out)
        assert len(bodies) == 1
        env_json = json.loads(bodies[0])
        assert env_json["schema_version"] == 1 and env_json["operation"] == "ade_discover"
        assert len(env_json["payload"]["candidates"]) <= 3
    r = subprocess.run([*dbt, "compile", "--select", "ade_candidates", *flags], cwd=proj,
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    compiled = (proj / "target" / "compiled" / "adegen" / "analyses" / "ade_candidates.sql").read_text()
    assert "-- Found dbt project: acme" in compiled and "-- Top task candidates:" in compiled


def test_hub_packages_use_installed_dbt_packages(fixtures_dir, tmp_path):
    proj = tmp_path / "hub"
    shutil.copytree(fixtures_dir / "tiny_duckdb", proj)
    (proj / "packages.yml").write_text('packages:\n  - package: dbt-labs/dbt_utils\n    version: [">=1.0.0"]\n')
    with pytest.raises(Exception, match="run `dbt deps` in the project first"):
        run_discovery(proj, catalog=TINY_CATALOG)
    pkg = proj / "dbt_packages" / "dbt_utils"
    (pkg / "macros").mkdir(parents=True)
    (pkg / "dbt_project.yml").write_text('name: dbt_utils\nversion: "1.3.0"\nconfig-version: 2\n')
    (pkg / "macros" / "star.sql").write_text("{% macro star() %}{% endmacro %}\n")
    before = _tree_digest(proj)
    payload = run_discovery(proj, catalog=TINY_CATALOG)
    assert payload["packages"] == ["dbt_utils"]
    assert _tree_digest(proj) == before
