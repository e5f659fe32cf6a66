"""adegen.snowflake_emulator against a real fakesnow server: lifecycle, start failures, and the Snowflake
example project (integration_tests_snowflake) seeded + built with dbt-snowflake.

Everything runs in tmp_path copies: the repository tree is never written to."""
from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("fakesnow", reason="fakesnow is not installed (pip install 'fakesnow[server]==0.12.1', "
                                       "extra adegen[snowflake-emulator]); Snowflake emulator tests skipped")

from adegen.snowflake_emulator import (EmulatorStartError, EmulatorUnavailableError, FakesnowServer,  # noqa: E402
                             copy_project, run_dbt)
from adegen.snowflake_emulator import server as server_mod  # noqa: E402
from adegen.core.errors import AdegenError  # noqa: E402
from adegen.discover.project import load_project  # noqa: E402
from reliability_kit import process_alive  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SF_PROJECT = REPO / "integration_tests_snowflake"
MODELS = ["stg_customers", "stg_products", "stg_orders", "stg_order_items", "stg_events", "int_order_lines",
          "int_customer_tags", "int_event_items", "fct_orders", "dim_customers", "fct_product_performance"]


# -- lifecycle and start failures ---------------------------------------------------------------

def test_context_manager_stops_server_when_body_raises(tmp_path):
    srv = FakesnowServer(tmp_path / "fs", start_timeout=30)
    with pytest.raises(RuntimeError, match="boom"):
        with srv:
            pid, port = srv.pid, srv.port
            assert srv.running
            with socket.create_connection(("127.0.0.1", port), timeout=2):
                pass
            raise RuntimeError("boom")
    assert not srv.running and not process_alive(pid)
    assert server_mod.port_is_free(port)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    srv.stop()                                          # idempotent


def test_server_exits_when_its_parent_dies_without_stop(tmp_path):
    """atexit cannot run on SIGKILL: the launcher's parent watchdog ends the server instead."""
    script = (
        "import sys, os, time\n"
        f"sys.path.insert(0, {str(REPO / 'python')!r})\n"
        "from adegen.snowflake_emulator import FakesnowServer\n"
        f"srv = FakesnowServer({str(tmp_path / 'fs')!r}).start()\n"
        "print(srv.pid, flush=True)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    server_pid = int(out.stdout.split()[0])
    deadline = time.monotonic() + 10
    while process_alive(server_pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not process_alive(server_pid), "orphaned fakesnow server still running"


def test_fixed_port_already_taken_fails_fast(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        t0 = time.monotonic()
        with pytest.raises(EmulatorStartError, match="already in use"):
            FakesnowServer(tmp_path / "fs", port=port).start()
        assert time.monotonic() - t0 < 10


def test_real_launcher_that_cannot_bind_is_reported(tmp_path, monkeypatch):
    # skip the pre-check so the real launcher (uvicorn) hits the taken port and exits
    monkeypatch.setattr(server_mod, "port_is_free", lambda port, host="127.0.0.1": True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        srv = FakesnowServer(tmp_path / "fs", port=port, start_timeout=30)
        t0 = time.monotonic()
        with pytest.raises(EmulatorStartError, match="already in use|exited during start-up"):
            srv.start()
        assert time.monotonic() - t0 < 30 and not srv.running


def test_launcher_exiting_immediately_gives_clear_error(tmp_path):
    srv = FakesnowServer(tmp_path / "fs", launcher=[sys.executable, "-c", "import sys; print('kaput'); sys.exit(7)"])
    t0 = time.monotonic()
    with pytest.raises(EmulatorStartError, match=r"exited during start-up \(exit code 7\)") as ei:
        srv.start()
    assert "kaput" in str(ei.value)                     # the server log tail is in the message
    assert isinstance(ei.value, AdegenError) and time.monotonic() - t0 < 5


def test_launcher_that_never_listens_times_out_and_is_killed(tmp_path):
    srv = FakesnowServer(tmp_path / "fs", start_timeout=1.5, stop_timeout=2,
                         launcher=[sys.executable, "-c", "import time; time.sleep(120)"])
    t0 = time.monotonic()
    with pytest.raises(EmulatorStartError, match="did not become ready"):
        srv.start()
    assert time.monotonic() - t0 < 8
    assert srv.proc is not None and srv.proc.poll() is not None     # killed, not left behind


def test_invalid_data_dir(tmp_path):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    with pytest.raises(EmulatorStartError, match="data dir"):
        FakesnowServer(not_a_dir / "sub").start()


def test_fakesnow_missing_is_unavailable(tmp_path, monkeypatch):
    monkeypatch.setattr(server_mod, "fakesnow_available", lambda: (False, "missing python modules fakesnow"))
    with pytest.raises(EmulatorUnavailableError, match="fakesnow"):
        FakesnowServer(tmp_path / "fs").start()


def test_dbt_call_timeout_kills_the_process(tmp_path):
    r = run_dbt(["parse"], tmp_path, tmp_path, timeout=0.3)
    assert r.status == "timeout" and r.timed_out and r.returncode is None and r.duration < 10


# -- the example Snowflake project on the emulator ------------------------------------------------

@pytest.fixture(scope="module")
def sf_server(tmp_path_factory):
    if not SF_PROJECT.is_dir():
        pytest.skip("integration_tests_snowflake/ missing")
    root = tmp_path_factory.mktemp("emulator")
    with FakesnowServer(root / "fakesnow") as srv:
        yield srv, root


@pytest.fixture(scope="module")
def built_project(sf_server):
    """Scratch copy of integration_tests_snowflake: deps + seed + build on fakesnow."""
    srv, root = sf_server
    proj = copy_project(SF_PROJECT, root / "acme_sf")
    profiles = srv.write_profiles(load_project(proj))
    runs = {}
    for args in (["deps"], ["seed"], ["build"]):
        runs[args[0]] = r = srv.run_dbt(args, proj, profiles, timeout=240)
        assert r.ok, r.summary() + "\n" + r.tail(60)
    return srv, proj, profiles, runs


def test_seed_and_build_green(built_project):
    srv, proj, profiles, runs = built_project
    assert "PASS=5 " in runs["seed"].console                          # five seeds
    assert "ERROR=0" in runs["build"].console and "WARN=0" in runs["build"].console
    conn = srv.connect("ACME_SF", "PUBLIC")
    try:
        cur = conn.cursor()
        for m in MODELS:
            cur.execute(f"select count(*) from {m}")
            assert cur.fetchone()[0] > 0, f"{m} is empty"
        cur.execute("select count(*), count(distinct order_id) from stg_orders")   # QUALIFY dedup
        assert cur.fetchone() == (220, 220)
        cur.execute("select count(*) from raw_orders")
        assert cur.fetchone()[0] == 256
    finally:
        conn.close()
    # nothing was written into the repository's project
    for leftover in ("target", "dbt_packages", "logs", "package-lock.yml"):
        assert not (SF_PROJECT / leftover).exists(), leftover


def test_unsupported_feature_is_classified(built_project):
    srv, proj, profiles, _ = built_project
    (proj / "models" / "zz_probe_keys.sql").write_text(
        "{{ config(materialized='table') }}\nselect current_session() as session_id\n")  # Snowflake has it, fakesnow not
    (proj / "models" / "zz_probe_typo.sql").write_text(
        "{{ config(materialized='table') }}\nselect order_idd from {{ ref('stg_orders') }}\n")                        # a real bug
    try:
        r = srv.run_dbt(["run", "-s", "zz_probe_keys"], proj, profiles, timeout=120)
        assert r.status == "unsupported", r.summary() + "\n" + r.tail(30)
        assert r.duration < 60                                                   # no connector retry hang
        r = srv.run_dbt(["run", "-s", "zz_probe_keys", "zz_probe_typo"], proj, profiles, timeout=120)
        assert r.status == "failed" and [u.id for u in r.unsupported] == ["missing_function:current_session"], r.summary()
        assert {b.name for b in r.error_blocks} == {"zz_probe_keys", "zz_probe_typo"}
    finally:
        for f in ("zz_probe_keys.sql", "zz_probe_typo.sql"):
            (proj / "models" / f).unlink()


def test_duckdb_data_file_load_and_clone(built_project, tmp_path):
    """A DuckDB raw-data file instead of seeds: table-by-table load into a fresh database, then the
    models build from it; clone_database copies base tables table by table."""
    duckdb = pytest.importorskip("duckdb")
    srv, proj, _, _ = built_project
    db_file = tmp_path / "acme_raw.duckdb"
    text_cols = {"raw_customers": ["signup_date", "birth_date", "tags", "email"],
                 "raw_products": ["list_price"], "raw_orders": ["shipping_fee", "coupon_code"],
                 "raw_events": ["payload"], "raw_order_items": []}
    con = duckdb.connect(str(db_file))
    for table, cols in text_cols.items():
        types = "{" + ", ".join(f"'{c}': 'VARCHAR'" for c in cols) + "}"
        con.execute(f"create table {table} as select * from read_csv('{proj / 'seeds' / table}.csv', "
                    f"header=true, types={types})")
    con.close()
    loaded = srv.load_duckdb(db_file, database="ACME_DUCK", schemas={"main": "PUBLIC"})
    assert {t["table"] for t in loaded} == {f"ACME_DUCK.PUBLIC.{t.upper()}" for t in text_cols}
    assert {t["table"].split(".")[-1]: t["rows"] for t in loaded}["RAW_ORDERS"] == 256
    profiles = srv.write_profiles(load_project(proj), database="ACME_DUCK")
    r = srv.run_dbt(["build", "--exclude", "resource_type:seed"], proj, profiles, timeout=240,
                    target_path=tmp_path / "target")
    assert r.ok, r.summary() + "\n" + r.tail(40)
    copied = srv.clone_database("ACME_DUCK", "ACME_DUCK_CLONE")
    assert "PUBLIC.RAW_ORDERS" in copied and "PUBLIC.FCT_ORDERS" in copied
    conn = srv.connect()
    try:
        cur = conn.cursor()
        cur.execute("select count(*) from ACME_DUCK_CLONE.PUBLIC.FCT_ORDERS")
        assert cur.fetchone()[0] == 220
    finally:
        conn.close()


def test_second_server_gets_its_own_port(sf_server, tmp_path):
    srv, _ = sf_server
    with FakesnowServer(tmp_path / "fs2") as other:
        assert other.port != srv.port and other.running
    assert not other.running and srv.running
