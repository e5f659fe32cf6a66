"""A hand-made task on the integration project (integration_tests/, `acme`) proven end to end.

About 15 s on an idle 2-core machine (a 33-model project, broken and solved trials)."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adegen.project import load_project  # noqa: E402
from adegen.backends import ValidatorSetup, make_validator  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
ACME = REPO / "integration_tests"
TASK = Path(__file__).resolve().parent / "fixtures" / "tasks" / "acme900"

pytestmark = pytest.mark.skipif(not (ACME / "dbt_project.yml").exists(),
                                reason="integration_tests/ (the example project) is missing")


def shipped_copy(dest: Path) -> Path:
    """The project as a task ships it: no local adegen package, profile at ./acme.duckdb."""
    shutil.copytree(ACME, dest, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages",
                                                              "*.duckdb", "*.duckdb.wal", "package-lock.yml"))
    pk = dest / "packages.yml"
    if pk.exists():
        data = yaml.safe_load(pk.read_text()) or {}
        pkgs = [p for p in data.get("packages") or [] if not (isinstance(p, dict) and "local" in p)]
        if pkgs:
            pk.write_text(yaml.safe_dump({"packages": pkgs}, sort_keys=False))
        else:
            pk.unlink()
    return dest


def test_acme_handmade_task_proven(tmp_path):
    v = make_validator(load_project(ACME), ValidatorSetup(tmp_path / "work", jobs=2))
    try:
        v.baseline()
        assert v.seed_based()
        path = "models/marts/rpt_top_products.sql"
        text = (ACME / path).read_text().replace("category_revenue_rank <= 3", "category_revenue_rank < 3")
        obs = v.screen("model.acme.rpt_top_products", path, text,
                       SimpleNamespace(id="lte_to_lt", symptom="rows_missing", difficulty="easy"))
        assert obs.observable and obs.compared_table == "rpt_top_products"
        assert obs.example and obs.example.startswith("rpt_top_products is missing")
        db = v.prepare_database(tmp_path / "db")
        project = shipped_copy(tmp_path / "projects" / "acme")
        task = tmp_path / "tasks" / "acme900"
        shutil.copytree(TASK, task)
        proof = v.prove(task, project, db)
        assert proof.ok, proof.detail
        assert proof.broken_fails and proof.solved_passes and proof.expected_tests == 2
        assert (task / "seeds" / "solution__rpt_top_products.csv").exists()
    finally:
        v.close()
