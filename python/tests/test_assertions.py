"""adegen.tasks.assertions + macros/assertions: the assertion_tests types rendered by the dbt macros (the
spec's seven, checked as text against its templates, and the grain test the screening verdict adds)
and run for real (dbt + DuckDB): every assertion passes on the intact fixture project and fails where
its property is broken."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from adegen.tasks import assertions
from adegen.core.errors import DbtError, InputError

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "assertions"
PROJ = FIXTURES / "proj"
SPEC = FIXTURES / "spec_templates"  # the spec's seven templates, verbatim
PROJECT_NAME = "asrt_fixture"

# name -> entry; the fixture's facts: customer_orders (table) refs stg_customers + stg_orders,
# stg_orders (view) reads source raw.orders, customer_totals refs customer_orders twice.
ENTRIES = {
    "refs": {"type": "refs_must_include",
             "args": {"model": "customer_orders", "expected": ["stg_customers", "stg_orders"]}},
    "refs_exact": {"type": "refs_must_match_exactly",
                   "args": {"model": "customer_orders", "expected": ["stg_orders", "stg_customers"]}},
    "refs_forbidden": {"type": "refs_must_not_include",
                       "args": {"model": "customer_orders", "forbidden": ["legacy_orders", "customer_totals"]}},
    "sources": {"type": "sources_must_include", "args": {"model": "stg_orders", "expected": [["raw", "orders"]]}},
    "materialization": {"type": "materialization_must_be", "args": {"model": "customer_orders", "expected": "table"}},
    "column_order_id": {"type": "column_must_exist", "args": {"model": "customer_orders", "column": "order_id"}},
    "model_exists": {"type": "model_must_exist", "args": {"model": "customer_totals"}},
    # not in the spec: the grain test of a duplicates-only bug (validate.verdict)
    "unique_order": {"type": "columns_must_be_unique", "args": {"model": "customer_orders", "columns": ["order_id"]}},
    # the same ref twice (self-join): dbt keeps both in node.refs
    "totals_refs_exact": {"type": "refs_must_match_exactly",
                          "args": {"model": "customer_totals", "expected": ["customer_orders"]}},
}


# ---------------------------------------------------------------------------------------------
# helpers


def _dbt(project: Path, *args: str):
    from dbt.cli.main import dbtRunner

    cli = [*args, "--project-dir", str(project), "--profiles-dir", str(project),
           "--no-partial-parse", "--no-send-anonymous-usage-stats", "--no-use-colors",
           "--log-level", "none", "--log-level-file", "none"]
    return dbtRunner().invoke(cli)


def _scratch_project(src: Path, dest: Path, profile: str) -> Path:
    """A runnable scratch copy: adegen linked in, profile on a DuckDB file inside the copy."""
    assertions.prepare_scratch_project(src, dest)
    (dest / "profiles.yml").write_text(yaml.safe_dump({profile: {"target": "dev", "outputs": {"dev": {
        "type": "duckdb", "path": str(dest / "db.duckdb"), "schema": "main", "threads": 1}}}}))
    return dest


def _write_tests(project: Path, tests: dict[str, str]) -> None:
    """Like the harness: tests/ holds exactly the task's test files."""
    shutil.rmtree(project / "tests", ignore_errors=True)
    (project / "tests").mkdir()
    for name, sql in tests.items():
        (project / "tests" / f"{name}.sql").write_text(sql, encoding="utf-8")


def _grade(project: Path, build: bool = True) -> dict[str, str]:
    """[seed + run, then] the harness's `dbt test --select test_type:singular`: name -> status."""
    if build:
        assert _dbt(project, "seed").success
        res = _dbt(project, "run")
        assert res.success, res.exception
    res = _dbt(project, "test", "--select", "test_type:singular")
    assert res.result is not None, res.exception
    return {r.node.name: str(r.status) for r in res.result.results}


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new))


def _unroll_spec(kind: str, model: str, args: dict) -> str:
    """The spec template with placeholders resolved and `{%- for %}` unrolled the way Jinja would
    render the loop (one `\\n{% elif ... %}\\n    select ...` per item)."""
    text = (SPEC / f"{kind}.sql").read_text(encoding="utf-8")
    loop = re.compile(r"\n\{%- for ([\w, ]+) in <(\w+)> %\}(.*?)\n\{%- endfor %\}", re.S)

    def unroll(m: re.Match) -> str:
        names = [n.strip() for n in m.group(1).split(",")]
        out = []
        for item in args[m.group(2)]:
            values = item if len(names) > 1 else [item]
            body = m.group(3)
            for n, v in zip(names, values):
                body = body.replace(f"<{n}>", v)
            out.append(body)
        return "".join(out)

    text = loop.sub(unroll, text)
    if "expected" in args and isinstance(args["expected"], list):
        text = text.replace("<comma-separated quoted names>", ", ".join(f"'{x}'" for x in args["expected"]))
    for key in ("expected", "column"):
        if isinstance(args.get(key), str):
            text = text.replace(f"<{key}>", args[key])
    return text.replace("<project_name>", PROJECT_NAME).replace("<model>", model)


# The documented deviations from the spec text (see the macros' header comments).
ELSE_BRANCH = ("\n{% endif %}\nunion all",
               "\n{% else %}\n    select 'ok' as error_message where false\n{% endif %}\nunion all")
DEVIATIONS = {
    "refs_must_include": [ELSE_BRANCH],
    "refs_must_not_include": [ELSE_BRANCH],
    "sources_must_include": [ELSE_BRANCH],
    "refs_must_match_exactly": [
        ("map(attribute='name') | list | sort", "map(attribute='name') | unique | list | sort"),
        ("] | sort %}", "] | unique | list | sort %}"),
        ("refs mismatch — actual: ' ~ actual ~ ', expected: ' ~ expected as error_message",
         "refs mismatch — actual: [{{ actual | join(', ') }}], expected: [{{ expected | join(', ') }}]' "
         "as error_message"),
    ],
    "materialization_must_be": [
        ("is materialized as ' ~ actual ~ ', expected table'", "is materialized as {{ actual }}, expected table'"),
    ],
    "column_must_exist": [],
    "model_must_exist": [],
}


# ---------------------------------------------------------------------------------------------
# session fixtures: one run-operation for all entries, one intact grading


@pytest.fixture(scope="session")
def rendered() -> dict[str, tuple[str, str]]:
    names = list(ENTRIES)
    out = assertions.render_assertions(PROJ, PROJECT_NAME, [ENTRIES[n] for n in names])
    return dict(zip(names, out))


@pytest.fixture(scope="session")
def intact_statuses(rendered, tmp_path_factory) -> dict[str, str]:
    proj = _scratch_project(PROJ, tmp_path_factory.mktemp("intact") / "proj", PROJECT_NAME)
    tests = {name: sql for name, (_, sql) in rendered.items()}
    # the spec's refs_must_include text as printed (no else branch), to show why it is changed
    tests["spec_verbatim_refs"] = _unroll_spec("refs_must_include", "customer_orders", ENTRIES["refs"]["args"])
    _write_tests(proj, tests)
    return _grade(proj)


# ---------------------------------------------------------------------------------------------
# text


def test_purposes(rendered):
    assert {n: p for n, (p, _) in rendered.items()} == {
        "refs": "refs", "refs_exact": "refs_exact", "refs_forbidden": "refs_forbidden", "sources": "sources",
        "materialization": "materialization", "column_order_id": "column_order_id",
        "model_exists": "model_exists", "totals_refs_exact": "refs_exact", "unique_order": "unique"}


@pytest.mark.parametrize("name", [n for n in ENTRIES if n not in ("totals_refs_exact", "unique_order")])
def test_golden_against_spec_text(rendered, name):
    """Each rendering is the spec template with placeholders filled and loops unrolled, plus only
    the documented deviations; column_must_exist and model_must_exist are verbatim."""
    entry = ENTRIES[name]
    expected = _unroll_spec(entry["type"], entry["args"]["model"], entry["args"])
    for old, new in DEVIATIONS[entry["type"]]:
        assert old in expected, (entry["type"], old)
        expected = expected.replace(old, new)
    assert rendered[name][1] == expected


def test_golden_refs_must_include_exact_text(rendered):
    assert rendered["refs"][1] == """\
-- depends_on: {{ ref('customer_orders') }}
{% set node = graph.nodes.get("model.asrt_fixture.customer_orders") %}
{% set actual = node.refs | map(attribute='name') | list if node else [] %}
{% if node is none %}
    select 'customer_orders not found in graph' as error_message
{% elif 'stg_customers' not in actual %}
    select 'customer_orders does not ref stg_customers' as error_message
{% elif 'stg_orders' not in actual %}
    select 'customer_orders does not ref stg_orders' as error_message
{% else %}
    select 'ok' as error_message where false
{% endif %}
union all select 'ok' as error_message where false
"""


def test_model_must_exist_has_no_depends_on(rendered):
    sql = rendered["model_exists"][1]
    assert "depends_on" not in sql and "ref(" not in sql
    assert all("-- depends_on: {{ ref('" in sql for n, (_, sql) in rendered.items()
               if n not in ("model_exists", "unique_order"))


def test_golden_columns_must_be_unique_exact_text(rendered):
    """The grain test reads the model through ref() (so it depends on it) and returns every key
    that occurs more than once."""
    assert rendered["unique_order"][1] == """\
-- customer_orders should have one row per order_id
select order_id, count(*) as copies
from {{ ref('customer_orders') }}
group by order_id
having count(*) > 1
"""


# ---------------------------------------------------------------------------------------------
# run for real: intact passes, broken fails


def test_intact_project_passes(intact_statuses):
    statuses = dict(intact_statuses)
    # the spec's text errors on the passing path: `union all select ...` is the whole query
    assert statuses.pop("spec_verbatim_refs") == "error"
    assert statuses == {name: "pass" for name in ENTRIES}


CUSTOMER_ORDERS = "models/customer_orders.sql"
BREAKS = {
    # mutation id: (file, old, new) or None to delete the file; the tests that must fail
    "ref_swapped": ((CUSTOMER_ORDERS, "ref('stg_orders')", "ref('legacy_orders')"),
                    {"refs", "refs_exact", "refs_forbidden"}),
    "ref_added": ((CUSTOMER_ORDERS, "{{ config(materialized='table') }}",
                   "{{ config(materialized='table') }}\n-- also reads {{ ref('legacy_orders') }}"),
                  {"refs_exact", "refs_forbidden"}),
    "source_swapped": (("models/stg_orders.sql", "source('raw', 'orders')", "source('raw', 'orders_backup')"),
                       {"sources"}),
    "materialization_changed": ((CUSTOMER_ORDERS, "materialized='table'", "materialized='view'"),
                                {"materialization"}),
    "column_dropped": ((CUSTOMER_ORDERS, "    o.order_id,\n", ""), {"column_order_id"}),
    "model_deleted": (("models/customer_totals.sql", None, None), {"model_exists"}),
    "rows_duplicated": ((CUSTOMER_ORDERS, "    on o.customer_id = c.customer_id",
                         "    on o.customer_id = c.customer_id\nunion all\nselect c.customer_id, c.name, o.order_id, o.amount\n"
                         "from {{ ref('stg_customers') }} as c\njoin {{ ref('stg_orders') }} as o\n"
                         "    on o.customer_id = c.customer_id and o.amount > 20"), {"unique_order"}),
}
BUILT = ("column_dropped", "rows_duplicated")  # the data assertions need the models built


@pytest.mark.parametrize("mutation", list(BREAKS))
def test_broken_property_fails(rendered, tmp_path, mutation):
    """Only the assertions on the broken property fail. The graph assertions need no database, so
    only the column and grain scenarios build (seed + run); the others just run `dbt test` (the
    column test, which reads information_schema, and the grain test are left out there)."""
    (rel, old, new), must_fail = BREAKS[mutation]
    build = mutation in BUILT
    proj = _scratch_project(PROJ, tmp_path / "proj", PROJECT_NAME)
    if old is None:
        (proj / rel).unlink()
    else:
        _edit(proj / rel, old, new)
    tests = {name: sql for name, (_, sql) in rendered.items() if build or name not in ("column_order_id", "unique_order")}
    _write_tests(proj, tests)
    statuses = _grade(proj, build=build)
    expected = {name: ("fail" if name in must_fail else "pass") for name in tests}
    if mutation == "column_dropped":
        expected["unique_order"] = "error"  # the grain test reads the dropped column: dbt errors, a failure too
    if mutation == "model_deleted":
        # a singular test whose ref() is missing is skipped with a warning in dbt 1.11
        del expected["totals_refs_exact"]
    assert statuses == expected


# ---------------------------------------------------------------------------------------------
# the registry: one entry, one renderer macro, one case here per type


def test_registry_renderers_and_cases_agree(repo_root):
    """Every type of adegen.tasks.assertion_types has its renderer macro (parameters = its args, in
    order, then project_name) and a rendered, graded case in ENTRIES; nothing else exists."""
    from adegen.tasks import assertion_types
    from adegen.catalog import patterns

    folder = repo_root / "macros" / "assertions"
    renderers = {p.stem[len("ade_render_"):]: p for p in folder.glob("ade_render_*.sql")}
    renderers.pop("assertion"), renderers.pop("assertions")
    assert set(renderers) == set(assertion_types.TYPES) == {e["type"] for e in ENTRIES.values()}
    for name, t in assertion_types.TYPES.items():
        sig = re.search(r"\{% macro ade_render_" + name + r"\(([^)]*)\)", renderers[name].read_text()).group(1)
        assert [a.strip() for a in sig.split(",")] == [*t.args, "project_name"], name
        assert set(t.args) <= set(next(e for e in ENTRIES.values() if e["type"] == name)["args"])
    assert patterns.ASSERTION_TYPES is assertion_types.TYPES and assertions.TYPES is assertion_types.TYPES


# ---------------------------------------------------------------------------------------------
# validation (no dbt)


@pytest.mark.parametrize("entry, field", [
    ({"type": "refs_must_include", "args": {"expected": ["a"]}}, "assertion_tests[0].args.model"),
    ({"type": "refs_must_include", "args": {"model": "m", "expected": "a"}}, "assertion_tests[0].args.expected"),
    ({"type": "refs_must_include", "args": {"model": "m", "expected": []}}, "assertion_tests[0].args.expected"),
    ({"type": "refs_must_not_include", "args": {"model": "m", "expected": ["a"]}}, "assertion_tests[0].args"),
    ({"type": "sources_must_include", "args": {"model": "m", "expected": ["raw.orders"]}},
     "assertion_tests[0].args.expected[0]"),
    ({"type": "sources_must_include", "args": {"model": "m", "expected": [["raw", "orders", "x"]]}},
     "assertion_tests[0].args.expected[0]"),
    ({"type": "materialization_must_be", "args": {"model": "m", "expected": ["table"]}},
     "assertion_tests[0].args.expected"),
    ({"type": "column_must_exist", "args": {"model": "m", "column": "it's"}}, "assertion_tests[0].args.column"),
    ({"type": "column_must_exist", "args": {"model": "{model}", "column": "c"}}, "assertion_tests[0].args.model"),
    ({"type": "model_must_be_great", "args": {"model": "m"}}, "assertion_tests[0].type"),
    ({"type": "model_must_exist", "args": "m"}, "assertion_tests[0].args"),
    ("model_must_exist", "assertion_tests[0]"),
])
def test_invalid_entries(entry, field, tmp_path):
    with pytest.raises(InputError) as err:
        assertions.render_assertions(tmp_path, PROJECT_NAME, [entry])
    assert err.value.field == field


def test_invalid_project_name_and_entries(tmp_path):
    with pytest.raises(InputError):
        assertions.render_assertions(tmp_path, "my'proj", [ENTRIES["model_exists"]])
    with pytest.raises(InputError):
        assertions.render_assertions(tmp_path, PROJECT_NAME, ENTRIES["model_exists"])  # not a list
    with pytest.raises(InputError):  # not a dbt project (checked only once entries are valid)
        assertions.render_assertions(tmp_path, PROJECT_NAME, [ENTRIES["model_exists"]])
    assert assertions.render_assertions(tmp_path, PROJECT_NAME, []) == []


def test_macro_rejects_what_python_would(tmp_path):
    """The macros validate too (they can be called directly); dbt's error becomes a DbtError."""
    bad = {"type": "refs_must_include", "args": {"model": "m", "expected": "stg_orders"},
           "project_name": PROJECT_NAME}
    with pytest.raises(DbtError, match="expected must be a non-empty list"):
        assertions.run_render_operation(PROJ, [bad])


def test_resolve_placeholders():
    ctx = {"model": "fct_orders", "column": "amount", "project_name": "acme",
           "original_refs": ("stg_orders", "stg_payments"), "original_sources": [["shop", "orders"]],
           "original_materialization": "table"}
    assert assertions.resolve_placeholders(
        {"model": "{model}", "expected": "{original_refs}"}, ctx) == {
        "model": "fct_orders", "expected": ["stg_orders", "stg_payments"]}
    assert assertions.resolve_placeholders(
        {"model": "{model}", "expected": ["{original_refs}", "extra"]}, ctx)["expected"] == [
        "stg_orders", "stg_payments", "extra"]
    assert assertions.resolve_placeholders({"expected": "{original_sources}"}, ctx) == {
        "expected": [["shop", "orders"]]}
    assert assertions.resolve_placeholders({"column": "{column}", "x": "{model}_v2"}, ctx) == {
        "column": "amount", "x": "fct_orders_v2"}
    with pytest.raises(InputError) as err:
        assertions.resolve_placeholders({"model": "{modle}"}, ctx)
    assert err.value.field == "args.model"


def test_scratch_copy_leaves_project_untouched(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(PROJ, src)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "dbt_project.yml").write_text("name: elsewhere_pkg\nversion: '1.0'\n")
    (src / "packages.yml").write_text("packages:\n  - local: ../elsewhere\n")
    before = sorted((p.relative_to(src), p.read_bytes()) for p in src.rglob("*") if p.is_file())
    dest = assertions.prepare_scratch_project(src, tmp_path / "scratch")
    after = sorted((p.relative_to(src), p.read_bytes()) for p in src.rglob("*") if p.is_file())
    assert before == after
    pk = yaml.safe_load((dest / "packages.yml").read_text())["packages"]
    assert pk == [{"local": str((tmp_path / "elsewhere").resolve())}]  # outside the project: absolute
    assert (dest / "dbt_packages" / "adegen").resolve() == assertions.paths.package_root()
    assert (dest / "dbt_packages" / "elsewhere_pkg").resolve() == (tmp_path / "elsewhere").resolve()
