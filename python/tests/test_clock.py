"""Time-stable tasks (issues 30 and 53): a table whose rows depend on the clock is never graded; one
that reads it only in some columns is graded without them.

By lineage (adegen.dbt.clock, column by column adegen.dbt.clock_columns): clockfix's customer_tenure
calls the project macro days_since, which calls as_of_date, which reads `current_date`, in its
tenure_days column; tenure_by_region reads customer_tenure's tenure_days in longest_tenure_days;
open_orders computes age_days from `current_date`: all three are graded without those columns.
daily_orders is a date spine up to `current_date`: its rows grow with the clock, never graded. By
execution (validate.clockcheck): order_age reads the clock through a database macro an
on-run-start hook creates, which lineage cannot see; the determinism build, run 40 days ahead,
changes it, so it is never graded, while a stable task still proves (written `ready`); stale_orders'
rows depend on a literal Jinja computes from today's date, which column lineage cannot see: the
same build finds its rows change beyond its clock column, and it is never graded either.

Real dbt + DuckDB on one validator (module fixture: one baseline, one shifted build); the
shifted-clock test skips only where faketime is not installed."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from adegen.backends import ValidatorSetup, make_validator
from adegen.dbt.clock import clock_models, clock_reasons
from adegen.core.drops import DropCode
from adegen.sql.lexer import code_words
from adegen.pipeline import runtime
from adegen.discover.project import load_project
from adegen.validate.duckdb import clockcheck
from adegen.validate.rules.contract import ProofOutcome
from adegen.validate.rules.oracle import TableDiff
from adegen.validate.rules.verdict import ScreenFacts, judge

import clock_kit

# the shifted-clock check as users get it (conftest.shifted_clock_off turns it off elsewhere)
pytestmark = pytest.mark.usefixtures("shifted_clock_on")

PROJECT = Path(__file__).resolve().parent / "fixtures" / "clockfix"
STG_CUSTOMERS = "models/staging/stg_customers.sql"
REVENUE = "models/marts/customer_revenue.sql"
TENURE = "models/marts/customer_tenure.sql"
AGE = "models/marts/order_age.sql"
OPEN = "models/marts/open_orders.sql"
DAILY = "models/marts/daily_orders.sql"
LAST = "models/marts/last_days.sql"
# daily_orders' day spine is graded through the data's last day (raw_orders' 2024-05-08) and one step
DAILY_THROUGH = "2024-05-09"


# --------------------------------------------------------------------------- pure: words and lineage

def test_code_words_read_jinja_but_not_comments_or_sql_literals():
    words = code_words("select 'current_date' as a, \"today\" -- now()\n/* sysdate */ {# getdate #}"
                       "{{ dbt.dateadd('day', -7, 'current_timestamp') }} {% set x = run_started_at %}")
    assert "current_timestamp" in words and "run_started_at" in words  # Jinja strings are SQL once rendered
    assert not {"current_date", "now", "sysdate", "getdate"} & set(words)


def _manifest() -> dict:
    def model(name, raw, macros=(), nodes=(), compiled=None):
        return {"resource_type": "model", "name": name, "raw_code": raw, "compiled_code": compiled,
                "depends_on": {"macros": list(macros), "nodes": [f"model.p.{n}" for n in nodes]}}

    def macro(pkg, name, sql, deps=()):
        return {"package_name": pkg, "name": name, "macro_sql": sql, "depends_on": {"macros": list(deps)}}

    return {"metadata": {"project_name": "p"},
            "macros": {"macro.p.age": macro("p", "age", "{% macro age(c) %}{{ dbt.ts() }} - {{ c }}{% endmacro %}",
                                            ["macro.dbt.ts"]),
                       "macro.dbt.ts": macro("dbt", "ts", "{% macro ts() %}{{ adapter.dispatch('ts')() }}{% endmacro %}",
                                             ["macro.dbt_duckdb.duckdb__ts"]),
                       "macro.dbt_duckdb.duckdb__ts": macro("dbt_duckdb", "duckdb__ts", "{% macro duckdb__ts() %}now(){% endmacro %}"),
                       "macro.p.loop": macro("p", "loop", "{{ loop() }}", ["macro.p.loop"])},
            "nodes": {"model.p.a": model("a", "select {{ age('d') }} as age", ["macro.p.age"]),
                      "model.p.b": model("b", "select * from {{ ref('a') }}", nodes=["a"]),
                      "model.p.c": model("c", "select * from {{ ref('b') }}", nodes=["b"]),
                      "model.p.v": model("v", "select {{ var('as_of') }} as d", compiled="select current_date as d"),
                      "model.p.s": model("s", "select 1 as today, 'now()' as x -- current_date", ["macro.p.loop"]),
                      "seed.p.r": {"resource_type": "seed", "name": "r"}}}


def test_clock_lineage_through_macros_models_and_compiled_code():
    uses = clock_models(_manifest())
    assert set(uses) == {"model.p.a", "model.p.b", "model.p.c", "model.p.v"}  # s: a recursive macro, no clock
    assert uses["model.p.a"].reason() == "reads now() through macro age -> dbt.ts -> dbt_duckdb.duckdb__ts"
    assert clock_reasons(_manifest())["model.p.c"] == (
        "reads b (downstream of a, which reads now() through macro age -> dbt.ts -> dbt_duckdb.duckdb__ts)")
    assert uses["model.p.v"].reason() == "reads current_date in its compiled SQL"


# --------------------------------------------------------------------------- pure: verdict and summary

MODELS = {u: {"name": u.split(".")[-1], "alias": u.split(".")[-1], "materialized": "table"}
          for u in ("model.p.stg", "model.p.tenure", "model.p.revenue")}


class _Evidence:
    def evidence(self, uid, diff):
        return SimpleNamespace(columns_differ=["x"], example=f"{diff.table} differs", details={})

    def tables(self, visible, compared, known):
        return [{"table": MODELS[u]["alias"], "distance": 1} for u in sorted(visible)]


def test_screening_takes_no_clock_dependent_table_as_evidence():
    clock = {"model.p.tenure": "reads current_date through macro days_since"}
    both = ScreenFacts("model.p.stg", MODELS, {"model.p.stg": 0, "model.p.tenure": 1, "model.p.revenue": 1},
                       difficulty="hard", clock=clock,
                       diffs={"model.p.tenure": TableDiff("tenure", 4, 4, 1, 1),
                              "model.p.revenue": TableDiff("revenue", 4, 4, 1, 1)})
    o = judge(both, _Evidence())
    assert o.observable and o.compared_table == "revenue" and o.changed_tables == {"revenue": 1}
    assert [t["table"] for t in o.details["tables"]] == ["revenue"] and o.details["ignored_clock"] == {
        "tenure": clock["model.p.tenure"]}
    only = judge(ScreenFacts("model.p.tenure", MODELS, {"model.p.tenure": 0}, clock=clock,
                             diffs={"model.p.tenure": TableDiff("tenure", 4, 4, 1, 1)}), _Evidence())
    assert not only.observable and only.code is DropCode.CLOCK_DEPENDENT and only.compared_table is None
    assert "tenure (reads current_date through macro days_since)" in only.reason
    # a build error the pattern intends would grade the mutated model: not when it reads the clock
    err = judge(ScreenFacts("model.p.tenure", MODELS, {"model.p.tenure": 0}, symptom="build_error", clock=clock,
                            build_ok=False, error_message="Binder Error"), None)
    assert not err.observable and err.code is DropCode.CLOCK_DEPENDENT


def test_shifted_clock_summary_lines():
    found = {"customer_tenure": "reads current_date", "order_age": clockcheck.FOUND}
    line = clockcheck.line("/usr/bin/faketime", found)
    assert line == ("the determinism build ran 40 days ahead (faketime): 2 table(s) changed: "
                    "customer_tenure (lineage names it), order_age (found by execution)")
    assert clockcheck.line("/usr/bin/faketime", {}).endswith("40 days ahead (faketime): no table changed")
    assert clockcheck.line("/usr/bin/faketime", None).startswith("not run: ")
    assert clockcheck.line(None).startswith("skipped: faketime is not installed")
    lines = runtime.lines({"clock_dependent": found, "clock_check": line})
    assert "  order_age: changes when the clock moves 40 days (found by execution)" in lines
    assert any(ln.startswith("Excluded from grading, they read the clock (2;") for ln in lines)
    assert f"Shifted-clock check: {line}" in lines


def test_without_the_shifted_clock_check_no_clock_table_is_graded():
    """Column lineage cannot see a value Jinja computes from today (clockfix's stale_orders): only the
    shifted-clock check can, so without it every table graded without its clock columns is excluded."""
    clock = {"model.p.spine": "reads current_date; its rows depend on the clock"}
    cols = {"model.p.age": {"columns": ["age_days"], "why": "reads current_date: age_days from current_date"}}
    assert clockcheck.unchecked(clock, cols) == {**clock, "model.p.age": (
        "reads current_date: age_days from current_date; graded without its clock columns only where the "
        "shifted-clock check runs")}


def test_shifted_clock_turned_off_says_so():
    """ADEGEN_SHIFTED_CLOCK=0: no faketime even where it is installed (the determinism build runs
    with today's clock in the worker), and the summary says why the check was skipped."""
    from adegen.core import settings

    with settings.override(shifted_clock=False):
        assert clockcheck.faketime_path() is None
        assert clockcheck.line(None).startswith("skipped: ADEGEN_SHIFTED_CLOCK=0 turned it off")
    assert settings.from_environ({"ADEGEN_SHIFTED_CLOCK": "0"}).shifted_clock is False
    assert settings.from_environ({}).shifted_clock is True


# --------------------------------------------------------------------------- real dbt + DuckDB

@pytest.fixture(scope="module")
def validator(tmp_path_factory, shifted_clock_on):
    v = make_validator(load_project(PROJECT), ValidatorSetup(tmp_path_factory.mktemp("clock-work"), jobs=1))
    v.baseline()
    yield v
    v.close()


@pytest.fixture(scope="module")
def db(validator, tmp_path_factory) -> Path:
    return validator.prepare_database(tmp_path_factory.mktemp("clock-db"))


def _pat(symptom: str, difficulty: str = "easy"):
    return SimpleNamespace(id=f"p_{symptom}", symptom=symptom, difficulty=difficulty)


def _mutant(rel: str, old: str, new: str) -> tuple[bytes, bytes]:
    return clock_kit.mutant(PROJECT, rel, old, new)


def _task(root: Path, task_id: str, rel: str, old: str, new: str, table: str) -> Path:
    """A task as the build writes it: setup patch, its exact inverse, one graded table."""
    return clock_kit.write_task(PROJECT, root, task_id, (rel, old, new), table)


def _shifted() -> bool:
    return clockcheck.faketime_path() is not None


NO_FAKETIME = "faketime is not installed (apt-get install faketime): without the shifted-clock check no clock table is graded"


def test_lineage_names_the_clock_dependent_models(validator):
    facts = validator.facts()
    clock, cols, wins = facts.clock_dependent, facts.clock_columns, facts.clock_windows
    assert clock["last_days"].startswith("reads current_date; its rows depend on the clock (current_date in its from "
                                         "clause)")
    if not _shifted():
        assert not cols and not wins and clock["open_orders"].endswith("only where the shifted-clock check runs")
        pytest.skip(NO_FAKETIME)
    # a day spine of the last ten days: no row in the data's own days, so it says why it has no window
    assert clock["last_days"].endswith(f"; no window: it has no row with day through {DAILY_THROUGH}, or those rows "
                                       "change when the clock moves 40 days")
    assert (clock.get("daily_orders") or wins["daily_orders"]["why"]).startswith(
        "reads current_date; its rows depend on the clock (current_date in its from clause)")
    assert cols["customer_tenure"] == {"columns": ["tenure_days"], "why": (
        "reads current_date through macro days_since -> as_of_date: tenure_days from current_date")}
    assert cols["tenure_by_region"]["columns"] == ["longest_tenure_days"]
    assert cols["tenure_by_region"]["why"].endswith("longest_tenure_days from main.customer_tenure.tenure_days")
    assert cols["open_orders"] == {"columns": ["age_days"], "why": "reads current_date: age_days from current_date"}
    assert not {"customer_tenure", "tenure_by_region", "open_orders"} & set(clock)
    # the run record's `runtime` and the summary name what is excluded and why
    doc = runtime.collect(SimpleNamespace(validator=validator, pending=None))
    assert doc["clock_columns"]["open_orders"] == cols["open_orders"] and "last_days" in doc["clock_dependent"]
    lines = runtime.lines(doc)
    assert any(ln.startswith("Graded without their clock columns (") for ln in lines)
    assert "  open_orders without age_days: reads current_date: age_days from current_date" in lines
    # the rows of a date spine up to today, graded through a date
    through = DAILY_THROUGH
    assert wins["daily_orders"]["column"] == "order_date" and doc["clock_windows"] == wins
    assert any(ln.startswith(f"  daily_orders through order_date <= {through}: reads current_date") for ln in lines)
    # the hook-made database macro is invisible to lineage: the shifted-clock check is for it
    assert clock.get("order_age", clockcheck.FOUND) == clockcheck.FOUND and "customer_revenue" not in clock


def test_screening_compares_clock_tables_without_their_clock_columns(validator):
    if not _shifted():
        pytest.skip(NO_FAKETIME)
    upper = _mutant(STG_CUSTOMERS, "name as customer_name", "upper(name) as customer_name")[1].decode()
    region = _mutant(TENURE, "    region,", "    upper(region) as region,")[1].decode()
    age = _mutant(OPEN, "cast(ordered_at as date) as age_days", "cast(ordered_at as date) + 1 as age_days")[1].decode()
    spine = _mutant(DAILY, "count(o.order_id)", "count(*)")[1].decode()
    last = _mutant(LAST, "count(o.order_id)", "count(*)")[1].decode()
    shared, own, age_only, grows, moves = validator.screen_many([
        ("model.clockfix.stg_customers", STG_CUSTOMERS, upper, _pat("values_wrong", "hard")),
        ("model.clockfix.customer_tenure", TENURE, region, _pat("values_wrong")),
        ("model.clockfix.open_orders", OPEN, age, _pat("values_wrong")),
        ("model.clockfix.daily_orders", DAILY, spine, _pat("values_wrong")),
        ("model.clockfix.last_days", LAST, last, _pat("values_wrong"))])
    # a hard pattern grades the farthest changed table: customer_tenure, compared without tenure_days
    assert shared.observable and shared.compared_table == "customer_tenure", shared.reason
    assert set(shared.changed_tables) == {"stg_customers", "customer_revenue", "customer_tenure"}
    assert shared.details["clock_columns_excluded"] == {"customer_tenure": ["tenure_days"],
                                                         "tenure_by_region": ["longest_tenure_days"]}
    assert own.observable and own.compared_table == "customer_tenure", own.reason
    assert set(own.changed_tables) == {"customer_tenure", "tenure_by_region"}
    # a change only in the excluded clock column is invisible to the task: not evidence
    assert not age_only.observable and age_only.code is DropCode.EQUIVALENT, age_only.reason
    # rows that move with the clock are never graded; rows that grow are, through a date (shifted check)
    assert not moves.observable and moves.code is DropCode.CLOCK_DEPENDENT, moves.reason
    assert grows.observable and grows.compared_table == "daily_orders", grows.reason
    window = f"\"order_date\" <= cast('{DAILY_THROUGH}' as date)"
    assert grows.details["clock_window"] == {"daily_orders": window}


def test_a_table_whose_rows_move_with_the_clock_is_never_a_solution_seed(validator, db, tmp_path):
    task = _task(tmp_path, "clockfix001", LAST, "count(o.order_id)", "count(*)", "last_days")
    proof = validator.prove(task, PROJECT, db)
    assert not proof.ok and proof.outcome is ProofOutcome.SEEDS_REFUSED, proof.detail
    assert "last_days depends on the clock (reads current_date; its rows depend on the clock" in proof.detail
    assert not (task / "seeds" / "solution__last_days.csv").exists()


def test_clock_tables_are_graded_and_stay_valid_40_days_later(validator, db, tmp_path):
    """open_orders' filter bug is proven with age_days excluded (task.yaml); daily_orders' count bug
    on a date spine up to today is proven by a windowed equality test (its rows through the data's
    last day and one step). ade-bench's procedure, run 40 days ahead under faketime on both tasks, still passes the
    solved state (the broken states' differences do not depend on the day; without the exclusion
    open_orders' sage trial fails there: age_days moved 40 days)."""
    if not _shifted():
        pytest.skip(NO_FAKETIME)
    task = _task(tmp_path, "clockfix004", OPEN, "status != 'cancelled'", "status != 'canceled'", "open_orders")
    proof = validator.prove(task, PROJECT, db)
    assert proof.ok and proof.outcome is ProofOutcome.PROVEN, proof.detail
    assert proof.exclude_columns == {"open_orders": ["age_days"]}
    seeds = yaml.safe_load((task / "task.yaml").read_text())["solution_seeds"]
    assert seeds == [{"table_name": "open_orders", "exclude_columns": ["age_days"]}]
    spine = _task(tmp_path, "clockfix005", DAILY, "count(o.order_id)", "count(*)", "daily_orders")
    proof = validator.prove(spine, PROJECT, db)
    assert proof.ok and proof.outcome is ProofOutcome.PROVEN, proof.detail
    assert f"daily_orders graded on its rows with order_date through {DAILY_THROUGH}" in proof.detail
    seeds = yaml.safe_load((spine / "task.yaml").read_text())["solution_seeds"]
    assert seeds == [{"table_name": "daily_orders", "exclude_tests": ["equality_test"]}]
    windowed = (spine / "tests" / "daily_orders_windowed.sql").read_text()
    assert f"{{{{ adapter.quote('order_date') }}}} <= cast('{DAILY_THROUGH}' as date)" in windowed
    r = clock_kit.procedure_later([task, spine], PROJECT, db, tmp_path / "later")
    assert r.returncode == 0, r.stdout + r.stderr  # sage passes 40 days on, both tasks


def test_the_shifted_determinism_build_keeps_a_hidden_clock_table_from_grading(validator, db, tmp_path):
    if clockcheck.faketime_path() is None:
        pytest.skip("faketime is not installed (apt-get install faketime): the shifted-clock check cannot run")
    facts = validator.facts()
    assert facts.clock_dependent["order_age"] == "changes when the clock moves 40 days (found by execution)"
    assert "order_age" not in facts.nondeterministic and "customer_revenue" not in facts.nondeterministic
    assert facts.clock_check == (
        "the determinism build ran 40 days ahead (faketime): 7 table(s) changed: customer_tenure (only its clock "
        "column(s) tenure_days, excluded), daily_orders (rows grow; graded on order_date through "
        f"{DAILY_THROUGH}), last_days (lineage names it), open_orders (only its clock column(s) "
        "age_days, excluded), order_age (found by execution), stale_orders (found by execution), tenure_by_region "
        "(only its clock column(s) longest_tenure_days, excluded)")
    # lineage saw age_days alone; the rows changed 40 days ahead too: never graded
    assert facts.clock_dependent["stale_orders"] == clockcheck.FOUND + ", beyond its clock column(s) age_days"
    assert "stale_orders" not in facts.clock_columns
    # never graded: a task on order_age is never proven (it would pass today and fail next month)
    stale = _task(tmp_path, "clockfix002", AGE, "    amount,", "    round(amount) as amount,", "order_age")
    refused = validator.prove(stale, PROJECT, db)
    assert not refused.ok and refused.outcome is ProofOutcome.SEEDS_REFUSED, refused.detail
    assert "order_age depends on the clock (changes when the clock moves 40 days (found by execution))" in refused.detail
    # a stable task still proves (written `ready`)
    stable = _task(tmp_path, "clockfix003", REVENUE, "sum(o.amount)", "max(o.amount)", "customer_revenue")
    proof = validator.prove(stable, PROJECT, db)
    assert proof.ok and proof.outcome is ProofOutcome.PROVEN, proof.detail


def test_the_review_page_names_the_models_excluded_from_grading(tmp_path):
    import json

    from adegen.report import write_report

    runs = tmp_path / ".adegen" / "runs"
    runs.mkdir(parents=True)
    why = "reads current_date through macro days_since -> as_of_date"
    (runs / "20261203T000000Z-1.json").write_text(json.dumps({
        "command": "build", "project": {"name": "clockfix"},
        "runtime": {"clock_dependent": {"customer_tenure": why}, "clock_check": clockcheck.line(None),
                    "clock_columns": {"open_orders": {"columns": ["age_days"], "why": "reads current_date: "
                                                      "age_days from current_date"}},
                    "clock_windows": {"daily_orders": {"column": "order_date", "through": "2026-12-05", "columns": [],
                                                       "why": "reads current_date; its rows depend on the clock"}}}}))
    html = write_report(tmp_path).read_text()
    assert "Graded without their clock columns" in html and "Graded on their rows up to a date" in html
    assert "<code>daily_orders</code></td><td>order_date &lt;= 2026-12-05</td>" in html
    assert ("<code>open_orders</code></td><td>age_days</td><td>reads current_date: age_days from current_date"
            in html)
    assert "Excluded from grading: they read the clock" in html
    assert "<code>customer_tenure</code></td><td>reads current_date through macro days_since -&gt; as_of_date" in html
    assert "Shifted-clock check: skipped: faketime is not installed" in html
