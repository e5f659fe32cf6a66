"""Real-project shapes (issue 11) on small generated projects: hub packages installed in
dbt_packages/ (offline), nested `local:` packages, a `data-tests` layout, a typed macro in
`on-run-start`, the user's own database with stale model tables (`--db-path`, fast proof), a top-N
model with ties (determinism guard), a self-join that explodes (budgets), and work directories of
killed runs."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

import realfix as rf  # noqa: E402
from adegen.core import paths  # noqa: E402
from adegen.adebench.procedure import run_harness  # noqa: E402
from adegen.discover.project import load_project  # noqa: E402
from adegen.backends import ValidatorSetup, make_validator  # noqa: E402
from adegen.validate.workers.pool import BudgetExceeded, WorkerPool  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DOUBLE = "{% macro double(x) %}({{ x }}) * 2{% endmacro %}\n"


def build(project: Path, out: Path, *extra: str) -> tuple[dict, str]:
    """(--json document, the human summary: stderr in --json mode)"""
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    r = subprocess.run([sys.executable, "-m", "adegen.build", str(project), "--output-dir", str(out),
                        "--pick", "all", "--yes", "--json", "--count", "3", *extra],
                       capture_output=True, text=True, env=env, cwd=str(project.parent))
    assert r.returncode == 0, r.stderr[-4000:]
    return json.loads(r.stdout), r.stderr


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --- hub packages installed in dbt_packages/, data-tests layout, typed macro, --db-path ------------

@pytest.fixture(scope="module")
def hub_project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hub") / "hubshop"
    totals = rf.CUSTOMER_TOTALS_SQL.replace("sum(o.amount)", "{{ fake_utils.double('sum(o.amount)') }}")
    rf.shop_project(root, "hubshop", project_extra={
        "test-paths": ["data-tests"],
        # typed macro parameters need DuckDB storage v1.4.0+: the prepared database cannot be v1.0.0
        "on-run-start": ["create or replace macro hub_round(x DOUBLE) as round(x, 1)"]},
        models={"models/marts/customer_totals.sql": totals},
        files={"data-tests/assert_positive.sql": "select * from {{ ref('customer_totals') }} where total_amount < 0\n",
               "packages.yml": "packages:\n  - package: fakeorg/fake_utils\n    version: [\">=0.1.0\", \"<0.2.0\"]\n",
               "package-lock.yml": "packages:\n  - package: fakeorg/fake_utils\n    version: 0.1.3\nsha1_hash: x\n"},
        # the user's database also holds stale model tables (a finished `dbt build` long ago)
        tables={"customer_totals": "select 0 as customer_id", "stg_orders": "select 0 as order_id"})
    rf.package(root / "dbt_packages" / "fake_utils", "fake_utils", "0.1.3", {"double": DOUBLE})
    return root


@pytest.fixture(scope="module")
def hub_build(hub_project, tmp_path_factory):
    before = tree(hub_project)
    out = tmp_path_factory.mktemp("hub-out")
    doc, summary = build(hub_project, out, "--db-path", str(hub_project))
    assert tree(hub_project) == before  # the user's project and database file are byte-identical
    return doc, out, summary


def test_hub_packages_data_tests_typed_macro_proven_offline(hub_build):
    doc, out, _ = hub_build
    tasks = doc["tasks"]
    # two small models on 400 generated orders: a dropped status filter is the one realistic bug whose
    # data precondition holds here (every customer has orders: a left join made inner changes nothing)
    assert tasks and all(t["proven"] for t in tasks), [t["proof_detail"][:600] for t in tasks]
    # the user's own database (--db-path) gets the fast proof: no full emulation
    assert not [t for t in tasks if "full emulation" in (t["proof_detail"] or "")]
    copy = out / "projects" / "hubshop"
    cfg = yaml.safe_load((copy / "dbt_project.yml").read_text())
    assert cfg["test-paths"] == ["data-tests", "tests"]
    assert yaml.safe_load((copy / "packages.yml").read_text())["packages"][0]["package"] == "fakeorg/fake_utils"
    assert not (copy / "dbt_packages").exists()


def test_build_reports_runtime_facts(hub_build):
    """The validator's facts reach the summary, --json and the run record: the storage version
    (not v1.0.0: the typed macro needs newer) and why, packages reused, temp bytes, peak memory."""
    doc, _, summary = hub_build
    rt = doc["runtime"]
    assert rt["storage"]["version"] != "v1.0.0" and "typed macro" in rt["storage"]["reason"].lower(), rt["storage"]
    assert any(p.startswith("fake_utils 0.1.3") for p in rt["packages_reused"]), rt["packages_reused"]
    assert rt["temp_bytes_peak"] > 0 and rt["temp_bytes_limit"] and rt["memory_limit"]
    assert rt["memory_peak_bytes"] > 50 * 1024 ** 2  # dbt alone is larger than that
    assert "copy of" in rt["db_note"]
    assert f"Database storage version: {rt['storage']['version']} ({rt['storage']['reason']})" in summary
    assert "Packages reused offline: " + ", ".join(rt["packages_reused"]) in summary
    assert "Resources: peak temp " in summary and "peak memory " in summary
    record = json.loads(Path(doc["run_record"]).read_text())
    assert record["runtime"] == rt


def test_script_mode_stands_in_for_dbt_deps(hub_build, hub_project, tmp_path):
    """The independent check: bash + dbt subprocesses; the task's `dbt deps` cannot reach the hub
    here, the shim installs the user's installed packages instead."""
    doc, out, _ = hub_build
    task = out / "tasks" / doc["tasks"][0]["task_id"]
    res = run_harness(task, out / "projects" / "hubshop", hub_project / "hubshop.duckdb", "sage",
                      workdir=tmp_path, mode="script", packages_from=hub_project)
    assert res.resolved, res.output_tail()
    none = run_harness(task, out / "projects" / "hubshop", hub_project / "hubshop.duckdb", "none",
                       workdir=tmp_path, mode="inprocess", packages_from=hub_project)
    assert not none.resolved


# --- nested local packages, top-N model with ties --------------------------------------------

TOP_SQL = """{{ config(materialized='table') }}
select order_id, amount
from (
    select order_id, amount, row_number() over (order by amount desc) as rn
    from {{ ref('stg_orders') }}
)
where rn <= 5
"""


# one column built in input order (string_agg without ORDER BY): the determinism build, on shuffled
# inputs, finds that column unstable and the rest of the table stable
SEEN_SQL = """{{ config(materialized='table') }}
select customer_id, count(*) as order_count, sum(amount) as total_amount,
    string_agg(cast(order_id as varchar), ',') as order_ids
from {{ ref('stg_orders') }}
group by 1
"""


@pytest.fixture(scope="module")
def vendored(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("vendored") / "vendshop"
    totals = rf.CUSTOMER_TOTALS_SQL.replace("sum(o.amount)", "{{ src_pkg.total('o.amount') }}")
    rf.shop_project(root, "vendshop", models={"models/marts/customer_totals.sql": totals,
                                              "models/marts/top_orders.sql": TOP_SQL,
                                              "models/marts/orders_seen.sql": SEEN_SQL},
                    files={"packages.yml": "packages:\n  - local: vendor/src_pkg\n  - local: vendor/util_pkg\n"})
    # the source package lists its own dependency as a path relative to the ROOT project (dbt deps
    # resolves nested local paths against the root project: "Found duplicate project" otherwise)
    rf.package(root / "vendor" / "util_pkg", "util_pkg", "0.4.0", {"double": DOUBLE})
    rf.package(root / "vendor" / "src_pkg", "src_pkg", "0.8.1",
               {"total": "{% macro total(x) %}{{ util_pkg.double('sum(' ~ x ~ ')') }} / 2{% endmacro %}\n"},
               deps=[{"local": "vendor/util_pkg"}])
    return root


def test_nested_local_packages_proven(vendored, tmp_path):
    doc, summary = build(vendored, tmp_path / "out")
    tasks = doc["tasks"]
    assert tasks and all(t["proven"] for t in tasks), [t["proof_detail"][:600] for t in tasks]
    # the summary names the nondeterministic model (ties in a top-N) and the packages reused
    assert "top_orders" in doc["runtime"]["nondeterministic"], doc["runtime"]
    line = next(x for x in summary.splitlines() if x.startswith("Nondeterministic models"))
    assert "top_orders" in line and "customer_totals" not in line
    assert doc["runtime"]["storage"]["version"] == "v1.0.0"
    assert any(p.startswith("src_pkg 0.8.1") for p in doc["runtime"]["packages_reused"])


@pytest.fixture(scope="module")
def vend_validator(vendored, tmp_path_factory):
    v = make_validator(load_project(vendored), ValidatorSetup(tmp_path_factory.mktemp("vend-work"), jobs=1))
    v.baseline()
    yield v
    v.close()


def test_top_n_with_ties_is_nondeterministic_and_never_evidence(vend_validator, vendored):
    v = vend_validator
    facts = v.facts()
    assert "top_orders" in facts.nondeterministic, facts.nondeterministic
    assert "customer_totals" not in facts.nondeterministic
    assert any(p.startswith("src_pkg 0.8.1") for p in facts.packages), facts.packages
    # a view -> table change upstream leaves every deterministic table equal: it is reported on
    # the model it changed (its object kind), never through the top-N table
    path = "models/staging/stg_orders.sql"
    text = "{{ config(materialized='table') }}\n" + (vendored / path).read_text()
    obs = v.screen("model.vendshop.stg_orders", path, text,
                   SimpleNamespace(id="view_to_table", symptom="structure_wrong", difficulty="easy"))
    assert obs.observable and obs.reason == "stg_orders: built as a table instead of a view", obs.reason
    assert obs.compared_table == "stg_orders" and obs.changed_tables == {"stg_orders": 0}
    assert [t["table"] for t in obs.details["tables"]] == ["stg_orders"]
    assert obs.details.get("ignored_nondeterministic", ["top_orders"]) == ["top_orders"]
    # the same change judged as a data bug (another symptom): nothing deterministic differs
    obs = v.screen("model.vendshop.stg_orders", path, text,
                   SimpleNamespace(id="view_to_table", symptom="values_wrong", difficulty="easy"))
    assert not obs.observable, obs.reason
    # never an unexcluded solution seed
    problems, excludes = v.proof_run().seed_tables(Path(v.baseline_info()["baseline_db"]), ["top_orders"])
    cols = facts.nondeterministic["top_orders"]
    assert problems if not cols else set(cols) <= set(excludes["top_orders"])


def test_a_table_with_one_unstable_column_is_evidence_without_it(vend_validator, vendored):
    """A column built in input order makes its table nondeterministic in that column only: a slip in
    another column is still evidence there, compared without the unstable column (its seed excludes
    it too), not dropped as "differs only in nondeterministic tables"."""
    v = vend_validator
    assert v.facts().nondeterministic.get("orders_seen") == ["order_ids"], v.facts().nondeterministic
    path = "models/marts/orders_seen.sql"
    text = (vendored / path).read_text().replace("sum(amount)", "max(amount)")
    obs = v.screen("model.vendshop.orders_seen", path, text,
                   SimpleNamespace(id="sum_to_max", symptom="values_wrong", difficulty="easy"))
    assert obs.observable and obs.compared_table == "orders_seen", obs.reason
    assert "order_ids" not in obs.columns_differ and "total_amount" in obs.columns_differ, obs.columns_differ
    assert obs.details["nondeterministic_columns"] == {"orders_seen": ["order_ids"]}
    problems, excludes = v.proof_run().seed_tables(Path(v.baseline_info()["baseline_db"]), ["orders_seen"])
    assert not problems and excludes["orders_seen"] == ["order_ids"], (problems, excludes)


# --- budgets: a self-join that explodes -----------------------------------------------------

JOIN_SQL = """{{ config(materialized='table') }}
select a.k, a.v, b.v as v2
from {{ ref('stg_events') }} as a
join {{ ref('stg_events') }} as b
    on a.k = b.k
"""


def test_runaway_self_join_is_dropped_and_the_run_goes_on(tmp_path):
    root = rf.shop_project(tmp_path / "bigjoin", "bigjoin", models={
        "models/staging/stg_events.sql": "select k, v from {{ source('raw', 'events') }}",
        "models/marts/events_joined.sql": JOIN_SQL,
    }, tables={"events": "select i as k, i % 97 as v from range(300000) r(i)"}, sources=("events",))
    v = make_validator(load_project(root), ValidatorSetup(tmp_path / "work", jobs=1))
    try:
        v.baseline()
        path = "models/marts/events_joined.sql"
        pat = SimpleNamespace(id="wrong_join_key", symptom="extra_rows", difficulty="easy")
        runaway = (root / path).read_text().replace("on a.k = b.k", "on a.k = a.k")
        fine = (root / path).read_text().replace("b.v as v2", "b.v + 1 as v2")
        obs = v.screen_many([("model.bigjoin.events_joined", path, runaway, pat),
                             ("model.bigjoin.events_joined", path, fine, pat)])
        assert not obs[0].observable and obs[0].reason.startswith("runaway:"), obs[0].reason
        assert obs[1].observable, obs[1].reason  # the run goes on
        assert v.facts().runaway and v.facts().temp_bytes_peak > 0
    finally:
        v.close()
    assert not (tmp_path / "work" / "adegen-validate").exists()


def test_small_data_runaway_is_stopped_by_the_compile_checks_sql(tmp_path):
    """Every table under 10,000 rows: no `dbt compile` precount in the worker, but the SQL the
    compile check produced bounds the count, so a join that explodes is stopped before its build
    (not after the 30 s time budget) while a harmless mutant of the same model is screened as usual."""
    from adegen.propose.mutant_compile import compile_mutants

    root = rf.shop_project(tmp_path / "smalljoin", "smalljoin", models={
        "models/staging/stg_events.sql": "select k, v from {{ source('raw', 'events') }}",
        "models/marts/events_joined.sql": JOIN_SQL,
    }, tables={"events": "select i as k, i % 97 as v from range(3000) r(i)"}, sources=("events",))
    project = load_project(root)
    path = "models/marts/events_joined.sql"
    runaway = (root / path).read_text().replace("on a.k = b.k", "on a.k = a.k")
    fine = (root / path).read_text().replace("b.v as v2", "b.v + 1 as v2")
    compiled = compile_mutants(project, [("runaway", path, runaway), ("fine", path, fine)], workdir=tmp_path)
    assert compiled["runaway"].catalog == "compile" and '"compile"' in compiled["runaway"].compiled
    v = make_validator(project, ValidatorSetup(tmp_path / "work", jobs=1))
    try:
        v.baseline()
        pat = SimpleNamespace(id="wrong_join_key", symptom="extra_rows", difficulty="easy")
        t0 = time.monotonic()
        obs = v.screen_many([("model.smalljoin.events_joined", path, runaway, pat, compiled["runaway"]),
                             ("model.smalljoin.events_joined", path, fine, pat, compiled["fine"])])
        assert obs[0].reason.startswith("runaway: events_joined would hold more than"), obs[0].reason
        assert obs[1].observable, obs[1].reason
        assert time.monotonic() - t0 < 30  # the time budget (30 s at least) was never reached
    finally:
        v.close()


def test_count_limited_maps_the_compile_catalog(tmp_path):
    from adegen.validate.duckdb.screening import RowCount, count_limited

    db = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(db))
    con.execute("create table main.t as select range as k from range(50)")
    con.execute('create view main.v as select * from "shop"."main"."t"')  # views name their catalog
    con.close()
    sql = 'select a.k from "compile"."main"."v" as a cross join "compile"."main"."t" as b'
    assert count_limited(db, sql, RowCount(100, 10, {}), "compile") == (101, False)
    assert count_limited(db, 'select k from "shop"."main"."t"', RowCount(100, 10, {})) == (50, False)
    with pytest.raises(duckdb.Error):
        count_limited(db, sql, RowCount(100, 10, {}))  # no catalog "compile" without the mapping


def _sleep(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def test_pool_kills_a_job_over_budget_and_stays_usable():
    pool = WorkerPool(1, start_method="spawn")
    try:
        stuck = pool.submit(_sleep, 60, deadline=1.0)
        with pytest.raises(BudgetExceeded):
            stuck.result()
        assert pool.submit(_sleep, 0.01).result() == 0.01
        assert len(pool.dead_pids) == 1
    finally:
        pool.shutdown()


def test_killed_run_work_dir_is_removed_by_the_next_run(tmp_path):
    code = ("import sys, time; from pathlib import Path; from adegen.core.paths import claim_run_dir; "
            "d = claim_run_dir('adegen-build-', Path(sys.argv[1])); (d / 'big.duckdb').write_text('x'); "
            "print(d, flush=True); time.sleep(60)")
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True, env=env)
    dead = Path(proc.stdout.readline().strip())
    live = paths.claim_run_dir("adegen-build-", tmp_path)      # this process: alive
    assert dead.is_dir()                                        # the other run is alive too: kept
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    again = paths.claim_run_dir("adegen-build-", tmp_path)
    assert not dead.exists() and live.is_dir() and again.is_dir()


def test_gradable_copy_layouts():
    from adegen.dbt.gradable import make_gradable

    g = make_gradable('name: p\ntest-paths: ["data-tests"]  # ours\nseed-paths:\n  - data\n')
    assert g.text == 'name: p\ntest-paths: ["data-tests", "tests"]  # ours\nseed-paths:\n  - data\n  - seeds\n'
    assert len(g.changes) == 2 and not g.problems
    assert make_gradable("name: p\n").text == "name: p\n"          # defaults are ade-bench's dirs
    assert make_gradable("name: p\nmacro-paths: [macros, more]\n").changes == []
    assert make_gradable("name: p\ntest-paths: \"{{ var('t') }}\"\n").problems
    # a project written before dbt 1.0 names its seed directories `data-paths` (dbt 1.x still reads it)
    old = make_gradable('name: p\ndata-paths: ["data"]\n')
    assert old.text == 'name: p\ndata-paths: ["data", "seeds"]\n' and len(old.changes) == 1, old
    assert make_gradable('name: p\ndata-paths: ["seeds"]\n').changes == []


def test_typed_macro_storage_version(hub_project, tmp_path):
    """The user's database is DuckDB 2.0's default (storage v2.0.0), the project's typed macro
    needs v1.4.0: the prepared database gets the lowest version that works, v1.4.0, and the
    reason says that ade-bench's image (duckdb 1.3.0) cannot open it and what to change."""
    from adegen.adebench.procedure import storage_version

    if not storage_version(hub_project / "hubshop.duckdb").startswith("v2."):
        pytest.skip("this DuckDB writes new files below storage v2.0.0")
    v = make_validator(load_project(hub_project), ValidatorSetup(tmp_path, jobs=1))
    try:
        v.baseline()
        st = v.facts().storage
        assert st.version == "v1.4.0", st
        assert "cannot open it: run these tasks with duckdb 1.4 or newer" in st.reason, st.reason
        db = v.prepare_database(tmp_path / "db")
        con = duckdb.connect()
        con.execute(f"ATTACH '{db}' AS f (READ_ONLY)")
        tag = con.execute("select tags['storage_version'] from duckdb_databases() where database_name='f'").fetchone()[0]
        assert tag.startswith(st.version)
    finally:
        v.close()


def test_runtime_lines_name_every_fact():
    from adegen.pipeline import runtime

    rt = {"memory_peak_bytes": 300 * 2 ** 20, "temp_bytes_peak": 5 * 2 ** 20, "temp_bytes_limit": 2 ** 30,
          "memory_limit": "1024MiB", "storage": {"version": "v1.2.0", "reason": "the project needs v1.2.0"},
          "nondeterministic": {"top_orders": [], "scores": ["rank"]}, "packages_reused": ["dbt_utils 1.1.1 (hub)"],
          "package_notes": [], "runaway": ["model.p.m: runaway: stopped after 31 s"], "db_note": "raw data from a copy"}
    text = "\n".join(runtime.lines(rt))
    assert "Database storage version: v1.2.0 (the project needs v1.2.0)" in text
    assert "top_orders (rows), scores (rank)" in text
    assert "Packages reused offline: dbt_utils 1.1.1 (hub)" in text
    assert "Runaway candidate dropped: model.p.m: runaway: stopped after 31 s" in text
    assert "peak temp 5 MiB" in text and "peak memory 300 MiB" in text and "1024MiB" in text
    # no validator (--no-validate): resources only, no storage claim
    bare = runtime.lines({"memory_peak_bytes": 2 ** 20})
    assert len(bare) == 1 and bare[0].startswith("Resources:")
    assert runtime.peak_rss_bytes() > 2 ** 20  # at least this Python process


def test_precount_gets_the_mutated_models_own_budget():
    """A precount is one DuckDB query: 10x the mutated model's own intact build, at least 30 s -
    not the build's budget, which adds the downstream models and dbt's parse (on the heavy project
    an exploding count held a worker for that whole 92 s)."""
    from adegen.validate.workers.budget import precount_seconds

    assert precount_seconds({"model.a.m": 0.5, "model.a.down": 40.0}, "model.a.m") == 30.0
    assert precount_seconds({"model.a.m": 6.0}, "model.a.m") == 60.0
    assert precount_seconds({}, "model.a.unknown") == 30.0
