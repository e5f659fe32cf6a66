"""`python -m adegen.build integration_tests_snowflake --emulate-snowflake --pick all --yes`: every
generated Snowflake task is proven on the fakesnow emulator (broken fails, solved passes), labelled
"proven on emulator" (never "proven on Snowflake"). Runs only when the snowflake-emulator extra
(fakesnow[server]) is importable. Three proposals, the first of them generated and proven, keep the CI
run short (a proof on the emulator costs about 40 CPU seconds; test_validate_snowflake proves other
mutants there); the wall time is printed, not asserted (timings belong to the benchmark and bench/RESULTS.md)."""
from __future__ import annotations

import time

import pytest
import yaml

from test_build import clean_env, load_json, run_build  # noqa: F401 (fixture re-export)
from test_build_snowflake import SF_PROJECT, SF_VARS, sf_env, snowflake_pattern_ids  # noqa: F401

pytestmark = pytest.mark.skipif(
    __import__("adegen.snowflake_emulator.install", fromlist=["emulator_missing"]).emulator_missing() is not None,
    reason="the snowflake-emulator extra (fakesnow[server]) is not installed")



@pytest.fixture(scope="module")
def emu_run(sf_env, tmp_path_factory):
    out = tmp_path_factory.mktemp("sfemu") / "ade-bench-tasks"
    t0 = time.monotonic()
    r = run_build([SF_PROJECT, "--output-dir", out, "--emulate-snowflake", "--count", "3",
                   "--pick", "1", "--yes", "--json"], sf_env, timeout=1200)
    elapsed = time.monotonic() - t0
    print(f"--emulate-snowflake build, 3 proposals, 1 proven task: {elapsed:.0f}s")
    assert r.returncode == 0, r.stderr[-4000:]
    return out, load_json(r), r, elapsed


def test_every_task_proven_on_emulator(emu_run):
    out, doc, r, elapsed = emu_run
    assert doc["validation"]["usable"] is True and doc["validation"]["emulate_snowflake"] is True
    assert len(doc["proposals"]) == 3 and len(doc["tasks"]) == 1
    for t in doc["tasks"]:
        assert t["proven"] and t["status"] == "ready", t["proof_detail"][:2000]
        assert t["proof"]["broken_fails"] and t["proof"]["solved_passes"]
        assert t["proof"]["on"] == "emulator" and t["proof_label"] == "proven on emulator"
        assert f"{t['task_id']}: {t['model']} / {t['pattern_id']} ({t['difficulty']}) - proven on emulator" in r.stderr
        d = out / "tasks" / t["task_id"]
        data = yaml.safe_load((d / "task.yaml").read_text())
        assert data["status"] == "ready"
        assert data["variants"][0]["db_type"] == "snowflake" and "db_dir" not in data["variants"][0]
        assert (d / "seeds" / "_no-op.txt").is_file()
        assert all((d / "seeds" / f"solution__{s['table_name']}.csv").is_file() for s in data["solution_seeds"])
    assert "proven on Snowflake" not in r.stderr + r.stdout
    assert "proven on emulator" in doc["validation"]["snowflake_note"]


def test_emulator_run_keeps_snowflake_share(emu_run):
    _, doc, _, _ = emu_run
    ids = [p["pattern_id"] for p in doc["proposals"]]
    assert 2 * sum(1 for i in ids if i in snowflake_pattern_ids()) >= len(ids), ids
