"""Every data precondition of adegen/realism (CHECKS) admits the candidate where the data (or the
DAG) makes the edit a real bug and rejects it where the same edit changes nothing that matters: the
cases of fixtures/realism_cases.yaml, each on its own tiny DuckDB file, SQL written as dbt compiles
it, each edit the one its pattern makes. locate and the probes: test_realism_locate.py."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from realism_kit import graph, measure, shop, swap, table_statements

from adegen.realism import CHECKS

SPEC = yaml.safe_load((Path(__file__).parent / "fixtures" / "realism_cases.yaml").read_text())


def _name(case: dict) -> str:
    return case["name"]


@pytest.mark.parametrize("case", SPEC["cases"], ids=_name)
def test_data_precondition(tmp_path, case):
    db = shop(tmp_path, *table_statements(case["data"], SPEC["tables"]))
    intact = SPEC["models"][case["sql"]]
    v = measure(case["check"], db, intact, swap(intact, *case["edit"]))
    assert (v.holds, v.fact[:len(case["fact"])]) == (case["holds"], case["fact"]), v
    assert v.numbers == case.get("numbers", v.numbers), v


def model(layer: str = "intermediate", readers: tuple = (), materialized: str = "table") -> dict:
    """A discovery entry: the model `x` of project `shop`, read by the models named in `readers`."""
    return {"unique_id": "model.shop.x", "name": "x", "layer": layer, "materialized": materialized,
            "downstream_models": [f"model.shop.{r}" for r in readers]}


@pytest.mark.parametrize("case", SPEC["graph"], ids=_name)
def test_graph_precondition(case):
    raw = {f"model.shop.{k}": v for k, v in SPEC["raw"].items()}
    v = graph(case["check"], model(**case["model"]), case.get("placeholders"), raw)
    assert (v.holds, v.fact[:len(case["fact"])]) == (case["holds"], case["fact"]), v


# checks whose holds/fails cases are written against their operators' own mutants, in
# test_realism_new_checks.py (a join filter moved to the WHERE, a unit conversion dropped, labels
# re-spelled as the source upstream writes them)
ELSEWHERE = {"outer_rows_filtered", "unit_named", "spelling_upstream", "direction_unnamed"}


def test_every_check_admits_and_rejects_a_case():
    seen = {(c["check"], c["holds"]) for c in SPEC["cases"] + SPEC["graph"]}
    assert sorted(n for n in CHECKS if n not in ELSEWHERE and not {(n, True), (n, False)} <= seen) == []
    text = (Path(__file__).parent / "test_realism_new_checks.py").read_text()
    for name in ELSEWHERE:
        assert f"def test_{name}_holds" in text and f"def test_{name}_fails" in text, name
    sql_checks = {c["check"] for c in SPEC["cases"]}
    assert sorted(n for n in sql_checks if not CHECKS[n]["needs_sql"]) == []
