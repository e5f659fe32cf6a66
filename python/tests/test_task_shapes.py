"""The change shape (adegen.tasks.shape) a task's --json entry reports agrees with its setup patch as
a reviewer reads it (tests/task_shapes.py, the check every build of the suite runs)."""
from __future__ import annotations

import json
import subprocess

import pytest
from task_shapes import check_written, patch_shape

from adegen.tasks.shape import run_figure, shape_of
from adegen.tasks.taskgen import unified_diff

OLD = b"with source as (\n    select 1\n)\n\nselect a,\n  b\nfrom source\n-- a comment on the filter\nwhere a > 0\n"
CASES = [
    (("models/m.sql", OLD, OLD.replace(b"a > 0", b"a >= 0")),),  # one token: one line
    (("models/m.sql", OLD, OLD.replace(b"-- a comment on the filter\nwhere a > 0\n", b"")),),  # `-- ` removed
    (("models/m.sql", OLD, OLD.replace(b"select a,\n  b\n", b"select\n    a\n    , b\n")),
     ("models/n.sql", None, b"select 1 as x\nfrom y\nwhere z\n")),  # a file added
]


@pytest.mark.parametrize("files", CASES)
def test_the_shape_is_what_the_patch_shows(files):
    patch = b"".join(unified_diff(old, new, path) for path, old, new in files).decode()
    shape = shape_of(files)
    assert (shape.files, shape.lines) == patch_shape(patch)


def test_the_shapes_of_a_run():
    shapes = [shape_of(files).to_json() for files in CASES]
    assert [s["commit"] for s in shapes] == [False, False, True]  # 1 line, 2 lines, 2 files
    assert run_figure([{"change": s} for s in shapes]) == {"tasks": 3, "commits": 1, "multi_file": 1,
                                                           "at_least_half": False}


def test_a_build_whose_entry_misstates_its_patch_is_refused(tmp_path):
    files = CASES[2]
    (tmp_path / "setup").mkdir()
    (tmp_path / "setup" / "changes.patch").write_bytes(b"".join(unified_diff(o, n, p) for p, o, n in files))
    entry = {"task_id": "acme001", "path": str(tmp_path), "pattern_id": "where_predicate_dropped",
             "change": shape_of(files).to_json()}
    doc = {"tasks": [entry], "change_shape": run_figure([entry])}
    check_written(subprocess.CompletedProcess([], 0, json.dumps(doc), ""))
    entry["change"] = {"files": 1, "lines": 2, "commit": False}
    with pytest.raises(AssertionError, match="acme001"):
        check_written(subprocess.CompletedProcess([], 0, json.dumps(doc), ""))
    entry["change"], entry["pattern_id"] = shape_of(files).to_json(), "wrong_source"  # swap_source: retired
    with pytest.raises(AssertionError, match="retired"):
        check_written(subprocess.CompletedProcess([], 0, json.dumps(doc), ""))
