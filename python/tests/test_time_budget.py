"""`--time-budget` (issue 30): the build proposes, proves and writes what fits, then says what it
skipped (real dbt + DuckDB on the reliability suite's tiny project).

* a budget already spent when writing starts (1 s: discovery alone takes longer; the first proposal
  round always runs) writes nothing, leaves no temp dir, exits 1 like any run without a task, and
  its summary and --json list every picked proposal as skipped;
* a budget that runs out after the first task (`ADEGEN_TIME_BUDGET_TASK_CHARGE`, the settings' test
  hook, charges each task two hours on a one-hour budget) writes exactly that task, proven, and
  skips the rest;
* bad values are bad input naming --time-budget."""
from __future__ import annotations

import json

import jsonschema
import pytest

from adegen.core.commandline import parse_duration
from adegen.core.errors import InputError
from adegen.pipeline.budget import TimeBudget, format_duration
from reliability_kit import (MODELS, REPO, assert_complete_tasks, make_project, rel_env,  # noqa: F401
                             run_build, task_dirs, temp_leftovers)

SCHEMA = json.loads((REPO / "python" / "adegen" / "schemas" / "build.schema.json").read_text())
ORDERS_MART = """select
    order_id,
    customer_id,
    case when amount >= 10 then 'large' else 'small' end as size_band
from {{ ref('stg_orders') }}
where status != 'cancelled' and amount > 0
"""
# the proposals' budget: purposeful changes (on by default, written first) would take the slots
ARGS = ["--pick", "all", "--yes", "--count", "3", "--json", "--no-purpose"]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return make_project(tmp_path_factory.mktemp("budget"),
                        models={**MODELS, "models/marts/fct_orders.sql": ORDERS_MART})


def _skipped_names(doc: dict) -> list[tuple[str, str]]:
    return [(s["model"], s["pattern_id"]) for s in doc["time_budget"]["skipped"]]


def test_budget_spent_before_writing_writes_nothing_and_lists_every_proposal(project, rel_env, tmp_path):
    out = tmp_path / "out"
    r = run_build([project, "--output-dir", out, "--no-validate", "--time-budget", "1", *ARGS], rel_env)
    assert "Traceback" not in r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert r.returncode == 1 and doc["exit_code"] == 1  # no task: as any run that writes none
    assert task_dirs(out) == [] and temp_leftovers(out) == [] and not (out / ".adegen.lock").exists()
    picked = [(p["model"], p["pattern_id"]) for p in doc["proposals"]]
    assert len(picked) == 3 and doc["tasks"] == []
    tb = doc["time_budget"]
    assert tb["seconds"] == 1 and tb["spent"] >= 1 and tb["reached"] and tb["stopped_at"] == "tasks"
    assert _skipped_names(doc) == picked and {s["stage"] for s in tb["skipped"]} == {"write"}
    assert tb["tasks_started"] == 0
    assert "Time budget 1s reached before the first of 3 task(s): skipped 3 proposal(s)" in r.stderr
    for model, pattern in picked:
        assert f"{model} {pattern}" in tb["line"] and f"{model} {pattern}" in r.stderr
    assert "Nothing was written: the time budget was spent" in r.stderr


def test_budget_out_after_the_first_task_writes_exactly_that_task_proven(project, rel_env, tmp_path):
    out = tmp_path / "out"
    env = dict(rel_env, ADEGEN_TIME_BUDGET_TASK_CHARGE="7200")
    r = run_build([project, "--output-dir", out, "--time-budget", "1h", *ARGS], env, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert assert_complete_tasks(out, "tiny") == ["tiny001"] and temp_leftovers(out) == []
    (task,) = doc["tasks"]
    assert task["task_id"] == "tiny001" and task["proven"] and task["status"] == "ready"
    picked = [(p["model"], p["pattern_id"]) for p in doc["proposals"]]
    assert (task["model"], task["pattern_id"]) == picked[0]
    tb = doc["time_budget"]
    assert tb["seconds"] == 3600 and tb["stopped_at"] == "tasks" and tb["tasks_started"] == 1
    assert _skipped_names(doc) == picked[1:]
    assert "Time budget 1h reached after 1 of 3 task(s): skipped 2 proposal(s)" in r.stderr
    assert "Wrote 1 task(s)" in r.stderr


@pytest.mark.parametrize("value,needle", [("0", "more than 0"), ("abc", "duration like"), ("-5", "duration like"),
                                          ("10x", "duration like"), ("0m", "more than 0")])
def test_bad_time_budget_is_bad_input(project, rel_env, tmp_path, value, needle):
    r = run_build([project, "--output-dir", tmp_path / "o", f"--time-budget={value}", "--pick", "all"], rel_env,
                  timeout=120)
    assert r.returncode == 2 and "--time-budget" in r.stderr and needle in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "o").exists()


def test_duration_forms():
    assert [parse_duration(t) for t in ("900", "900s", "15m", "1h", "1.5h", " 2 min ")] == [
        900, 900, 900, 3600, 5400, 120]
    with pytest.raises(InputError) as e:
        parse_duration("")
    assert e.value.field == "--time-budget"
    assert [format_duration(s) for s in (1, 90, 900, 3600, 5400)] == ["1s", "90s", "15m", "1h", "1h30m"]
    b = TimeBudget(60, start=0.0)
    assert b.line() is None and not b.to_json()["reached"]


def test_waiting_for_the_user_does_not_count(monkeypatch):
    """UI.ask's wait on stdin is left out of the budget's clock (the interactive pick)."""
    import io
    import time

    from adegen.pipeline.context import UI

    ui = UI(json_mode=True, interactive=True)

    class SlowStdin(io.StringIO):
        def readline(self, *a):
            time.sleep(0.3)
            return "all\n"

    monkeypatch.setattr("sys.stdin", SlowStdin())
    b = TimeBudget(0.25, start=time.monotonic(), waited=lambda: ui.waited_sec)
    assert ui.ask("Which?", "all") == "all" and ui.waited_sec >= 0.3
    assert b.spent() < 0.1 and not b.exhausted()


def test_spent_budget_starts_no_second_proposal_round(project, tmp_path, monkeypatch):
    """Check point 1, in process on the tiny project (--no-validate, pools cut to one candidate so
    one round cannot reach --count): a spent budget stops after the first pool and keeps what it
    selected; an unspent one takes further pools."""
    import time

    from adegen.propose import proposals as pp
    from adegen.adebench.install import AdeBench
    from adegen.cli.build_args import parse_args
    from adegen.pipeline import RunContext, UI, discovery, inputs, propose

    real_pool, pools = pp.pool, []

    def one_at_a_time(remaining, scope, size):
        pools.append(size)
        return real_pool(remaining, scope, size=1)

    monkeypatch.setattr(pp, "pool", one_at_a_time)

    opts = parse_args([str(project), "--output-dir", str(tmp_path / "out"), "--no-validate", "--count", "3"])
    ctx = RunContext(opts=opts, ui=UI(json_mode=True, interactive=False))
    ctx.workroot = tmp_path
    inputs.load_project(ctx)
    ctx.ade = AdeBench(False, None, "not looked for")
    discovery.discover(ctx)
    discovery.survey(ctx)

    def proposals_with(budget_seconds):
        pools.clear()
        ctx.budget = TimeBudget(budget_seconds, start=time.monotonic())
        return propose.propose(ctx)

    proposals_with(3600)
    assert len(pools) > 1 and ctx.budget.stopped_at is None
    pset = proposals_with(0.001)
    assert len(pools) == 1 and ctx.budget.stopped_at == "proposals"
    assert ctx.budget.proposals_short == 3 - len(pset.proposals) > 0
    assert "proposal rounds stopped" in ctx.budget.line()
