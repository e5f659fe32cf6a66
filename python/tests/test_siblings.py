"""One mistake in two sibling models (adegen.propose.siblings): which sites pair, which tables each side is
graded on, and a build of twin models writing such a task proven, with both files in its
patches and both tables in its prompts and seeds."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from adegen.core.graph import ProjectGraph
from adegen.propose import siblings
from adegen.rewrite.engine import Site

POINTS_A = """select
    c.constructor_name,
    max(cs.points) as total_points
from standings cs
join constructors c on cs.constructor_id = c.constructor_id
group by 1
"""
POINTS_B = """select
    d.driver_name,
    max(ds.points) as total_points
from standings ds
join drivers d on ds.driver_id = d.driver_id
group by 1
"""
OTHER = """select
    d.driver_name,
    max(ds.laps) as total_laps
from laps ds
"""


def _model(name: str, layer: str = "marts", deps: tuple = ()) -> dict:
    return {"name": name, "unique_id": f"model.p.{name}", "path": f"models/{name}.sql", "layer": layer,
            "depends_on": [f"model.p.{d}" for d in deps]}


def _max_site(raw: str) -> Site:
    start = raw.index("max(")
    return Site("max_to_sum", 0, start, start + 3, raw.count("\n", 0, start) + 1, "max", "sum")


PATTERN = SimpleNamespace(id="max_to_sum", family="aggregation", rank_penalty=0)


def _discovery(*models: dict) -> dict:
    return {"models": list(models)}


def _graph(*models: dict) -> ProjectGraph:
    return ProjectGraph.from_discovery(_discovery(*models))


def _parallel(a: dict, b: dict) -> bool:
    return siblings.parallel(a, b, _graph(a, b))


def test_the_same_edit_on_the_same_line_of_two_marts_pairs():
    a, b = _model("constructor_points"), _model("driver_points")
    pairs = siblings.pair_sites(PATTERN, [(a, POINTS_A, [_max_site(POINTS_A)]), (b, POINTS_B, [_max_site(POINTS_B)])],
                                _graph(a, b))
    assert len(pairs) == 1
    model, raw, site = pairs[0]
    assert model["name"] == "constructor_points" and raw == POINTS_A
    (comp,) = site.companions
    assert (comp.model, comp.path, comp.site.line) == ("driver_points", "models/driver_points.sql", 3)
    # what screening builds besides the model's own file: the sibling's file with the same edit
    ((uid, path, text),) = siblings.changed_files(site)
    assert uid == "model.p.driver_points" and "sum(ds.points) as total_points" in text


def test_another_line_or_a_model_downstream_never_pairs():
    a, b = _model("constructor_points"), _model("driver_laps")
    assert siblings.pair_sites(PATTERN, [(a, POINTS_A, [_max_site(POINTS_A)]), (b, OTHER, [_max_site(OTHER)])],
                               _graph(a, b)) == []
    down = _model("driver_points", deps=("constructor_points",))
    assert siblings.pair_sites(PATTERN, [(a, POINTS_A, [_max_site(POINTS_A)]),
                                         (down, POINTS_B, [_max_site(POINTS_B)])], _graph(a, down)) == []


def test_only_twins_pair():
    """Twins: one layer, and a name word (past the prefix) or a model both read in common. The same
    edit in a model of another layer, or in an unrelated model of the same layer, is no twin's."""
    a, other, twin = _model("constructor_points"), _model("driver_points_stg", "staging"), _model("driver_points")
    entries = [(m, POINTS_B if m is not a else POINTS_A, [_max_site(POINTS_B if m is not a else POINTS_A)])
               for m in (a, other, twin)]
    pairs = siblings.pair_sites(PATTERN, entries, _graph(a, other, twin))
    assert [(m["name"], s.companions[0].model) for m, _r, s in pairs] == [("constructor_points", "driver_points")]
    assert siblings.pair_sites(PATTERN, entries[:2], _graph(a, other)) == []
    # a customer dimension and a marketing report share no word and read nothing in common
    dim, rpt = _model("dim_customers", deps=("stg_customers",)), _model("rpt_marketing_performance", deps=("stg_ad_spend",))
    assert not _parallel(dim, rpt)
    assert _parallel(_model("fct_orders_eu"), _model("fct_orders_us"))
    assert _parallel(_model("rpt_churn", deps=("int_accounts",)), _model("rpt_revenue", deps=("int_accounts",)))
    assert not _parallel(_model("stg_orders", "staging"), _model("fct_orders"))


def test_a_ref_or_config_change_is_never_repeated_in_a_sibling():
    a, b = _model("constructor_points"), _model("driver_points")
    ref = SimpleNamespace(id="wrong_ref", family="dag-ref", rank_penalty=0)
    assert siblings.pair_sites(ref, [(a, POINTS_A, [_max_site(POINTS_A)]), (b, POINTS_B, [_max_site(POINTS_B)])],
                               _graph(a, b)) == []


def test_a_line_of_keywords_only_pairs_with_nothing():
    raw = "select *\nfrom x\nleft join y using (k)\n"
    s = raw.index("left")
    assert siblings.edit_key(raw, Site("wrong_join_type", 0, s, s + 4, 3, "left", "inner")) is not None
    bare = "select *\n  end,\n"
    e = bare.index("end")
    assert siblings.edit_key(bare, Site("p", 0, e, e + 3, 2, "end", "end ")) is None


def _obs(tables: list[tuple[str, int, int]]):
    return SimpleNamespace(build_error=False, details={"tables": [
        {"table": t, "distance": d, "rows_differing": n} for t, d, n in tables]})


def test_each_side_is_graded_on_a_table_only_its_own_model_feeds():
    a, b = _model("stg_a", "staging"), _model("stg_b", "staging")
    mart_a = _model("fct_a", deps=("stg_a",))
    shared = _model("fct_both", deps=("stg_a", "stg_b"))
    disc = _discovery(a, b, mart_a, shared)
    # each staging model changed; fct_a shows a only; fct_both shows both (never a side's table)
    obs = _obs([("stg_a", 0, 5), ("stg_b", 0, 4), ("fct_a", 1, 5), ("fct_both", 1, 9)])
    assert siblings.side_tables(obs, disc, a, b) == ("fct_a", "stg_b")
    # b's change shows nowhere of its own: a fix of stg_a alone would pass, so no pair
    assert siblings.side_tables(_obs([("stg_a", 0, 5), ("fct_a", 1, 5), ("fct_both", 1, 9)]), disc, a, b) is None


@pytest.fixture(scope="module")
def twins_built(fixtures_dir, tmp_path_factory, adegen_cache) -> tuple[Path, dict]:
    """A build of twinfix: two twin marts (driver_points, constructor_points) each take the
    season total as max() over running totals, the shape of ade-bench's f1006."""
    import json

    from reliability_kit import build_env, run_build

    out = tmp_path_factory.mktemp("twins-built") / "ade-bench-tasks"
    env = build_env(tmp_path_factory.mktemp("twins-built-home"))
    r = run_build([fixtures_dir / "twinfix", "--output-dir", out, "--count", "3", "--pick", "all", "--yes",
                   "--json", "--no-purpose"], env, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return out, json.loads(r.stdout)


def test_a_build_writes_a_proven_task_that_spans_two_twin_models(twins_built):
    """Both twins sum running totals: the pair task changes both files in one patch (and back in
    the solution), grades both tables and names both in every prompt, and is proven like any
    other task; the same edit in one twin alone is not offered besides it (one mistake, one task)."""
    import yaml

    out, doc = twins_built
    pairs = [p for p in doc["proposals"] if p.get("siblings")]
    assert pairs, [(p["model"], p["pattern_id"]) for p in doc["proposals"]]
    p = pairs[0]
    assert {p["model"], *(s["model"] for s in p["siblings"])} == {"driver_points", "constructor_points"}
    assert not [q for q in doc["proposals"] if q["pattern_id"] == p["pattern_id"] and not q.get("siblings")]
    task = next(t for t in doc["tasks"] if t["proposal"] == p["number"])
    assert task["status"] == "ready" and task["proven"], task["proof_detail"]
    folder = Path(task["path"])
    setup = (folder / "setup" / "changes.patch").read_text()
    solution = (folder / "solutions" / "changes.patch").read_text()
    files = [p["model_path"]] + [s["path"] for s in p["siblings"]]
    for path in files:
        assert f"--- a/{path}" in setup and f"--- a/{path}" in solution
    assert setup.count("+    sum(") == 2 and solution.count("+    max(") == 2
    spec = yaml.safe_load((folder / "task.yaml").read_text())
    seeds = [s["table_name"] for s in spec["solution_seeds"]]
    tables = [p["compared_table"]] + [s["table"] for s in p["siblings"]]
    assert set(tables) <= set(seeds)
    for level in spec["prompts"]:
        for table in tables:
            assert table in level["prompt"], (level["key"], level["prompt"])
