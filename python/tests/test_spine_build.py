"""Tables downstream of a month spine up to today are graded, and stay valid (issue 53): real dbt +
DuckDB on fixtures/spinefix (the MRR playbook: util_months from dbt_utils.date_spine up to
date_trunc('month', current_date), customer_revenue_by_month, customer_churn_month with a churn row
the month after, mrr with lag()). Every table reads the spine; lineage (adegen.dbt.clock_spine)
carries date_month into each, one month ahead from the churn row on, and the window ends at the
subscriptions' last date (2024-06-01) plus that. A task on mrr is proven with a windowed equality
test, and ade-bench's procedure run 40 days ahead (which always crosses a month boundary, so the
spine has gained a month) still fails the broken state and passes the solved one.

One validator (module fixture: one baseline, one shifted build); skips only without faketime."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from adegen.backends import ValidatorSetup, make_validator
from adegen.discover.project import load_project
from adegen.validate.duckdb import clockcheck
from adegen.validate.rules.contract import ProofOutcome

import clock_kit

pytestmark = pytest.mark.usefixtures("shifted_clock_on")

PROJECT = Path(__file__).resolve().parent / "fixtures" / "spinefix"
BY_MONTH = "models/customer_revenue_by_month.sql"
# the month after the last subscription month (2024-06-01): customer months; one more for the churn row
THROUGH = {"util_months": "2024-07-01", "customer_revenue_by_month": "2024-07-01",
           "customer_churn_month": "2024-08-01", "mrr": "2024-08-01"}


@pytest.fixture(scope="module")
def validator(tmp_path_factory, shifted_clock_on):
    if clockcheck.faketime_path() is None:
        pytest.skip("faketime is not installed (apt-get install faketime): spine tables are graded only with it")
    v = make_validator(load_project(PROJECT), ValidatorSetup(tmp_path_factory.mktemp("spine-work"), jobs=1))
    v.baseline()
    yield v
    v.close()


def test_a_month_spine_read_through_models_is_graded_in_the_datas_months(validator, tmp_path):
    wins = validator.facts().clock_windows
    assert {t: (w["column"], w["through"]) for t, w in wins.items()} == {t: ("date_month", d) for t, d in THROUGH.items()}
    assert "a month spine date, up to 1 month ahead, the data's last date 2024-06-01" in wins["mrr"]["why"]
    assert not validator.facts().clock_dependent
    db = validator.prepare_database(tmp_path / "db")
    task = clock_kit.write_task(PROJECT, tmp_path, "spinefix001", (
        BY_MONTH, "months.date_month >= customers.date_month_start", "months.date_month > customers.date_month_start"),
        "mrr")
    proof = validator.prove(task, PROJECT, db)
    assert proof.ok and proof.outcome is ProofOutcome.PROVEN, proof.detail
    assert "mrr graded on its rows with date_month through 2024-08-01" in proof.detail
    seeds = yaml.safe_load((task / "task.yaml").read_text())["solution_seeds"]
    assert seeds == [{"table_name": "mrr", "exclude_tests": ["equality_test"]}]
    assert "<= cast('2024-08-01' as date)" in (task / "tests" / "mrr_windowed.sql").read_text()
    # 40 days on: the spine holds another month; the broken state still fails, the solved one passes
    r = clock_kit.procedure_later([task], PROJECT, db, tmp_path / "later", agent="both")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "none: UNRESOLVED (failing tests: mrr_windowed)" in r.stdout and "sage: RESOLVED" in r.stdout
