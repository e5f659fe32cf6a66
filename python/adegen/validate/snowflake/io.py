"""Snowflake emulator I/O for `EmulatorValidator`: identifiers and column types, exporting server
relations into local DuckDB files, cloning and dropping screening databases (fakesnow cannot
CLONE or DROP DATABASE)."""
from __future__ import annotations

from pathlib import Path

from adegen.sql.quote import bare_or_quoted, ident

_SEMI_STRUCTURED = ("VARIANT", "OBJECT", "ARRAY")


def _sf_ident(name: str) -> str:
    """A Snowflake identifier: unquoted (upper-cased by Snowflake) when plain, else quoted."""
    return bare_or_quoted(name, upper=True)


def _sf_type(field) -> str:
    """Snowflake column type of a connector Arrow field (for `_no-op.txt`)."""
    import pyarrow as pa

    meta = {k.decode(): v.decode() for k, v in (field.metadata or {}).items()}
    logical = meta.get("logicalType", "").upper()
    t = field.type
    if logical in _SEMI_STRUCTURED:
        return "varchar"      # compared as text; excluded from the equality test (see prove)
    if logical == "FIXED" or pa.types.is_integer(t) or pa.types.is_decimal(t):
        p = int(meta.get("precision") or getattr(t, "precision", 38) or 38)
        s = int(meta.get("scale") or getattr(t, "scale", 0) or 0)
        return f"number({p},{s})"
    if logical == "REAL" or pa.types.is_floating(t):
        return "float"
    if logical == "BOOLEAN" or pa.types.is_boolean(t):
        return "boolean"
    if logical == "DATE" or pa.types.is_date(t):
        return "date"
    if logical.startswith("TIMESTAMP"):
        return logical.lower()
    if pa.types.is_timestamp(t):
        return "timestamp_tz" if t.tz else "timestamp_ntz"
    if logical == "TIME" or pa.types.is_time(t):
        return "time"
    if logical == "BINARY" or pa.types.is_binary(t):
        return "binary"
    return "varchar"


def _drop_adegen_package(app: Path) -> None:
    """Remove adegen itself (a `local:` package, made absolute by emulator.copy_project) from the
    scratch copy's packages.yml / dependencies.yml, like output.copy_project does for tasks."""
    import yaml

    from adegen.core.paths import package_root

    root = Path(package_root()).resolve()
    for fname in ("packages.yml", "dependencies.yml"):
        f = app / fname
        if not f.is_file():
            continue
        data = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
        pkgs = data.get("packages") if isinstance(data, dict) else None
        if not isinstance(pkgs, list):
            continue
        kept = [e for e in pkgs if not (isinstance(e, dict) and isinstance(e.get("local"), str)
                                        and "{{" not in e["local"] and Path(e["local"]).resolve() == root)]
        if len(kept) == len(pkgs):
            continue
        if kept or set(data) - {"packages"}:
            data["packages"] = kept
            f.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        else:
            f.unlink()



class EmulatorIO:
    """Mixin of EmulatorValidator: needs `_conn_lock`, `_connect(srv, database)`, `_base`,
    `database`, `schema`, `project`, `data_file`."""

    @staticmethod
    def _why(r) -> str:
        if r.status == "unsupported":
            return "the emulator cannot run it: " + "; ".join(u.render() for u in r.unsupported)
        if r.status == "timeout":
            return "timed out on the emulator"
        first = next((b for b in r.error_blocks), None)
        msg = f"{first.kind} in {first.resource_type} {first.name}: {first.message}" if first else r.tail(8)
        return " ".join(msg.split())[:400]

    def _app(self, dest: Path) -> Path:
        """A scratch copy for the emulator (compat macros), adegen left out as the shipped copy
        does, packages installed offline as the user has them (no `dbt deps`)."""
        from adegen.dbt import ScratchProject
        from adegen.snowflake_emulator import copy_project

        app = copy_project(self.project.project_dir, dest)
        _drop_adegen_package(app)
        ScratchProject(self.project.project_dir, app).install_packages()
        return app

    def _profiles(self, out_dir: Path, *, port, database: str | None = None) -> Path:
        from adegen.snowflake_emulator import emulator_profiles
        from adegen.snowflake_emulator.profiles import write_profiles_yml

        content = emulator_profiles(self.project, host="127.0.0.1", port=0, database=database)
        for prof in content.values():
            for out in prof["outputs"].values():
                out["port"] = port
        return write_profiles_yml(content, out_dir)

    def _load_data(self, srv, database: str) -> None:
        srv.load_duckdb(self.data_file, database=database, schemas={"main": self.schema})

    # ------------------------------------------------------------------ screening
    def _export(self, srv, database: str, rels: list[tuple[str, str]], out_db: Path,
                local_names: list[str] | None = None) -> dict:
        """Copy server relations DATABASE.schema.alias into a local DuckDB file (as
        "schema"."alias", or main."<local name>"); returns {local name: {column: snowflake type}}."""
        import duckdb

        for p in (out_db, Path(str(out_db) + ".wal")):
            if p.exists():
                p.unlink()
        types: dict[str, dict[str, str]] = {}
        with self._conn_lock:
            conn = self._connect(srv, database)
        try:
            cur = conn.cursor()
            con = duckdb.connect(str(out_db))
            try:
                for i, (schema, alias) in enumerate(rels):
                    local = (f"main.{ident(local_names[i])}" if local_names
                             else f"{ident(schema)}.{ident(alias)}")
                    try:
                        cur.execute(f"select * from {_sf_ident(database)}.{_sf_ident(schema)}.{_sf_ident(alias)}")
                        tbl = cur.fetch_arrow_all(force_return_table=True)
                    except Exception:  # noqa: BLE001 - a missing relation is a difference
                        continue
                    if not local_names:
                        con.execute(f"CREATE SCHEMA IF NOT EXISTS {ident(schema)}")
                    con.register("adegen_arrow", tbl)
                    con.execute(f"CREATE TABLE {local} AS SELECT * FROM adegen_arrow")
                    con.unregister("adegen_arrow")
                    key = local_names[i] if local_names else f"{schema}.{alias}"
                    types[key] = {f.name: _sf_type(f) for f in tbl.schema}
                    types[key + "#logical"] = {f.name: {k.decode(): v.decode() for k, v in
                                                        (f.metadata or {}).items()}.get("logicalType", "")
                                               for f in tbl.schema}
            finally:
                con.close()
        finally:
            conn.close()
        return types

    def _clone_intact(self, srv, db: str) -> None:
        """DB := table copies of every relation of the intact build (views become tables:
        fakesnow's CREATE DATABASE ... CLONE is silently empty and views are not in
        information_schema.tables)."""
        with self._conn_lock:
            conn = self._connect(srv, None)
        try:
            cur = conn.cursor()
            src = _sf_ident(self.database)
            cur.execute(f"create database if not exists {_sf_ident(db)}")
            cur.execute(f"select table_schema, table_name from {src}.information_schema.tables "
                        "where table_schema <> 'INFORMATION_SCHEMA'")
            rels = {(s.upper(), t.upper()) for s, t in cur.fetchall()}
            rels |= {(m["schema"].upper(), m["alias"].upper()) for m in self._base["models"].values()
                     if m["materialized"] != "ephemeral"}
            for s, t in sorted(rels):
                cur.execute(f"create schema if not exists {_sf_ident(db)}.{_sf_ident(s)}")
                cur.execute(f"create or replace table {_sf_ident(db)}.{_sf_ident(s)}.{_sf_ident(t)} as "
                            f"select * from {src}.{_sf_ident(s)}.{_sf_ident(t)}")
        finally:
            conn.close()

    def _drop_database(self, srv, db: str) -> None:
        """Free the screening copy's memory (fakesnow cannot DROP DATABASE: drop its schemas)."""
        schemas = {m["schema"].upper() for m in self._base["models"].values()} | {self.schema.upper()}
        try:
            with self._conn_lock:
                conn = self._connect(srv, None)
            try:
                cur = conn.cursor()
                for s in sorted(schemas):
                    try:
                        cur.execute(f"drop schema if exists {_sf_ident(db)}.{_sf_ident(s)} cascade")
                    except Exception:  # noqa: BLE001 - best effort
                        pass
            finally:
                conn.close()
        except Exception:  # noqa: BLE001 - best effort
            pass

    @staticmethod
    def _copy_local(snapshot: Path, rels, names, out: Path) -> None:
        import duckdb

        for p in (out, Path(str(out) + ".wal")):
            if p.exists():
                p.unlink()
        con = duckdb.connect(str(out))
        try:
            con.execute(f"ATTACH '{snapshot}' AS adegen_snap (READ_ONLY)")
            for (s, a), n in zip(rels, names):
                con.execute(f"CREATE TABLE main.{ident(n)} AS SELECT * FROM "
                            f"adegen_snap.{ident(s)}.{ident(a)}")
        finally:
            con.close()

