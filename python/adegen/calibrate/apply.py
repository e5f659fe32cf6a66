"""The measured difficulty onto the dataset files: `measured_difficulty` into the rows of
`<output>/tasks.jsonl` (when the directory has one: bulk mode's), rewritten atomically."""
from __future__ import annotations

import json
from pathlib import Path

from adegen.core.atomic import TMP_PREFIX, write_text_atomic
from adegen.core.errors import InputError
from adegen.report.calibration import MeasuredDifficulty


def with_measures(rows: list[dict], measured: dict[str, MeasuredDifficulty]) -> list[dict]:
    """The rows with `measured_difficulty` set for every measured task (pure)."""
    return [{**r, "measured_difficulty": measured[r["id"]].to_json()} if r.get("id") in measured else r
            for r in rows]


def update_tasks_jsonl(output_dir: Path, measured: dict[str, MeasuredDifficulty]) -> Path | None:
    path = output_dir / "tasks.jsonl"
    if not path.is_file():
        return None
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise InputError(f"line {n} is not JSON ({exc})", file=path, field=f"line {n}") from None
        if not isinstance(row, dict) or "id" not in row:
            raise InputError(f"line {n} is not a task row", file=path, field="id")
        rows.append(row)
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in with_measures(rows, measured))
    write_text_atomic(path, text, tmp_prefix=TMP_PREFIX)
    return path
