"""The one dbt layer: running dbt (`DbtRunner`, two backends, one `DbtResult`), scratch copies of a
project (`ScratchProject`, one copy policy), scratch profiles (one lookup, one writer) and packages
as the user installed them (offline stand-in for `dbt deps`).

Every module of adegen that runs dbt, copies a project or reads profiles.yml goes through here
(`python/tests/test_dbt_layer.py` greps the tree for other forms).
"""
from adegen.dbt.packages import PackagePlan, ReusedPackage, plan_packages
from adegen.dbt.profiles import (duckdb_output, find_profiles, snowflake_emulator_output, snowflake_env_output,
                       snowflake_offline_output, write_profiles)
from adegen.dbt.result import (FAILED, OK, TIMEOUT, DbtResult, NodeStatus, capture_payload, extract_envelopes,
                     strip_ansi)
from adegen.dbt.runner import (NO_ARTIFACTS, DbtCall, DbtDirs, DbtRunner, InProcessRunner, SubprocessRunner, harness_env,
                     make_runner, run_dbt, run_operation, run_process)
from adegen.dbt.scratch import ScratchProject, copy_tree, differing_files, ignore_for, project_files, sync_tree

__all__ = [
    "DbtCall", "DbtDirs", "DbtResult", "DbtRunner", "FAILED", "InProcessRunner", "NO_ARTIFACTS", "NodeStatus",
    "OK",
    "PackagePlan", "ReusedPackage", "ScratchProject", "SubprocessRunner", "TIMEOUT", "capture_payload",
    "copy_tree", "differing_files", "duckdb_output", "extract_envelopes", "find_profiles", "harness_env",
    "ignore_for", "make_runner", "plan_packages", "project_files", "run_dbt", "run_operation",
    "run_process", "snowflake_emulator_output", "snowflake_env_output", "snowflake_offline_output",
    "strip_ansi", "sync_tree", "write_profiles",
]
