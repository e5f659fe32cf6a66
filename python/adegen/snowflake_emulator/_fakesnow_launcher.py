"""Hardened fakesnow HTTP server (run as a script with the current python, never imported by adegen).

    python _fakesnow_launcher.py --port PORT [--host 127.0.0.1]

Monkeypatches private internals of fakesnow 0.12.1 (see shared/docs/fakesnow.md, "Hardened server
launcher"); keep fakesnow pinned and re-check after any upgrade:

a. NULL TIMESTAMP_NTZ values are sent as NULL, not as 1970-01-01 (arrow.timestamp_to_sf_struct).
b. Internal errors are answered as ordinary SQL errors (HTTP 200, success=false, code 001003,
   message "fakesnow internal error ...") instead of HTTP 500, which the Snowflake connector retries
   forever (dbt hangs).
c. current_warehouse() / current_account() / current_region() exist in every database.

It also adds two adegen routes:
- GET  /adegen/health        -> {"ok": true, "pid": <server pid>, "fakesnow": <version>}
- POST /adegen/load-duckdb   -> copy every table of a DuckDB file, table by table, into
                                DATABASE.SCHEMA (names upper-cased like Snowflake unquoted identifiers)
"""
from __future__ import annotations

import os
import sys

# Run by path: drop the script's own directory from sys.path so sibling modules of this file can
# never shadow a top-level import below.
if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import threading  # noqa: E402

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import snowflake.connector.errors as sf_errors  # noqa: E402
import uvicorn  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.concurrency import run_in_threadpool  # noqa: E402
from starlette.responses import JSONResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

import fakesnow  # noqa: E402
import fakesnow.arrow as fs_arrow  # noqa: E402
import fakesnow.macros as fs_macros  # noqa: E402
import fakesnow.server as fs_server  # noqa: E402
from fakesnow.cursor import FakeSnowflakeCursor  # noqa: E402

try:
    from importlib.metadata import version as _pkg_version

    FAKESNOW_VERSION = _pkg_version("fakesnow")
except Exception:  # pragma: no cover
    FAKESNOW_VERSION = getattr(fakesnow, "__version__", "unknown")

# --- (a) keep NULL timestamps -------------------------------------------------------------------
_orig_ts = fs_arrow.timestamp_to_sf_struct


def timestamp_to_sf_struct(ts):
    if isinstance(ts, pa.ChunkedArray):
        ts = ts.combine_chunks()
    st = _orig_ts(ts.fill_null(0) if ts.null_count else ts)
    if not ts.null_count:
        return st
    return pa.StructArray.from_arrays(
        [st.field(i) for i in range(st.type.num_fields)], fields=list(st.type), mask=pc.is_null(ts)
    )


fs_arrow.timestamp_to_sf_struct = timestamp_to_sf_struct

# --- (b) real error messages instead of HTTP 500 ------------------------------------------------
_orig_execute = FakeSnowflakeCursor.execute


def execute(self, *a, **kw):
    try:
        return _orig_execute(self, *a, **kw)
    except (sf_errors.ProgrammingError, sf_errors.OperationalError):
        raise
    except Exception as e:
        raise sf_errors.ProgrammingError(
            msg=f"fakesnow internal error: {type(e).__name__}: {e}", errno=1003, sqlstate="42000"
        ) from e


FakeSnowflakeCursor.execute = execute

# --- (c) session functions dbt-snowflake asks for -----------------------------------------------
_orig_creation_sql = fs_macros.creation_sql


def creation_sql(catalog):
    return _orig_creation_sql(catalog) + f"""
        CREATE OR REPLACE MACRO {catalog}.current_warehouse() AS 'FAKE_WH';
        CREATE OR REPLACE MACRO {catalog}.current_account() AS 'FAKESNOW';
        CREATE OR REPLACE MACRO {catalog}.current_region() AS 'AWS_US_WEST_2';"""


fs_macros.creation_sql = creation_sql


async def query_request(request):
    resp = await fs_server.query_request(request)
    if resp.status_code != 500:
        return resp
    try:
        msg = json.loads(resp.body).get("message") or "unhandled exception"
    except Exception:
        msg = "unhandled exception"
    return JSONResponse(
        {
            "data": {"errorCode": "001003", "sqlState": "42000"},
            "code": "001003",
            "message": f"fakesnow internal error (see server log): {msg}",
            "success": False,
        }
    )


# --- adegen routes -----------------------------------------------------------------------------
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")
_load_lock = threading.Lock()


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


async def health(request):
    return JSONResponse({"ok": True, "pid": os.getpid(), "fakesnow": FAKESNOW_VERSION})


def _load_duckdb(path: str, database: str, schemas: dict[str, str], upper: bool) -> dict:
    database = database.upper()
    if not _IDENT.match(database):
        raise ValueError(f"database name {database!r} is not a plain identifier")
    loaded: list[dict] = []
    with _load_lock:
        # fakesnow creates the database (with its information_schema macros) and schema on connect
        for dst in sorted(set(schemas.values())):
            if not _IDENT.match(dst):
                raise ValueError(f"schema name {dst!r} is not a plain identifier")
            fs_server.shared_fs.connect(database, dst.upper()).close()
        duck = fs_server.shared_fs.duck_conn.cursor()
        alias = "_adegen_src"
        duck.execute(f"ATTACH '{path.replace(chr(39), chr(39) * 2)}' AS {alias} (READ_ONLY)")
        try:
            tables = duck.execute(
                "select schema_name, table_name from duckdb_tables() where database_name = ? "
                "order by schema_name, table_name",
                [alias],
            ).fetchall()
            for src_schema, table in tables:
                dst_schema = schemas.get(src_schema)
                if dst_schema is None:
                    continue
                dst_schema = dst_schema.upper()
                cols = duck.execute(
                    "select column_name from duckdb_columns() where database_name = ? and schema_name = ? "
                    "and table_name = ? order by column_index",
                    [alias, src_schema, table],
                ).fetchall()
                dst_table = table.upper() if upper else table
                select = ", ".join(
                    f"{_q(c)} as {_q(c.upper() if upper else c)}" for (c,) in cols
                )
                duck.execute(
                    f"create or replace table {database}.{dst_schema}.{_q(dst_table)} as "
                    f"select {select} from {alias}.{_q(src_schema)}.{_q(table)}"
                )
                (n,) = duck.execute(
                    f"select count(*) from {database}.{dst_schema}.{_q(dst_table)}"
                ).fetchone()
                loaded.append({"source": f"{src_schema}.{table}", "table": f"{database}.{dst_schema}.{dst_table}",
                               "rows": n, "columns": len(cols)})
        finally:
            duck.execute(f"DETACH {alias}")
            duck.close()
    return {"ok": True, "tables": loaded}


async def load_duckdb(request):
    try:
        body = await request.json()
        result = await run_in_threadpool(
            _load_duckdb, body["path"], body["database"], dict(body.get("schemas") or {"main": "PUBLIC"}),
            bool(body.get("upper", True)),
        )
        return JSONResponse(result)
    except Exception as e:  # answered, never a 500
        return JSONResponse({"ok": False, "error": f"{type(e).__name__}: {e}"})


routes = [
    Route(r.path, query_request, methods=["POST"]) if r.path == "/queries/v1/query-request" else r
    for r in fs_server.routes
]
routes += [
    Route("/adegen/health", health, methods=["GET"]),
    Route("/adegen/load-duckdb", load_duckdb, methods=["POST"]),
]
app = Starlette(routes=routes)


def _watch_parent(parent_pid: int) -> None:
    """Exit when the process that started us is gone (it could not stop us: SIGKILL, crash)."""
    import time

    while True:
        time.sleep(1.0)
        if os.getppid() != parent_pid:
            print(f"adegen fakesnow launcher: parent {parent_pid} is gone, exiting", flush=True)
            os._exit(0)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--log-level", default="warning")
    ap.add_argument("--parent-pid", type=int, default=None,
                    help="exit when this process (our parent) is gone")
    ns = ap.parse_args(argv)
    if ns.parent_pid:
        threading.Thread(target=_watch_parent, args=(ns.parent_pid,), daemon=True).start()
    print(f"adegen fakesnow launcher: fakesnow {FAKESNOW_VERSION} pid {os.getpid()} "
          f"on {ns.host}:{ns.port}", flush=True)
    uvicorn.run(app, host=ns.host, port=ns.port, log_level=ns.log_level)


if __name__ == "__main__":
    main()
