"""The integration project (integration_tests/, `acme`) on one intact build (a module fixture): a
hand-made task proven end to end, and the join patterns' data preconditions measured on it.

About 15 s for the proof and 20 s for the preconditions on an idle 2-core machine (a 33-model
project, broken and solved trials; one dbt compile of the join candidates)."""
from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adegen.discover.project import load_project  # noqa: E402
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


@pytest.fixture(scope="module")
def acme_validator(tmp_path_factory):
    """A validator with the intact build of integration_tests (its baseline), shared by this module."""
    v = make_validator(load_project(ACME), ValidatorSetup(tmp_path_factory.mktemp("acme-work"), jobs=1))
    try:
        v.baseline()
        yield v
    finally:
        v.close()


def test_acme_handmade_task_proven(acme_validator, tmp_path):
    v = acme_validator
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


def test_join_preconditions_measured_on_the_acme_build(acme_validator, acme_discovery, tmp_path):
    """Compiled like a build does (proposals.compile_check), measured on the intact build
    (realism.measure_candidates): a left join whose lookup misses keys may become inner; an inner
    join that matches every row is no bug to widen, and says so with the count."""
    from adegen.propose import proposals as pp
    from adegen import realism
    from adegen.catalog.patterns import load_catalog
    from adegen.discover.survey import Survey

    scope = pp.Scope(ACME, "acme", "duckdb", acme_discovery, Survey("acme", [], [], [], 0))
    ids = ("wrong_join_type", "inner_join_to_left")
    cands = [c for c in pp.enumerate_candidates(scope, load_catalog())[0] if c.pattern.id in ids]
    pp.compile_check(load_project(ACME), cands, workdir=tmp_path)
    probe = realism.ProbeDB(Path(acme_validator.baseline_info()["baseline_db"]), None)
    try:
        realism.measure_candidates(cands, realism.MeasureRun(probe, acme_discovery, lambda uid: None))
    finally:
        probe.close()
    measured = {pid: [m for c in cands if c.pattern.id == pid for m in c.preconditions.values()] for pid in ids}
    admitted = [m.facts[0] for m in measured["wrong_join_type"] if m.failed is None]
    assert admitted and all(re.fullmatch(r"[1-9][\d,]* of [\d,]+ rows find no match in \w+", f) for f in admitted)
    rejected = [m.failed.fact for m in measured["inner_join_to_left"] if m.failed is not None and m.failed.holds is False]
    assert rejected and all(re.fullmatch(r"0 of [\d,]+ rows find no match in \w+", f) for f in rejected), rejected
