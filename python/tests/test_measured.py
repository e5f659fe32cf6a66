"""The measured facts are typed records (adegen.facts.measured): prompts/ reads them only through the
records (a scan finds no raw key read of a fact in prompts/), and what the screening writes on
real DuckDB relations reads into the records without losing a key."""
from __future__ import annotations

import ast
from dataclasses import fields, is_dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from adegen.facts import measured
from adegen.facts.measured import RelationKind, read_table
from adegen.validate.rules import oracle
from adegen.facts.evidence import table_facts
from test_prompt_evidence import con  # noqa: F401 (a DuckDB connection, the fixture)

PROMPTS = Path(__file__).resolve().parents[1] / "adegen" / "prompts"
RECORDS = (measured.TableFacts, measured.ColumnFacts, measured.Sample, measured.RowSet, measured.Duplicates,
           measured.Ratio, measured.Shift, measured.Sides)
# every key a fact dict has, and the keys of Observation.details that hold facts
FACT_KEYS = {f.name for r in RECORDS for f in fields(r)} | {
    "tables", "relation_kind", "nondeterministic_tables", "nondeterministic_columns", "details"}
# functions of prompts/ that read dicts which are not measured facts, and why
NOT_FACTS = {"levels.py:model_facts": "discovery's model dicts (name, layer, materialized)"}


def raw_fact_reads(source: str, module: str = "") -> list[str]:
    """Where `source` reads a fact by its key instead of through a record: `x["rows_intact"]`,
    `x.get("ratio")`, `"observed" in x`, `getattr(x, "details")`."""
    found = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = f"{module}:{child.name}" if isinstance(child, (ast.FunctionDef, ast.ClassDef)) else where
            if name in NOT_FACTS:
                continue
            key = None
            if isinstance(child, ast.Subscript) and isinstance(child.ctx, ast.Load):
                key = child.slice
            elif isinstance(child, ast.Call) and child.args and (
                    isinstance(child.func, ast.Attribute) and child.func.attr in ("get", "pop")):
                key = child.args[0]
            elif isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id in (
                    "getattr", "hasattr") and len(child.args) > 1:
                key = child.args[1] if getattr(child.args[1], "value", None) == "details" else None
            elif isinstance(child, ast.Compare) and any(isinstance(o, (ast.In, ast.NotIn)) for o in child.ops):
                key = child.left
            if isinstance(key, ast.Constant) and key.value in FACT_KEYS:
                found.append(f"{name or module}:{child.lineno}: {ast.unparse(child)[:90]}")
            visit(child, name)

    visit(ast.parse(source), "")
    return found


def test_prompts_read_facts_only_through_the_records():
    found = [hit for p in sorted(PROMPTS.glob("*.py"))
             for hit in raw_fact_reads(p.read_text(encoding="utf-8"), p.name)]
    assert not found, "read measured facts through adegen.facts.measured's records:\n" + "\n".join(found)


def test_the_scan_sees_raw_fact_reads():
    for src in ('n = facts["rows_intact"]', 'r = col.get("ratio") or {}', 'x = "observed" in s',
                'd = getattr(obs, "details", None)', 't = details.get("tables")', 'k = f.get("key", [])'):
        assert raw_fact_reads(src), src
    assert not raw_fact_reads('x = v["who"]\ny = f.detail.ratio\nz = vals.get("flag")\nv["copies"] = "2"')
    assert not raw_fact_reads('def model_facts(m):\n    return m.get("name")', "levels.py")


def _same(wire, record) -> bool:
    """Does the record hold exactly what the wire dict says (same keys, same values)?"""
    if isinstance(wire, dict):
        return is_dataclass(record) and all(_same(v, getattr(record, k)) for k, v in wire.items())
    if isinstance(wire, list):
        return isinstance(record, tuple) and len(wire) == len(record) and all(map(_same, wire, record))
    return wire == record


ACCOUNTS = ("select * from (values ('A1', 'Helio Systems', 4.5, date '2024-05-17', 'b2b', true), "
            "('A2', 'Falcon Works', 3.0, date '2024-06-03', 'b2c', false), ('A3', 'Summit Foods', 5.25, "
            "date '2024-06-20', 'b2b', true)) t(account_id, account_name, csat, signed_on, segment, active)")
CHANGES = {  # what a mutant did to ACCOUNTS
    "scaled, shifted, swapped, flipped": ACCOUNTS.replace("4.5,", "450.0,").replace("3.0,", "300.0,")
    .replace("date '2024-05-17'", "date '2024-05-01'").replace("'b2b'", "'x'").replace("'b2c'", "'b2b'")
    .replace("'x'", "'b2c'").replace("true)", "false)"),
    "rows lost and added": ACCOUNTS.replace("('A2',", "('A9',"),
    "duplicated": f"select * from ({ACCOUNTS}) union all select * from ({ACCOUNTS}) where account_id = 'A1'",
    "blanked": ACCOUNTS.replace("'Falcon Works', 3.0", "'Falcon Works', null"),
    "column gone": "select account_id, account_name from (" + ACCOUNTS + ")",
    "written differently": "select account_id, account_name, cast(csat * 100 as integer) / 100 as csat, signed_on,"
                           " segment, active from (" + ACCOUNTS + ")",
    "no key": "select segment, csat from (" + ACCOUNTS + ") union all select 'b2c', 1.0",
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_what_the_screening_writes_reads_into_the_records(con, change):
    base = ACCOUNTS if change != "no key" else "select segment, csat from (" + ACCOUNTS + ")"
    con.execute(f"create table b as {base}")
    con.execute(f"create table m as {CHANGES[change]}")
    wire = table_facts(con, oracle.compare_relations(con, "t", "b", "m"), "b", "m", distance=1)
    record = read_table(wire)
    assert _same(wire, record), (wire, record)
    assert all(isinstance(c, measured.ColumnFacts) for c in record.columns)


def test_the_prompt_writers_own_facts_read_too():
    kind = RelationKind("stg_orders", "view", "table")
    assert read_table(measured.kind_changed(kind, (5, 5))).relation_kind == measured.Sides("view", "table")
    assert read_table(measured.build_failed("stg", "Binder Error: x")).build_error == "Binder Error: x"
    got = measured.usable_tables(SimpleNamespace(details={"relation_kind": kind.wire(), "tables": [{"table": "o"}]}))
    assert [read_table(f).relation_kind for f in got] == [measured.Sides("view", "table")]
    got = measured.usable_tables(SimpleNamespace(details={
        "tables": [{"table": "a", "columns": [{"name": "x"}, {"name": "y"}]}, {"table": "b"}],
        "nondeterministic_tables": ["B"], "nondeterministic_columns": {"a": ["X"]}}))
    assert got == [{"table": "a", "columns": [{"name": "y"}]}]


def test_the_producer_writes_facts_only_through_the_records():
    """facts/evidence.py spells no fact key as a string (a dict literal or `f["key"] = ...`): every
    key is a field name given to `measured.wire`, which refuses one no record has."""
    src = (Path(measured.__file__).parent / "evidence.py").read_text(encoding="utf-8")
    found = []
    for node in ast.walk(ast.parse(src)):
        keys = node.keys if isinstance(node, ast.Dict) else [node.slice] if isinstance(node, ast.Subscript) and \
            isinstance(node.ctx, ast.Store) else []
        found += [f"{node.lineno}: {ast.unparse(node)[:80]}" for k in keys
                  if isinstance(k, ast.Constant) and k.value in FACT_KEYS]
    assert not found, "write facts with measured.wire(Record, field=...):\n" + "\n".join(found)
    with pytest.raises(ValueError, match="TableFacts has no field rows_lost"):
        measured.wire(measured.TableFacts, table="t", rows_lost=3)
    assert list(measured.wire(measured.Sides, broken=2, intact=1)) == ["broken", "intact"]  # the order given


def test_a_key_no_record_has_is_refused():
    with pytest.raises(ValueError, match="TableFacts has no field rows_lost"):
        read_table({"table": "t", "rows_lost": 3})
    with pytest.raises(ValueError, match="ColumnFacts has no field mean"):
        read_table({"table": "t", "columns": [{"name": "x", "mean": 1.0}]})
