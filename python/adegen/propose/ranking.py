"""The one ranking of task candidates: how promising a model is as the target of a bug.

This module is the definition. Its twin is the dbt macro `ade_rank_candidates`
(macros/discover/), which ranks the discovery summary's top candidates with the same formula and
the same constants (generated into `ade_lexer()` by `adegen catalog-macros`);
`proposals.score` adds the survey penalties to it. A test checks that the macro and the build
order the example project's models identically.

Points (integers, so the macro and Python agree exactly):

    score = JOIN * has_join + DOWNSTREAM * min(downstream.transitive, DOWNSTREAM_CAP)
          + LAYER * LAYER_WEIGHT[layer] + min(complexity, COMPLEXITY_CAP)
          + INPUTS * min(len(refs) + len(sources), INPUTS_CAP)

A join is where realistic bugs hide; downstream models make a symptom travel; marts and
intermediate models are what users look at; complexity and inputs give the bug room. Order:
higher score first, then name, then unique_id."""
from __future__ import annotations

LAYER_WEIGHT = {"marts": 3, "intermediate": 3, "other": 1, "staging": 0}
DEFAULT_LAYER = "other"  # weight of a layer label not in LAYER_WEIGHT
JOIN = 16
DOWNSTREAM = 4
DOWNSTREAM_CAP = 6
LAYER = 4
COMPLEXITY_CAP = 20
INPUTS = 2
INPUTS_CAP = 4
POINTS_PER_UNIT = 4  # one "unit" of the selection's spread penalties (proposals.select)


def has_join(model: dict) -> bool:
    return any("join" in str(f) for f in model.get("features", []))


def transitive_downstream(model: dict) -> int:
    d = model.get("downstream") or {}
    return int(d.get("transitive", 0) or 0) if isinstance(d, dict) else 0


def layer_weight(layer: str | None) -> int:
    return LAYER_WEIGHT.get(str(layer or DEFAULT_LAYER), LAYER_WEIGHT[DEFAULT_LAYER])


def model_score(model: dict) -> int:
    """The model's points (see the module docstring); a discovery model entry."""
    inputs = len(model.get("refs", [])) + len(model.get("sources", []))
    return (JOIN * has_join(model) + DOWNSTREAM * min(transitive_downstream(model), DOWNSTREAM_CAP)
            + LAYER * layer_weight(model.get("layer")) + min(int(model.get("complexity", 0) or 0), COMPLEXITY_CAP)
            + INPUTS * min(inputs, INPUTS_CAP))


def order_key(model: dict) -> tuple:
    return (-model_score(model), str(model.get("name", "")), str(model.get("unique_id", "")))


def rank_models(models: list[dict], top_n: int | None = None) -> list[dict]:
    """Models with at least one matched pattern, best first (what the macro's `candidates` lists)."""
    ranked = sorted((m for m in models if m.get("matched_patterns")), key=order_key)
    return ranked if top_n is None else ranked[:top_n]


def to_macro_dict() -> dict:
    """The constants as the generated `ade_lexer()` macro carries them."""
    return {"layer_weight": dict(LAYER_WEIGHT), "default_layer": DEFAULT_LAYER, "join": JOIN,
            "downstream": DOWNSTREAM, "downstream_cap": DOWNSTREAM_CAP, "layer": LAYER,
            "complexity_cap": COMPLEXITY_CAP, "inputs": INPUTS, "inputs_cap": INPUTS_CAP}
