"""The brief's structural rules, kept by a fast scan of python/adegen (no dbt, no database):
small modules (no module over MAX_LINES lines except data files), small signatures (no
function with more than MAX_PARAMS parameters; group them into a dataclass), no import circles
(an import inside a function counts: it must not close a circle either) and settings read from
the environment in one place (`adegen.core.settings`)."""
from __future__ import annotations

import ast
from pathlib import Path

ADEGEN = Path(__file__).resolve().parents[1] / "adegen"
MAX_LINES = 500
MAX_PARAMS = 5

# Data, not logic: exempt from the module size limit. None at present: data lives in data files (the
# prompt writer's phrase banks are python/adegen/prompts/banks/*.yaml).
LONG_DATA_MODULES: set[str] = set()

# Modules in which every function must keep to MAX_PARAMS (the rest of the tree: see below).
NO_LONG_SIGNATURES = ["cli/build.py", "propose/proposals.py", "pipeline/propose.py", "rewrite"]

# Functions over MAX_PARAMS that predate the rule (path:qualified name). Shrink this list when you
# touch one; never add to it: a new function takes a dataclass instead.
LONG_SIGNATURES_TO_FIX = {
    "discover/payload.py:run_discovery",
    "snowflake_emulator/profiles.py:emulator_profiles",
    "snowflake_emulator/runner.py:run_dbt",
    "snowflake_emulator/server.py:FakesnowServer.__init__",
    "prompts/checks.py:leaks",
    "facts/evidence.py:_keyed_column",
    "facts/evidence.py:_Tables.__init__",
    "validate/snowflake/validator.py:EmulatorValidator.__init__",
    "validate/snowflake/trial.py:EmulatorTrials._trial",
    "validate/duckdb/validator.py:Validator.__init__",
}


def param_count(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Positional and keyword-only parameters, self/cls excluded (*args/**kwargs not counted)."""
    a = fn.args
    return sum(1 for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg not in ("self", "cls"))


def long_signatures(source: str) -> list[tuple[str, int]]:
    """(qualified name, parameter count) of every function over MAX_PARAMS, nested ones included."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef) and param_count(child) > MAX_PARAMS:
                    found.append((name, param_count(child)))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def _modules() -> list[tuple[str, str]]:
    return [(p.relative_to(ADEGEN).as_posix(), p.read_text(encoding="utf-8")) for p in sorted(ADEGEN.rglob("*.py"))]


def test_no_module_over_the_line_limit():
    long = [f"{rel}: {text.count(chr(10))} lines" for rel, text in _modules()
            if rel not in LONG_DATA_MODULES and text.count("\n") > MAX_LINES]
    assert not long, f"split these by purpose (max {MAX_LINES} lines):\n" + "\n".join(long)


def test_no_new_function_with_more_than_five_parameters():
    new = []
    for rel, text in _modules():
        strict = any(rel == m or rel.startswith(m + "/") for m in NO_LONG_SIGNATURES)
        for name, n in long_signatures(text):
            if strict or f"{rel}:{name}" not in LONG_SIGNATURES_TO_FIX:
                new.append(f"{rel}:{name} ({n} parameters)")
    assert not new, f"more than {MAX_PARAMS} parameters (group them in a dataclass):\n" + "\n".join(new)
    seen = {f"{rel}:{name}" for rel, text in _modules() for name, _n in long_signatures(text)}
    assert LONG_SIGNATURES_TO_FIX <= seen, f"fixed, remove from the list: {sorted(LONG_SIGNATURES_TO_FIX - seen)}"


def test_the_scan_sees_long_signatures_and_nesting():
    src = ("def ok(a, b, c, d, e): pass\n"
           "def bad(a, b, *, c, d, e, f): pass\n"
           "class K:\n"
           "    def __init__(self, a, b, c, d, e): pass\n"
           "    def m(self, a, b, c, d, e, f=1, *rest, **kw):\n"
           "        def inner(a, b, c, d, e, f): pass\n")
    assert long_signatures(src) == [("bad", 6), ("K.m", 6), ("K.m.inner", 6)]


# The environment is read in adegen.core.settings (once per process, into the options object) and, where
# a library needs the environment itself, only in these modules:
ENVIRONMENT_READERS = {
    "core/settings.py": "the settings: every variable adegen reads for itself",
    "dbt/runner.py": "dbt reads its flags from os.environ: the runner sets a call's variables there and "
                     "restores them, and hands the environment on to dbt subprocesses",
    "dbt/profiles.py": "DBT_PROFILES_DIR: dbt's own lookup of profiles.yml, which adegen's must equal",
    "discover/project.py": "env_var() in dbt_project.yml / profiles.yml renders from the environment, as dbt does",
    "backends/snowflake.py": "the SNOWFLAKE_* credentials ade-bench's container and the copy's env_var() "
                             "calls need: the next steps say which are unset",
    "core/paths.py": "PATH: this interpreter's scripts first, so dbt subprocesses and task scripts find its dbt",
    "snowflake_emulator/server.py": "the fakesnow server process inherits the environment",
    "validate/snowflake/trial.py": "the emulator trials' dbt subprocesses and child processes inherit the "
                                   "environment (the dbt shim first on PATH)",
}


def environment_uses(source: str) -> list[int]:
    """Lines that touch the process environment: `os.environ`, `os.getenv`/`putenv`/`unsetenv`,
    or those names imported from os."""
    names = {"environ", "getenv", "putenv", "unsetenv", "environb"}
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in names and isinstance(node.value, ast.Name) \
                and node.value.id == "os":
            found.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "os" and names & {a.name for a in node.names}:
            found.append(node.lineno)
    return sorted(set(found))


def test_the_environment_is_read_in_the_settings_module():
    stray = [f"{rel}:{line}" for rel, text in _modules() if rel not in ENVIRONMENT_READERS
             for line in environment_uses(text)]
    assert not stray, ("read the environment through adegen.core.settings (a documented setting), or list the "
                       "module in ENVIRONMENT_READERS with the library that needs it:\n" + "\n".join(stray))
    unused = [rel for rel in ENVIRONMENT_READERS if not environment_uses((ADEGEN / rel).read_text())]
    assert not unused, f"no longer reads the environment, remove from ENVIRONMENT_READERS: {unused}"


def test_the_environment_scan_sees_every_form():
    src = ("import os\nfrom os import getenv\nx = os.environ.get('A')\ny = os.getenv('B')\n"
           "# os.environ in a comment\n")
    assert environment_uses(src) == [2, 3, 4]


# --- import circles -----------------------------------------------------------------------------


def module_name(rel: str) -> str:
    """`pipeline/run.py` -> `adegen.pipeline.run`; a package's `__init__.py` is the package."""
    parts = ["adegen", *rel[: -len(".py")].split("/")]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_edges(modules: dict[str, str]) -> set[tuple[str, str]]:
    """(importer, imported) for every import of an adegen module by another, wherever it stands (at
    the top, inside a function, under TYPE_CHECKING). `modules`: module name -> source. Importing
    `a.b.c` runs the packages `a.b` and `a` first, so those are edges too; `from a import b` is
    an edge to the submodule `a.b` when there is one, else to `a`."""
    edges = set()
    packages = {m for m in modules if any(o.startswith(m + ".") for o in modules)}
    for name, source in modules.items():
        package = name if name in packages else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(source)):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                while target not in modules and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target not in modules:
                    continue  # not adegen's
                parts = target.split(".")
                for i in range(1, len(parts) + 1):
                    dep = ".".join(parts[:i])
                    if dep in modules and dep != name and not name.startswith(dep + "."):
                        edges.add((name, dep))
    return edges


def import_circles(modules: dict[str, str]) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted."""
    import networkx as nx

    graph = nx.DiGraph(list(import_edges(modules)))
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def test_no_import_circles():
    modules = {module_name(rel): text for rel, text in _modules()}
    circles = import_circles(modules)
    edges = import_edges(modules)
    detail = ["  " + " <-> ".join(c) + ":\n" + "\n".join(f"    {a} -> {b}" for a, b in sorted(edges)
                                                          if a in c and b in c) for c in circles]
    assert not circles, ("modules that import each other (an import inside a function counts too): move what "
                         "both need to a module below them\n" + "\n".join(detail))


def test_the_circle_scan_sees_an_import_inside_a_function():
    modules = {"adegen": "", "adegen.low": "def f():\n    from . import high\n",
               "adegen.high": "from .low import f\n", "adegen.pkg": "from .leaf import x\n",
               "adegen.pkg.leaf": "x = 1\n", "adegen.top": "from adegen.pkg import leaf\n"}
    assert import_circles(modules) == [["adegen.high", "adegen.low"]]
    assert ("adegen.top", "adegen.pkg") in import_edges(modules)  # importing pkg.leaf runs pkg first
    assert ("adegen.top", "adegen.pkg.leaf") in import_edges(modules)
    assert ("adegen.pkg.leaf", "adegen.pkg") not in import_edges(modules)


def test_every_reader_of_the_example_build_shares_it():
    """A test module that reads the session's validated example build must be in conftest's
    SHARED_BUILD_MODULES: pytest-xdist gives each other module its own group, so a module outside it
    builds the example a second time on the other worker (two minutes of the suite's wall time)."""
    import conftest

    tests = Path(__file__).resolve().parent
    readers = {p.name for p in tests.glob("test_*.py") if p.name != Path(__file__).name
               and any(f in p.read_text() for f in ("acme_tasks_built", "acme_run_record"))}
    assert readers <= conftest.SHARED_BUILD_MODULES, sorted(readers - conftest.SHARED_BUILD_MODULES)
