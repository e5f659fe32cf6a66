"""Tasks for an is_incremental() slip (issue 52 item 2), on the incfix fixture (seeds, a staging
view, an incremental model loading `event_at >= max(event_at)` with a unique_key, a daily mart),
real dbt + DuckDB: the screen runs the model a second time over late rows (copies of the newest raw
rows with new keys), the task's setup.sh runs the same sequence through ade-bench's run_sql.sh, and
the emulated harness grades it: the broken state fails, the solution passes, and so does a fix
that is never run (test_setup's incremental run loads the rows the slip left out)."""
from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest

from adegen import prompts
from adegen.adebench.procedure.emulate import run_harness
from adegen.backends import ValidatorSetup, make_validator
from adegen.core.drops import DropCode
from adegen.discover.project import load_project
from adegen.tasks.task_yaml import PromptEntry, SeedEntry, Variant
from adegen.tasks.rebuild import Refresh, refresh_for, without_full_refresh
from adegen.tasks.taskgen import (LateRowsStep, TaskPlan, build_task_files, render_setup_sh, render_solution_sh,
                                  unified_diff)
from adegen.validate.duckdb import laterows

INCFIX = Path(__file__).resolve().parent / "fixtures" / "incfix"
FCT = "models/marts/fct_events.sql"
UID = "model.incfix.fct_events"
STG = "models/staging/stg_events.sql"
CASE_SLIP = SimpleNamespace(id="lower_dropped", name="Case normalisation dropped", family="case",
                            symptom="values_wrong", difficulty="hard")
SLIP = SimpleNamespace(id="incremental_gte_to_gt", name="Incremental boundary tightened",
                      family="incremental", symptom="rows_missing", difficulty="hard")


def test_filter_and_key_are_read_from_the_model():
    sql = (INCFIX / FCT).read_text()
    assert laterows.filter_column(sql) == "event_at" and laterows.unique_key(sql) == "event_id"
    assert laterows.filter_column("where t.loaded_at > (select max(loaded_at) from {{ this }})") == "loaded_at"
    assert laterows.filter_column("where x > 1") is None
    assert laterows.unique_key("{{ config(materialized='incremental') }}") is None


def test_insert_sql_is_one_statement_of_literals():
    sql = laterows.insert_sql("main.raw_events", ["id", "kind", "at", "n"],
                              [[41, "it's", None, 1.5], [42, "x", True, 2]])
    assert ";" not in sql and sql.startswith('insert into "main"."raw_events" ("id", "kind", "at", "n") values')
    assert "(41, 'it''s', null, 1.5)" in sql and "(42, 'x', true, 2)" in sql
    assert laterows.insert_sql("main.t", ["a"], [["a;b"]]) is None  # run_sql.sh would split it


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("incfix") / "incfix"
    shutil.copytree(INCFIX, root)
    return root


@pytest.fixture(scope="module")
def screened(project, tmp_path_factory):
    v = make_validator(load_project(project), ValidatorSetup(tmp_path_factory.mktemp("incfix-work"), jobs=1))
    v.baseline()
    src = (project / FCT).read_text()
    slip = src.replace(">= (select max", "> (select max")
    same = src.replace("-- events load", "-- rows load")  # a comment: the second run shows nothing
    no_key = src.replace(", unique_key='event_id'", "")  # the second run appends the newest rows again
    upstream = (project / STG).read_text().replace("lower(kind)", "kind")  # 'Purchase' is no 'purchase'
    obs = v.screen_many([(UID, FCT, slip, SLIP), (UID, FCT, same, SLIP), (UID, FCT, no_key, SLIP),
                         ("model.incfix.stg_events", STG, upstream, CASE_SLIP)])
    yield v, dict(zip(("slip", "same", "no_key", "upstream"), obs))
    v.close()


def test_the_slip_shows_only_on_the_second_run(screened):
    _, obs = screened
    slip, same = obs["slip"], obs["same"]
    assert slip.observable and slip.compared_table == "rpt_daily_events", slip.reason
    late = slip.details["late_rows"]
    assert late["relation"] == "main.raw_events" and late["key_column"] == "id" and late["keys"] == ("41", "42")
    assert late["sql"].count("'2024-03-05 17:00:00'") == 2  # at the newest loaded timestamp
    assert not same.observable and same.code is DropCode.EQUIVALENT


def test_a_dropped_unique_key_duplicates_the_newest_rows_and_is_reported_downstream(screened):
    """Without its unique_key the second run appends the rows at the newest timestamp again: the
    model's own table holds the same set of rows, some twice (42 rows, 44 after the slip), so the
    report names the daily mart, whose counts are too high."""
    _, obs = screened
    o = obs["no_key"]
    assert o.observable and o.compared_table == "rpt_daily_events", o.reason
    assert o.details["model_rows_changed"] == [42, 44]
    site = SimpleNamespace(before=", unique_key='event_id'", after="", line=1, placeholders={})
    pattern = SimpleNamespace(**{**vars(SLIP), "id": "incremental_unique_key_dropped", "symptom": "values_too_high"})
    ps = prompts.write_prompts(prompts.PromptRequest(
        seed="incfix:no_key", model="fct_events", project_name="incfix", pattern=pattern, site=site, model_path=FCT,
        observation=o, table=o.compared_table, model_materialized="incremental",
        project_models=("stg_events", "fct_events", "rpt_daily_events"), layer="marts", convention=True,
        avoid=frozenset()))
    assert ps.base and "rpt_daily_events" in ps.base, ps.rejected[:3]


def _task(tasks: Path, project: Path, late: dict) -> Path:
    original = (project / FCT).read_bytes()
    mutant = original.replace(b">= (select max", b"> (select max")
    rebuild = ["fct_events", "rpt_daily_events"]
    plan = TaskPlan(task_id="incfix001", description="the incremental filter skips late rows",
                    prompts=[PromptEntry("base", "rpt_daily_events is missing some events compared to the raw "
                                                 "data. Can you fix it?")],
                    difficulty="hard", tags=["dbt", "incremental"], test_setup_models=rebuild,
                    solution_seeds=[SeedEntry("rpt_daily_events")],
                    variant=Variant("duckdb", "incfix", "incfix", str(project.parent)),
                    seed_based=True, max_test_timeout_sec=120, solution_rebuild=rebuild,
                    late_rows=LateRowsStep(late["sql"], late["seed_file"], late["csv"]))
    files = build_task_files(plan, unified_diff(original, mutant, FCT), unified_diff(mutant, original, FCT), [])
    task = tasks / "incfix001"
    for rel, data in files.files.items():
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_bytes(data)
    (task / "seeds").mkdir(exist_ok=True)
    return task


@pytest.fixture(scope="module")
def proven(screened, project, tmp_path_factory):
    v, obs = screened
    tmp = tmp_path_factory.mktemp("incfix-task")
    task = _task(tmp / "tasks", project, obs["slip"].details["late_rows"])
    db = v.prepare_database(tmp / "databases")
    return task, db, v.prove(task, project, db)


def test_the_task_runs_production_sequence_and_is_proven(proven):
    task, _, proof = proven
    setup = (task / "setup.sh").read_text()
    first, late, second = setup.index("dbt run"), setup.index("late_rows.csv' >> seeds/raw_events.csv"), setup.rindex("dbt run")
    assert first < late < setup.rindex("dbt seed") < second, setup
    assert (task / "setup" / "late_rows.csv").read_text() == "41,3,view,2024-03-05 17:00:00\n42,1,VIEW,2024-03-05 17:00:00\n"
    assert "--full-refresh" not in setup + (task / "solution.sh").read_text()
    assert proof.ok and proof.broken_fails and proof.solved_passes, proof.detail
    assert "full emulation" in proof.detail or "emulat" in proof.detail, proof.detail
    # the expected table holds the late events: 8 that day in the raw seed, 2 more arrived late
    csv = (task / "seeds" / "solution__rpt_daily_events.csv").read_text().splitlines()
    assert any(line.startswith("2024-03-05,10,") for line in csv), csv


def test_a_fix_never_run_passes_after_a_reseed(proven, project, tmp_path):
    """Fairness: the expected table is what the correct incremental model holds after the same
    runs, so an agent that corrects the filter and reseeds (as `dbt build` does) but never runs the
    model passes: the late rows are in the seed's CSV, test_setup's incremental run loads them.
    (One that changes nothing fails even after test_setup's run: the proof's none trial.)"""
    task, db, _ = proven
    fixed_only = tmp_path / "incfix001"
    shutil.copytree(task, fixed_only)
    (fixed_only / "solution.sh").write_text("#!/bin/bash\npatch -p1 < '/sage/solutions/changes.patch'\ndbt seed\n")
    res = run_harness(fixed_only, project, db, "sage", workdir=tmp_path / "w", mode="inprocess", keep=True)
    assert res.resolved, res.summary()
    con = duckdb.connect(str(res.app / "incfix.duckdb"), read_only=True)
    try:  # the late rows are in fct_events once, next to the rows of the first run
        assert con.execute("select count(*), count(distinct event_id) from fct_events").fetchone() == (42, 42)
    finally:
        con.close()


def test_late_rows_in_a_source_go_through_run_sql():
    """A source table (no seed): setup.sh pipes the INSERT to ade-bench's run_sql.sh (stdin), then
    runs dbt again."""
    step = LateRowsStep(sql='insert into "main"."raw" ("id") values\n  (3)\n')
    setup = render_setup_sh(False, late_rows=step)
    assert "dbt run\n\n# Rows arrive late" in setup
    assert "bash /scripts/run_sql.sh \"$@\" < '/app/setup/late_rows.sql'\ndbt run\n" in setup


def test_late_rows_for_text_keys_and_when_there_are_none():
    """Plan on a database without dbt: text keys continue their numbering, raw rows delivered twice
    are copied twice; a key two raw tables hold or a model without a unique_key gives no late rows
    (and says why)."""
    con = duckdb.connect()
    con.execute("create table raw_events (event_id varchar, seen_at timestamp)")
    con.execute("insert into raw_events values ('ev-0009', '2024-01-01 10:00'), ('ev-0010', '2024-01-01 11:00'), "
                "('ev-0011', '2024-01-01 11:00')")
    con.execute("create table fct (event_id varchar, seen_at timestamp)")
    con.execute("insert into fct select * from raw_events")
    sql = "{{ config(unique_key='event_id') }} select * from x where seen_at >= (select max(seen_at) from {{ this }})"
    late = laterows.plan(con, ("main", "fct"), sql, {("main", "fct")}, {"main.raw_events": "seeds/raw_events.csv"})
    assert late.keys == ("ev-0012", "ev-0013") and late.seed_file == "seeds/raw_events.csv"
    assert late.csv == "ev-0012,2024-01-01 11:00:00\nev-0013,2024-01-01 11:00:00\n"
    assert "no single-column unique_key" in laterows.plan(con, ("main", "fct"), sql.replace("unique_key", "x"),
                                                          {("main", "fct")}, {})
    # raw data delivered at least once: the key column is not unique, every delivery gets the new key
    con.execute("insert into raw_events values ('ev-0011', '2024-01-01 11:00')")
    late = laterows.plan(con, ("main", "fct"), sql, {("main", "fct")}, {})
    assert late.keys == ("ev-0012", "ev-0013") and late.sql.count("'ev-0013'") == 2
    con.execute("create table raw_copy as select * from raw_events")
    assert "not in exactly one raw column" in laterows.plan(con, ("main", "fct"), sql, {("main", "fct")}, {})
    con.close()


# --- a seed-based project that ships its built database (incremental tables included) ----------

@pytest.fixture(scope="module")
def shipped(project, tmp_path_factory):
    """The fixture as a user ships it: seeded and built by dbt, its database file (which holds the
    incremental model's table) passed as the task database, so ade-bench's setup.sh (`dbt seed`,
    `dbt run`) runs the incremental model incrementally on it."""
    import subprocess

    root = tmp_path_factory.mktemp("incfix-shipped")
    proj = root / "incfix"
    shutil.copytree(project, proj, ignore=shutil.ignore_patterns("target", "logs", "*.duckdb*"))
    for cmd in (["seed"], ["run"]):
        subprocess.run(["dbt", *cmd, "--profiles-dir", ".", "--no-use-colors"], cwd=proj, check=True,
                       capture_output=True)
    dbdir = root / "db"
    dbdir.mkdir()
    shutil.move(str(proj / "incfix.duckdb"), dbdir / "incfix.duckdb")
    shutil.rmtree(proj / "target", ignore_errors=True)
    v = make_validator(load_project(proj), ValidatorSetup(root / "work", jobs=1, db_dir=dbdir))
    v.baseline()
    yield v, proj
    v.close()


def test_a_seed_based_project_shipping_its_incremental_table_is_screened_as_ade_bench_runs_it(shipped):
    """setup.sh's `dbt seed` reloads the same CSVs and its `dbt run` merges only the rows at the
    high-water mark into the shipped table: a slip on older rows changes nothing there. Screening
    replays that (the user's file as the baseline, validate.userbase) instead of a fresh build in
    which every row is rebuilt, so the slip is dropped before a proof is spent on it."""
    v, proj = shipped
    assert v.baseline_info()["from_user"], v.baseline_info().get("reason")
    src = (proj / FCT).read_text()
    early = src.replace("    event_type,\n", "    case when event_id <= 10 then 'view' else event_type end as event_type,\n")
    assert early != src
    obs = v.screen(UID, FCT, early, SimpleNamespace(id="case_rewrite", symptom="values_wrong", difficulty="easy"))
    assert not obs.observable and obs.code is DropCode.EQUIVALENT, obs.reason
    # a slip on the rows the run re-reads (the newest timestamp) is still seen
    late = src.replace("    event_type,\n", "    case when event_id >= 39 then 'cart' else event_type end as event_type,\n")
    obs = v.screen(UID, FCT, late, SimpleNamespace(id="case_rewrite", symptom="values_wrong", difficulty="easy"))
    assert obs.observable, obs.reason


def test_no_data_change_is_offered_when_the_intact_build_starts_from_the_users_tables(shipped):
    """A build of such a project with data changes on (`--mix hard`) stopped with an internal error
    (duckdb.connect(None)): the baseline has no raw-only copy. Now the data change declines, saying why."""
    from adegen.pipeline import datachange

    v, proj = shipped
    said: list[str] = []
    ctx = SimpleNamespace(validator=v, backend=SimpleNamespace(data_changes=True),
                          ui=SimpleNamespace(say=said.append, warn=said.append),
                          discovery={"sources": [], "models": []}, opts=SimpleNamespace(project_dir=proj),
                          project=SimpleNamespace(name="incfix", adapter_type="duckdb"))
    assert datachange.candidates(ctx) == []
    assert datachange.available(ctx) is False
    assert said == [f"no data change: {datachange.NO_RAW_DATA}"]


# --- a slip upstream of the incremental model: the broken run's rows stay in its table ---------

# the incfix models as discovery lists them (tasks.rebuild reads name, materialized, depends_on)
MODELS = [{"unique_id": "model.incfix.stg_events", "name": "stg_events", "materialized": "view",
           "depends_on": ["seed.incfix.raw_events"]},
          {"unique_id": UID, "name": "fct_events", "materialized": "incremental",
           "depends_on": ["model.incfix.stg_events"]},
          {"unique_id": "model.incfix.rpt_daily_events", "name": "rpt_daily_events", "materialized": "table",
           "depends_on": [UID]}]
REBUILD = ["stg_events", "fct_events", "rpt_daily_events"]


def test_the_refresh_selects_the_incremental_models_and_what_reads_them():
    assert refresh_for(REBUILD, MODELS) == Refresh(("fct_events",), ("fct_events", "rpt_daily_events"))
    assert refresh_for(["rpt_daily_events"], MODELS) == Refresh()  # below the incremental model: ordinary
    assert not refresh_for(["stg_events"], MODELS)
    # the fix without the refresh is exactly the ordinary solution
    full = render_solution_sh(REBUILD, refresh_for(REBUILD, MODELS))
    assert full.rstrip().endswith("dbt run --full-refresh --select fct_events rpt_daily_events"), full
    assert without_full_refresh(full) == render_solution_sh(REBUILD)
    assert without_full_refresh(render_solution_sh(REBUILD)) is None


@pytest.fixture(scope="module")
def upstream_proof(screened, project, tmp_path_factory):
    """setup.sh's `dbt run` builds fct_events with the slip (every event type as the raw data
    spells it); the fix and an ordinary `dbt run` (solution, then test_setup) re-merge only the
    rows at the newest timestamp, so the older rows keep 'Purchase': the daily mart still counts
    no purchases on those days until fct_events is rebuilt in full."""
    v, obs = screened
    o = obs["upstream"]
    assert o.observable and o.compared_table in ("fct_events", "rpt_daily_events"), o.reason
    tmp = tmp_path_factory.mktemp("incfix-upstream")
    original = (project / STG).read_bytes()
    mutant = original.replace(b"lower(kind)", b"kind")
    plan = TaskPlan(task_id="incfix002", description="event types are no longer normalised",
                    prompts=[PromptEntry("base", "rpt_daily_events shows no purchases on most days. Can you fix it?")],
                    difficulty="hard", tags=["dbt", "debugging", "incfix"], test_setup_models=REBUILD,
                    solution_seeds=[SeedEntry("rpt_daily_events")],
                    variant=Variant("duckdb", "incfix", "incfix", str(project.parent)), seed_based=True,
                    max_test_timeout_sec=120, solution_rebuild=REBUILD, full_refresh=refresh_for(REBUILD, MODELS))
    files = build_task_files(plan, unified_diff(original, mutant, STG), unified_diff(mutant, original, STG), [])
    task = tmp / "tasks" / "incfix002"
    for rel, data in files.files.items():
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_bytes(data)
    db = v.prepare_database(tmp / "databases")
    return task, db, v.prove(task, project, db)


def test_a_slip_upstream_of_an_incremental_model_is_proven_in_three_states(upstream_proof):
    """broken fails; the code fixed and run as usual fails (the third trial); fixed and rebuilt in
    full passes. test_setup stays an ordinary run, so an agent that only fixes the code fails."""
    task, _, proof = upstream_proof
    assert proof.ok and proof.broken_fails and proof.solved_passes, proof.detail
    assert proof.fixed_only_fails is True, proof.detail
    assert "fix without the full refresh: UNRESOLVED" in proof.detail, proof.detail
    assert "dbt run --full-refresh --select fct_events rpt_daily_events" in (task / "solution.sh").read_text()
    assert "--full-refresh" not in (task / "task.yaml").read_text() + (task / "setup.sh").read_text()
    csv = (task / "seeds" / "solution__rpt_daily_events.csv").read_text().splitlines()
    assert any(line.startswith("2024-03-01,") and not line.endswith(",0") for line in csv), csv


def test_the_refresh_stays_only_where_the_fix_without_it_fails(tmp_path):
    """realise keeps the full refresh (and tags the task dbt-incremental) when the proof's third
    trial failed; where it passed, or the task is unproven, solution.sh is the ordinary one."""
    from adegen.pipeline.realise import _settle_refresh
    from adegen.tasks.task_yaml import read_task_yaml

    plan = TaskPlan(task_id="incfix003", description="d", prompts=[PromptEntry("base", "p")], difficulty="hard",
                    tags=["dbt", "incfix"], test_setup_models=REBUILD, solution_seeds=[SeedEntry("rpt_daily_events")],
                    variant=Variant("duckdb", "incfix", "incfix", "."), solution_rebuild=REBUILD,
                    full_refresh=refresh_for(REBUILD, MODELS))
    for fails, proven, kept in ((True, True, True), (False, True, False), (True, False, False), (None, True, True)):
        task = tmp_path / f"{fails}-{proven}"
        files = build_task_files(plan, b"", b"", [])
        for rel, data in files.files.items():
            (task / rel).parent.mkdir(parents=True, exist_ok=True)
            (task / rel).write_bytes(data)
        proof = SimpleNamespace(fixed_only_fails=fails) if proven else None
        got = _settle_refresh(plan, files, task, proof)
        solution = (task / "solution.sh").read_text()
        assert ("--full-refresh" in solution) is kept and bool(got) is kept, (fails, proven, solution)
        assert files.files["solution.sh"] == solution.encode()
        assert ("dbt-incremental" in read_task_yaml(task / "task.yaml").tags) is (fails is True and proven)


# --- a data change whose broken run leaves rows in the incremental table ------------------------

@pytest.fixture(scope="module")
def resent(tmp_path_factory):
    """incfix with its raw events as a source table in the database (a seed is never re-sent: `dbt
    seed` would undo it), and the build's data-change stage on it (pipeline/datachange.py): the
    source re-sends every fifth event, setup.sh's `dbt run` builds fct_events with the copies, and
    the adapted stg_events run as usual only re-merges the newest timestamp's rows, so the older
    copies stay in fct_events until it is rebuilt in full."""
    from adegen.backends import BACKENDS
    from adegen.pipeline.context import OutputPlan
    from adegen.pipeline.datachange import _realise, candidates

    root = tmp_path_factory.mktemp("incfix-source") / "incfix"
    shutil.copytree(INCFIX, root, ignore=shutil.ignore_patterns("seeds"))
    (root / "dbt_project.yml").write_text((INCFIX / "dbt_project.yml").read_text().split("\nseeds:")[0] + "\n")
    (root / STG).write_text((INCFIX / STG).read_text().replace("ref('raw_events')", "source('raw', 'raw_events')"))
    (root / "models" / "staging" / "_sources.yml").write_text(
        "version: 2\nsources:\n  - name: raw\n    schema: main\n    tables:\n      - name: raw_events\n")
    con = duckdb.connect(str(root / "incfix.duckdb"))
    con.execute("create table main.raw_events as select id, user_id, kind, cast(occurred_at as timestamp) as "
                f"occurred_at from read_csv('{INCFIX / 'seeds' / 'raw_events.csv'}', header=true)")
    con.close()
    v = make_validator(load_project(root), ValidatorSetup(tmp_path_factory.mktemp("incfix-source-work"), jobs=1))
    v.baseline()
    sources = [{"unique_id": "source.incfix.raw.raw_events", "source": "raw", "table": "raw_events",
                "identifier": "raw_events"}]
    models = [{**m, "depends_on": ["source.incfix.raw.raw_events"]} if m["name"] == "stg_events" else m
              for m in MODELS]
    ctx = SimpleNamespace(validator=v, discovery={"sources": sources, "models": models},
                          opts=SimpleNamespace(project_dir=root, db_path=None),
                          project=SimpleNamespace(name="incfix", adapter_type="duckdb", db_name="incfix"),
                          backend=BACKENDS["duckdb"], ui=SimpleNamespace(say=lambda *a: None, warn=lambda m: None),
                          workroot=tmp_path_factory.mktemp("incfix-source-root"), report=SimpleNamespace(task_details={}),
                          output=OutputPlan(tmp_path_factory.mktemp("incfix-source-out") / "tasks", root, ".", False,
                                            {m["name"] for m in MODELS}, v.prepare_database(
                                                tmp_path_factory.mktemp("incfix-source-db"))))
    change = next(c for c in candidates(ctx) if c.kind == "resent_rows")
    yield change, _realise(ctx, change, "incfix004", "staging")
    v.close()


def test_a_data_change_into_an_incremental_table_is_proven_in_three_states(resent):
    """The data change's solution adapts stg_events, runs it as usual, then rebuilds fct_events (and
    what reads it) in full; the same adaptation without that rebuild fails (the third trial)."""
    change, entry = resent
    assert list(change.rebuild) == REBUILD and change.graded == "rpt_daily_events", change
    assert entry["proven"] and entry["proof"]["fixed_only_fails"] is True, entry["proof_detail"]
    assert entry["full_refresh"] == {"models": ["fct_events", "rpt_daily_events"], "fix_without_it_fails": True}
    task = Path(entry["path"])
    solution = (task / "solution.sh").read_text()
    assert solution.rstrip().endswith("dbt run --full-refresh --select fct_events rpt_daily_events"), solution
    assert "--full-refresh" not in (task / "setup.sh").read_text() + (task / "task.yaml").read_text()
    assert "dbt-incremental" in (task / "task.yaml").read_text()


def test_the_hard_mix_ranks_the_kinds_these_tasks_are(screened, upstream_proof, resent):
    """The hard mix (propose/mix.py) on what this module built: the is_incremental() slip, the slip
    upstream of fct_events (its proof: the fix without the full refresh fails) and the re-sent rows
    (a data change that needs the refresh too), with a purposeful change and a shallow slip beside
    them: one of each hard kind is kept before the shallow slip."""
    from adegen.propose import mix

    _, obs = screened
    inc = mix.incremental_models(MODELS)

    def proposal(o, model, family, rebuild):
        return SimpleNamespace(model=model, pattern_id=family, family=family, compound=None, observation=o,
                               compared_table=o.compared_table, test_setup_models=rebuild)

    slip = proposal(obs["slip"], "fct_events", "incremental", ["fct_events", "rpt_daily_events"])
    upstream = proposal(obs["upstream"], "stg_events", "case", REBUILD)
    below = proposal(SimpleNamespace(changed_tables={}, compared_table="rpt_daily_events"), "rpt_daily_events", "case",
                     ["rpt_daily_events"])
    assert [mix.kind(p, inc) for p in (slip, upstream, below)] == ["incremental", "full-refresh", "slip"]
    task, _, proof = upstream_proof
    written = {"full_refresh": {"models": ["fct_events", "rpt_daily_events"],
                                "fix_without_it_fails": proof.fixed_only_fails}}
    assert mix.written_kind(written, upstream, inc) == "full-refresh"
    _, data_change = resent
    assert data_change["family"] == "data-change" and data_change["full_refresh"]["fix_without_it_fails"]
    run = [*mix.entries([below, slip, upstream], inc), mix.Entry("purposeful"), mix.Entry("data-change")]
    assert mix.ranked(run, 4) == [1, 2, 3, 4]  # the shallow slip is the one left out
    assert mix.purposeful_slots([below, slip, upstream], 3, 2, inc) == 1
