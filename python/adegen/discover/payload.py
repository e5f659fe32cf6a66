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


# Keywords the fast validator implements (exactly as JSON Schema 2020-12 / jsonschema define them
# for the values discovery.schema.json uses); a schema using any other keyword is validated by
# jsonschema alone.
_FAST_KEYWORDS = {"$schema", "$id", "$defs", "$ref", "title", "description", "type", "enum", "required",
                  "properties", "additionalProperties", "items", "minItems", "maxItems", "minLength",
                  "minimum", "pattern", "uniqueItems"}
_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
_fast_cache: dict[str, object] = {}


class _Unsupported(Exception):
    pass


def _fast_validator(sch: dict):
    """A checker for `sch` (bool: valid?) compiled from the keyword subset above, or None.

    Performance: jsonschema takes ~0.5 ms per model entry (seconds at 5,000 models); this does
    the same checks in a few microseconds. It only decides "valid"; on False (or a schema it does
    not know) jsonschema runs and produces the error message, so messages are unchanged."""
    import re

    defs: dict[str, object] = {}

    def resolve(ref: str) -> dict:
        if not ref.startswith("#/"):
            raise _Unsupported(ref)
        node = sch
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def build(node):
        if node is True or node == {}:
            return lambda v: True
        if node is False:
            return lambda v: False
        if not isinstance(node, dict) or set(node) - _FAST_KEYWORDS:
            raise _Unsupported(node)
        checks = []
        if "$ref" in node:
            ref = node["$ref"]
            if ref not in defs:
                defs[ref] = None
                defs[ref] = build(resolve(ref))
            checks.append(lambda v, ref=ref: defs[ref](v))
        if "type" in node:
            ts = [node["type"]] if isinstance(node["type"], str) else list(node["type"])
            fns = [_TYPES[t] for t in ts]
            checks.append(lambda v, fns=fns: any(f(v) for f in fns))
        if "enum" in node:
            enum = node["enum"]
            if not all(isinstance(e, str) or e is None for e in enum):
                raise _Unsupported(enum)
            checks.append(lambda v, enum=enum: (v is None or isinstance(v, str)) and v in enum)
        if "minLength" in node:
            n = node["minLength"]
            checks.append(lambda v, n=n: not isinstance(v, str) or len(v) >= n)
        if "pattern" in node:
            rx = re.compile(node["pattern"])
            checks.append(lambda v, rx=rx: not isinstance(v, str) or rx.search(v) is not None)
        if "minimum" in node:
            n = node["minimum"]
            checks.append(lambda v, n=n: not _TYPES["number"](v) or v >= n)
        if "required" in node:
            req = list(node["required"])
            checks.append(lambda v, req=req: not isinstance(v, dict) or all(k in v for k in req))
        if "properties" in node or "additionalProperties" in node:
            props = {k: build(sub) for k, sub in (node.get("properties") or {}).items()}
            extra = node.get("additionalProperties", True)
            extra_fn = None if extra is True else build(extra)

            def obj(v, props=props, extra_fn=extra_fn):
                if not isinstance(v, dict):
                    return True
                for k, x in v.items():
                    f = props.get(k)
                    if f is None:
                        if extra_fn is not None and not extra_fn(x):
                            return False
                    elif not f(x):
                        return False
                return True
            checks.append(obj)
        if "items" in node:
            item = build(node["items"])
            checks.append(lambda v, item=item: not isinstance(v, list) or all(item(x) for x in v))
        if "minItems" in node:
            n = node["minItems"]
            checks.append(lambda v, n=n: not isinstance(v, list) or len(v) >= n)
        if "maxItems" in node:
            n = node["maxItems"]
            checks.append(lambda v, n=n: not isinstance(v, list) or len(v) <= n)
        if node.get("uniqueItems"):
            def uniq(v):
                if not isinstance(v, list):
                    return True
                if all(isinstance(x, str) for x in v):
                    return len(set(v)) == len(v)
                raise _Unsupported("uniqueItems on non-strings")
            checks.append(uniq)
        if len(checks) == 1:
            return checks[0]
        return lambda v: all(c(v) for c in checks)

    try:
        return build(sch)
    except (_Unsupported, KeyError, TypeError, re.error):
        return None


def validate_payload(payload: dict) -> None:
    import jsonschema

    sch = schema()
    key = json.dumps(sch, sort_keys=True)
    if key not in _fast_cache:
        _fast_cache[key] = _fast_validator(sch)
    fast = _fast_cache[key]
    try:
        if fast is not None and fast(payload):
            return
    except _Unsupported:
        pass
    try:
        jsonschema.validate(payload, sch)
    except jsonschema.ValidationError as e:
        where = "/".join(str(p) for p in e.absolute_path) or "(top)"
        raise DbtError(f"discovery payload does not match discovery.schema.json at {where}: {e.message}") from None


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
