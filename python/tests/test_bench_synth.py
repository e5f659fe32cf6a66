"""bench/synth.py: deterministic, valid dbt, realistic layer split, refs form a DAG."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import synth  # noqa: E402

REF_RE = re.compile(r"\{\{\s*ref\(\s*'([^']+)'\s*\)\s*\}\}")
SOURCE_RE = re.compile(r"\{\{\s*source\(\s*'([^']+)'\s*,\s*'([^']+)'\s*\)\s*\}\}")


def _models_on_disk(root: Path) -> dict[str, tuple[str, str]]:
    """name -> (layer folder, sql text)."""
    return {p.stem: (p.relative_to(root / "models").parts[0], p.read_text())
            for p in (root / "models").rglob("*.sql")}


def test_same_seed_same_tree_other_seed_other_tree(tmp_path):
    synth.generate(60, 5, tmp_path / "a")
    synth.generate(60, 5, tmp_path / "b")
    synth.generate(60, 6, tmp_path / "c")
    ha, hb, hc = (synth.tree_hash(tmp_path / x) for x in "abc")
    assert ha == hb
    assert ha != hc


def test_refuses_out_of_range_and_nonempty_out(tmp_path):
    with pytest.raises(ValueError):
        synth.build_models(9, 0)
    with pytest.raises(ValueError):
        synth.build_models(5001, 0)
    synth.generate(10, 0, tmp_path / "p")
    with pytest.raises(FileExistsError):
        synth.generate(10, 0, tmp_path / "p")
    synth.generate(10, 1, tmp_path / "p", force=True)


@pytest.mark.parametrize("n", [10, 30, 200])
def test_layers_and_dag(n):
    models = synth.build_models(n, 3)
    assert len(models) == n
    assert len({m.name for m in models}) == n
    counts = {layer: sum(1 for m in models if m.layer == layer)
              for layer in ("staging", "intermediate", "marts")}
    for layer, share in (("staging", 0.3), ("intermediate", 0.4), ("marts", 0.3)):
        assert abs(counts[layer] - share * n) <= max(1, 0.02 * n), counts
    seen: dict[str, str] = {}
    for m in models:
        if m.layer == "staging":
            assert not m.refs and len(m.sources) == 1
        else:
            assert 1 <= len(m.refs) <= 3 and len(set(m.refs)) == len(m.refs)
            assert all(r in seen for r in m.refs), f"{m.name} refs a later model"
            if m.layer == "intermediate":
                assert all(seen[r] in ("staging", "intermediate") for r in m.refs)
        seen[m.name] = m.layer


def test_files_match_the_model_graph_and_use_the_features(tmp_path):
    synth.generate(100, 11, tmp_path / "p")
    root = tmp_path / "p"
    on_disk = _models_on_disk(root)
    order = {m.name: i for i, m in enumerate(synth.build_models(100, 11))}
    assert set(on_disk) == set(order)
    sql_all = "\n".join(sql for _, sql in on_disk.values()).lower()
    for name, (layer, sql) in on_disk.items():
        refs = REF_RE.findall(sql)
        assert all(order[r] < order[name] for r in refs)
        assert bool(SOURCE_RE.findall(sql)) == (layer == "staging")
    for feature in ("left join", "inner join", "count(distinct", "sum(", "avg(",
                    "min(", "max(", "over (", "rows between", "case", "coalesce(", "having",
                    "union all", "date_trunc(", "cast(", "{%- for", "in var(", "{% if", "cents_to_dollars",
                    "safe_divide", "where", ">="):
        assert feature in sql_all, feature
    multi_key = re.compile(r"on (\w+)\.(\w+) = (\w+_agg)\.\2\n\s+and \1\.(\w+) = \3\.\4")
    assert multi_key.search(sql_all), "no multi-key join"
    assert len(list((root / "seeds").glob("*.csv"))) >= 3
    srcs = (root / "models/staging/_sources.yml").read_text()
    assert srcs.count("- name: shop") + srcs.count("- name: web") == 2
    assert "packages.yml" not in os.listdir(root)
    synth.generate(10, 0, tmp_path / "q", with_adegen=True)
    assert f"local: {synth.REPO_ROOT}" in (tmp_path / "q/packages.yml").read_text()


@pytest.mark.skipif(shutil.which("dbt") is None, reason="dbt not installed")
def test_n30_passes_dbt_parse(tmp_path):
    proj = tmp_path / "synth"
    synth.generate(30, 1, proj)
    env = dict(os.environ, DBT_SEND_ANONYMOUS_USAGE_STATS="false", DO_NOT_TRACK="1")
    env.pop("DBT_PROFILES_DIR", None)
    cp = subprocess.run(
        ["dbt", "parse", "--no-partial-parse", "--project-dir", str(proj), "--profiles-dir",
         str(proj), "--target-path", str(proj / "target"), "--log-path", str(proj / "logs")],
        cwd=proj, env=env, capture_output=True, text=True, timeout=300)
    assert cp.returncode == 0, cp.stdout[-3000:] + cp.stderr[-3000:]
    manifest = json.loads((proj / "target/manifest.json").read_text())
    nodes = manifest["nodes"].values()
    models = [n for n in nodes if n["resource_type"] == "model"]
    assert len(models) == 30
    assert sum(1 for n in nodes if n["resource_type"] == "seed") == 6
    assert len(manifest["sources"]) == 6
    assert sum(1 for n in nodes if n["resource_type"] == "test") > 0
