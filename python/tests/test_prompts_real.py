"""Prompts from real screenings (dbt + DuckDB on the shopfix fixture): every table a prompt names
differs in the broken state, the hint levels follow what the data shows downstream, structure and
build problems are reported on the model, and no two prompts of the run are equal."""
from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from adegen import prompts
from adegen.discover.project import load_project
from adegen.backends import ValidatorSetup, make_validator

PROJECT = Path(__file__).resolve().parent / "fixtures" / "shopfix"
MODELS = ("stg_orders", "stg_customers", "fct_orders", "customer_revenue", "order_statuses", "fct_order_events")


def text(path):
    return (PROJECT / path).read_text()


def pat(pid, symptom, difficulty="medium", family="x"):
    return SimpleNamespace(id=pid, name=pid.replace("_", " "), family=family, symptom=symptom, difficulty=difficulty)


def site(before, after):
    return SimpleNamespace(before=before, after=after, line=3, placeholders={})


CASES = {
    # name: (model, path, before, after, pattern, materialized)
    "downstream": ("stg_orders", "models/staging/stg_orders.sql", "amount,", "amount * 2 as amount,",
                   pat("arith", "values_too_high"), "view"),
    "single": ("customer_revenue", "models/marts/customer_revenue.sql", "sum(amount)", "max(amount)",
               pat("sum_to_max", "values_too_low"), "table"),
    "rows": ("customer_revenue", "models/marts/customer_revenue.sql", "where status != 'cancelled'",
             "where status = 'complete'", pat("where_changed", "rows_missing"), "table"),
    "build": ("stg_orders", "models/staging/stg_orders.sql", "amount,", "amout,",
              pat("typo", "build_error"), "view"),
    "materialization": ("stg_customers", "models/staging/stg_customers.sql", "select",
                        "{{ config(materialized='table') }}\nselect",
                        pat("materialization_changed", "structure_wrong", family="config-materialization"), "view"),
}


@pytest.fixture(scope="module")
def screened(tmp_path_factory):
    v = make_validator(load_project(PROJECT), ValidatorSetup(tmp_path_factory.mktemp("prompts"), jobs=1))
    try:
        v.baseline()
        items = []
        for model, path, before, after, pattern, _ in CASES.values():
            src = text(path)
            assert before in src
            items.append((f"model.shopfix.{model}", path, src.replace(before, after, 1), pattern))
        return dict(zip(CASES, v.screen_many(items)))
    finally:
        v.close()


@pytest.fixture(scope="module")
def written(screened):
    out, avoid = {}, set()
    for name, (model, path, before, after, pattern, mat) in CASES.items():
        o = screened[name]
        assert o.observable, (name, o.reason)
        req = prompts.PromptRequest(seed=f"shopfix:{name}", model=model, project_name="shopfix", pattern=pattern,
                                    site=site(before, after), model_path=path, observation=o,
                                    table=o.compared_table, model_materialized=mat, project_models=MODELS,
                                    layer="staging" if "staging" in path else "marts", convention=True,
                                    avoid=frozenset(avoid))
        ps = prompts.write_prompts(req)
        assert ps.base, (name, ps.rejected[:3])
        avoid |= set(ps.prompts.values())
        out[name] = (req, ps, o)
    return out


def test_every_named_table_differs_in_the_broken_state(written):
    for name, (req, ps, o) in written.items():
        assert set(ps.tables) <= set(o.changed_tables), name
        for key, t in ps.prompts.items():
            named = prompts.checks.names_in(t, MODELS)
            assert set(named) <= set(o.changed_tables), (name, key, t)
            assert set(named) <= set(ps.tables), (name, key, t)


def test_every_key_passes_the_checks(written):
    for name, (req, ps, o) in written.items():
        for key, t in ps.prompts.items():
            assert not prompts.leaks(t, site=req.site, pattern=req.pattern, model_path=req.model_path,
                                     allowed={req.model, *o.changed_tables, "amount", "total_amount"}
                                     | ({"table", "view", "materialized"} if name == "materialization" else set())
                                     | ({"amout"} if name == "build" else set())), (name, key, t)
            assert not prompts.tool_words(t), (name, key, t)
            assert not re.search(r"intact build|oracle|column\(s\)|\b1 rows\b", t), (name, key, t)


def test_no_two_prompts_of_the_run_are_equal(written):
    texts = [t for _, ps, _ in written.values() for t in ps.prompts.values()]
    assert len(texts) == len({" ".join(t.lower().split()) for t in texts})


def test_levels_follow_the_downstream_change(written):
    req, ps, o = written["downstream"]
    assert o.changed_tables == {"stg_orders": 0, "fct_orders": 1, "customer_revenue": 2}
    assert list(ps.prompts) == ["base", "medium", "hard"]
    assert ps.named["base"] == ["stg_orders"] and ps.named["medium"] == ["fct_orders"]
    assert "customer_revenue" in ps.named["hard"]
    for name in ("single", "rows", "build", "materialization"):
        _, ps, o = written[name]
        assert "hard" not in ps.prompts, name  # nothing changed downstream: no hard key


def test_concrete_observation_in_base(written):
    """The base names the table and says which way it is wrong: a value now and what it should
    be, or in words (sum -> max makes the revenue too low)."""
    _, ps, _ = written["single"]
    assert "customer_revenue" in ps.base and re.search(r"\d|low|short|down|understat|drag", ps.base), ps.base
    _, ps, _ = written["rows"]
    assert "customer_revenue" in ps.base


def test_build_error_and_materialization_on_the_model(written):
    _, ps, o = written["build"]
    assert o.build_error and "amout" in ps.base and ps.tables == ["stg_orders"]
    _, ps, o = written["materialization"]
    assert o.details["relation_kind"] == {"table": "stg_customers", "intact": "view", "broken": "table"}
    # reported by what readers notice (slowness), never the object kinds: naming them states the fix
    assert ps.tables == ["stg_customers"] and "slow" in ps.base.lower()
    assert not {"view", "table", "materialized"} & set(re.findall(r"[a-z]+", ps.base.lower()))
