"""Discovery: run the package's `ade_discover` macro on a project and capture its payload.

    python -m adegen.discover PROJECT [--json] [--patterns-dir DIR]... [--top-n N]
                              [--target T] [--profiles-dir D]

Never writes into the user's project and never touches the warehouse:

* dbt runs on a scratch copy of the project (only what dbt needs: target/, logs/, dbt_packages/,
  *.duckdb*, .git, .venv, ... are skipped) kept in a cache keyed by the project path
  and target (`$ADEGEN_CACHE_DIR`, default `~/.cache/adegen`), re-synced by content on every run so dbt's
  partial parse stays warm;
* the copy's packages.yml gets the adegen package as a `local:` absolute path (injected when the
  user has not installed it; an existing `local:` entry pointing to adegen is replaced), other
  `local:` entries are made absolute; with only local packages `dbt deps` runs offline in the
  copy, otherwise the project's installed dbt_packages/ are linked in;
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
import os
import shutil
import sys
from pathlib import Path

import yaml

from . import dbt_runner, paths
from .errors import AdegenError, DbtError, InputError
from .project import ProjectInfo, load_project

OPERATION = "adegen.ade_discover"
TOP_LEVEL_KEYS = ("project", "database", "models", "sources", "packages", "macros", "candidates")

# Never copied into the scratch project (names anywhere in the tree / top-level only).
SKIP_NAMES = {".git", ".venv", "venv", "__pycache__", ".pytest_cache", "node_modules", ".DS_Store",
              ".user.yml"}
SKIP_TOP = {"target", "logs", "dbt_packages", "dbt_modules", "package-lock.yml"}
SKIP_SUFFIXES = (".duckdb", ".duckdb.wal", ".db", ".wal", ".tmp", ".pyc")
# Kept in the scratch copy across runs (dbt's own state) - never deleted by the sync.
MANAGED_TOP = {"target", "logs", "dbt_packages", "package-lock.yml", ".adegen-scratch.json"}
PACKAGE_FILES = ("packages.yml", "dependencies.yml")
# Present while files that are not the project's (compile mutants) sit in the scratch copy: the next
# prepare() then re-syncs instead of trusting the content hash (a SIGKILL skips every cleanup).
DIRTY_MARK = ".adegen-dirty"


# --- scratch copy ----------------------------------------------------------------------------

def cache_root() -> Path:
    base = os.environ.get("ADEGEN_CACHE_DIR")
    if base:
        return Path(base).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "adegen"


def _skip(rel: Path) -> bool:
    parts = rel.parts
    if parts and parts[0] in SKIP_TOP:
        return True
    if any(p in SKIP_NAMES for p in parts):
        return True
    return rel.name.endswith(SKIP_SUFFIXES)


def project_files(project_dir: Path) -> dict[str, bytes]:
    """The files dbt needs, relative path -> content. Symlinks that lead outside the project are
    not followed (like the project copy: nothing outside the project is read)."""
    out: dict[str, bytes] = {}
    real_root = Path(project_dir).resolve()
    for root, dirs, files in os.walk(project_dir):
        rel_root = Path(root).relative_to(project_dir)
        dirs[:] = sorted(d for d in dirs if not _skip(rel_root / d))
        for f in sorted(files):
            rel = rel_root / f
            if _skip(rel):
                continue
            p = Path(root) / f
            if not p.is_file():
                continue
            if p.is_symlink() and not p.resolve().is_relative_to(real_root):
                continue
            out[rel.as_posix()] = p.read_bytes()
    return out


def _is_adegen_package(path: Path) -> bool:
    try:
        data = yaml.safe_load((path / "dbt_project.yml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and data.get("name") == "adegen"


def rewrite_packages(project_dir: Path, files: dict[str, bytes]) -> tuple[str, str, bool, bool]:
    """(file name, new text, adegen injected?, only local packages?)."""
    name = next((n for n in PACKAGE_FILES if n in files), "packages.yml")
    data: dict = {}
    if name in files:
        try:
            data = yaml.safe_load(files[name].decode("utf-8")) or {}
        except (yaml.YAMLError, UnicodeDecodeError) as e:
            raise InputError(f"invalid YAML: {e}", file=project_dir / name) from None
        if not isinstance(data, dict):
            raise InputError("must be a YAML mapping", file=project_dir / name)
    entries = data.get("packages") or []
    if not isinstance(entries, list):
        raise InputError("must be a list", file=project_dir / name, field="packages")
    pkg_root = str(paths.package_root())
    new_entries, found, only_local = [], False, True
    for e in entries:
        if isinstance(e, dict) and "local" in e:
            target = Path(str(e["local"])).expanduser()
            target = (target if target.is_absolute() else project_dir / target).resolve()
            if _is_adegen_package(target):
                if found:
                    continue
                found = True
                new_entries.append({**e, "local": pkg_root})
            else:
                new_entries.append({**e, "local": str(target)})
        else:
            only_local = False
            new_entries.append(e)
    if not found:
        new_entries.append({"local": pkg_root})
    data = {**data, "packages": new_entries}
    return name, yaml.safe_dump(data, sort_keys=False), not found, only_local


def _hash(files: dict[str, bytes], extra: str) -> str:
    h = hashlib.sha256(extra.encode())
    for rel in sorted(files):
        h.update(rel.encode() + b"\0" + hashlib.sha256(files[rel]).digest())
    return h.hexdigest()


@contextlib.contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _sync(files: dict[str, bytes], dst: Path) -> None:
    """Make dst hold exactly `files` (plus dbt's managed state); unchanged files are untouched."""
    dst.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        p = dst / rel
        try:
            if p.is_file() and p.read_bytes() == content:
                continue
        except OSError:
            pass
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content)
    for root, dirs, fnames in os.walk(dst, topdown=True):
        rel_root = Path(root).relative_to(dst)
        if rel_root == Path("."):
            dirs[:] = [d for d in dirs if d not in MANAGED_TOP]
        for f in fnames:
            rel = (rel_root / f).as_posix()
            if rel not in files and not (rel_root == Path(".") and f in MANAGED_TOP):
                (Path(root) / f).unlink()


def duckdb_scratch_output(info: ProjectInfo, db_file: Path) -> dict:
    """The scratch profile output for DuckDB (shared by discovery and the mutant compile)."""
    out = {"type": "duckdb", "path": str(db_file), "schema": info.schema, "threads": 1}
    tc = getattr(info, "target_config", None) or {}
    for k in ("extensions", "settings"):
        if tc.get(k):
            out[k] = tc[k]
    return out


class Scratch:
    """The cached scratch copy of one project: <cache>/discover/<key>/{project,profiles,...}."""

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

    def lock(self):
        return _locked(self.root / ".lock")

    def prepare(self, backend: str | None = None) -> None:
        info = self.info
        files = project_files(info.project_dir)
        pkg_name, pkg_text, self.injected, only_local = rewrite_packages(info.project_dir, files)
        for n in PACKAGE_FILES:
            files.pop(n, None)
        files[pkg_name] = pkg_text.encode()
        state_file = self.project / ".adegen-scratch.json"
        digest = _hash(files, f"{paths.package_root()}|{only_local}")
        state = {}
        if state_file.is_file():
            try:
                state = json.loads(state_file.read_text())
            except ValueError:
                state = {}
        dirty = self.root / DIRTY_MARK  # left by a mutant compile that was killed before its cleanup
        if state.get("hash") == digest and (self.project / "dbt_packages").is_dir() and not dirty.exists():
            return
        _sync(files, self.project)
        dirty.unlink(missing_ok=True)
        pk_dir = self.project / "dbt_packages"
        if only_local:
            if state.get("packages") != pkg_text or not pk_dir.is_dir():
                shutil.rmtree(pk_dir, ignore_errors=True)
                if not self._link_local_packages(pk_dir, pkg_text):
                    self._deps(backend)
        else:
            self._link_installed_packages(pk_dir)
        state_file.write_text(json.dumps({"hash": digest, "packages": pkg_text}))

    def _link_local_packages(self, pk_dir: Path, pkg_text: str) -> bool:
        """What `dbt deps` does for `local:` packages (a symlink per package named after its
        dbt_project.yml `name`), without starting dbt: a cold discovery saves one dbt
        invocation. Only when every package is a local directory with a dbt_project.yml and no
        packages of its own, and the project keeps the default install path; False = run deps."""
        try:
            cfg = yaml.safe_load((self.project / "dbt_project.yml").read_text(encoding="utf-8")) or {}
            entries = (yaml.safe_load(pkg_text) or {}).get("packages") or []
        except (OSError, yaml.YAMLError, AttributeError):
            return False
        if not isinstance(cfg, dict) or "packages-install-path" in cfg:
            return False
        links: dict[str, Path] = {}
        for e in entries:
            if not isinstance(e, dict) or set(e) != {"local"}:
                return False
            target = Path(str(e["local"]))
            if not target.is_absolute() or not target.is_dir():
                return False
            try:
                pcfg = yaml.safe_load((target / "dbt_project.yml").read_text(encoding="utf-8"))
            except (OSError, yaml.YAMLError):
                return False
            if not isinstance(pcfg, dict) or not isinstance(pcfg.get("name"), str) or pcfg["name"] in links:
                return False
            if any((target / f).exists() for f in PACKAGE_FILES):
                return False  # nested packages: let dbt resolve them
            links[pcfg["name"]] = target
        pk_dir.mkdir(parents=True, exist_ok=True)
        for name, target in links.items():
            (pk_dir / name).symlink_to(target, target_is_directory=True)
        return True

    def _deps(self, backend: str | None) -> None:
        self.profiles.mkdir(parents=True, exist_ok=True)
        self.write_profiles()
        run = dbt_runner.run_dbt(
            ["deps", "--project-dir", str(self.project), "--profiles-dir", str(self.profiles),
             "--log-path", str(self.log_path)],
            backend=backend,
        )
        if not run.success:
            raise DbtError(f"dbt deps failed in the scratch copy of {self.info.project_dir}:\n{run.error_text()}")

    def _link_installed_packages(self, pk_dir: Path) -> None:
        src = self.info.project_dir / "dbt_packages"
        if not src.is_dir():
            raise InputError(
                "the project uses hub/git packages that are not installed: run `dbt deps` in the "
                "project first (adegen works offline and only reads dbt_packages/)",
                file=self.info.project_dir,
            )
        shutil.rmtree(pk_dir, ignore_errors=True)
        pk_dir.mkdir(parents=True)
        for d in sorted(src.iterdir()):
            if d.is_dir() and not _is_adegen_package(d):
                (pk_dir / d.name).symlink_to(d.resolve(), target_is_directory=True)
        (pk_dir / "adegen").symlink_to(paths.package_root(), target_is_directory=True)

    def write_profiles(self) -> None:
        info = self.info
        if info.adapter_type == "duckdb":
            out = duckdb_scratch_output(info, self.compile_db)
        else:
            # Dummy credentials: the macro runs no query, so dbt never logs in.
            out = {"type": "snowflake", "account": "adegen-offline", "user": "adegen",
                   "password": "adegen-offline", "database": info.db_name, "schema": info.schema,
                   "warehouse": "ADEGEN_OFFLINE", "threads": 1}
        prof = {info.profile_name: {"target": info.target_name, "outputs": {info.target_name: out}}}
        self.profiles.mkdir(parents=True, exist_ok=True)
        text = yaml.safe_dump(prof, sort_keys=True)
        p = self.profiles / "profiles.yml"
        if not p.is_file() or p.read_text() != text:
            p.write_text(text)


# --- discovery -------------------------------------------------------------------------------

def catalog_dicts(patterns_dirs=()) -> list[dict]:
    from .patterns import load_catalog  # owned by the catalog module

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
        run = dbt_runner.run_operation(
            OPERATION, macro_args, project_dir=scratch.project, profiles_dir=scratch.profiles,
            target=info.target_name, target_path=scratch.target_path, log_path=scratch.log_path,
            backend=backend, extra_flags=["--no-write-json"],  # manifest.json: seconds at 5,000 models
        )
    payload = dbt_runner.capture_payload(run, OPERATION)
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


if __name__ == "__main__":
    sys.exit(main())
