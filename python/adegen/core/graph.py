"""The project's DAG as one typed graph: `ProjectGraph` over `ModelNode`s, built once from the
discovery payload or a dbt manifest, and every walk over it (downstream with distances, upstream
nearest first, the models between two, an upstream lineage level by level, a value inherited from
the first parent that has one). No other module of adegen reads dbt's `depends_on` or walks parents
and children by hand (`python/tests/test_project_graph.py` fails when one does).

Nodes are models; their parents are what dbt's `depends_on.nodes` lists (models, sources, seeds,
snapshots), in dbt's order. A parent that is no node of the graph (a source, a seed, another
package's model when the graph holds one package) is a leaf of every walk: the graph knows nothing
upstream of it.

Orders are part of the contract: callers pick candidates, relations and report lines in the order a
walk gives, so each walk keeps the order its hand-written predecessor had (the docstrings say which).
Pure, picklable (the validator sends it to its workers), no dependency beyond the standard library.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from graphlib import TopologicalSorter
from typing import Callable, Generic, Iterable, Iterator, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class ModelNode:
    """One model of the DAG."""

    unique_id: str
    name: str
    package_name: str = ""
    path: str = ""                 # as its source gives it (payload, manifest: original_file_path)
    parents: tuple[str, ...] = ()  # dbt's depends_on.nodes, in dbt's order


def node_parents(node: dict) -> tuple[str, ...]:
    """A dbt manifest node's parents (`depends_on.nodes`)."""
    return tuple((node.get("depends_on") or {}).get("nodes") or ())


def macros_called(node: dict) -> tuple[str, ...]:
    """The macros a dbt manifest node (a model or a macro) calls (`depends_on.macros`), sorted."""
    return tuple(sorted(set((node.get("depends_on") or {}).get("macros") or ())))


class ProjectGraph:
    """The DAG of a project's models. `nodes`: unique_id -> ModelNode, in the order given; a node
    given twice keeps its first place and its last parents (callers append the one entry they walk
    from, which a test's payload may leave out)."""

    def __init__(self, nodes: Iterable[ModelNode] = ()):
        self.nodes: dict[str, ModelNode] = {}
        self._children: dict[str, list[str]] = {}
        for n in nodes:
            self.nodes[n.unique_id] = n
            for p in n.parents:  # children in node order: the walks below rely on it
                self._children.setdefault(p, []).append(n.unique_id)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_models(cls, models: Iterable[dict]) -> "ProjectGraph":
        """From discovery payload models (discovery.schema.json `models`); entries that are no
        model (no unique_id) are skipped."""
        return cls(ModelNode(m["unique_id"], m.get("name", ""), m.get("package_name", ""), m.get("path", ""),
                             tuple(m.get("depends_on") or ()))
                   for m in models if isinstance(m, dict) and m.get("unique_id"))

    @classmethod
    def from_discovery(cls, payload: dict) -> "ProjectGraph":
        """From a discovery payload: the root project's models."""
        return cls.from_models((payload or {}).get("models", []) or [])

    @classmethod
    def from_manifest(cls, manifest: dict, package: str | None = None) -> "ProjectGraph":
        """From a dbt manifest.json: its models (only `package`'s when given), in manifest order."""
        return cls(ModelNode(uid, n["name"], n.get("package_name", ""), n.get("original_file_path") or "",
                             node_parents(n))
                   for uid, n in (manifest.get("nodes") or {}).items()
                   if n.get("resource_type") == "model" and (package is None or n.get("package_name") == package))

    # ------------------------------------------------------------------ one step
    def __contains__(self, uid: object) -> bool:
        return uid in self.nodes

    def parents(self, uid: str) -> tuple[str, ...]:
        """What the node reads directly, in dbt's order (() for a node outside the graph)."""
        node = self.nodes.get(uid)
        return node.parents if node is not None else ()

    def children(self, uid: str) -> tuple[str, ...]:
        """The models that read `uid` directly, in node order."""
        return tuple(self._children.get(uid, ()))

    def inputs(self) -> list[str]:
        """Every node some model reads (models, sources, seeds, snapshots), first seen first."""
        return list(dict.fromkeys(p for n in self.nodes.values() for p in n.parents))

    def edges(self) -> Iterator[tuple[str, str]]:
        """(parent, child) of every dependency: node order, then each node's parents in order."""
        for uid, n in self.nodes.items():
            for p in n.parents:
                yield p, uid

    # ------------------------------------------------------------------ downstream
    def downstream(self, uid: str) -> dict[str, int]:
        """`uid` (at 0) and every model downstream of it -> its distance, breadth first (children
        in node order): the order screening selects and rebuilds them in."""
        dist = {uid: 0}
        frontier = [uid]
        while frontier:
            nxt = []
            for u in frontier:
                for c in self._children.get(u, ()):
                    if c not in dist:
                        dist[c] = dist[u] + 1
                        nxt.append(c)
            frontier = nxt
        return dist

    def downstream_of(self, roots: Iterable[str]) -> dict[str, int]:
        """Every model downstream of any root (each at 0) -> its distance from the nearest one;
        the first root's walk first, then what each further root adds."""
        out: dict[str, int] = {}
        for r in roots:
            for u, d in self.downstream(r).items():
                out[u] = min(d, out.get(u, d))
        return out

    def descendants(self, uid: str) -> set[str]:
        """Every model downstream of `uid` (not itself)."""
        return {u for u in self.downstream(uid) if u != uid}

    def between(self, start: str, end: str) -> set[str]:
        """The nodes on some path start -> end, both included ({end} alone when end is not
        downstream of start; {start} when they are one)."""
        if start == end:
            return {start}
        below = set(self.downstream(start))
        found, stack = {end}, [end]
        while stack:
            for p in self.parents(stack.pop()):
                if p in below and p not in found:
                    found.add(p)
                    stack.append(p)
        return found

    # ------------------------------------------------------------------ upstream
    def upstream(self, uid: str) -> list[str]:
        """Every node upstream of `uid` (sources and seeds too), nearest first: breadth first,
        each node's parents in dbt's order."""
        seen, order, queue = {uid}, [], deque(self.parents(uid))
        while queue:
            u = queue.popleft()
            if u in seen:
                continue
            seen.add(u)
            order.append(u)
            queue.extend(self.parents(u))
        return order

    def upstream_depth_first(self, uid: str) -> list[str]:
        """`uid` and every model upstream of it (graph nodes only), depth first from a stack: a
        node's last parent is visited first."""
        seen: set[str] = set()
        order, stack = [], [uid]
        while stack:
            u = stack.pop()
            if u in seen or u not in self.nodes:
                continue
            seen.add(u)
            order.append(u)
            stack.extend(self.parents(u))
        return order

    def lineage(self, starts: Iterable[str]) -> list[str]:
        """The starts and every model upstream of them (graph nodes only), level by level from the
        starts (breadth first), each level in name order (the stable sort keeps ties as found;
        the starts by unique_id, each node's parents sorted)."""
        start = sorted(u for u in starts if u in self.nodes)
        seen, order, queue = set(start), [], deque(start)
        while queue:
            level = sorted(queue, key=lambda u: self.nodes[u].name)
            queue.clear()
            for uid in level:
                order.append(uid)
                for dep in sorted(self.parents(uid)):
                    if dep in self.nodes and dep not in seen:
                        seen.add(dep)
                        queue.append(dep)
        return order

    def topological(self) -> list[str]:
        """The nodes, parents first (graphlib's order; a cycle raises graphlib.CycleError)."""
        deps = {u: list(dict.fromkeys(p for p in n.parents if p in self.nodes)) for u, n in self.nodes.items()}
        return list(TopologicalSorter(deps).static_order())


class Inherited(Generic[T]):
    """A value each node has of its own, or takes from the first of its parents (in the order
    `parents` gives) that has one: depth first, memoised. A node already on the current path (a
    macro that calls itself) and an unknown node have none.

    `own(uid)` is the node's own value (None: none); `derive(uid, parent, value)` what a node makes
    of its parent's value; `known(uid)` whether the node exists at all."""

    def __init__(self, parents: Callable[[str], Iterable[str]], own: Callable[[str], T | None],
                 derive: Callable[[str, str, T], T], known: Callable[[str], bool]):
        self._parents, self._own, self._derive, self._known = parents, own, derive, known
        self.memo: dict[str, T | None] = {}  # in the order found: parents before the nodes reading them

    def of(self, uid: str, active: frozenset = frozenset()) -> T | None:
        if uid in self.memo:
            return self.memo[uid]
        if uid in active or not self._known(uid):
            return None
        found = self._own(uid)
        if found is None:
            for dep in self._parents(uid):
                hit = self.of(dep, active | {uid})
                if hit is not None:
                    found = self._derive(uid, dep, hit)
                    break
        self.memo[uid] = found
        return found

    def found(self) -> dict[str, T]:
        """{uid: value} of every node visited that has one, in the order found."""
        return {u: v for u, v in self.memo.items() if v is not None}
