"""The project graph (`adegen.core.graph`): every walk gives the order its hand-written predecessor
gave (those predecessors are kept below as references and run against the graph on the acme
discovery payload and on random DAGs), and no module of python/adegen but the graph module walks
dbt's `depends_on`, children or parents by hand (a scan of the source, proven to catch planted
hand walks)."""
from __future__ import annotations

import ast
import json
import random
from collections import deque
from pathlib import Path

import pytest

from adegen.core.graph import Inherited, ModelNode, ProjectGraph, macros_called, node_parents

HERE = Path(__file__).resolve().parent
ADEGEN = HERE.parent / "adegen"
GRAPH_MODULE = "core/graph.py"


# --------------------------------------------------------------------------- the hand-walk scan

# Read anywhere outside the graph module, these keys and attributes are dbt's lineage taken by hand.
ADJACENCY_KEYS = frozenset({"depends_on", "child_map", "parent_map", "children", "parents"})
ADJACENCY_ATTRS = frozenset({"depends_on", "child_map", "parent_map"})
# Fine to read once (a model's refs, the payload's direct readers, `graph.parents(uid)`, pathlib's
# `.parents`), a hand walk inside a walk: a `while` loop, a recursive function, or a `for` loop
# that grows the list it iterates.
WALK_KEYS = ADJACENCY_KEYS | {"refs", "downstream_models"}
WALK_ATTRS = frozenset({"parents", "children"})
WALK_NAMES = frozenset({"children", "parents", "child_map", "parent_map", "deps"})


def _key(node: ast.AST) -> str | None:
    """The constant key a node reads: x["k"] or x.get("k"), x.pop("k"), x.setdefault("k", ...)."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        s = node.slice
        return s.value if isinstance(s, ast.Constant) and isinstance(s.value, str) else None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "pop", "setdefault") and node.args
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return node.args[0].value
    return None


def _adjacency_name(node: ast.AST) -> str | None:
    """The name of an adjacency map read by hand: children[u], children.get(u), deps.get(u, [])."""
    target = node.value if isinstance(node, ast.Subscript) else (
        node.func.value if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("get", "pop", "setdefault") else None)
    return target.id if isinstance(target, ast.Name) and target.id in WALK_NAMES else None


def _calls_itself(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Name) and f.id == fn.name) or (
                    isinstance(f, ast.Attribute) and f.attr == fn.name and isinstance(f.value, ast.Name)
                    and f.value.id in ("self", "cls")):
                return True
    return False


def _grows_its_list(loop: ast.For) -> bool:
    if not isinstance(loop.iter, ast.Name):
        return False
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("append", "extend")
               and isinstance(n.func.value, ast.Name) and n.func.value.id == loop.iter.id for n in ast.walk(loop))


def _walks(tree: ast.AST) -> list[ast.AST]:
    """The walk-shaped parts of a module: while loops, recursive functions, self-growing for loops."""
    return [n for n in ast.walk(tree)
            if isinstance(n, ast.While)
            or (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and _calls_itself(n))
            or (isinstance(n, ast.For) and _grows_its_list(n))]


def hand_walks(source: str) -> list[tuple[int, str]]:
    """(line, what) of every place the source reads dbt's lineage by hand."""
    tree = ast.parse(source)
    found = set()
    for node in ast.walk(tree):
        key = _key(node)
        if key in ADJACENCY_KEYS:
            found.add((node.lineno, f'reads "{key}"'))
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.attr in ADJACENCY_ATTRS:
            found.add((node.lineno, f"reads .{node.attr}"))
    for walk in _walks(tree):
        for node in ast.walk(walk):
            key, name = _key(node), _adjacency_name(node)
            if key in WALK_KEYS:
                found.add((node.lineno, f'walks "{key}"'))
            if name:
                found.add((node.lineno, f"walks the map {name}"))
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.attr in WALK_ATTRS:
                found.add((node.lineno, f"walks .{node.attr}"))
    return sorted(found)


def test_no_module_but_the_graph_walks_the_dag_by_hand():
    bad = [f"{p.relative_to(ADEGEN).as_posix()}:{line}: {what}"
           for p in sorted(ADEGEN.rglob("*.py")) if p.relative_to(ADEGEN).as_posix() != GRAPH_MODULE
           for line, what in hand_walks(p.read_text(encoding="utf-8"))]
    assert not bad, "walk the DAG through adegen.core.graph.ProjectGraph:\n" + "\n".join(bad)


# the hand walks the graph replaced (and the shapes a new one would take): each must be caught
PLANTED = {
    "a payload model's parents": 'deps = {m["unique_id"]: m.get("depends_on", []) or [] for m in models}',
    "a manifest node's parents": 'parents = (n.get("depends_on") or {}).get("nodes") or []',
    "dbt's child map": 'kids = manifest["child_map"][uid]',
    "an attribute": "for d in node.depends_on.nodes:\n    pass",
    "a children map, breadth first": (
        "def descendants(kids, uid):\n    dist, frontier = {uid: 0}, [uid]\n    while frontier:\n"
        "        nxt = []\n        for u in frontier:\n            for c in children.get(u, []):\n"
        "                if c not in dist:\n                    dist[c] = dist[u] + 1\n                    nxt.append(c)\n"
        "        frontier = nxt\n    return dist"),
    "refs as an adjacency": (
        "todo, seen = [name], set()\nwhile todo:\n    m = by_name[todo.pop()]\n"
        "    todo.extend(r for r in m.get(\"refs\", []) if r not in seen)"),
    "the graph's parents, recursively": (
        "def up(uid):\n    return [uid] + [u for p in graph.parents(uid) for u in up(p)]"),
    "the graph's children, a growing list": "order = [uid]\nfor u in order:\n    order.extend(graph.children(u))",
    "a method recursing over children": (
        "class W:\n    def down(self, uid):\n        for c in self.children(uid):\n            self.down(c)"),
}


@pytest.mark.parametrize("name", PLANTED)
def test_the_scan_catches_a_planted_hand_walk(name):
    assert hand_walks(PLANTED[name]), name


@pytest.mark.parametrize("source", [
    "root = Path(__file__).resolve().parents[2]",
    "for p in Path(x).parents:\n    print(p)",
    "mine = {d for d in graph.parents(uid) if d.startswith('model.')}",
    "refs = tuple(model.get('refs', []) or [])",
    "m = {'depends_on': list(graph.parents(uid))}",
    "for uid in model.get('downstream_models', []):\n    print(uid)",
    "while todo:\n    todo.pop().mkdir(parents=True)",
])
def test_the_scan_leaves_one_step_reads_alone(source):
    assert hand_walks(source) == []


# --------------------------------------------------------------------------- the walks' orders

def _acme() -> dict:
    return json.loads((HERE / "golden" / "discovery_acme.json").read_text(encoding="utf-8"))


def _random_payload(seed: int, n: int = 60) -> dict:
    """Models in shuffled order, each reading up to four earlier models, sources or seeds."""
    rnd = random.Random(seed)
    names = [f"m{i:02d}" for i in range(n)]
    raw = [f"source.p.s.t{i}" for i in range(5)] + [f"seed.p.seed{i}" for i in range(3)]
    models = []
    for i, name in enumerate(names):
        pool = [f"model.p.{x}" for x in names[:i]] + raw
        deps = rnd.sample(pool, min(len(pool), rnd.randint(0, 4)))
        models.append({"unique_id": f"model.p.{name}", "name": name, "depends_on": deps,
                       "depth": i, "path": f"models/{name}.sql", "package_name": "p"})
    rnd.shuffle(models)
    return {"models": models}


def _manifest(payload: dict) -> dict:
    return {"metadata": {"project_name": "p"}, "nodes": {
        m["unique_id"]: {"resource_type": "model", "name": m["name"], "package_name": m.get("package_name", "p"),
                         "original_file_path": m.get("path", ""), "depends_on": {"nodes": list(m["depends_on"])}}
        for m in payload["models"]}}


PAYLOADS = [("acme", _acme)] + [(f"random{s}", lambda s=s: _random_payload(s)) for s in range(6)]


# The hand walks as they were before the graph (the references its orders are held to).
def _old_children(models: list[dict]) -> dict[str, list[str]]:
    children: dict[str, list[str]] = {}
    for m in models:
        for dep in m.get("depends_on", []) or []:
            children.setdefault(dep, []).append(m["unique_id"])
    return children


def _old_distances(children: dict, uid: str) -> dict[str, int]:  # validate intact.descendants
    dist, frontier = {uid: 0}, [uid]
    while frontier:
        nxt = []
        for u in frontier:
            for c in children.get(u, []):
                if c not in dist:
                    dist[c] = dist[u] + 1
                    nxt.append(c)
        frontier = nxt
    return dist


def _old_raw_upstream(model: dict, models: list[dict]) -> list[str]:  # realism _raw_ancestors, unfiltered
    deps = {m["unique_id"]: m.get("depends_on", []) or [] for m in models}
    out, seen, todo = [], set(), list(model.get("depends_on", []) or [])
    while todo:
        uid = todo.pop(0)
        if uid in seen:
            continue
        seen.add(uid)
        out.append(uid)
        todo.extend(deps.get(uid, []))
    return out


def _old_stack_upstream(models: dict, uid: str) -> list[str]:  # validate fullprove.volatile_notes
    seen, order, stack = set(), [], [uid]
    while stack:
        u = stack.pop()
        if u in seen or u not in models:
            continue
        seen.add(u)
        order.append(u)
        stack.extend(models[u]["depends_on"])
    return order


def _old_between(models: dict, start: str, end: str) -> set[str]:  # propose facts.models_between
    children = _old_children(list(models.values()))
    desc, stack = {start}, [start]
    while stack:
        for ch in children.get(stack.pop(), []):
            if ch not in desc:
                desc.add(ch)
                stack.append(ch)
    anc, stack = {end}, [end]
    while stack:
        for dep in models.get(stack.pop(), {}).get("depends_on", []):
            if dep in desc and dep not in anc:
                anc.add(dep)
                stack.append(dep)
    return anc


def _old_lineage(models: dict, start: list[str]) -> list[str]:  # calibrate search.lineage
    seen, order, queue = set(start), [], deque(start)
    while queue:
        level = sorted(queue, key=lambda u: models[u]["name"])
        queue.clear()
        for uid in level:
            order.append(uid)
            for dep in sorted(models[uid]["depends_on"]):
                if dep in models and dep not in seen:
                    seen.add(dep)
                    queue.append(dep)
    return order


@pytest.mark.parametrize("name,make", PAYLOADS, ids=[n for n, _ in PAYLOADS])
def test_walks_keep_the_orders_of_the_hand_walks_they_replaced(name, make):
    payload = make()
    models = payload["models"]
    by_id = {m["unique_id"]: m for m in models}
    graph = ProjectGraph.from_discovery(payload)
    children = _old_children(models)
    uids = sorted(by_id)
    for uid in uids:
        assert list(graph.downstream(uid).items()) == list(_old_distances(children, uid).items())
        assert graph.descendants(uid) == set(_old_distances(children, uid)) - {uid}
        assert graph.upstream(uid) == _old_raw_upstream(by_id[uid], models)
        assert graph.upstream_depth_first(uid) == _old_stack_upstream(by_id, uid)
        assert graph.parents(uid) == tuple(by_id[uid]["depends_on"])
        assert graph.children(uid) == tuple(children.get(uid, []))
    rnd = random.Random(name)
    for _ in range(40):
        a, b = rnd.choice(uids), rnd.choice(uids)
        assert graph.between(a, b) == (_old_between(by_id, a, b) if a != b else {a})
        roots = rnd.sample(uids, 3)
        old: dict[str, int] = {}
        for r in roots:  # validate screening._distances
            for u, d in _old_distances(children, r).items():
                old[u] = min(d, old.get(u, d))
        assert list(graph.downstream_of(roots).items()) == list(old.items())
        starts = sorted(rnd.sample(uids, 2))
        assert graph.lineage(starts) == _old_lineage(by_id, starts)
    assert list(graph.edges()) == [(d, m["unique_id"]) for m in models for d in m["depends_on"]]
    order = graph.topological()
    assert sorted(order) == uids
    assert all(order.index(p) < order.index(u) for u in uids for p in graph.parents(u) if p in graph)


@pytest.mark.parametrize("name,make", PAYLOADS, ids=[n for n, _ in PAYLOADS])
def test_a_manifest_and_its_payload_give_one_graph(name, make):
    payload = make()
    manifest = _manifest(payload)
    a, b = ProjectGraph.from_discovery(payload), ProjectGraph.from_manifest(manifest)
    assert list(a.nodes) == list(b.nodes)
    assert all(a.parents(u) == b.parents(u) == node_parents(manifest["nodes"][u]) for u in a.nodes)
    assert list(ProjectGraph.from_manifest(manifest, package="elsewhere").nodes) == []


def test_inherited_takes_the_first_parent_in_order_and_memoises():
    """What dbt.clock's model and macro walks did by hand: own value, else the first parent's."""
    parents = {"a": ["b", "c"], "b": ["d"], "c": ["e"], "d": [], "e": [], "loop": ["loop2"], "loop2": ["loop"]}
    own = {"e": "E", "d": None}
    calls = []

    def own_of(uid):
        calls.append(uid)
        return own.get(uid)

    search = Inherited(parents.__getitem__, own_of, lambda uid, dep, v: f"{uid}<{v}", parents.__contains__)
    assert search.of("a") == "a<c<E"          # b's line reads nothing: c's does
    assert search.of("a") == "a<c<E" and calls.count("a") == 1
    assert search.found() == {"c": "c<E", "e": "E", "a": "a<c<E"}
    assert list(search.memo) == ["d", "b", "e", "c", "a"]  # parents before the nodes reading them
    assert search.of("loop") is None and search.of("unknown") is None


def test_dbt_node_readers():
    node = {"depends_on": {"nodes": ["model.p.a", "source.p.s.t"], "macros": ["m.b", "m.a", "m.b"]}}
    assert node_parents(node) == ("model.p.a", "source.p.s.t")
    assert macros_called(node) == ("m.a", "m.b")
    assert node_parents({}) == () == macros_called({"depends_on": None})


def test_the_graph_travels_with_the_baseline():
    """The validator pickles its Baseline to workers and copies it with dataclasses.asdict."""
    import pickle
    from dataclasses import asdict

    from adegen.validate.duckdb.jobs import Baseline

    graph = ProjectGraph([ModelNode("model.p.a", "a"), ModelNode("model.p.b", "b", parents=("model.p.a",))])
    base = Baseline(ok=True, graph=graph)
    for copy in (pickle.loads(pickle.dumps(base)).graph, Baseline(**asdict(base)).graph):
        assert copy.downstream("model.p.a") == {"model.p.a": 0, "model.p.b": 1}
