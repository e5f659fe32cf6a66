"""Phase 1: survey the tasks that already exist for this project, in ade-bench's `tasks/` (where
ade-bench is: `ade_bench`) and the output's.

Patches found here are only ever parsed (unidiff), never applied; a patch whose paths escape the
project root (absolute, `..`) is rejected."""
from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import yaml

from adegen.sql import lexer
from adegen.adebench.install import AdeBench
from adegen.rewrite.names import related_names

# ---------------------------------------------------------------------------------------------
# existing tasks


@dataclass
class PatchChange:
    file: str  # path relative to the project root
    start: int
    end: int
    before: str
    after: str
    family: str | None  # catalog family, None when not recognisable

    @property
    def model(self) -> str | None:
        p = PurePosixPath(self.file)
        return p.stem if p.suffix == ".sql" else None

    def summary(self) -> str:
        rng = f"L{self.start}" if self.start == self.end else f"L{self.start}-{self.end}"
        return f"{PurePosixPath(self.file).name} {rng}: {self.before} -> {self.after}"


@dataclass
class ExistingTask:
    task_id: str
    task_dir: Path
    location: str  # "ade-bench" or "output"
    description: str
    prompt: str
    tags: list[str]
    difficulty: str
    changes: list[PatchChange] = field(default_factory=list)
    patch_problem: str | None = None
    seed_tables: list[str] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)  # every prompt level's text ([prompt] when read as one)

    @property
    def models(self) -> set[str]:
        return {c.model for c in self.changes if c.model}

    @property
    def pairs(self) -> set[tuple[str, str]]:
        return {(c.model, c.family) for c in self.changes if c.model and c.family}

    @property
    def unclassified_models(self) -> set[str]:
        return {c.model for c in self.changes if c.model and not c.family}

    def brief_line(self) -> str:
        prompt = " ".join(self.prompt.split())
        if len(prompt) > 70:
            prompt = prompt[:67].rstrip() + "..."
        if self.changes:
            detail = "; ".join(c.summary() + (f" [{c.family}]" if c.family else "") for c in self.changes[:3])
            if len(self.changes) > 3:
                detail += f"; +{len(self.changes) - 3} more"
        else:
            detail = self.patch_problem or "no setup patch"
        return f"- {self.task_id} ({self.difficulty}): \"{prompt}\" | {detail}"


@dataclass
class Survey:
    project_name: str
    tasks: list[ExistingTask]
    warnings: list[str]
    locations: list[Path]
    highest_number: int  # highest NNN among <project_name>NNN dirs found (0 when none)

    def brief(self) -> str:
        if not self.tasks:
            return f"no existing tasks for {self.project_name}"
        lines = [f"Existing tasks for project {self.project_name} ({len(self.tasks)} found):"]
        lines += [t.brief_line() for t in self.tasks]
        return "\n".join(lines)

    @property
    def covered_pairs(self) -> dict[tuple[str, str], str]:
        out: dict[tuple[str, str], str] = {}
        for t in self.tasks:
            for pair in t.pairs:
                out.setdefault(pair, t.task_id)
        return out

    @property
    def covered_models(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for t in self.tasks:
            for m in t.models:
                out.setdefault(m, t.task_id)
        return out


def unsafe_patch_path(path: str) -> bool:
    p = path.strip()
    if not p or p == "/dev/null":
        return False
    if p.startswith("/") or p.startswith("\\") or re.match(r"^[A-Za-z]:", p):
        return True
    return any(part == ".." for part in re.split(r"[\\/]", p))


def _strip_prefix(path: str) -> str:
    if len(path) >= 2 and path[0] == path[-1] == '"':  # a C-quoted name (spaces etc., as GNU diff writes)
        import ast

        try:
            path = ast.literal_eval(path)
        except (ValueError, SyntaxError):
            path = path[1:-1]
    for pre in ("a/", "b/"):
        if path.startswith(pre):
            return path[len(pre):]
    return path


def _shorten(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def diff_excerpt(before: str, after: str) -> tuple[str, str]:
    """The differing middle of two snippets, widened to whole words ("max -> sum")."""
    b, a = " ".join(before.split()), " ".join(after.split())
    if not b or not a:
        return _shorten(b) or "(nothing)", _shorten(a) or "(removed)"
    i = 0
    while i < min(len(b), len(a)) and b[i] == a[i]:
        i += 1
    j = 0
    while j < min(len(b), len(a)) - i and b[len(b) - 1 - j] == a[len(a) - 1 - j]:
        j += 1
    word = re.compile(r"[A-Za-z0-9_]")
    while i > 0 and word.match(b[i - 1]):
        i -= 1
    bj, aj = len(b) - j, len(a) - j
    while bj < len(b) and word.match(b[bj]) and aj < len(a) and word.match(a[aj]):
        bj += 1
        aj += 1
    mid_b, mid_a = b[i:bj].strip(), a[i:aj].strip()
    if not mid_b:
        mid_b = "(nothing)"
    if not mid_a:
        mid_a = "(removed)"
    return _shorten(mid_b), _shorten(mid_a)


# Keyword hints for mutations no catalog pattern recognises; mapped onto catalog families by name.
FAMILY_HINTS: list[tuple[str, set[str]]] = [
    ("aggregation", {"sum", "max", "min", "avg", "count", "median", "any_value", "listagg", "array_agg"}),
    ("join", {"left", "right", "full", "inner", "outer", "cross", "join", "using"}),
    ("dedup", {"distinct", "qualify", "row_number", "rank", "dense_rank"}),
    ("null", {"coalesce", "ifnull", "nvl", "nullif", "null", "is"}),
    ("filter", {"where", "having", "and", "or", "not", "in", "between", "like", "ilike"}),
    ("comparison", {"<", ">", "<=", ">=", "=", "!=", "<>"}),
    ("case", {"case", "when", "then", "else", "iff"}),
    ("window", {"over", "partition", "lag", "lead", "rows", "preceding", "following"}),
    ("grouping", {"group", "by"}),
    ("date", {"date_trunc", "dateadd", "datediff", "interval", "date_add", "date_diff", "day", "month"}),
    ("cast", {"cast", "::", "try_cast", "round", "floor", "ceil", "trunc"}),
    ("arithmetic", {"+", "-", "*", "/", "%"}),
    ("union", {"union", "intersect", "except"}),
]
_HINT_ALIASES = {
    "aggregation": ("aggregat",), "join": ("join",), "dedup": ("dedup", "distinct", "duplicat"),
    "null": ("null", "coalesce"), "filter": ("filter", "where", "predicate"),
    "comparison": ("comparison", "operator", "boundary", "off_by_one", "filter"),
    "case": ("case", "condition", "logic"), "window": ("window",), "grouping": ("group", "grain"),
    "date": ("date", "time"), "cast": ("cast", "type", "precision", "round"),
    "arithmetic": ("arithmetic", "calculation", "math"), "union": ("union", "set"),
    "ref": ("ref", "lineage", "source"), "column": ("projection", "column", "missing", "removed"),
    "confusion": ("confusion",),
}


def _catalog_families(catalog) -> list[str]:
    fams: list[str] = []
    for p in getattr(catalog, "patterns", []) or []:
        f = getattr(p, "family", None)
        if f and f not in fams:
            fams.append(f)
    return fams


def _map_hint(hint: str, families: list[str]) -> str:
    if not families:
        return hint
    if hint in families:
        return hint
    for stem in _HINT_ALIASES.get(hint, (hint,)):
        for fam in families:
            if stem in fam.lower():
                return fam
    return hint


def classify_change(before: str, after: str, catalog=None) -> str | None:
    """Catalog family of one hunk's mutation (removed text -> added text), None if not recognisable."""
    bt, at = Counter(lexer.token_texts(before)), Counter(lexer.token_texts(after))
    families = _catalog_families(catalog)
    # 1. the catalog itself: a pattern whose trigger sequence count changed between the two sides
    scores: Counter = Counter()
    for p in getattr(catalog, "patterns", []) or []:
        for seq in getattr(p, "applies_when", ()) or ():
            seq = list(seq)
            if not seq or seq in (["{{"], ["''"]):
                continue
            nb = _count_seq(lexer.token_texts(before), seq)
            na = _count_seq(lexer.token_texts(after), seq)
            if nb != na:
                scores[p.family] += len(seq) * abs(nb - na)
    removed = set((bt - at).keys())
    added = set((at - bt).keys())
    changed = removed | added
    # 2. ref()/source() swaps hide inside Jinja expressions
    jb = re.findall(r"\b(ref|source)\s*\(([^)]*)\)", before)
    ja = re.findall(r"\b(ref|source)\s*\(([^)]*)\)", after)
    if jb and ja and Counter(jb) != Counter(ja) and not (changed - {"{{"}):
        return _map_hint("ref", families)
    if scores:
        return scores.most_common(1)[0][0]
    if len(removed) == 1 and len(added) == 1 and related_names(*removed, *added):
        return _map_hint("confusion", families)  # one column read for a similar one (created_at/updated_at)
    for hint, words in FAMILY_HINTS:
        if changed & words:
            return _map_hint(hint, families)
    if removed and not added and not after.strip():
        return _map_hint("column", families) if families and any(
            s in f.lower() for f in families for s in _HINT_ALIASES["column"]) else None
    return None


def _count_seq(tokens: list[str], seq: list[str]) -> int:
    n = len(seq)
    return sum(1 for i in range(len(tokens) - n + 1) if tokens[i : i + n] == seq)


def summarise_patch(patch_bytes: bytes, catalog=None) -> tuple[list[PatchChange], str | None]:
    """One PatchChange per hunk group of changed lines; (changes, problem) - problem set when the
    patch cannot be read or a path escapes the root (then no changes are returned)."""
    from unidiff import PatchSet
    from unidiff.errors import UnidiffParseError

    text = patch_bytes.decode("utf-8", errors="replace")
    try:
        ps = PatchSet(text.splitlines(keepends=True))
    except (UnidiffParseError, Exception) as exc:  # unidiff raises a few types
        return [], f"unreadable patch ({exc.__class__.__name__}: {exc})"
    changes: list[PatchChange] = []
    for pf in ps:
        for raw in (pf.source_file, pf.target_file):
            if raw and unsafe_patch_path(_strip_prefix(raw)):
                return [], f"patch rejected: path escapes the project root ({raw})"
        path = _strip_prefix(pf.target_file if pf.target_file != "/dev/null" else pf.source_file)
        for hunk in pf:
            # split each hunk into runs of consecutive changed lines
            runs: list[list] = []
            cur: list = []
            for line in hunk:
                if line.is_context:
                    if cur:
                        runs.append(cur)
                        cur = []
                else:
                    cur.append(line)
            if cur:
                runs.append(cur)
            for run in runs:
                rem = [l for l in run if l.is_removed]
                add = [l for l in run if l.is_added]
                before = "".join(l.value for l in rem)
                after = "".join(l.value for l in add)
                nums = [l.source_line_no for l in rem if l.source_line_no] or \
                       [l.target_line_no for l in add if l.target_line_no] or [hunk.source_start]
                b, a = diff_excerpt(before, after)
                changes.append(PatchChange(path, min(nums), max(nums), b, a,
                                           classify_change(before, after, catalog)))
    return changes, None


def _task_number(task_id: str, project_name: str) -> int | None:
    m = re.fullmatch(re.escape(project_name) + r"(\d{3,})", task_id)
    return int(m.group(1)) if m else None


def survey(locations: list[tuple[str, Path]], project_name: str, catalog=None) -> Survey:
    """Read every `*/task.yaml` under each location (label, tasks dir); keep the project's tasks."""
    tasks: list[ExistingTask] = []
    warnings: list[str] = []
    highest = 0
    scanned: list[Path] = []
    for label, root in locations:
        if root is None or not root.is_dir():
            continue
        scanned.append(root)
        for d in sorted(root.iterdir()):
            if not d.is_dir() or d.name.startswith("."):
                continue
            n = _task_number(d.name, project_name)
            if n is not None:
                highest = max(highest, n)
            ty = d / "task.yaml"
            if not ty.is_file():
                continue
            try:
                data = yaml.safe_load(ty.read_text(encoding="utf-8"))
                if not isinstance(data, dict):
                    raise ValueError("top level is not a mapping")
            except Exception as exc:  # noqa: BLE001 - any unreadable file is skipped
                warnings.append(f"skipped {ty}: {str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__}")
                continue
            variants = data.get("variants") or []
            if not isinstance(variants, list) or not any(
                    isinstance(v, dict) and v.get("project_name") == project_name for v in variants):
                continue
            tid = str(data.get("task_id") or d.name)
            n = _task_number(tid, project_name)
            if n is not None:
                highest = max(highest, n)
            prompts = data.get("prompts") or []
            texts = [str(p.get("prompt") or "") for p in prompts if isinstance(p, dict)] \
                if isinstance(prompts, list) else []
            prompt = texts[0] if texts else ""
            seeds = []
            for s in data.get("solution_seeds") or []:
                if isinstance(s, dict) and s.get("table_name"):
                    seeds.append(str(s["table_name"]))
                elif isinstance(s, str):
                    seeds.append(s)
            tags = data.get("tags") or []
            task = ExistingTask(
                task_id=tid, task_dir=d, location=label, description=str(data.get("description") or ""),
                prompt=prompt, tags=[str(t) for t in tags] if isinstance(tags, list) else [],
                difficulty=str(data.get("difficulty") or "unknown"), seed_tables=seeds, prompts=texts,
            )
            patches = sorted((d / "setup").glob("changes*.patch")) if (d / "setup").is_dir() else []
            problems = []
            for pf in patches:
                try:
                    changes, problem = summarise_patch(pf.read_bytes(), catalog)
                except OSError as exc:
                    changes, problem = [], f"unreadable patch ({exc})"
                task.changes.extend(changes)
                if problem:
                    problems.append(f"{pf.name}: {problem}")
                    warnings.append(f"{task.task_id}: {pf.name}: {problem}")
            task.patch_problem = "; ".join(problems) or None
            tasks.append(task)
    tasks.sort(key=lambda t: (_task_number(t.task_id, project_name) or 0, t.task_id))
    return Survey(project_name, tasks, warnings, scanned, highest)


def task_locations(ade: AdeBench, output_dir: Path) -> list[tuple[str, Path]]:
    locs: list[tuple[str, Path]] = []
    if ade.found and ade.tasks_dir is not None:
        locs.append(("ade-bench", ade.tasks_dir))
    out_tasks = output_dir / "tasks"
    if not any(os.path.realpath(p) == os.path.realpath(out_tasks) for _, p in locs):
        locs.append(("output", out_tasks))
    return locs
