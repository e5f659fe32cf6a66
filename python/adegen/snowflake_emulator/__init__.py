"""Local Snowflake emulation for proving Snowflake tasks: a hardened fakesnow server + dbt-snowflake.

Read shared/docs/fakesnow.md for what fakesnow can and cannot do. A green run on the emulator is
strong evidence that the dbt plumbing and the logic work; it is not proof that the SQL is valid on
real Snowflake (fakesnow is more permissive, and a few functions differ silently).

    from adegen.snowflake_emulator import FakesnowServer, copy_project
    proj = copy_project(project_dir, scratch / "proj")     # + compat macros, absolute local packages
    with FakesnowServer(scratch / "fakesnow") as srv:      # free 127.0.0.1 port, hardened launcher
        profiles = srv.write_profiles(load_project(proj))  # database=... to isolate
        srv.run_dbt(["deps"], proj, profiles, timeout=120, check=True)
        srv.seed(proj, profiles)                           # or srv.load_duckdb(file, database=...)
        r = srv.run_dbt(["build"], proj, profiles, timeout=600)
        r.status                                           # ok | failed | unsupported | timeout

- Server start failures (fakesnow missing, port taken, crash, no answer within start_timeout)
  raise EmulatorUnavailableError / EmulatorStartError (AdegenError subclasses), never hang.
- The server is stopped by the context manager, by atexit, and by its own parent watchdog.
- dbt runs as a subprocess of the current python in its own process group, killed on timeout.
- `r.status == "unsupported"`: every error dbt reported matches a known fakesnow gap
  (classify.UNSUPPORTED_PATTERNS); `r.unsupported` lists them. A real bug gives "failed".
"""
from __future__ import annotations

from adegen.snowflake_emulator.classify import (KNOWN_MISSING_FUNCTIONS, UNSUPPORTED_PATTERNS, ErrorBlock, UnsupportedMatch,
                       classify_failure, error_blocks, unsupported_matches)
from adegen.snowflake_emulator.compat import COMPAT_FILE_NAME, COMPAT_MACROS_SQL, conflicting_macros, install_compat_macros
from adegen.snowflake_emulator.errors import (EmulatorError, EmulatorStartError, EmulatorTimeoutError, EmulatorUnavailableError,
                     EmulatorUnsupportedError)
from adegen.snowflake_emulator.profiles import copy_project, emulator_profiles, snowflake_target
from adegen.snowflake_emulator.runner import DbtResult, run_dbt
from adegen.snowflake_emulator.install import FAKESNOW_VERSION, emulator_missing, fakesnow_available
from adegen.snowflake_emulator.server import FakesnowServer, free_port

__all__ = [
    "COMPAT_FILE_NAME", "COMPAT_MACROS_SQL", "DbtResult", "EmulatorError", "EmulatorStartError",
    "EmulatorTimeoutError", "EmulatorUnavailableError", "EmulatorUnsupportedError", "ErrorBlock",
    "FAKESNOW_VERSION", "FakesnowServer", "KNOWN_MISSING_FUNCTIONS", "UNSUPPORTED_PATTERNS",
    "UnsupportedMatch", "classify_failure", "conflicting_macros", "copy_project", "emulator_profiles",
    "emulator_missing", "error_blocks", "fakesnow_available", "free_port", "install_compat_macros", "run_dbt",
    "snowflake_target", "unsupported_matches",
]
