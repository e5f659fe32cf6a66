"""`--mix hard` (issue 52, item 6): which proposals a hard run keeps, the prompt it writes as base,
and the option (propose/mix.py is pure; the builds that prove it are in the report/CHANGELOG)."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from adegen.propose import mix
from adegen.propose.model import PromptLevel


def prop(name: str, *, depth: int = 0, family: str = "filters", compound=None, rebuild=()):
    return SimpleNamespace(model=name, pattern_id="p", compared_table="mart", family=family, compound=compound,
                           observation=SimpleNamespace(changed_tables={"mart": depth}), test_setup_models=list(rebuild))


def test_the_kinds():
    assert mix.kind(prop("a", compound=[{}, {}])) == "compound"
    assert mix.kind(prop("a", family="incremental")) == "incremental"
    assert mix.kind(prop("a", depth=2)) == "deep" and mix.kind(prop("a", depth=1)) == "slip"
    assert mix.depth(SimpleNamespace(compared_table="m", observation=None)) == 0  # not screened


def test_the_hardest_are_kept_in_run_order():
    run = [prop("shallow", depth=1), prop("deep3", depth=3), prop("same", depth=0), prop("inc", family="incremental"),
           prop("inc2", family="incremental", depth=1), prop("deep2", depth=2), prop("both", compound=[{}, {}])]
    kept = mix.hardest(run, 4)
    # compound, the deepest incremental, then the deepest symptoms; a second incremental is a slip
    assert [p.model for p in kept] == ["deep3", "inc2", "deep2", "both"]
    assert [p.model for p in mix.hardest(run, 5)] == ["shallow", "deep3", "inc2", "deep2", "both"]
    assert mix.hardest(run[:2], 5) == run[:2]  # fewer than asked: all, in order
    # a slip the compound task holds comes last, however deep (the run would hold it twice)
    run = [prop("deep3", depth=3), prop("shallow", depth=1),
           prop("both", compound=[{"model": "deep3", "pattern_id": "p"}, {"model": "x", "pattern_id": "q"}])]
    assert [p.model for p in mix.hardest(run, 2)] == ["shallow", "both"]


INC = frozenset({"fct_events"})


def test_a_slip_whose_rebuild_runs_an_incremental_model_is_a_full_refresh_kind():
    up = prop("stg", rebuild=["stg", "fct_events", "rpt"], depth=2)
    assert mix.kind(up, INC) == "full-refresh" and mix.kind(up) == "deep"  # no incremental model known
    assert mix.kind(prop("rpt", rebuild=["rpt"]), INC) == "slip"  # below the incremental model: ordinary
    assert mix.kind(prop("f", family="incremental", rebuild=["fct_events"]), INC) == "incremental"
    assert mix.incremental_models([{"name": "a", "materialized": "incremental"}, {"name": "b"}]) == {"a"}
    # the proof settles it: a refresh not needed counts by its depth in --json `mix`
    assert mix.written_kind({"full_refresh": {"models": ["fct_events"]}}, up, INC) == "full-refresh"
    assert mix.written_kind({}, up, INC) == "deep"


def test_every_hard_kind_counts_once_before_any_repeats():
    E = mix.Entry
    run = [E("deep", 3), E("full-refresh", 1), E("full-refresh", 4), E("purposeful"), E("purposeful", 2),
           E("slip", 1), E("data-change")]
    # one of each hard kind (the deepest of the kind), then the deepest symptoms; the other full
    # refresh and purposeful change rank as the slips they are
    assert mix.ranked(run, 3) == [2, 4, 6]
    assert mix.ranked(run, 4) == [0, 2, 4, 6]
    assert mix.ranked(run, 5) == [0, 1, 2, 4, 6]
    # a purposeful change with a deep symptom ranks above one without
    assert mix.ranked([E("purposeful"), E("purposeful", 2), E("slip")], 1) == [1]
    # a second purposeful change ranks as a slip of its depth: after the slips of the run
    assert mix.ranked([E("purposeful"), E("slip"), E("purposeful")], 2) == [0, 1]


def test_how_many_purposeful_tasks_a_hard_run_takes():
    deep = [prop("d1", depth=2), prop("d2", depth=3), prop("s", depth=1)]
    # one purposeful change is a hard kind: it wins a slot over the shallow slip, not over deep symptoms
    assert mix.purposeful_slots(deep, 3, 2) == 1
    assert mix.purposeful_slots(deep, 4, 2) == 1
    assert mix.purposeful_slots(deep[:1], 3, 2) == 2  # fewer picks than slots: the second fills one
    assert mix.purposeful_slots(deep, 3, 0) == 0
    full = [prop("c", compound=[{}, {}]), prop("i", family="incremental"), prop("u", rebuild=["fct_events"])]
    assert mix.purposeful_slots(full, 3, 2, INC) == 0  # three harder kinds already
    assert mix.purposeful_slots(full, 3, 2) == 1  # the third is a slip when nothing is incremental


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


def test_a_hard_run_makes_room_for_purposeful_tasks_by_rank():
    from adegen.pipeline.purpose import make_room

    picked = [prop("deep", depth=3), prop("shallow", depth=0), prop("both", compound=[{}, {}]), prop("mid", depth=1)]
    for p in picked:  # what the default rule reads: none is a plain slip, so it would leave the last ones
        p.story, p.siblings, p.candidate = "s", (), SimpleNamespace(origin=None)
    kept, out = make_room(picked, 2, 4, lambda c, n: mix.hardest(c, n))
    assert [p.model for p in kept] == ["deep", "both"] and [p.model for p in out] == ["shallow", "mid"]
    assert [p.model for p in make_room(picked, 2, 4)[1]] == ["both", "mid"]  # the default rule: last first
