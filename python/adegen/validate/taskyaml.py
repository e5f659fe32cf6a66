"""task.yaml changes made during a proof (exclude_columns, max_test_timeout_sec, ...).

`update_task_yaml(path, **changes)` re-renders the whole file from its updated document through
the one task.yaml writer, `adegen.task_yaml` (see `TaskYaml.changed` for the accepted changes)."""
from __future__ import annotations

from ..task_yaml import update_task_yaml

__all__ = ["update_task_yaml"]
