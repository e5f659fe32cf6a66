"""task_yaml: the one task.yaml writer - render, parse back, re-render on every change, atomic
writes, several prompt levels and graded tables; and a scan of the tree proving nothing else
writes task.yaml."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from adegen.core.errors import InputError
from adegen.tasks.task_yaml import (PromptEntry, SeedEntry, TaskYaml, Variant, read_task_yaml, update_task_yaml,
                              write_task_yaml)
from adegen.tasks.task_yaml import update_task_yaml as validator_update

PACKAGE = Path(__file__).resolve().parents[1] / "adegen"


def _doc(**kw) -> TaskYaml:
    base = dict(
        task_id="f1007", status="ready", description="Two bugs: wrong join key \"a\" and a dropped filter",
        prompts=[PromptEntry("base", "The standings look wrong. Can you fix it?"),
                 PromptEntry("medium", "Points in driver_standings are too high for some drivers.\nFix it."),
                 PromptEntry("hard", "driver_standings and constructor_points disagree.")],
        difficulty="hard", tags=["dbt", "debugging", "f1"],
        variants=[Variant("duckdb", "f1", "f1", "/out/projects", extra={"db_dir": "/dbs"})],
        test_setup="dbt seed\ndbt run --select stg_results driver_standings constructor_points",
        solution_seeds=[SeedEntry("driver_standings", exclude_columns=["updated_at"]),
                        SeedEntry("constructor_points", exclude_tests=["existence_test"])],
    )
    base.update(kw)
    return TaskYaml(**base)


def test_render_parses_back_to_the_same_document():
    doc = _doc()
    text = doc.render()
    data = yaml.safe_load(text)
    assert data == doc.to_data()
    assert [p["key"] for p in data["prompts"]] == ["base", "medium", "hard"]
    assert data["solution_seeds"] == [
        {"table_name": "driver_standings", "exclude_columns": ["updated_at"]},
        {"table_name": "constructor_points", "exclude_tests": ["existence_test"]}]
    assert data["variants"] == [{"db_type": "duckdb", "db_name": "f1", "project_type": "dbt", "project_name": "f1",
                                 "project_dir": "/out/projects", "db_dir": "/dbs"}]
    assert "prompt: |-\n      Points in driver_standings are too high for some drivers.\n      Fix it." in text
    assert TaskYaml.parse(text) == doc
    assert TaskYaml.parse(text).render() == text


def test_ade_bench_models_accept_it():
    hm = pytest.importorskip("ade_bench.harness_models", reason="ade-bench (ade_bench.harness_models) not installed")
    data = yaml.safe_load(_doc().render())
    for v in data["variants"]:
        hm.VariantConfig(**v)
    for s in data["solution_seeds"]:
        hm.SolutionSeedConfig(**s)


@pytest.mark.parametrize("value", ["yes", "null", "1e3", "a: b", "#x", "it's", "  leading", "tab\there", "ünï"])
def test_odd_values_read_back_exactly(value):
    doc = _doc(tags=[value], solution_seeds=[SeedEntry("t", exclude_columns=[value])], description=value,
               prompts=[PromptEntry("base", value + "\n  indented\ntrailing  ")])
    assert TaskYaml.parse(doc.render()) == doc


def test_update_rerenders_with_changes_and_keeps_unknown_keys(tmp_path):
    text = _doc().render().replace("  - table_name: constructor_points\n",
                                   "  - table_name: constructor_points\n    alternates:\n      - cp_alt\n")
    text += "notes: kept as read\n"
    path = tmp_path / "task.yaml"
    path.write_text(text)
    new = validator_update(path, exclude_columns={"constructor_points": ["z", "a"]}, max_test_timeout_sec=90.7,
                           status="dev")
    data = yaml.safe_load(path.read_text())
    assert data["status"] == "dev" and data["max_test_timeout_sec"] == 90 and data["notes"] == "kept as read"
    assert data["solution_seeds"][1] == {"table_name": "constructor_points", "exclude_columns": ["z", "a"],
                                         "exclude_tests": ["existence_test"], "alternates": ["cp_alt"]}
    assert data["solution_seeds"][0]["exclude_columns"] == ["updated_at"]  # other entries untouched
    assert read_task_yaml(path) == new and path.read_text() == new.render()
    update_task_yaml(path, prompts=[("base", "Only one level now.")], exclude_columns={"unknown_table": ["x"]})
    data = yaml.safe_load(path.read_text())
    assert data["prompts"] == [{"key": "base", "prompt": "Only one level now."}]
    assert [p.name for p in tmp_path.iterdir()] == ["task.yaml"]  # no temp file left behind
    with pytest.raises(TypeError):
        update_task_yaml(path, no_such_field=1)


def test_write_is_atomic_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "task.yaml"
    write_task_yaml(path, _doc())
    before = path.read_text()

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr("adegen.tasks.output.os.replace", boom)
    with pytest.raises(OSError):
        write_task_yaml(path, _doc(status="dev"))
    assert path.read_text() == before and [p.name for p in tmp_path.iterdir()] == ["task.yaml"]


def test_bad_files_name_the_file(tmp_path):
    path = tmp_path / "task.yaml"
    path.write_text("task_id: [unclosed\n")
    with pytest.raises(InputError) as err:
        read_task_yaml(path)
    assert str(path) in err.value.render()
    path.write_text("- just\n- a list\n")
    with pytest.raises(InputError):
        read_task_yaml(path)


# ---------------------------------------------------------------------------------------------
# no task.yaml writer outside adegen/tasks/task_yaml.py

WRITE_CALLS = {"write_text", "write_bytes", "write_text_atomic", "safe_dump", "dump", "replace", "rename", "copyfile",
               "copy", "copy2"}
OLD_FORMS = ("_set_status_dev", "_set_excludes_text", "_set_top_level_text", "def render_task_yaml(spec")


def _writes_task_yaml(func: ast.AST, source: str) -> list[int]:
    """Lines of file-writing calls in `func` whose target is a task.yaml: the receiver or an
    argument names "task.yaml", or a variable or parameter holding such a path."""
    seg = lambda n: ast.get_source_segment(source, n) or ""  # noqa: E731
    names = {a.arg for a in func.args.args if "task_yaml" in a.arg}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and "task.yaml" in seg(node.value):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}

    def mentions(node) -> bool:
        text = seg(node)
        return "task.yaml" in text or any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))

    hits = []
    for node in ast.walk(func):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
        mode = next((a.value for a in node.args[1:2] if isinstance(a, ast.Constant)), None)
        writes = name in WRITE_CALLS or (name == "open" and isinstance(mode, str) and ("w" in mode or "a" in mode))
        targets = [node.func.value] if isinstance(node.func, ast.Attribute) else []
        if writes and any(mentions(t) for t in targets + list(node.args)):
            hits.append(node.lineno)
    return hits


def test_no_task_yaml_writer_outside_its_home():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        source = path.read_text(encoding="utf-8")
        for form in OLD_FORMS:
            if form in source and rel not in ("taskgen.py",):
                offenders.append(f"{rel}: old writer {form}")
        if rel == "task_yaml.py":
            continue
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                offenders += [f"{rel}:{line} ({node.name})" for line in _writes_task_yaml(node, source)
                              if _is_innermost(node, line, source)]
    assert offenders == []


def _is_innermost(func: ast.AST, line: int, source: str) -> bool:
    """The call belongs to `func` itself, not to a nested function reported on its own."""
    for node in ast.walk(func):
        if node is not func and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.lineno <= line <= (node.end_lineno or node.lineno):
                return False
    return True
