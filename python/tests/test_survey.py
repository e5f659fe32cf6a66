"""survey: ade-bench detection order, task.yaml parsing, patch summaries, family classification."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from adegen import backends
from adegen.adebench import install as ade_bench
from adegen.core import settings
from adegen.discover import survey as sv

FIX = Path(__file__).parent / "fixtures" / "ade_tasks" / "ade-bench"


def test_brief_and_classification():
    s = sv.survey([("ade-bench", FIX / "tasks")], "acme")
    ids = [t.task_id for t in s.tasks]
    assert ids == ["acme001", "acme002", "acme003", "acme004"]  # f1005 is another project, broken999 skipped
    assert any("broken999" in w for w in s.warnings)
    brief = s.brief()
    assert brief.startswith("Existing tasks for project acme (4 found):")
    assert "- acme001 (medium): " in brief and "int_orders_enriched.sql L51: left join -> join" in brief
    assert "int_orders_enriched.sql L18: sum -> max" in brief
    assert s.covered_pairs[("int_orders_enriched", "join")] == "acme001"
    assert s.covered_pairs[("int_orders_enriched", "aggregation")] == "acme002"
    # an unclassifiable mutation still marks its model covered
    t4 = next(t for t in s.tasks if t.task_id == "acme004")
    assert t4.unclassified_models == {"stg_orders"} and s.covered_models["stg_orders"] == "acme004"
    assert s.highest_number == 4


def test_escaping_patch_rejected():
    s = sv.survey([("ade-bench", FIX / "tasks")], "acme")
    t3 = next(t for t in s.tasks if t.task_id == "acme003")
    assert t3.changes == [] and "escapes the project root" in t3.patch_problem
    for bad in ("../x.sql", "/etc/passwd", "models/../../x", "C:\\x"):
        assert sv.unsafe_patch_path(bad)
    assert not sv.unsafe_patch_path("models/x.sql")


def test_no_tasks_message(tmp_path):
    s = sv.survey([("output", tmp_path / "nothing")], "acme")
    assert s.brief() == "no existing tasks for acme" and s.highest_number == 0


def test_classify_uses_catalog_families():
    class P:
        def __init__(self, id, family, seqs):
            self.id, self.family, self.applies_when = id, family, seqs

    class Cat:
        patterns = [P("wrong_join_type", "join_logic", [("left", "join")]),
                    P("wrong_aggregation", "aggregation", [("sum", "(")])]

    assert sv.classify_change("left join x on a = b\n", "join x on a = b\n", Cat()) == "join_logic"
    assert sv.classify_change("  sum(x) as y,\n", "  max(x) as y,\n", Cat()) == "aggregation"
    assert sv.classify_change("where a > 1\n", "where a >= 1\n", None) == "comparison"
    assert sv.classify_change("from {{ ref('a') }}\n", "from {{ ref('b') }}\n", None) == "ref"
    assert sv.classify_change("'completed'\n", "'complete'\n", None) is None


def _fake_ade(bin_dir: Path, ok: bool) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    f = bin_dir / "ade"
    f.write_text("#!/bin/sh\nexit %d\n" % (0 if ok else 1))
    f.chmod(f.stat().st_mode | stat.S_IEXEC)


def test_detection_order(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + "/usr/bin:/bin")
    # nothing at all
    assert not ade_bench.detect_ade_bench().found
    # `ade` exists but `ade --help` fails: not enough
    _fake_ade(tmp_path / "bin", ok=False)
    assert not ade_bench.detect_ade_bench().found
    # fallback: ~/.ade-bench/pyproject.toml naming ade-bench
    (home / ".ade-bench").mkdir()
    (home / ".ade-bench" / "pyproject.toml").write_text('[project]\nname = "ade-bench"\n')
    a = ade_bench.detect_ade_bench()
    assert a.found and a.path == home / ".ade-bench" and a.tasks_dir == home / ".ade-bench" / "tasks"
    # a working `ade` wins
    _fake_ade(tmp_path / "bin", ok=True)
    a = ade_bench.detect_ade_bench()
    assert a.found and "ade" in a.how
    # explicit directory
    assert ade_bench.detect_ade_bench(FIX).path == FIX


def test_ade_help_is_asked_once_per_command_file(tmp_path):
    """`ade --help` costs a CPU second: its answer is kept for the same command file (a failure for
    ten minutes only), and a changed file is asked again."""
    with settings.override(cache_dir=tmp_path / "cache"):
        bin_dir, calls = tmp_path / "bin", tmp_path / "calls"
        bin_dir.mkdir()
        ade = bin_dir / "ade"
        for code in (1, 0):
            ade.write_text(f"#!/bin/sh\necho x >> '{calls}'\nexit {code}\n")
            ade.chmod(ade.stat().st_mode | stat.S_IEXEC)
            assert [ade_bench._ade_works(ade) for _ in range(3)] == [code == 0] * 3
        assert calls.read_text().count("x") == 2
        memo = tmp_path / "cache" / "ade-help.json"
        stale = json.loads(memo.read_text())
        memo.write_text(json.dumps({**stale, "ok": False, "at": stale["at"] - ade_bench.ADE_FAILED_MEMO_SECONDS - 1}))
        assert ade_bench._ade_works(ade) and calls.read_text().count("x") == 3  # an old failure is asked again


def test_install_commands_mention_env_for_snowflake():
    assert any(".env.example" in c for c in backends.get("snowflake").install_extras("~/.ade-bench"))
    assert not backends.get("duckdb").install_extras("~/.ade-bench")
    assert not any(".env.example" in c for c in ade_bench.install_commands())
