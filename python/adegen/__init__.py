"""adegen: turn a dbt project into validated ADE-bench bug-fix tasks."""

__version__ = "0.1.0"
