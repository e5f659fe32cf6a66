"""Compile every candidate mutant in ONE dbt invocation on a scratch copy of the project and reject
those whose compiled SQL no longer parses. The user's project is never touched.

Each mutant is written next to its original as an extra model `<stem>__adegen_m<N>.sql` (own
alias), then `dbt compile --select "*__adegen_m*"` runs once; the compiled SQL of each goes through
`adegen.rewrite.check_parses(compiled, dialect)`.

Performance: the compile runs in discovery's cached scratch copy (adegen.discover.payload.Scratch), with
the same scratch profile, so dbt's partial parse reuses discovery's parse and only the mutant files
are parsed (at 5,000 models a second full parse would cost as much as discovery itself); it runs
in-process (no second dbt start-up) with `--no-write-json`. The mutant files, their compiled output
and the database copy are removed afterwards, under the scratch lock (and by the next sync when a
kill skipped that). `ADEGEN_COMPILE_FRESH_COPY=1` compiles in a fresh `ScratchProject` with a dbt
subprocess instead (the reference the scratch compile is tested against).
"""
from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from adegen import backends
from adegen.dbt import DbtCall, ScratchProject, make_runner, write_profiles
from adegen.discover.payload import Scratch
from adegen.core.paths import package_root
from adegen.rewrite import check_parses
from adegen.core.settings import get_settings


@dataclass
class CompileResult:
    ok: bool | None  # None: could not be decided (dbt failed as a whole); callers keep the mutant
    reason: str = ""
    compiled: str | None = None
    catalog: str | None = None  # the DuckDB catalog `compiled` names (the compile database's)
    by_dbt: bool = False  # dbt itself refused this mutant (an error naming it): the batch compiles again without it


def _check_parses(sql: str, dialect: str) -> tuple[bool, str]:
    err = check_parses(sql, dialect)  # the contract: None when it parses, else the error message
    return (True, "") if err is None else (False, str(err))


@dataclass
class _Place:
    """Where a compile runs: the scratch project, its profiles dir and the compile database."""

    project: Path
    profiles: Path
    target_path: Path
    log_path: Path
    db: Path
    backend: str | None = None         # None: the default runner (in-process)
    timeout: float | None = None


def compile_mutants(project, mutants: list[tuple[str, str, str]], *, workdir: Path | None = None,
                    timeout: int = 600) -> dict[str, CompileResult]:
    """mutants: (key, model relative path, mutated text). Returns key -> CompileResult.

    `project` is a ProjectInfo."""
    if not mutants:
        return {}
    backend = backends.for_project(project)
    broken = jinja_errors(Path(project.project_dir), mutants)
    rest = [m for m in mutants if m[0] not in broken]
    out = {key: CompileResult(False, NOT_COMPILED + why, by_dbt=True) for key, why in broken.items()}
    if not rest:
        return out
    if get_settings().compile_fresh_copy:
        return {**out, **_compile_fresh(project, rest, backend, workdir, timeout)}
    return {**out, **_compile_in_scratch(project, rest, backend)}


def jinja_errors(project_dir: Path, mutants) -> dict[str, str]:
    """key -> the Jinja syntax error of each mutant whose model file parses as Jinja and whose text
    does not (a rewrite that cut an `{% endif %}`): such a mutant stops `dbt compile` for every
    node, so it is dropped before dbt runs. A model file that does not parse here (a dbt-only
    tag) leaves its mutants to dbt."""
    import jinja2

    env = jinja2.Environment(extensions=["jinja2.ext.do", "jinja2.ext.loopcontrols"])
    original_ok: dict[str, bool] = {}
    out = {}
    for key, rel, text in mutants:
        if rel not in original_ok:
            try:
                env.parse((project_dir / rel).read_text(encoding="utf-8", errors="replace"))
                original_ok[rel] = True
            except (OSError, jinja2.TemplateSyntaxError):
                original_ok[rel] = False
        if not original_ok[rel]:
            continue
        try:
            env.parse(text)
        except jinja2.TemplateSyntaxError as exc:
            out[key] = f"Jinja syntax error at line {exc.lineno}: {exc.message}"
    return out


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


def _remove_db(db: Path) -> None:
    for f in (db, db.with_name(db.name + ".wal")):
        f.unlink(missing_ok=True)


BLAMED_ROUNDS = 3  # compiles again without the mutants an error blamed, at most this often
NOT_COMPILED = "dbt could not compile the mutant: "


def _compile(project, place: _Place, mutants, backend) -> dict[str, CompileResult]:
    """`_compile_once`, and again without the mutants a whole-batch failure blamed: a Jinja error
    in one mutant ("Compilation Error in model <stem>__adegen_m12") stops `dbt compile` for every
    node, which left every mutant of the batch undecided (no compiled SQL, so no precondition
    could be measured and no candidate was screened). The blamed mutant does not compile."""
    results: dict[str, CompileResult] = {}
    todo = list(mutants)
    for _ in range(1 + BLAMED_ROUNDS):
        got, log = _compile_once(project, place, todo, backend)
        blamed = [k for k, r in got.items() if r.ok is False and r.by_dbt]
        if not blamed and any(r.ok is None for r in got.values()):
            # an error that names the mutant on another line than its "Error" one (a ref to a
            # model that does not exist: "Model '...__adegen_m2' depends on a node named ...")
            named = [(i, key) for i, (key, rel, _) in enumerate(todo) if _mentions(log, _mutant_name(i, rel))]
            for _i, key in named[:1]:
                got[key] = CompileResult(False, NOT_COMPILED + _last_error(log), by_dbt=True)
                blamed.append(key)
        results.update(got)
        undecided = [m for m in todo if got[m[0]].ok is None]
        if not undecided or not blamed:
            break
        todo = undecided
    return results


def _compile_once(project, place: _Place, mutants, backend) -> tuple[dict[str, CompileResult], str]:
    """Write the mutants into `place.project`, compile them in one call, collect, clean up; and
    what dbt printed."""
    names: dict[str, str] = {}
    written: list[Path] = []
    compiled_root = place.target_path / "compiled"
    try:
        shutil.rmtree(compiled_root, ignore_errors=True)
        for i, (key, rel, text) in enumerate(mutants):
            name = _mutant_name(i, rel)
            written.append(_write_mutant(place.project, rel, name, text))
            names[key] = name
        _remove_db(place.db)
        if project.db_path and Path(project.db_path).is_file():
            shutil.copy2(project.db_path, place.db)  # models may run introspective queries
        run = make_runner(place.backend).run(DbtCall(
            ["compile", "--project-dir", str(place.project), "--profiles-dir", str(place.profiles),
             "--target", project.target_name, "--target-path", str(place.target_path),
             "--log-path", str(place.log_path), "--no-write-json",
             # one glob selector (only the mutant files match it) instead of one name selector per
             # mutant, each a scan of every node
             "--select", "*__adegen_m*"],
            env={"DBT_TARGET_PATH": str(place.target_path), "DBT_LOG_PATH": str(place.log_path)},
            timeout=place.timeout, console=False))
        # what `dbt compile` prints (info/warn/error events)
        log = "\n".join(run.log_lines + ([run.exception] if run.exception else [])
                        + (["dbt compile timed out"] if run.timed_out else []))
        results = _collect(names, compiled_root, log, backend.dialect)
        for r in results.values():
            r.catalog = backend.compiled_catalog(place.db)
        return results, log
    finally:
        for f in written:
            f.unlink(missing_ok=True)
        shutil.rmtree(compiled_root, ignore_errors=True)
        _remove_db(place.db)


def _compile_in_scratch(project, mutants, backend) -> dict[str, CompileResult]:
    """The compile in discovery's scratch copy: partial parse (only the mutants are new files)."""
    scratch = Scratch(project)
    with scratch.lock():
        scratch.write_profiles()
        scratch.prepare()
        place = _Place(scratch.project, scratch.profiles, scratch.target_path, scratch.log_path,
                       scratch.compile_db)
        return _compile(project, place, mutants, backend)


def _compile_fresh(project, mutants, backend, workdir: Path | None, timeout: float
                   ) -> dict[str, CompileResult]:
    """The same compile in a fresh scratch copy, dbt as a subprocess (no partial parse)."""
    tmp = Path(tempfile.mkdtemp(prefix="adegen-compile-", dir=workdir))
    try:
        scratch = ScratchProject(project.project_dir, tmp / "project").copy()
        scratch.install_packages(extra={"adegen": package_root()})
        db = tmp / "compile.duckdb"
        out = backend.offline_target(project, db)
        write_profiles(tmp / "profiles", project.profile_name, project.target_name, out)
        place = _Place(scratch.dir, tmp / "profiles", scratch.dir / "target", tmp / "logs", db, "subprocess", timeout)
        return _compile(project, place, mutants, backend)
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
            results[key] = (CompileResult(False, NOT_COMPILED + err, by_dbt=True) if err
                            else CompileResult(None, "dbt compile did not run: " + _last_error(log)))
            continue
        sql = p.read_text(encoding="utf-8", errors="replace")
        ok, why = _check_parses(sql, dialect)
        results[key] = CompileResult(ok, why if not ok else "", sql)
    return results


def _mentions(text: str, name: str) -> bool:
    """`name` as a whole word (stem__adegen_m1 is not named by a line about stem__adegen_m12)."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def _error_for(name: str, log: str) -> str | None:
    lines = log.splitlines()
    for i, line in enumerate(lines):
        if _mentions(line, name) and ("Error" in line or "error" in line):
            return " ".join(l.strip() for l in lines[i:i + 3])[:300]
    return None


def _last_error(log: str) -> str:
    errs = [l.strip() for l in log.splitlines() if "Error" in l or "error" in l]
    return (errs[-1] if errs else (log.strip().splitlines() or ["no output"])[-1])[:300]


