"""Whether the emulator extra (`adegen[snowflake-emulator]` = `fakesnow[server]`) is installed: the
one check, used before a Snowflake validator is made and before a fakesnow server starts. It
imports every module the launcher and dbt-snowflake's connector need, so a broken install counts
as missing too (finding the files is not enough)."""
from __future__ import annotations

import importlib

FAKESNOW_VERSION = "0.12.1"  # the launcher monkeypatches this version's internals
MODULES = ("fakesnow", "fakesnow.server", "uvicorn", "starlette", "snowflake.connector", "pyarrow")

_import = importlib.import_module  # tests monkeypatch this to simulate a missing extra


def emulator_missing() -> str | None:
    """None when the emulator's modules import, else what failed first."""
    for mod in MODULES:
        try:
            _import(mod)
        except Exception as exc:  # noqa: BLE001 - ImportError and anything a broken install raises
            return f"{mod}: {type(exc).__name__}: {exc}"
    return None


def fakesnow_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("fakesnow")
    except Exception:  # noqa: BLE001 - PackageNotFoundError and friends
        return None


def fakesnow_available() -> tuple[bool, str]:
    """(True, version) when the current python can run the launcher, else (False, reason)."""
    missing = emulator_missing()
    if missing:
        return False, (f"missing python module {missing}; install the emulator with "
                       f"pip install 'fakesnow[server]=={FAKESNOW_VERSION}' (extra: adegen[snowflake-emulator])")
    return True, fakesnow_version() or "unknown"
