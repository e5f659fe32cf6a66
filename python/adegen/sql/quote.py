"""SQL quoting, the one definition: identifiers and string literals as DuckDB and Snowflake read
them. A leaf (no imports), used by the harness emulation, the validators and the emulator.

(`emulator/_fakesnow_launcher.py` keeps a copy of `ident`: it is a standalone script run in the
fakesnow server's process and imports nothing of adegen.)"""
from __future__ import annotations

import re

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def ident(name: str) -> str:
    """A double-quoted identifier ("my ""odd"" name")."""
    return '"' + str(name).replace('"', '""') + '"'


def literal(value: str) -> str:
    """A single-quoted string literal."""
    return "'" + str(value).replace("'", "''") + "'"


def bare_or_quoted(name: str, *, upper: bool = False) -> str:
    """A plain identifier (letters, digits, `_`, `$`; not starting with a digit) as it is -
    upper-cased with `upper`, as Snowflake stores an unquoted name - else double-quoted."""
    if _PLAIN.fullmatch(name):
        return name.upper() if upper else name
    return ident(name)
