"""Compile every candidate mutant in ONE dbt invocation on a scratch copy of the project and reject
those whose compiled SQL no longer parses. The user's project is never touched.

Each mutant is written next to its original as an extra model `<stem>__adegen_m<N>.sql`, then
`dbt compile --select <all mutant names>` runs once; the compiled SQL of each goes through
`adegen.rewrite.check_parses(compiled, dialect)`.

Performance: on DuckDB the compile runs in discovery's cached scratch copy (adegen.discover.Scratch),
with the same scratch profile, so dbt's partial parse reuses discovery's parse and only the mutant
files are parsed (at 5,000 models a second full parse would cost as much as discovery itself);
it runs in-process (no second dbt start-up) with `--no-write-json`. The mutant files, their
compiled output and the database copy are removed afterwards, under the scratch lock. Snowflake
(and `ADEGEN_COMPILE_FRESH_COPY=1`) keep the fresh-copy subprocess compile."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

from .output import copy_ignore, rewrite_packages


@dataclass
class CompileResult:
    ok: bool | None  # None: could not be decided (dbt failed as a whole); callers keep the mutant
    reason: str = ""
    compiled: str | None = None


def _check_parses(sql: str, dialect: str) -> tuple[bool, str]:
    try:
        from .rewrite import check_parses  # type: ignore
    except ImportError:
        check_parses = None
    if check_parses is not None:
        r = check_parses(sql, dialect)
        if r is None:  # the contract: None when it parses, else the error message
            return True, ""
        if isinstance(r, tuple):
            return bool(r[0]), str(r[1]) if len(r) > 1 and r[1] else ""
        if isinstance(r, str):  # an error message, or "" when fine
            return (not r), r
        return bool(r), "" if r else "compiled SQL does not parse"
    import sqlglot

    try:
        sqlglot.parse(sql, read=dialect)
        return True, ""
    except Exception as exc:  # noqa: BLE001
        return False, str(exc).splitlines()[0]


def _dbt_executable() -> list[str]:
    exe = shutil.which("dbt")
    if exe:
        return [exe]
    return [sys.executable, "-m", "dbt.cli.main"]


def compile_mutants(project, mutants: list[tuple[str, str, str]], *, workdir: Path | None = None,
                    adegen_root: Path | None = None, timeout: int = 600) -> dict[str, CompileResult]:
    """mutants: (key, model relative path, mutated text). Returns key -> CompileResult.

    `project` is a ProjectInfo (project_dir, name, adapter_type, profile_name, target_name,
    target_config, db_path, schema)."""
    from .paths import package_root

    results: dict[str, CompileResult] = {}
    if not mutants:
        return results
    project_dir = Path(project.project_dir)
    adapter = getattr(project, "adapter_type", "duckdb")
    dialect = "snowflake" if adapter == "snowflake" else "duckdb"
    if (adapter == "duckdb" and adegen_root is None and hasattr(project, "target_config")
            and os.environ.get("ADEGEN_COMPILE_FRESH_COPY", "") not in ("1", "true")):
        return _compile_in_scratch(project, mutants, dialect)
    tmp = Path(tempfile.mkdtemp(prefix="adegen-compile-", dir=workdir))
    try:
        work = tmp / "project"
        shutil.copytree(project_dir, work, symlinks=True, ignore=copy_ignore(project_dir))
        rewrite_packages(project_dir, work, adegen_root or package_root())
        # packages other than adegen: reuse what the project has installed
        pk = project_dir / "dbt_packages"
        needs_pkgs = any((work / f).is_file() for f in ("packages.yml", "dependencies.yml"))
        if needs_pkgs and pk.is_dir():
            (work / "dbt_packages").mkdir(exist_ok=True)
            for d in sorted(pk.iterdir()):
                if d.is_dir() and d.name != "adegen":
                    (work / "dbt_packages" / d.name).symlink_to(d.resolve(), target_is_directory=True)
        names: dict[str, str] = {}
        for i, (key, rel, text) in enumerate(mutants):
            rp = PurePosixPath(rel)
            name = f"{rp.stem}__adegen_m{i}"
            dst = work / rp.parent / f"{name}.sql"
            dst.parent.mkdir(parents=True, exist_ok=True)
            # keep the exact bytes (encoding, line endings)
            # a unique alias so a model that sets its own alias does not collide with its original
            dst.write_bytes(text.encode("utf-8", errors="surrogateescape")
                            + f"\n{{{{ config(alias='{name}') }}}}\n".encode())
            names[key] = name
        profiles = tmp / "profiles"
        profiles.mkdir()
        target = getattr(project, "target_name", "dev") or "dev"
        profile_name = getattr(project, "profile_name", None) or project.name
        if adapter == "duckdb":
            db = tmp / "compile.duckdb"
            src_db = getattr(project, "db_path", None)
            if src_db and Path(src_db).is_file():
                shutil.copy2(src_db, db)
            out = {"type": "duckdb", "path": str(db), "schema": getattr(project, "schema", None) or "main",
                   "threads": 1}
            tc = getattr(project, "target_config", None) or {}
            for k in ("extensions", "settings"):
                if tc.get(k):
                    out[k] = tc[k]
        else:
            # compiling needs no query; dummy credentials and short timeouts so nothing waits on a login
            out = {"type": "snowflake", "account": "adegen-offline", "user": "adegen", "password": "adegen-offline",
                   "database": getattr(project, "db_name", "db"), "schema": getattr(project, "schema", None) or "public",
                   "warehouse": "ADEGEN_OFFLINE", "threads": 1, "connect_timeout": 5, "connect_retries": 0}
        (profiles / "profiles.yml").write_text(
            yaml.safe_dump({profile_name: {"target": target, "outputs": {target: out}}}), encoding="utf-8")
        env = dict(os.environ, DBT_PROFILES_DIR=str(profiles), DBT_SEND_ANONYMOUS_USAGE_STATS="false",
                   DO_NOT_TRACK="1", DBT_PARTIAL_PARSE="false")
        cmd = _dbt_executable() + ["--no-use-colors", "compile", "--project-dir", str(work),
                                   "--profiles-dir", str(profiles), "--target", target,
                                   "--select", *names.values()]
        try:
            r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=timeout,
                               stdin=subprocess.DEVNULL)
            log = (r.stdout or "") + (r.stderr or "")
        except subprocess.TimeoutExpired:
            log = "dbt compile timed out"
        results.update(_collect(names, work / "target" / "compiled", log, dialect))
        return results
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _collect(names: dict, compiled_root: Path, log: str, dialect: str) -> dict:
    """CompileResult per mutant key from dbt's compiled files (None = dbt did not get that far)."""
    found = {p.stem: p for p in compiled_root.rglob("*__adegen_m*.sql")} if compiled_root.is_dir() else {}
    results = {}
    for key, name in names.items():
        p = found.get(name)
        if p is None:
            err = _error_for(name, log)
            results[key] = (CompileResult(False, f"dbt could not compile the mutant: {err}") if err
                            else CompileResult(None, "dbt compile did not run: " + _last_error(log)))
            continue
        sql = p.read_text(encoding="utf-8", errors="replace")
        ok, why = _check_parses(sql, dialect)
        results[key] = CompileResult(ok, why if not ok else "", sql)
    return results


def _mutant_name(i: int, rel: str) -> str:
    return f"{PurePosixPath(rel).stem}__adegen_m{i}"


def _write_mutant(root: Path, rel: str, name: str, text: str) -> Path:
    dst = root / PurePosixPath(rel).parent / f"{name}.sql"
    dst.parent.mkdir(parents=True, exist_ok=True)
    # keep the exact bytes (encoding, line endings); a unique alias so a model that sets its own
    # alias does not collide with its original
    dst.write_bytes(text.encode("utf-8", errors="surrogateescape")
                    + f"\n{{{{ config(alias='{name}') }}}}\n".encode())
    return dst


def _compile_in_scratch(project, mutants: list[tuple[str, str, str]], dialect: str) -> dict[str, CompileResult]:
    """The compile in discovery's scratch copy: partial parse (only the mutants are new files)."""
    from . import dbt_runner
    from .discover import DIRTY_MARK, Scratch

    results: dict[str, CompileResult] = {}
    scratch = Scratch(project)
    with scratch.lock():
        scratch.write_profiles()
        scratch.prepare()
        work = scratch.project
        names: dict[str, str] = {}
        written: list[Path] = []
        compiled_root = scratch.target_path / "compiled"
        dirty = scratch.root / DIRTY_MARK
        try:
            shutil.rmtree(compiled_root, ignore_errors=True)
            dirty.touch()  # until the finally below ran: a kill leaves it, and prepare() re-syncs
            for i, (key, rel, text) in enumerate(mutants):
                name = _mutant_name(i, rel)
                written.append(_write_mutant(work, rel, name, text))
                names[key] = name
            db = scratch.compile_db
            for f in (db, db.with_name(db.name + ".wal")):
                f.unlink(missing_ok=True)
            src_db = getattr(project, "db_path", None)
            if src_db and Path(src_db).is_file():
                shutil.copy2(src_db, db)
            target = getattr(project, "target_name", "dev") or "dev"
            run = dbt_runner.run_dbt(
                ["compile", "--project-dir", str(work), "--profiles-dir", str(scratch.profiles),
                 "--target", target, "--target-path", str(scratch.target_path),
                 "--log-path", str(scratch.log_path), "--no-write-json",
                 # one glob selector (only the mutant files match it: they are removed after every
                 # compile) instead of one name selector per mutant, each a scan of every node
                 "--select", "*__adegen_m*"],
                env={"DBT_TARGET_PATH": str(scratch.target_path), "DBT_LOG_PATH": str(scratch.log_path)})
            # what `dbt compile` prints (info/warn/error events), as the subprocess compile parsed
            log = "\n".join(run.log_lines + ([run.exception] if run.exception else []))
            results.update(_collect(names, compiled_root, log, dialect))
            return results
        finally:
            for f in written:
                f.unlink(missing_ok=True)
            shutil.rmtree(compiled_root, ignore_errors=True)
            db = scratch.compile_db
            for f in (db, db.with_name(db.name + ".wal")):
                f.unlink(missing_ok=True)
            dirty.unlink(missing_ok=True)


def _error_for(name: str, log: str) -> str | None:
    lines = log.splitlines()
    for i, line in enumerate(lines):
        if name in line and ("Error" in line or "error" in line):
            return " ".join(l.strip() for l in lines[i:i + 3])[:300]
    return None


def _last_error(log: str) -> str:
    errs = [l.strip() for l in log.splitlines() if "Error" in l or "error" in l]
    return (errs[-1] if errs else (log.strip().splitlines() or ["no output"])[-1])[:300]
