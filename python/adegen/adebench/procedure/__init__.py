"""Local emulation of ade-bench's DuckDB grading (no Docker).

Modules: `testgen` (AUTO tests, equality macro, 55-char rule, task.yaml reading), `parser`
(DbtParser regexes + `_is_resolved`), `seeds` (`--seed` CSV/_no-op export + pitfall checks),
`dbfiles` (STORAGE_VERSION v1.0.0 copies), `emulate`
(the trial: setup, agent none|sage, test phase). Vendored upstream texts live in `resources/`.
"""
from adegen.adebench.procedure.emulate import HarnessResult, TrialConfig, TrialRunner, map_paths, plan_script, run_harness
from adegen.adebench.procedure.parser import ParseResult, is_resolved, parse_dbt_output, strip_ansi
from adegen.adebench.procedure.seeds import SeedCheck, check_table, export_solution_seeds, no_op_text
from adegen.adebench.procedure.testgen import (MAX_TEST_NAME, GradingSpec, SolutionSeed, TestNameTooLong, check_test_names,
                      equality_macro, generate_equality_test, generate_existence_test,
                      generate_solution_tests)
from adegen.adebench.procedure.dbfiles import HARNESS_STORAGE_VERSION, storage_version, write_versioned_copy

__all__ = [
    "HarnessResult", "TrialConfig", "TrialRunner", "map_paths", "plan_script", "run_harness",
    "ParseResult", "is_resolved", "parse_dbt_output", "strip_ansi",
    "SeedCheck", "check_table", "export_solution_seeds", "no_op_text",
    "GradingSpec", "MAX_TEST_NAME", "SolutionSeed", "TestNameTooLong", "check_test_names",
    "equality_macro", "generate_equality_test", "generate_existence_test", "generate_solution_tests",
    "HARNESS_STORAGE_VERSION", "storage_version", "write_versioned_copy",
]
