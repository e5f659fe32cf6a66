"""Drops are counted by code (adegen.core.drops), never by matching their messages: a grep of
python/adegen and bench/ finds no drop reason matched by substring, and DATASET.md counts by code
under today's labels (a ledger written before the codes, keyed by label, reads the same)."""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from adegen.core.drops import Drop, DropCode, regroup
from adegen.pipeline import dataset
from adegen.pipeline.ledger import Ledger

REPO = Path(__file__).resolve().parents[2]
HOME = "python/adegen/core/drops.py"   # where the codes and their labels are written down
# what drop messages say, plus every code's id and label: a string holding one of them in a
# comparison, a search or a table of strings is a drop reason matched by its text
WORDS = {"runaway", "does not compile", "rewrite", "no materialized table", "prompt", "duplicate rows",
         "build error", "nondeterministic", "equivalent", "screening failed", "not observable", "unproven",
         "round trip", "not screenable", "unknown model"}
WORDS |= {c.label for c in DropCode} | {c.id.replace("_", " ") for c in DropCode}
NEEDLE = re.compile(r"\b(" + "|".join(re.escape(w) for w in sorted(WORDS, key=len, reverse=True)) + r")\b", re.I)
SEARCHES = {"startswith", "endswith", "find", "rfind", "index", "count", "search", "match", "fullmatch"}
MESSAGES = re.compile(r"(\.(reason|detail)|\[['\"](reason|proof_detail)['\"]\])$")  # where a drop's message is


def _needles(node: ast.AST, phrases_only: bool = False) -> list[str]:
    return [c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and isinstance(c.value, str)
            and NEEDLE.search(c.value) and (" " in c.value or not phrases_only)]


def _strings_only(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and bool(node.elts) and all(map(_strings_only, node.elts))


def substring_matches(source: str) -> list[str]:
    """Where `source` tells drops apart by their text: a drop word in a comparison or a search, a
    table of such strings (a tuple of phrases, or of pairs), or any search in a drop's message."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(isinstance(o, (ast.In, ast.NotIn, ast.Eq, ast.NotEq)) for o in node.ops):
            hit = _needles(node) or any(isinstance(o, (ast.In, ast.NotIn)) for o in node.ops) and any(
                MESSAGES.search(ast.unparse(x)) for x in node.comparators)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SEARCHES:
            hit = _needles(node) or MESSAGES.search(ast.unparse(node.func.value)) or any(
                MESSAGES.search(ast.unparse(a)) for a in node.args)
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(node.elts) > 1 and _strings_only(node):
            nested = any(isinstance(e, (ast.Tuple, ast.List)) for e in node.elts)
            hit = _needles(node, phrases_only=not nested)
        else:
            hit = False
        if hit:
            found.append(f"{node.lineno}: {ast.unparse(node)[:100]}")
    return found


def test_no_module_matches_drop_reasons_by_substring():
    found = []
    for path in sorted([*(REPO / "python" / "adegen").rglob("*.py"), *(REPO / "bench").rglob("*.py")]):
        rel = path.relative_to(REPO).as_posix()
        if rel != HOME:
            found += [f"{rel}:{line}" for line in substring_matches(path.read_text(encoding="utf-8"))]
    assert not found, "tell drops apart by their code (adegen.core.drops), not their text:\n" + "\n".join(found)


def test_the_scan_sees_drops_told_apart_by_text():
    assert substring_matches('TABLE = (("runaway", "runaway build"), ("prompt", "no prompt"))')
    assert substring_matches('KINDS = ("does not compile", "rewrite changes nothing")')
    assert substring_matches('x = obs.reason.startswith("runaway")')
    assert substring_matches('x = "equivalent on this data" in why')
    assert substring_matches('x = "on this data" in obs.reason')
    assert substring_matches('x = re.search("on this data", d["reason"])')
    assert substring_matches('x = t["proof_detail"].endswith("tests")')
    # not about drops: other strings, and a code compared as a code
    assert not substring_matches('FIELDS = ("id", "rewrite", "symptom")\nx = name == "prompts"')
    assert not substring_matches('x = obs.code is DropCode.RUNAWAY\ny = f"runaway: {n} rows"')


def test_every_code_has_its_own_id_and_a_label_of_the_dataset():
    ids = [c.id for c in DropCode]
    assert len(ids) == len(set(ids)) and all(re.fullmatch(r"[a-z_]+", i) for i in ids)
    # the rows DATASET.md had before the codes (bulk_loop.DROP_REASONS and its fallbacks), and the
    # realism drops (issue 28): a data precondition, the family cap, tasks kept back for deep ones,
    # last-resort swaps a run does not need, a second task of one mistake; a change of column types alone (issue 30: equal
    # values, ade-bench's typed test passes); tables that read the clock (issue 30)
    assert {c.label for c in DropCode} == {
        "data precondition not met", "family over a fifth of the dataset", "kept back for tasks traced upstream",
        "made-up looking edit, not needed to fill the run", "the same mistake as another task",
        "mutant does not compile", "rewrite failed", "no table to compare", "no distinct, safe prompt",
        "runaway build", "duplicate rows only", "column types only", "no build error as the pattern expects",
        "unexpected build error", "nondeterministic tables only", "clock-dependent tables only",
        "equivalent on this data", "screening failed", "not observable",
        "patch round trip failed", "unproven",
        # candidates that come as a diff (issue 51): a fix undone, a --bug-command diff
        "diff does not apply", "diff changes nothing", "diff touches files outside the models", "diff too big",
        "bug command failed",
        # compound tasks (issue 52): two slips on one lineage
        "compound: a slip does not show or one fix passes", "gave its place to the compound task",
        # --mix hard (issue 52 item 6): a proposal of an easier kind the hard mix leaves out
        "an easier kind than the hard mix keeps",
        # incremental models (issue 52 item 2): a slip no second run over late rows can show
        "no late rows an incremental run shows",
        # bulk's purposeful candidates (issue 53): a grain change whose key test cannot be written
        "its grading test could not be rendered"}
    assert all(DropCode.of(c.id) is c for c in DropCode)


def test_dataset_md_counts_by_code_under_the_labels(tmp_path):
    led = Ledger.open(tmp_path, {"seed": 1})
    led.bind("units", 0)
    for code in (DropCode.NO_PROMPT, DropCode.PROMPT_REPEATS, DropCode.PROMPT_ERROR, DropCode.RUNAWAY,
                 DropCode.EQUIVALENT, DropCode.EQUIVALENT):
        led.drop(code)
    assert led.drops == {"no_prompt": 1, "prompt_repeats": 1, "prompt_error": 1, "runaway": 1, "equivalent": 2}
    facts = {"project": "acme", "seed": 1, "command": "python -m adegen.bulk x", "candidates": 9, "excluded": 0}
    text = dataset.dataset_markdown([], led, facts)
    rows = [ln for ln in text[text.index("| Dropped because"):].splitlines() if ln.startswith("| ")][2:]
    assert rows[:3] == ["| no distinct, safe prompt | 3 |", "| equivalent on this data | 2 |", "| runaway build | 1 |"]
    assert "dropped: 6;" in text
    # a ledger written before the codes (counts by label) resumes with the same counts and text
    led.save()
    old = json.loads(led.path.read_text())
    old["drops"] = {"no distinct, safe prompt": 3, "equivalent on this data": 2, "runaway build": 1}
    led.path.write_text(json.dumps(old))
    again = Ledger.open(tmp_path, {"seed": 1})
    assert dataset.dataset_markdown([], again, facts) == text
    assert regroup(again.drops) == regroup(led.drops) and again.drops["no_prompt"] == 3  # the first code of a label


def test_a_drop_carries_its_code_beside_its_message():
    d = Drop("orders", "p1", "line 3: equivalent on this data: every rebuilt table ...", DropCode.EQUIVALENT)
    model, pattern, reason, code = d
    assert (model, pattern, code.label) == ("orders", "p1", "equivalent on this data")
