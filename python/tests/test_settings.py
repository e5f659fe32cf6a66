"""adegen's settings (`adegen.core.settings`): each environment variable adegen reads for itself is a
documented field with its default, read once per process into the run's options."""
from __future__ import annotations

import re
from pathlib import Path

from adegen.core import settings
from adegen.pipeline.options import Options
from adegen.core.settings import SETTINGS, Settings, from_environ

README = Path(__file__).resolve().parents[2] / "README.md"


def test_defaults_and_what_each_variable_sets(tmp_path):
    home_default = from_environ({})
    assert home_default == Settings(cache_dir=home_default.cache_dir)
    assert from_environ({"XDG_CACHE_HOME": str(tmp_path)}).cache_dir == tmp_path / "adegen"
    s = from_environ({"ADEGEN_CACHE_DIR": str(tmp_path / "c"), "XDG_CACHE_HOME": "/elsewhere",
                      "ADEGEN_DEBUG": "1", "ADEGEN_DBT_RUNNER": " Subprocess ", "ADEGEN_MP_START": "fork",
                      "ADEGEN_PROVE_FAST": "0", "ADEGEN_COMPILE_FRESH_COPY": "true",
                      "ADEGEN_BUDGET_MIN_SECONDS": "5", "ADEGEN_BUDGET_ROW_FLOOR": "10.0",
                      "ADEGEN_DUCKDB_MEMORY_LIMIT": "2GiB", "ADE_DATABASES_DIR": str(tmp_path / "db")})
    assert (s.cache_dir, s.debug, s.dbt_runner, s.mp_start, s.prove_fast, s.compile_fresh_copy) == \
        (tmp_path / "c", True, "subprocess", "fork", False, True)
    assert (s.budget_min_seconds, s.budget_row_floor, s.duckdb_memory_limit, s.ade_databases_dir) == \
        (5.0, 10, "2GiB", tmp_path / "db")


def test_an_empty_or_mistyped_value_keeps_the_default():
    s = from_environ({"ADEGEN_DEBUG": "", "ADEGEN_PROVE_FAST": "", "ADEGEN_BUDGET_FACTOR": "ten",
                      "ADEGEN_MP_START": ""})
    assert (s.debug, s.prove_fast, s.budget_factor, s.mp_start) == (False, True, 10.0, "spawn")


def test_read_once_per_process_and_carried_by_the_options(monkeypatch, tmp_path):
    before = settings.get_settings()
    monkeypatch.setenv("ADEGEN_BUDGET_FACTOR", "3")
    assert settings.get_settings() is before  # not read again behind the run's back
    assert Options(tmp_path, tmp_path).settings is before
    with settings.override(budget_factor=3.0) as s:
        assert settings.get_settings() is s and s.budget_factor == 3.0
    assert settings.get_settings() is before


def test_readme_lists_every_setting():
    section = README.read_text(encoding="utf-8").split("### Settings\n", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `([A-Z_]+)` \|", section, re.M)
    assert listed == [s.env for s in SETTINGS]
    for s in SETTINGS:
        assert f"| `{s.env}` | {s.help} |" in section, s.env
