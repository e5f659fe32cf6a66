"""adegen: turn a dbt project into validated ADE-bench bug-fix tasks."""

from adegen.core.paths import ensure_scripts_on_path as _ensure_scripts_on_path

__version__ = "0.1.0"

_ensure_scripts_on_path()
