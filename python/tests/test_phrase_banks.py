"""The phrase banks are data (python/adegen/prompts/banks/*.yaml): every bank reads back with the
shape its reader expects, its sentences name only the documented fields (banks/placeholders.yaml,
each with what it holds), those are the fields the renderer fills, and a planted bad entry (an
unknown field, a malformed one, a key given twice, a wrong shape) is refused with a reason."""
from __future__ import annotations

import ast
import shutil
import sys
from pathlib import Path

import pytest

from adegen.prompts import bank, fields, phrases_base
from adegen.prompts.findings import ORDER

PROMPTS = Path(bank.__file__).parent
BANKS = [name for name in bank.SHAPES if name != "placeholders"]
LEVELS = {"specific", "specific_nokey", "counts", "general", "business"}  # render.Voice.levels' older levels


@pytest.mark.parametrize("name", BANKS)
def test_every_bank_has_its_shape_and_names_only_documented_fields(name):
    doc = bank.read(bank.FOLDER / f"{name}.yaml")
    assert bank.problems(name, doc, frozenset(bank.placeholders())) == []
    assert bank.load(name) == doc


def test_every_field_is_documented_in_one_line_with_its_old_name():
    documented = bank.placeholders()
    assert len(documented) >= 70
    for name, field in documented.items():
        assert field["means"].strip() and "\n" not in field["means"], name
    was = [f["was"] for f in documented.values()]
    assert len(was) == len(set(was))


def _assigned_keys(path: Path) -> set[str]:
    """The string keys fields.py and render.py store into the fields dict (`v[...] = `, `vals[...] = `,
    `v.setdefault(...)` and the dict `v` starts as)."""
    keys = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and \
                isinstance(node.value, ast.Name) and node.value.id in ("v", "vals"):
            keys.add(node.slice.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "setdefault" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "v":
            keys.add(node.args[0].value)
        elif isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "v" and \
                isinstance(node.value, ast.Dict):
            keys |= {k.value for k in node.value.keys}
    return keys


def test_the_documented_fields_are_the_ones_the_renderer_fills():
    """Documented but never filled rules a sentence out for good; filled but not documented is a
    field no sentence may name (the markers the code reads are neither)."""
    filled = _assigned_keys(PROMPTS / "fields.py") | _assigned_keys(PROMPTS / "render.py") | \
        _assigned_keys(PROMPTS / "joins.py")  # a compound's two reports (prompts.joins.two_reports)
    documented = set(bank.placeholders())
    assert documented <= filled, documented - filled
    assert filled - documented == fields.MARKERS, filled - documented
    assert not documented & fields.MARKERS


def test_kinds_levels_and_frames_are_ones_the_code_asks_for():
    """A typo in a key would not stop the import: its sentences would just never be picked."""
    bodies, base, asks = bank.load("bodies"), bank.load("base"), bank.load("asks")
    assert set(bodies["bodies"]) <= set(ORDER)
    assert {level for levels in bodies["bodies"].values() for level in levels} <= LEVELS
    for frames in (base["leads"], base["whole"]):
        assert set(frames) <= set(ORDER)
        assert {f for per_kind in frames.values() for f in per_kind} <= set(phrases_base.FRAMES)
    assert set(base["follow"]) <= set(ORDER) | {"value"}
    assert {g for groups in base["follow"].values() for g in groups} <= {"handle", "exact", "rule"}
    assert set(asks["asks"]) <= set(ORDER) | {"any", "data", "values"}


@pytest.fixture()
def planted(tmp_path):
    """A copy of the banks in which a test plants one bad entry: plant(name, old, new) replaces
    the first `old` of banks/<name>.yaml with `new` and returns the problems found."""
    for path in bank.FOLDER.glob("*.yaml"):
        shutil.copy(path, tmp_path / path.name)

    def plant(name: str, old: str, new: str) -> list[str]:
        path = tmp_path / f"{name}.yaml"
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
        return bank.problems(name, bank.read(path), frozenset(bank.placeholders()))

    plant.folder = tmp_path
    return plant


def test_a_planted_unknown_field_is_refused(planted):
    found = planted("bodies", '      - "{table} is suddenly empty."',
                    '      - "{table} is suddenly empty."\n      - "{tabel} lost {t} of its rows."')
    assert len(found) == 2 and "{tabel}" in found[0] and "{t}" in found[1], found
    assert "bodies.table_empty.general[1]" in found[0]
    bank.load.cache_clear()
    try:
        with pytest.raises(bank.BankError, match="tabel"):
            bank.load("bodies", planted.folder)
    finally:
        bank.load.cache_clear()


@pytest.mark.parametrize("name, old, new, reason", [
    ("bodies", '      - "{table} is suddenly empty."', "      - 42", "is not a str"),
    ("bodies", '      - "{table} is suddenly empty."', '      - "{table is suddenly empty."', "expected '}'"),
    ("bodies", '      - "{table} is suddenly empty."', '      - "{} is suddenly empty."', "malformed field"),
    ("bodies", '      - "{table} is suddenly empty."', '      - "{table!r} is suddenly empty."', "malformed field"),
    ("bodies", '      - "{table} is suddenly empty."', '      - "{table:>9} is suddenly empty."', "malformed field"),
    ("bodies", '      - "{table} is suddenly empty."', '      - ["{table} is suddenly empty."]', "is not a str"),
    ("bodies", "several:", "several_tables:", "no several"),
    ("base", "leads:\n  values_high:\n    report:\n", "leads:\n  values_high:\n    report: The x.\n", "not a list"),
    ("asks", "mode: lead, tone: data", "mode: lead-in, tone: data", "not one of"),
    ("asks", "none: 140", "none: many", "is not a int"),
    ("words", "  avg: average", "  avg: [average]", "is not a str"),
    ("words", "  - [1.8, 2.25, double]", "  - [1.8, double]", "2 items, not 3"),
    ("words", "  2: twice", "  two: twice", "is not a int"),
])
def test_a_planted_malformed_entry_is_refused(planted, name, old, new, reason):
    found = planted(name, old, new)
    assert found and any(reason in p for p in found), found


def test_a_key_given_twice_or_broken_yaml_is_refused(planted):
    path = planted.folder / "bodies.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("  values_high:\n", "  values_low:\n", 1), encoding="utf-8")
    with pytest.raises(bank.BankError, match="values_low given twice"):
        bank.read(path)
    path.write_text(text.replace("bodies:\n", "bodies:\n  - [\n", 1), encoding="utf-8")
    with pytest.raises(bank.BankError, match="bodies.yaml"):
        bank.read(path)


def test_the_banks_ship_with_the_package():
    tomllib = pytest.importorskip("tomllib") if sys.version_info >= (3, 11) else pytest.skip("no tomllib")
    pyproject = tomllib.loads((PROMPTS.parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    globs = pyproject["tool"]["setuptools"]["package-data"]["adegen"]
    package = PROMPTS.parent
    for path in bank.FOLDER.glob("*.yaml"):
        assert any(path.relative_to(package).match(g) for g in globs), path
