"""The one dbt layer (`adegen.dbt`): runner backends, the copy policy, offline packages, and a grep
that keeps dbt invocations, copy policies and profiles.yml lookups from coming back elsewhere."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from adegen import dbt as layer
from adegen.dbt import packages as pk
from adegen.core.errors import DbtError, InputError

ADEGEN = Path(__file__).resolve().parents[1] / "adegen"

# (pattern, what it is): none of these may appear in python/adegen outside python/adegen/dbt/
OLD_FORMS = [
    (re.compile(r"dbtRunner\s*\("), "an in-process dbt invocation"),
    (re.compile(r"from dbt\.cli\.main import"), "an import of dbt's entry points"),
    (re.compile(r"""(run|Popen|check_output|call)\(\s*\[\s*["']dbt["']"""), "a dbt subprocess"),
    (re.compile(r"""["']dbt["']\s*,\s*\*"""), "a dbt argv"),
    (re.compile(r"ignore_patterns\("), "a copy policy of its own"),
    (re.compile(r"copytree\([^)\n]*ignore="), "a project copy with a policy of its own"),
    (re.compile(r"""["']dbt_packages["']"""), "a list of skipped directories"),
    (re.compile(r"""["']\.dbt["']"""), "a profiles.yml lookup (~/.dbt)"),
    (re.compile(r"""environ(\.get\(|\[)\s*["']DBT_PROFILES_DIR"""), "a profiles.yml lookup ($DBT_PROFILES_DIR)"),
]


def test_old_forms_live_only_in_the_dbt_layer():
    hits = []
    for path in sorted(ADEGEN.rglob("*.py")):
        if (ADEGEN / "dbt") in path.parents:
            continue
        text = path.read_text(encoding="utf-8")
        for rx, what in OLD_FORMS:
            for m in rx.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                hits.append(f"{path.relative_to(ADEGEN)}:{line}: {what}: {m.group(0)!r}")
    assert not hits, "use adegen.dbt instead:\n" + "\n".join(hits)


def test_the_grep_sees_each_old_form():
    samples = ["dbtRunner(callbacks=[])", "from dbt.cli.main import cli", 'subprocess.run(["dbt", "run"])',
               'cmd = ["dbt", *args]', 'shutil.ignore_patterns("target")',
               "shutil.copytree(a, b, ignore=skip)", 'SKIP = {"target", "dbt_packages"}',
               'Path.home() / ".dbt"', 'os.environ.get("DBT_PROFILES_DIR")']
    for rx, what in OLD_FORMS:
        assert any(rx.search(s) for s in samples), what


# --- runner --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_copy(tmp_path_factory) -> Path:
    """Two models, no data needed: dbt run succeeds."""
    proj = tmp_path_factory.mktemp("layer") / "tiny"
    (proj / "models").mkdir(parents=True)
    (proj / "dbt_project.yml").write_text("name: tiny\nprofile: tiny\nconfig-version: 2\n")
    (proj / "profiles.yml").write_text(
        "tiny:\n  target: dev\n  outputs:\n    dev: {type: duckdb, path: \"{{ env_var('TINY_DB_PATH') }}\"}\n")
    (proj / "models" / "a.sql").write_text("select 1 as x")
    (proj / "models" / "b.sql").write_text("{{ config(materialized='table') }} select x from {{ ref('a') }}")
    return proj


@pytest.mark.parametrize("backend", ["inprocess", "subprocess"])
def test_backends_give_one_result_type(tiny_copy, backend):  # noqa: D103
    env = {"TINY_DB_PATH": str(tiny_copy / f"{backend}.duckdb")}
    r = layer.run_dbt(["run"], backend=backend, cwd=tiny_copy, env=env, project_env=True)
    assert isinstance(r, layer.DbtResult) and r.backend == backend
    assert r.success and r.ok and r.status == "ok" and r.seconds > 0
    assert "Completed successfully" in r.console and "\x1b[" not in r.console
    if backend == "inprocess":
        assert set(r.nodes) == {"model.tiny.a", "model.tiny.b"}
        assert all(n.status == "success" for n in r.nodes.values())
    quiet = layer.run_dbt(["run-operation", "adegen_no_such_macro"], backend=backend, cwd=tiny_copy,
                          env=env, project_env=True, console=False)
    assert not quiet.success and quiet.status == "failed" and "adegen_no_such_macro" in quiet.error_text()


def test_payload_capture_is_strict():
    ok = layer.DbtResult(args=[], success=True, messages=[
        'x <<ADEGEN:RESULT:v1>>{"schema_version": 1, "operation": "op", "payload": [1]}<</ADEGEN:RESULT:v1>>'])
    assert layer.capture_payload(ok, "adegen.op") == [1]
    with pytest.raises(DbtError, match="exactly one adegen payload, got 2"):
        layer.capture_payload(layer.DbtResult(args=[], success=True, messages=ok.messages * 2), "op")


def test_subprocess_timeout_kills_the_call():
    r = layer.run_dbt(["--version"], backend="subprocess", timeout=0.01)
    assert r.status == "timeout" and not r.success and "TIMEOUT" in r.console


# --- copy policy ---------------------------------------------------------------------------

def test_copy_policy_one_list(tmp_path):
    src = tmp_path / "p"
    for rel in ("models/a.sql", "target/x", "logs/dbt.log", "dbt_packages/u/dbt_project.yml",
                "p.duckdb", "p.duckdb.wal", ".git/HEAD", "models/__pycache__/c.pyc",
                "vendor/pkg/dbt_project.yml", "vendor/pkg/target/y", "vendor/pkg/models/m.sql",
                "models/logs/keep.sql", "package-lock.yml", ".adegen-tmp-1/z"):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text("x")
    (src / "dbt_project.yml").write_text("name: p\nprofile: p\n")
    (src / "outside").symlink_to(tmp_path)
    (src / "models" / "inside.sql").symlink_to(src / "models" / "a.sql")
    dst = layer.copy_tree(src, tmp_path / "copy")
    got = sorted(p.relative_to(dst).as_posix() for p in dst.rglob("*") if not p.is_dir() or p.is_symlink())
    assert got == ["dbt_project.yml", "models/a.sql", "models/inside.sql", "models/logs/keep.sql",
                   "package-lock.yml", "vendor/pkg/dbt_project.yml", "vendor/pkg/models/m.sql"]
    assert (dst / "models" / "inside.sql").is_symlink()
    assert sorted(layer.project_files(src)) == [g for g in got]
    assert layer.differing_files(dst, src) == []
    (dst / "models" / "a.sql").write_text("changed")
    assert layer.differing_files(dst, src) == ["models/a.sql"]
    assert layer.sync_tree(src, dst) == 1 and layer.differing_files(dst, src) == []


# --- packages ------------------------------------------------------------------------------

def _pkg(d: Path, name: str, version="1.0.0", deps: list | None = None) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "dbt_project.yml").write_text(f"name: {name}\nversion: '{version}'\n")
    if deps is not None:
        (d / "packages.yml").write_text(yaml.safe_dump({"packages": deps}))
    return d


def test_nested_local_packages_resolve_against_the_root(tmp_path):
    root = tmp_path / "proj"
    _pkg(root / "vendor" / "utils", "utils")
    _pkg(root / "vendor" / "src", "src_pkg", deps=[{"local": "vendor/utils"}])
    (root / "packages.yml").write_text("packages:\n  - local: vendor/src\n  - local: vendor/utils\n")
    plan = pk.plan_packages(root)
    assert plan.links == {"src_pkg": root / "vendor" / "src", "utils": root / "vendor" / "utils"}
    assert not plan.remote and [p.source for p in plan.reused] == ["local: vendor/src", "local: vendor/utils"]
    _pkg(tmp_path / "other", "utils")
    (root / "vendor" / "src" / "packages.yml").write_text("packages:\n  - local: ../other\n")
    with pytest.raises(InputError, match="Found duplicate project utils"):
        pk.plan_packages(root)


def test_hub_packages_come_from_the_installed_ones(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "packages.yml").write_text("packages:\n  - package: fivetran/intercom_source\n    version: [\">=0.8.0\"]\n")
    (root / "package-lock.yml").write_text("packages:\n  - package: fivetran/intercom_source\n    version: 0.8.1\n")
    with pytest.raises(InputError, match="not installed: run `dbt deps`"):
        pk.plan_packages(root)
    _pkg(root / "dbt_packages" / "intercom_source", "intercom_source", "0.8.1")
    _pkg(root / "dbt_packages" / "fivetran_utils", "fivetran_utils", "0.4.10")
    plan = pk.plan_packages(root)
    assert plan.remote and set(plan.links) == {"intercom_source", "fivetran_utils"} and not plan.notes
    assert "intercom_source 0.8.1 (package: fivetran/intercom_source)" in plan.summary()
    app = tmp_path / "app"
    app.mkdir()
    shutil.copy(root / "packages.yml", app)
    assert pk.install_offline(app, root) == ["fivetran_utils", "intercom_source"]
    assert (app / "dbt_packages" / "intercom_source").resolve() == (root / "dbt_packages" / "intercom_source")


def test_profiles_lookup_precedence(tmp_path, monkeypatch):
    proj, env_dir, arg_dir = tmp_path / "p", tmp_path / "env", tmp_path / "arg"
    for d in (proj, env_dir, arg_dir):
        d.mkdir()
        (d / "profiles.yml").write_text("x: {}\n")
    monkeypatch.delenv("DBT_PROFILES_DIR", raising=False)
    assert layer.find_profiles(proj) == (proj / "profiles.yml").resolve()
    monkeypatch.setenv("DBT_PROFILES_DIR", str(env_dir))
    assert layer.find_profiles(proj) == (env_dir / "profiles.yml").resolve()
    assert layer.find_profiles(proj, arg_dir) == (arg_dir / "profiles.yml").resolve()
