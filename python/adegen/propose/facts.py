"""What a proposal says about its candidate: difficulty, the table to compare and the models between,
the column the symptom names, tags, why the model, novelty against existing tasks, assertion context.
Pure functions over discovery entries, catalog patterns and screening observations."""
from __future__ import annotations

from adegen.core.graph import ProjectGraph
from adegen.propose.ranking import transitive_downstream as _downstream
from adegen.discover.survey import Survey

DIFFICULTIES = ["easy", "medium", "hard"]


def difficulty_for(pattern, model: dict, obs=None, compared_distance: int = 0) -> str:
    base = str(getattr(pattern, "difficulty", "medium") or "medium")
    level = DIFFICULTIES.index(base) if base in DIFFICULTIES else 1
    lines = int(model.get("line_count", 0) or 0)
    cx = int(model.get("complexity", 0) or 0)
    if lines < 12 or cx <= 2:
        level = min(level, 0)
    elif lines < 30 or cx < 6:
        level = min(level, 1)
    elif cx >= 14 and _downstream(model) >= 2:
        level = max(level, 1)
    if obs is not None:
        if getattr(obs, "build_error", False):
            level = 0
        else:
            total = int(getattr(obs, "rows_total", 0) or 0)
            diff = int(getattr(obs, "rows_differing", 0) or 0)
            if total and diff and diff / total < 0.05:
                level = min(level + 1, 2)
            if compared_distance >= 2:
                level = min(level + 1, 2)
    return DIFFICULTIES[level]


def models_between(discovery: dict, start_uid: str, end_name: str) -> list[str]:
    """Names of models on paths start -> end (inclusive), in DAG order; [start] if end == start."""
    models = {m["unique_id"]: m for m in discovery.get("models", [])}
    start = models.get(start_uid)
    if start is None:
        return [end_name]
    end = next((m for m in models.values() if m["name"] == end_name), None)
    if end is None or end["unique_id"] == start_uid:
        return [start["name"]]
    anc = ProjectGraph.from_models(models.values()).between(start_uid, end["unique_id"])
    keep = [models[u] for u in anc if u in models]
    keep.sort(key=lambda m: (int(m.get("depth", 0) or 0), m["name"]))
    return [m["name"] for m in keep]


def compared_table_for(model: dict, discovery: dict, obs=None) -> str | None:
    if obs is not None and getattr(obs, "compared_table", None):
        return str(obs.compared_table)
    if model.get("materialized") != "ephemeral":
        return model["name"]
    models = {m["unique_id"]: m for m in discovery.get("models", [])}
    for uid in model.get("downstream_models", []):
        child = models.get(uid)
        if child and child.get("materialized") != "ephemeral":
            return child["name"]
    return None


def assertion_context(model: dict, column: str | None, project_name: str) -> dict:
    return {
        "model": model["name"], "project_name": project_name, "column": column or "",
        "original_refs": list(model.get("refs", [])),
        "original_sources": [list(s) for s in model.get("sources", [])],
        "original_materialization": model.get("materialized", "table"),
    }


def pick_column(c, site, obs=None) -> str | None:
    """The column the symptom names: the rewrite's own placeholder, the columns the screening saw
    differ, a documented column on the changed text, or the alias the changed select item produces."""
    import re

    ph = getattr(site, "placeholders", None) or {}
    if ph.get("column"):
        return str(ph["column"])
    if obs is not None and getattr(obs, "columns_differ", None):
        return str(obs.columns_differ[0])
    cols = [str(x) for x in c.model.get("columns", [])]
    text = " ".join(str(x) for x in (getattr(site, "note", "") or "", site.before, site.after)).lower()
    for col in cols:
        if re.search(rf"\b{re.escape(col.lower())}\b", text):
            return col
    return item_alias(c.raw, site)


def item_alias(raw: str, site) -> str | None:
    """The alias the changed select item produces (`... as amount,` on the site's line), None when
    the line is not a select item."""
    import re

    line_start = raw.rfind("\n", 0, site.start) + 1
    line_end = raw.find("\n", site.end)
    line = raw[line_start: line_end if line_end != -1 else len(raw)]
    if not re.search(r"\b(from|join|on|where|using)\b", line, re.I):
        m = re.search(r"\bas\s+([A-Za-z_][A-Za-z0-9_]*)\s*,?\s*$", line.strip(), re.I)
        if m:
            return m.group(1)
    return None


FAMILY_TAGS = {"aggregat": "aggregation", "join": "join-logic", "filter": "filtering", "null": "data-hygiene",
               "dedup": "data-hygiene", "date": "dates", "window": "window-functions", "ref": "model-refactor",
               "cast": "data-types", "materializ": "dbt-materialization", "confusion": "column-confusion"}


def tags_for(pattern, project_name: str) -> list[str]:
    fam = str(getattr(pattern, "family", "") or "").lower()
    tags = ["dbt", "debugging"]
    for stem, tag in FAMILY_TAGS.items():
        if stem in fam and tag not in tags:
            tags.append(tag)
            break
    else:
        if fam:
            tags.append(fam.replace("_", "-"))
    tags.append(project_name)
    return tags


def why_model(m: dict, covered_by: str | None) -> str:
    bits = [f"{m.get('layer', 'other')} model"]
    feats = [f for f in m.get("features", []) if "join" in f]
    if feats:
        bits.append("joins (" + ", ".join(feats[:3]) + ")")
    dn = _downstream(m)
    if dn:
        bits.append(f"{dn} downstream model{'s' if dn != 1 else ''}")
    bits.append(f"complexity {m.get('complexity', 0)}, {m.get('line_count', 0)} lines")
    if covered_by:
        bits.append(f"already touched by {covered_by} (different mutation)")
    return "; ".join(bits)


def novelty_text(c, survey: Survey, project_name: str) -> tuple[str, str | None]:
    if not survey.tasks:
        return f"no overlap - first task for {project_name}", None
    same_model = [t for t in survey.tasks if c.name in t.models]
    if same_model:
        t = same_model[0]
        fams = sorted({ch.family or "unclassified" for ch in t.changes if ch.model == c.name})
        return (f"closest: {t.task_id} also touches {c.name} ({', '.join(fams)}); this one is a "
                f"{c.family} bug with a different symptom"), t.task_id
    same_fam = [t for t in survey.tasks if any(ch.family == c.family for ch in t.changes)]
    if same_fam:
        t = same_fam[0]
        return f"closest: {t.task_id} ({c.family} on {', '.join(sorted(t.models)) or '?'}); different model", t.task_id
    t = survey.tasks[0]
    return f"no overlap: no existing task touches {c.name} or the {c.family} family (closest {t.task_id})", t.task_id
