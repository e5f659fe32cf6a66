"""The DAG picture of one task: the changed model, the tables where the symptom shows, the path
between them, and a little context, laid out in layers (left to right) for an inline SVG.

Only a bounded neighbourhood is drawn (MAX_NODES, MAX_SYMPTOMS), so a 500-model project stays
readable: what is left out is counted in a note ("+N more upstream", "+N more tables where the
symptom shows", "+N more downstream"). Pure functions; the graph
algorithms are networkx's."""
from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

MAX_NODES = 22  # nodes drawn per picture, notes aside
CONTEXT = 3  # parents of the changed model / children of a graded table shown as context
MAX_SYMPTOMS = 6  # tables where the symptom shows drawn besides the graded ones (the nearest)
CHAR_W = 6.6  # width of one character of the 11px monospace label
NODE_H = 24
GAP_X = 46
GAP_Y = 12
PAD = 8
MAX_LABEL = 30


@dataclass
class DagNode:
    name: str
    label: str
    kind: str  # changed | graded | symptom | path | context | note
    layer: str
    x: float = 0.0
    y: float = 0.0
    w: float = 0.0
    distance: int | None = None  # DAG distance from the changed model, when recorded


@dataclass
class DagEdge:
    d: str  # SVG path data
    hot: bool  # on a path from the changed model to a symptom table


@dataclass
class DagPicture:
    width: float
    height: float
    nodes: list[DagNode] = field(default_factory=list)
    edges: list[DagEdge] = field(default_factory=list)
    omitted: int = 0  # nodes left out (counted in the note under the picture)


@dataclass(frozen=True)
class DagFocus:
    """What one task highlights: the changed model and the tables where its symptom shows."""

    changed: str
    symptoms: dict  # table -> DAG distance (None when unknown)
    graded: tuple  # the tables ade-bench grades (solution seeds)


def build_graph(graph: dict) -> tuple[nx.DiGraph, dict[str, str]]:
    """networkx graph and name -> layer from the record's `graph` ({models, edges})."""
    g = nx.DiGraph()
    layers: dict[str, str] = {}
    for m in graph.get("models") or []:
        if isinstance(m, dict) and isinstance(m.get("name"), str):
            g.add_node(m["name"])
            layers[m["name"]] = str(m.get("layer") or "other")
    for e in graph.get("edges") or []:
        if isinstance(e, (list, tuple)) and len(e) == 2 and all(isinstance(x, str) for x in e):
            g.add_edge(e[0], e[1])
    return g, layers


def _route(g: nx.DiGraph, src: str, dst: str, taken: set[str], room: int) -> set[str]:
    """The nodes not yet drawn on every path src -> dst; only the shortest path's when those do
    not fit in `room`; nothing when even that does not fit (a route is drawn whole or not at all)."""
    if src == dst or not nx.has_path(g, src, dst):
        return set()
    every = ((nx.descendants(g, src) & nx.ancestors(g, dst)) | {src, dst}) - taken
    if len(every) <= room:
        return every
    shortest = set(nx.shortest_path(g, src, dst)) - taken
    return shortest if len(shortest) <= room else set()


def select(g: nx.DiGraph, focus: DagFocus) -> tuple[dict[str, str], dict[str, int]]:
    """The nodes to draw (name -> kind) and what was left out: neighbours per side ("up",
    "down") and tables where the symptom shows beyond the nearest MAX_SYMPTOMS ("changed")."""
    kinds: dict[str, str] = {focus.changed: "changed"}
    graded = [t for t in focus.graded if t in g and t != focus.changed]
    symptoms = sorted((t for t in focus.symptoms if t in g and t != focus.changed and t not in focus.graded),
                      key=lambda t: (focus.symptoms[t] if focus.symptoms[t] is not None else 10**6, t))
    left = {"up": 0, "down": 0, "changed": max(0, len(symptoms) - MAX_SYMPTOMS)}
    targets = graded + symptoms[:MAX_SYMPTOMS]
    for t in targets:
        kinds[t] = "graded" if t in focus.graded else "symptom"
    for t in targets:
        for n in sorted(_route(g, focus.changed, t, set(kinds), MAX_NODES - len(kinds))):
            kinds[n] = "path"
    ends = [(focus.changed, "up", g.predecessors)] + [(t, "down", g.successors) for t in graded] \
        + [(focus.changed, "down", g.successors)]
    for node, side, near in ends:
        extra = sorted(n for n in near(node) if n not in kinds)
        room = max(0, min(CONTEXT, MAX_NODES - len(kinds)))
        for n in extra[:room]:
            kinds[n] = "context"
        left[side] += len(extra) - min(room, len(extra))
    return kinds, left


def _label(name: str) -> str:
    return name if len(name) <= MAX_LABEL else name[: MAX_LABEL - 1] + "\u2026"


def layout(g: nx.DiGraph, kinds: dict[str, str], layers: dict[str, str], focus: DagFocus,
           left: dict[str, int]) -> DagPicture:
    """Layered layout: column = longest path from the picture's roots, rows ordered by the mean row
    of each node's parents (one barycentre sweep), columns as wide as their longest label."""
    sub = g.subgraph(kinds).copy()
    columns = [sorted(gen) for gen in nx.topological_generations(sub)] if nx.is_directed_acyclic_graph(sub) \
        else [sorted(sub)]
    row: dict[str, float] = {}
    for col in columns:
        def bary(n: str) -> tuple:
            ps = [row[p] for p in sub.predecessors(n) if p in row]
            return (sum(ps) / len(ps) if ps else -1, n)

        col.sort(key=bary)
        for i, n in enumerate(col):
            row[n] = i
    nodes: dict[str, DagNode] = {}
    x = PAD
    for col in columns:
        width = max(len(_label(n)) for n in col) * CHAR_W + 16
        for i, n in enumerate(col):
            nodes[n] = DagNode(n, _label(n), kinds[n], layers.get(n, ""), x, PAD + i * (NODE_H + GAP_Y), width,
                               focus.symptoms.get(n))
        x += width + GAP_X
    tallest = max((len(c) for c in columns), default=1)
    below = PAD + tallest * (NODE_H + GAP_Y)
    texts = [f"+{left['up']} more upstream" if left["up"] else "",
             f"+{left['changed']} more tables where the symptom shows" if left.get("changed") else "",
             f"+{left['down']} more downstream" if left["down"] else ""]
    texts = [t for t in texts if t]
    notes = [DagNode("", " \u00b7 ".join(texts), "note", "", PAD, below, 0)] if texts else []
    hot = _hot_edges(sub, focus)
    edges = []
    for u, v in sub.edges:
        a, b = nodes[u], nodes[v]
        x1, y1, x2, y2 = a.x + a.w, a.y + NODE_H / 2, b.x, b.y + NODE_H / 2
        mid = (x1 + x2) / 2
        edges.append(DagEdge(f"M{x1:.0f},{y1:.0f} C{mid:.0f},{y1:.0f} {mid:.0f},{y2:.0f} {x2:.0f},{y2:.0f}",
                             (u, v) in hot))
    edges.sort(key=lambda e: e.hot)  # hot edges drawn last, on top
    height = PAD * 2 + tallest * (NODE_H + GAP_Y) + (NODE_H if notes else 0)
    width = max(x - GAP_X + PAD, PAD * 2 + len(notes[0].label) * CHAR_W if notes else 0, 160)
    return DagPicture(width, height, list(nodes.values()) + notes, edges, sum(left.values()))


def _hot_edges(sub: nx.DiGraph, focus: DagFocus) -> set[tuple[str, str]]:
    if focus.changed not in sub:
        return set()
    down = nx.descendants(sub, focus.changed) | {focus.changed}
    hot: set[tuple[str, str]] = set()
    for t in list(focus.symptoms) + list(focus.graded):
        if t in sub and t in down:
            up = nx.ancestors(sub, t) | {t}
            on_path = down & up
            hot |= {(u, v) for u, v in sub.edges if u in on_path and v in on_path}
    return hot


def picture(g: nx.DiGraph, layers: dict[str, str], focus: DagFocus) -> DagPicture | None:
    """The task's picture, or None when the changed model is not in the graph."""
    if focus.changed not in g:
        return None
    kinds, left = select(g, focus)
    return layout(g, kinds, layers, focus, left)
