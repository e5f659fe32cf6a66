"""bench/run.py helpers: exponent fit, process-tree measurement, graceful 'unavailable' rows."""
from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import run  # noqa: E402


def test_fit_exponent_recovers_power_law():
    ns = [100, 1000, 5000]
    assert run.fit_exponent(ns, [0.01 * n ** 1.5 for n in ns]) == 1.5
    assert run.fit_exponent([100], [1.0]) is None
    assert run.fit_exponent([100, 1000], [None, 2.0]) is None


def test_measure_reports_time_memory_and_exit_code(tmp_path):
    code = "import subprocess, sys; b = bytearray(60 * 2**20); " \
           "subprocess.run([sys.executable, '-c', 'x = bytearray(30 * 2**20)']); sys.exit(3)"
    m = run.measure([sys.executable, "-c", code], tmp_path)
    assert m["rc"] == 3
    assert m["wall_s"] > 0
    assert m["peak_rss_mb"] >= 60
    assert m["peak_tree_rss_mb"] >= 60


def test_missing_module_is_a_reason_not_a_crash():
    assert "not implemented" in run._module_missing("adegen.no_such_module")
    m = {"rc": 1, "stdout": "", "stderr": "/x/python: No module named adegen.zzz\n", "timed_out": False}
    assert run._classify(m, "adegen.zzz").startswith("unavailable")


def test_milestones_from_timestamped_progress_lines(tmp_path):
    code = ("import sys, time; print('Running discovery...', file=sys.stderr, flush=True); "
            "time.sleep(0.3); print('Proposed tasks (2):', file=sys.stderr, flush=True); "
            "print('Wrote 2 task(s) to x:', file=sys.stderr, flush=True); print('{}')")
    m = run.measure([sys.executable, "-c", code], tmp_path)
    ms = run.milestones(m["lines"])
    assert set(ms) == {"discovery_started", "proposals", "tasks_written"}
    assert ms["discovery_started"] + 0.25 <= ms["proposals"] <= ms["tasks_written"] <= m["wall_s"]
    assert m["stdout"].strip() == "{}"
