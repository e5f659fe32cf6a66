"""The review page's pure parts: the DAG neighbourhood and its layout (bounded on a 500-model
graph), the discovery graph of the example project, and tolerant run-record reading."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import networkx as nx

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import report_page  # noqa: E402  (bench/report_page.py: the synthetic 500-model graph)

from adegen.report import dag as dg  # noqa: E402
from adegen.report import graph_from_discovery, load_records  # noqa: E402
from adegen.report.records import reason_bucket  # noqa: E402


def _far_descendant(g: nx.DiGraph, start: str) -> tuple[str, int]:
    dist = nx.single_source_shortest_path_length(g, start)
    far = max(dist, key=lambda n: (dist[n], n))
    return far, dist[far]


def test_picture_is_bounded_and_highlights_the_path_on_500_models():
    graph = report_page.synthetic_graph(500, seed=3)
    g, layers = dg.build_graph(graph)
    # the model with the most children: the worst case for a readable neighbourhood
    changed = max((n for n in g if layers[n] == "staging"), key=lambda n: (g.out_degree(n), n))
    assert g.out_degree(changed) > dg.CONTEXT
    target, distance = _far_descendant(g, changed)
    assert distance >= 2
    focus = dg.DagFocus(changed, {target: distance, changed: 0}, (target,))
    pic = dg.picture(g, layers, focus)
    drawn = [n for n in pic.nodes if n.kind != "note"]
    assert len(drawn) <= dg.MAX_NODES
    kinds = {n.name: n.kind for n in drawn}
    assert kinds[changed] == "changed" and kinds[target] == "graded"
    assert pic.omitted > 0 and any(n.kind == "note" and "more" in n.label for n in pic.nodes)
    # the hot edges are exactly a connected route from the changed model to the graded table
    pos = {n.name: n for n in drawn}
    hot = nx.DiGraph()
    for e in pic.edges:
        if e.hot:
            x1, y1 = (float(v) for v in e.d.split()[0][1:].split(","))
            x2, y2 = (float(v) for v in e.d.split()[-1].split(","))
            src = next(n for n in drawn if round(n.x + n.w) == round(x1) and round(n.y + dg.NODE_H / 2) == round(y1))
            dst = next(n for n in drawn if round(n.x) == round(x2) and round(n.y + dg.NODE_H / 2) == round(y2))
            hot.add_edge(src.name, dst.name)
    assert nx.has_path(hot, changed, target)
    assert all(g.has_edge(u, v) for u, v in hot.edges)
    # layered left to right, no two boxes on top of each other
    for e in g.subgraph(pos).edges:
        assert pos[e[0]].x < pos[e[1]].x
    boxes = {(round(n.x), round(n.y)) for n in drawn}
    assert len(boxes) == len(drawn)
    assert pic.width < 2000 and pic.height < 1000


def test_a_bug_seen_in_hundreds_of_tables_draws_the_nearest():
    graph = report_page.synthetic_graph(500, seed=5)
    g, layers = dg.build_graph(graph)
    changed = max((n for n in g if layers[n] == "staging"), key=lambda n: (len(nx.descendants(g, n)), n))
    dist = nx.single_source_shortest_path_length(g, changed)
    assert len(dist) > 50
    pic = dg.picture(g, layers, dg.DagFocus(changed, dict(dist), ()))
    drawn = {n.name: n.kind for n in pic.nodes if n.kind != "note"}
    shown = [n for n, k in drawn.items() if k == "symptom"]
    assert len(drawn) <= dg.MAX_NODES and len(shown) == dg.MAX_SYMPTOMS
    nearest = sorted((n for n in dist if n != changed), key=lambda n: (dist[n], n))[: dg.MAX_SYMPTOMS]
    assert sorted(shown) == sorted(nearest)
    note = next(n.label for n in pic.nodes if n.kind == "note")
    assert f"+{len(dist) - 1 - dg.MAX_SYMPTOMS} more tables where the symptom shows" in note
    # every drawn path node lies between the changed model and a drawn symptom table
    for n, k in drawn.items():
        if k == "path":
            assert nx.has_path(g, changed, n) and any(nx.has_path(g, n, t) for t in shown)


def test_picture_when_the_model_is_graded_itself_or_unknown():
    g, layers = dg.build_graph({"models": [{"name": n, "layer": "marts"} for n in "abc"],
                                "edges": [["a", "b"], ["b", "c"]]})
    pic = dg.picture(g, layers, dg.DagFocus("b", {"b": 0}, ("b",)))
    assert {n.name: n.kind for n in pic.nodes} == {"a": "context", "b": "changed", "c": "context"}
    assert not any(e.hot for e in pic.edges)
    assert dg.picture(g, layers, dg.DagFocus("zzz", {}, ())) is None


def test_graph_from_the_example_projects_discovery(acme_discovery):
    graph = graph_from_discovery(acme_discovery)
    names = {m["name"]: m for m in graph["models"]}
    own = [m for m in acme_discovery["models"]]
    assert {m["name"] for m in own} <= set(names)
    for m in own:
        assert names[m["name"]]["layer"] == m["layer"]
        for ref in m["refs"]:
            assert [ref, m["name"]] in graph["edges"]
    assert {m["layer"] for m in graph["models"]} >= {"staging", "intermediate", "marts"}


def test_records_are_read_tolerantly(tmp_path):
    runs = tmp_path / ".adegen" / "runs"
    runs.mkdir(parents=True)
    (runs / "a.json").write_text(json.dumps({"tasks": "not a list", "timings_sec": {"x": "slow", "y": 2}}))
    (runs / "b.json").write_bytes(b"\xff\xfe")
    (runs / "c.json").write_text(json.dumps({"run_id": "c", "tasks": [{"task_id": "t001", "proposal": 1}, 7],
                                             "proposals": [{"number": 1, "layer": "marts", "prompt": "p?"}]}))
    recs = load_records(tmp_path, {"run_id": "c"})
    assert [r.run_id for r in recs.runs] == ["a", "c"]
    assert len(recs.warnings) == 1 and "b.json" in recs.warnings[0]
    assert recs.runs[0].task_entries() == {} and recs.runs[0].timings() == {"y": 2.0}
    entry, run = recs.task("t001")
    assert run.run_id == "c" and entry["layer"] == "marts"
    assert entry["prompts"] == [{"key": "base", "prompt": "p?"}] and entry["observation"] == {}
    assert recs.task("t999") == (None, None)


def test_reason_buckets():
    assert reason_bucket("line 16: equivalent on this data: every rebuilt table equals the intact build") \
        == "equivalent on this data"
    assert reason_bucket("line 3: mutant does not compile/parse (syntax error)") == "mutant does not compile/parse"
    assert reason_bucket("build error, but the pattern's symptom is values_wrong: Binder Error") \
        == "build error, but the pattern's symptom is values_wrong"
    assert reason_bucket("") == "unknown"


def test_very_long_lines_are_shown_plain_and_escaped():
    from adegen.report.highlight import MAX_HIGHLIGHT_LINE, highlight

    long_line = "select '" + "<x>" * MAX_HIGHLIGHT_LINE + "' as c"
    out = str(highlight(long_line, "sql"))
    assert "<span" not in out and "&lt;x&gt;" in out and "<x>" not in out
    assert "<span" in str(highlight("select 1 as c", "sql"))
