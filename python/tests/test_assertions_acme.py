"""All seven assertion types rendered against the example project (integration_tests, `acme`)
and run there, on a scratch copy, the way the harness runs them: every one passes."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from adegen.tasks import assertions
from adegen.core import paths

ACME = paths.package_root() / "integration_tests"

pytestmark = pytest.mark.skipif(
    not (ACME / "dbt_project.yml").is_file() or not any((ACME / "models").rglob("*.sql")),
    reason="integration_tests has no models yet")


def _dbt(project: Path, *args: str):
    from dbt.cli.main import dbtRunner

    return dbtRunner().invoke([*args, "--project-dir", str(project), "--profiles-dir", str(project),
                               "--no-partial-parse", "--no-send-anonymous-usage-stats", "--no-use-colors",
                               "--log-level", "none", "--log-level-file", "none"])


def _pick(manifest: dict, project_name: str) -> dict:
    models = sorted((n for n in manifest["nodes"].values()
                     if n["resource_type"] == "model" and n["package_name"] == project_name),
                    key=lambda n: n["name"])
    names = {n["name"] for n in models}

    def refs(n):
        return sorted({r["name"] for r in n["refs"]})

    multi = next(n for n in models if len([r for r in refs(n) if r in names]) >= 2
                 and n["config"]["materialized"] == "table")
    sourced = next(n for n in models if n["sources"])
    other = next(m for m in sorted(names) if m not in refs(multi) and m != multi["name"])
    return {"multi": multi["name"], "multi_refs": refs(multi), "forbidden": other,
            "sourced": sourced["name"], "sources": sorted(sourced["sources"]),
            "materialized": multi["config"]["materialized"]}


def test_all_seven_pass_on_acme(tmp_path):
    project_name = yaml.safe_load((ACME / "dbt_project.yml").read_text())["name"]
    profile = yaml.safe_load((ACME / "dbt_project.yml").read_text())["profile"]
    proj = assertions.prepare_scratch_project(ACME, tmp_path / "acme")
    (proj / "profiles.yml").write_text(yaml.safe_dump({profile: {"target": "dev", "outputs": {"dev": {
        "type": "duckdb", "path": str(proj / "acme.duckdb"), "schema": "main", "threads": 1}}}}))
    shutil.rmtree(proj / "tests", ignore_errors=True)  # the harness deletes the project's own tests
    (proj / "tests").mkdir()

    assert _dbt(proj, "seed").success  # also writes target/manifest.json
    facts = _pick(json.loads((proj / "target" / "manifest.json").read_text()), project_name)
    assert _dbt(proj, "run", "--select", f"+{facts['multi']}", f"+{facts['sourced']}").success
    show = _dbt(proj, "show", "--limit", "1", "--inline",
                "select column_name from information_schema.columns "
                f"where lower(table_name) = lower('{facts['multi']}') order by ordinal_position desc")
    assert show.success, show.exception
    column = show.result.results[0].agate_table.rows[0][0]

    m = facts["multi"]
    entries = [
        {"type": "refs_must_include", "args": {"model": m, "expected": facts["multi_refs"]}},
        {"type": "refs_must_match_exactly", "args": {"model": m, "expected": facts["multi_refs"]}},
        {"type": "refs_must_not_include", "args": {"model": m, "forbidden": [facts["forbidden"]]}},
        {"type": "sources_must_include", "args": {"model": facts["sourced"], "expected": facts["sources"]}},
        {"type": "materialization_must_be", "args": {"model": m, "expected": facts["materialized"]}},
        {"type": "column_must_exist", "args": {"model": m, "column": column}},
        {"type": "model_must_exist", "args": {"model": m}},
    ]
    rendered = assertions.render_assertions(ACME, project_name, entries)  # on its own scratch copy
    names = []
    for purpose, sql in rendered:
        name = f"{project_name}001_{purpose}"[:55]
        (proj / "tests" / f"{name}.sql").write_text(sql, encoding="utf-8")
        names.append(name)

    res = _dbt(proj, "test", "--select", "test_type:singular")
    statuses = {r.node.name: str(r.status) for r in res.result.results}
    assert statuses == {n: "pass" for n in names}, facts
