"""Discovery: run the package's `ade_discover` macro on a project and capture its payload.

    python -m adegen.discover PROJECT [--json] [--patterns-dir DIR]... [--top-n N]
                              [--target T] [--profiles-dir D]

Never writes into the user's project and never touches the warehouse:

* dbt runs on a scratch copy of the project (the shared copy policy of `adegen.dbt.scratch`)
  kept in a cache keyed by the project path and target (`$ADEGEN_CACHE_DIR`, default
  `~/.cache/adegen`), re-synced by content on every run so dbt's partial parse stays warm;
* packages are installed in the copy offline, the way the user has them (`adegen.dbt.packages`:
  local ones, nested included, resolved like `dbt deps` resolves them; hub/git ones from the
  project's installed dbt_packages/), plus the adegen package itself;
* dbt gets a scratch profiles.yml: DuckDB on a scratch file in the cache (`compile.duckdb`, never
  the user's database; the mutant compile reuses this profile and the partial-parse state),
  Snowflake dummy credentials (the macro runs no query, so no connection is opened). The real
  target facts are passed through `--args`.

Exit codes: 0 ok, 2 bad input or dbt failure (message on stderr, no traceback).
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import functools
import hashlib
import json
import sys
from pathlib import Path


from adegen import backends
from adegen.core import paths
from adegen.dbt import DbtDirs, ScratchProject, capture_payload, run_operation, write_profiles
from adegen.dbt import packages as pk
from adegen.core.errors import AdegenError, DbtError, InputError
from adegen.catalog.patterns import load_catalog
from adegen.discover.project import ProjectInfo, load_project
from adegen.core.settings import get_settings

OPERATION = "adegen.ade_discover"
TOP_LEVEL_KEYS = ("project", "database", "models", "package_models", "sources", "packages", "macros",
                  "candidates")

PACKAGE_FILES = ("packages.yml", "dependencies.yml")


# --- scratch copy ----------------------------------------------------------------------------

def cache_root() -> Path:
    return get_settings().cache_dir


def _lists_adegen(project_dir: Path) -> bool:
    """Does the user's packages.yml already install adegen (then its macros are not hidden)?"""
    for e in pk.package_entries(project_dir):
        if isinstance(e, dict) and isinstance(e.get("local"), str):
            if pk.is_adegen((project_dir / e["local"]).resolve()):
                return True
        elif isinstance(e, dict) and "adegen" in str(e.get("package") or e.get("git") or "").lower():
            return True
    return False


@contextlib.contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


class Scratch:
    """The cached scratch copy of one project: <cache>/discover/<key>/{project,profiles,...}.

    `prepare()` syncs it with the project (the shared copy policy; files that are not the
    project's, such as compile mutants a killed run left, are removed; dbt's target/ stays so
    partial parsing stays warm) and installs the packages offline as the user has them, plus the
    adegen package (`adegen.dbt.packages`): no `dbt deps`, no network."""

    def __init__(self, info: ProjectInfo):
        self.info = info
        # One copy per project path and target: switching targets would invalidate partial parse.
        key = hashlib.sha256(
            f"{info.project_dir}|{info.profile_name}|{info.target_name}|{info.adapter_type}".encode()
        ).hexdigest()[:16]
        self.root = cache_root() / "discover" / f"{info.name}-{key}"
        self.project = self.root / "project"
        self.profiles = self.root / "profiles"
        self.target_path = self.project / "target"
        self.log_path = self.root / "logs"
        # The DuckDB file of the scratch profile (never the user's: discovery runs no query, dbt
        # only opens an empty scratch file); the mutant compile (mutant_compile.py) copies the
        # user's database here and compiles in this same scratch copy, so both share one profile
        # and dbt's partial-parse state (a different profile would force a second full parse).
        self.compile_db = self.root / "compile.duckdb"
        self.injected = False
        self.packages: pk.PackagePlan | None = None

    def lock(self):
        return _locked(self.root / ".lock")

    def prepare(self, backend: str | None = None) -> None:
        info = self.info
        scratch = ScratchProject(info.project_dir, self.project)
        scratch.sync()
        self.packages = scratch.install_packages(
            extra={"adegen": paths.package_root()})
        self.injected = not _lists_adegen(info.project_dir)

    def write_profiles(self) -> None:
        info = self.info
        out = backends.for_project(info).offline_target(info, self.compile_db)
        write_profiles(self.profiles, info.profile_name, info.target_name, out)


# --- discovery -------------------------------------------------------------------------------

def catalog_dicts(patterns_dirs=()) -> list[dict]:
    return [p.to_macro_dict() for p in load_catalog([Path(d) for d in patterns_dirs]).patterns]


def schema() -> dict:
    return json.loads((paths.schemas_dir() / "discovery.schema.json").read_text(encoding="utf-8"))


@functools.cache
def _checkers():
    """discovery.schema.json compiled twice: fastjsonschema decides whether a payload is valid
    (a 5,000-model payload in a fraction of a second, where jsonschema takes seconds: bench in
    docs/architecture.md "Discovery"); jsonschema words the error when it is not, so the message
    is jsonschema's, as it always was."""
    import fastjsonschema
    import jsonschema

    sch = schema()
    fast = fastjsonschema.compile(sch, use_default=False)
    return fast, jsonschema.Draft202012Validator(sch)


def validate_payload(payload: dict) -> None:
    import fastjsonschema
    import jsonschema

    fast, full = _checkers()
    try:
        fast(payload)
        return
    except fastjsonschema.JsonSchemaValueException:
        pass
    error = jsonschema.exceptions.best_match(full.iter_errors(payload))  # what jsonschema.validate raises
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        raise DbtError(f"discovery payload does not match discovery.schema.json at {where}: {error.message}")


def run_discovery(project_dir, *, patterns_dirs=(), top_n: int = 10, profiles_dir=None, target=None,
                  project: ProjectInfo | None = None, catalog: list[dict] | None = None,
                  backend: str | None = None) -> dict:
    """The discovery payload of `project_dir` (validated against discovery.schema.json)."""
    if not isinstance(top_n, int) or isinstance(top_n, bool) or top_n < 0:
        raise InputError(f"must be a non-negative integer, got {top_n!r}", field="--top-n")
    info = project or load_project(project_dir, profiles_dir=profiles_dir, target=target)
    if catalog is None:
        catalog = catalog_dicts(patterns_dirs)
    scratch = Scratch(info)
    with scratch.lock():
        scratch.write_profiles()
        scratch.prepare(backend)
        macro_args = {
            "top_n": top_n,
            "catalog": catalog,
            "target_facts": info.target_facts(),
            "hide_packages": ["adegen"] if scratch.injected else [],
            "summary": False,
        }
        dirs = DbtDirs(scratch.project, scratch.profiles, info.target_name, (scratch.target_path, scratch.log_path))
        run = run_operation(OPERATION, macro_args, dirs, backend=backend,
                            extra_flags=["--no-write-json"])  # manifest.json: seconds at 5,000 models
    payload = capture_payload(run, OPERATION)
    validate_payload(payload)
    return payload


def summary_lines(payload: dict) -> list[str]:
    """The same summary the macro logs (ade_discovery_summary)."""
    db = payload["database"]
    counts = {k: 0 for k in ("staging", "intermediate", "marts", "other")}
    for m in payload["models"]:
        counts[m["layer"]] = counts.get(m["layer"], 0) + 1
    location = db.get("path") or f"{db.get('database')}.{db.get('schema')}"
    lines = [
        f"Found dbt project: {payload['project']['name']}",
        f"Database: {db['type']} at {location}",
        f"Models: {len(payload['models'])} ({counts['staging']} staging, {counts['intermediate']} "
        f"intermediate, {counts['marts']} marts, {counts['other']} other)",
        f"Sources: {len(payload['sources'])} source tables",
        f"Packages: {', '.join(payload['packages']) if payload['packages'] else '(none)'}",
        f"Top task candidates: {len(payload['candidates'])} models identified",
    ]
    for i, c in enumerate(payload["candidates"], 1):
        lines.append(f"  {i}. {c['name']} ({len(c['matched_patterns'])} patterns: {', '.join(c['matched_patterns'])})")
    return lines


def _has_float(x) -> bool:
    stack = [x]
    while stack:
        v = stack.pop()
        if isinstance(v, float):
            return True
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def dumps_payload(payload: dict) -> str:
    """`json.dumps(payload, indent=2, sort_keys=True)`, byte for byte.

    Performance: the stdlib encoder is pure Python when indenting (~2 s for a 5,000-model
    payload); orjson (when installed) writes the same text in milliseconds. Its output is used
    only where the two agree by construction: ASCII-only text without DEL (the stdlib escapes both) and
    no floats (their repr can differ); anything else goes through the stdlib."""
    try:
        import orjson
    except ImportError:
        orjson = None
    if orjson is not None:
        try:
            out = orjson.dumps(payload, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
        except (TypeError, ValueError):  # orjson.JSONEncodeError subclasses TypeError
            out = None
        if out is not None and out.isascii() and b"\x7f" not in out and not _has_float(payload):
            return out.decode("ascii")
    return json.dumps(payload, indent=2, sort_keys=True)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise InputError(message, field="command line")


def main(argv: list[str] | None = None) -> int:
    ap = _Parser(prog="python -m adegen.discover",
                 description="Discover a dbt project: models, DAG, SQL features, ranked task candidates.")
    ap.add_argument("project_dir", metavar="PROJECT")
    ap.add_argument("--json", action="store_true", help="print the discovery payload as JSON")
    ap.add_argument("--patterns-dir", action="append", default=[], metavar="DIR",
                    help="extra directory of pattern YAML files (repeatable)")
    ap.add_argument("--top-n", type=int, default=10, metavar="N", help="ranked candidates (default 10)")
    ap.add_argument("--target", metavar="T", help="profile target (default: the profile's)")
    ap.add_argument("--profiles-dir", metavar="D", help="directory holding profiles.yml")
    try:
        args = ap.parse_args(argv)
        payload = run_discovery(args.project_dir, patterns_dirs=args.patterns_dir, top_n=args.top_n,
                                profiles_dir=args.profiles_dir, target=args.target)
    except AdegenError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    if args.json:
        sys.stdout.write(dumps_payload(payload))
        sys.stdout.write("\n")
    else:
        print("\n".join(summary_lines(payload)))
    return 0
