"""One mistake made in two parallel models: the same edit on the same line of two sibling files.

The story: an engineer changes a line they find in two models of one layer (a "cleanup" pasted
into both, a find-and-replace over a folder, a pattern copied from one report to its twin), and
both tables go wrong the same way. ade-bench's hand-made f1006 is this shape (`max(points)` made
`sum(points)` in constructor_points and driver_points), and blind reviewers took such multi-file
changes for a person's work far more often than any one-line edit.

Two sites are "the same edit" when the lines they touch read the same before and after the edit,
once table qualifiers, case and spacing are set aside (`max(cs.points) as total_points` and
`max(ds.points) as total_points`). A one-keyword site (`left` -> `inner`) therefore only pairs when
its whole line matches too. Neither model may be upstream of the other: then each graded table
shows one model's change, and a fix of one file alone fails. The two must be twins (`parallel`):
one layer, and a name word or a parent model in common.

Pure functions: the caller gives the models' raw SQL and rewrite sites (`proposals` builds the
candidates)."""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Iterable

from adegen.core.graph import ProjectGraph
from adegen.discover.layers import prefix_hit
from adegen.rewrite.engine import Site, apply_site

# patterns whose edit is no mistake a person repeats in a sibling file: a ref or source pointed
# elsewhere, a materialization or incremental setting (config, not a line of SQL logic)
EXCLUDED_FAMILIES = frozenset({"dag-ref", "incremental", "config-materialization"})
PAIRS_PER_PATTERN = 4
MAX_PAIRS = 16
GROUP_MODELS = 4  # models of one edit paired among themselves (a folder-wide replace touches many)
# beyond this many own models, pairing would compute every model's sites (quadratic in models):
# large projects get single-file bugs only
MAX_MODELS = 400

_QUALIFIER = re.compile(r"\b[a-z_][a-z0-9_]*\.(?=[a-z_\"`])")
_WORD = re.compile(r"[a-z_][a-z0-9_]*")
_SQL_WORDS = frozenset("""select from where and or not in is null as on join left right inner full outer
cross group by order having case when then else end sum count min max avg distinct coalesce nullif
cast true false union all between like lower upper trim desc asc over partition row_number rank lag
lead date timestamp interval limit with""".split())


@dataclass(frozen=True)
class Companion:
    """The same edit in a sibling model: what a pair-site changes besides its own model."""

    model: str
    unique_id: str
    path: str
    raw: str
    site: Site


def eligible(pattern) -> bool:
    """Whether a pattern's edit may be repeated in a sibling model (the caller also leaves out the
    last-resort one-token swaps: `proposals.is_last_resort`)."""
    return str(getattr(pattern, "family", "") or "") not in EXCLUDED_FAMILIES


def _lines(raw: str, start: int, end: int) -> tuple[int, int]:
    a = raw.rfind("\n", 0, start) + 1
    b = raw.find("\n", end)
    return a, len(raw) if b == -1 else b


def _norm(text: str) -> str:
    text = re.sub(r"\s+", " ", text.lower()).strip()
    return _QUALIFIER.sub("", text)


def edit_key(raw: str, site: Site) -> tuple[str, str] | None:
    """The lines a site touches, before and after its edit, normalised; None when they hold no
    name of the model's own (only keywords and punctuation: `end,` pairs with anything)."""
    a, b = _lines(raw, site.start, site.end)
    before = raw[a:b]
    after = raw[a:site.start] + site.after + raw[site.end:b]
    nb, na = _norm(before), _norm(after)
    if not any(w not in _SQL_WORDS for w in _WORD.findall(re.sub(r"'[^']*'", " ", nb))) and "'" not in nb:
        return None
    return nb, na


def related(a: dict, b: dict, graph: ProjectGraph) -> bool:
    """One model is upstream of the other."""
    return b["unique_id"] in graph.descendants(a["unique_id"]) or a["unique_id"] in graph.descendants(b["unique_id"])


def _name_words(name: str) -> set[str]:
    """The words of a model name past its layer prefix, singular (`fct_orders` -> {"order"})."""
    hit = prefix_hit(name)
    rest = name.lower()[len(hit[0]):] if hit else name.lower()
    return {w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
            for w in re.split(r"[^a-z0-9]+", rest) if len(w) > 2}


def parallel(a: dict, b: dict, graph: ProjectGraph) -> bool:
    """Two models a person edits as twins: one layer, and a word of their names in common past the
    prefix (`constructor_points` / `driver_points`, `stg_orders_eu` / `stg_orders_us`) or a model
    both read. Blind reviewers took the same edit in two unrelated models (a customer dimension and
    a marketing report) for a made-up slip: nobody pastes one line into both."""
    if a.get("layer") != b.get("layer"):
        return False
    if _name_words(a["name"]) & _name_words(b["name"]):
        return True
    shared = set(graph.parents(a["unique_id"])) & set(graph.parents(b["unique_id"]))
    return any(d.startswith("model.") for d in shared)


def pair_sites(pattern, models: Iterable[tuple[dict, str, list[Site]]],
               graph: ProjectGraph) -> list[tuple[dict, str, Site]]:
    """(model, raw, pair-site) for the pattern: the first model's site carrying the sibling's as its
    companion. `models`: (discovery model, raw SQL, the pattern's sites there), in ranking order.
    Every pair of twins among the first GROUP_MODELS models that take one edit (which pair shows on
    the data is only known once screened), at most PAIRS_PER_PATTERN."""
    if not eligible(pattern):
        return []
    by_key: dict[tuple[str, str], list[tuple[dict, str, Site]]] = {}
    for model, raw, sites in models:
        for site in sites:
            key = edit_key(raw, site)
            if key is None:
                continue
            group = by_key.setdefault(key, [])
            if all(g[0]["unique_id"] != model["unique_id"] for g in group):
                group.append((model, raw, site))
    pairs = []
    for g, group in enumerate(by_key.values()):
        group = group[:GROUP_MODELS]
        for i, (ma, raw_a, sa) in enumerate(group):
            for j, (mb, raw_b, sb) in enumerate(group[i + 1:], i + 1):
                if not related(ma, mb, graph) and parallel(ma, mb, graph):
                    pairs.append(((g, i, j), ma, raw_a, sa, mb, raw_b, sb))
    out: list[tuple[dict, str, Site]] = []
    for _order, ma, raw_a, sa, mb, raw_b, sb in sorted(pairs, key=lambda x: x[0])[:PAIRS_PER_PATTERN]:
        comp = Companion(mb["name"], mb["unique_id"], mb["path"], raw_b, sb)
        out.append((ma, raw_a, dataclasses.replace(sa, companions=(comp,))))
    return out


def companions_of(site) -> tuple:
    return tuple(getattr(site, "companions", ()) or ())


def changed_files(site) -> tuple[tuple[str, str, str], ...]:
    """(unique_id, path, mutated text) of every sibling model a pair-site changes besides its own."""
    return tuple((c.unique_id, c.path, apply_site(c.raw, c.site)) for c in companions_of(site))


def key_suffix(site) -> str:
    """What tells a pair-site from its own model's single site in a stable key ("" for a single)."""
    comps = companions_of(site)
    return "" if not comps else "+" + ",".join(f"{c.unique_id}#{c.site.index}" for c in comps)


def _usable(f: dict) -> bool:
    return (not f.get("error") and not f.get("columns_missing") and int(f.get("rows_differing") or 0) > 0)


def side_tables(obs, discovery: dict, a: dict, b: dict) -> tuple[str, str] | None:
    """The table each side of a pair is reported (and graded) on: for a model outside the marts,
    the nearest changed mart only that model feeds, else the model's own table when it changed.
    None when either side shows nothing of its own: a fix of one file alone would then pass."""
    if obs is None or getattr(obs, "build_error", False):
        return None
    details = getattr(obs, "details", None) or {}
    if details.get("relation_kind"):
        return None
    changed = {str(f["table"]): f for f in details.get("tables") or [] if _usable(f)}
    graph = ProjectGraph.from_discovery(discovery)
    by_uid = {m["unique_id"]: m for m in discovery.get("models", [])}

    def side(x: dict, y: dict) -> str | None:
        mine = {x["unique_id"]} | graph.descendants(x["unique_id"])
        theirs = {y["unique_id"]} | graph.descendants(y["unique_id"])
        only = [by_uid[u] for u in mine - theirs if u in by_uid and by_uid[u]["name"] in changed]
        marts = [m for m in only if m.get("layer") == "marts" and m["unique_id"] != x["unique_id"]]
        if x.get("layer") != "marts" and marts:
            return min(marts, key=lambda m: (int(changed[m["name"]].get("distance") or 0), m["name"]))["name"]
        return x["name"] if x["name"] in changed else None

    ta, tb = side(a, b), side(b, a)
    return None if ta is None or tb is None or ta == tb else (ta, tb)


def is_pair(c) -> bool:
    """A candidate whose one mistake spans sibling models. Never computes a lazy candidate's
    sites: pairs are built with theirs. A multi-file diff (propose.diffs) is none: its files
    need not be twins."""
    sites = getattr(c, "_sites", None) if getattr(c, "lazy", None) is None else None
    return bool(sites) and bool(companions_of(sites[0])) and getattr(c, "origin", None) is None
