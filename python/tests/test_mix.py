"""`--mix hard` (issue 52, item 6): which proposals a hard run keeps, the prompt it writes as base,
and the option (propose/mix.py is pure; the builds that prove it are in the report/CHANGELOG)."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from adegen.propose import mix
from adegen.propose.model import PromptLevel


def prop(name: str, *, depth: int = 0, family: str = "filters", compound=None):
    return SimpleNamespace(model=name, pattern_id="p", compared_table="mart", family=family, compound=compound,
                           observation=SimpleNamespace(changed_tables={"mart": depth}))


def test_the_kinds():
    assert mix.kind(prop("a", compound=[{}, {}])) == "compound"
    assert mix.kind(prop("a", family="incremental")) == "incremental"
    assert mix.kind(prop("a", depth=2)) == "deep" and mix.kind(prop("a", depth=1)) == "slip"
    assert mix.depth(SimpleNamespace(compared_table="m", observation=None)) == 0  # not screened


def test_the_hardest_are_kept_in_run_order():
    run = [prop("shallow", depth=1), prop("deep3", depth=3), prop("same", depth=0), prop("inc", family="incremental"),
           prop("inc2", family="incremental", depth=1), prop("deep2", depth=2), prop("both", compound=[{}, {}])]
    kept = mix.hardest(run, 4)
    # compound, the first incremental, then the deepest symptoms; a second incremental is a slip
    assert [p.model for p in kept] == ["deep3", "inc", "deep2", "both"]
    assert [p.model for p in mix.hardest(run, 5)] == ["shallow", "deep3", "inc", "deep2", "both"]
    assert mix.hardest(run[:2], 5) == run[:2]  # fewer than asked: all, in order
    # a slip the compound task holds comes last, however deep (the run would hold it twice)
    run = [prop("deep3", depth=3), prop("shallow", depth=1),
           prop("both", compound=[{"model": "deep3", "pattern_id": "p"}, {"model": "x", "pattern_id": "q"}])]
    assert [p.model for p in mix.hardest(run, 2)] == ["shallow", "both"]


def test_the_hard_prompt_is_written_as_base():
    levels = [PromptLevel("base", "b"), PromptLevel("medium", "m"), PromptLevel("hard", "h", ("other",))]
    assert mix.hard_first(levels) == [PromptLevel("base", "h", ("other",)), PromptLevel("medium", "m")]
    assert mix.hard_first(levels[:1]) == levels[:1]  # no hard level: unchanged
    assert mix.hard_texts([("base", "B {table}"), ("hard", "H {table}")]) == (("base", "H {table}"),)
    assert mix.summary(["deep", "data-change", "deep"], "hard") == {"name": "hard",
                                                                     "kinds": {"deep": 2, "data-change": 1}}


def test_the_mix_option(tmp_path):
    from adegen.cli.build_args import parse_args
    from adegen.core.errors import InputError

    project, out = str(Path(__file__).resolve().parent / "fixtures" / "shopfix"), str(tmp_path / "out")
    opts = parse_args([project, "--output-dir", out, "--mix", "hard"])
    assert opts.mix == "hard" and opts.data_change  # a hard mix holds a data change
    assert parse_args([project, "--output-dir", out]).mix == "default"
    with pytest.raises(InputError, match="needs validation") as err:
        parse_args([project, "--output-dir", out, "--mix", "hard", "--no-validate"])
    assert err.value.field == "--mix"
