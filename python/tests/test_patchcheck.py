"""patchcheck: GNU patch round trip in a throwaway copy; broken tasks are reported, not kept."""
from __future__ import annotations

from pathlib import Path

from adegen.tasks.patchcheck import TaskPatches, check_task
from adegen.tasks.taskgen import unified_diff


def _setup(tmp_path: Path, old: bytes, new: bytes, solution: bytes | None = None):
    proj = tmp_path / "proj"
    (proj / "models").mkdir(parents=True)
    (proj / "models" / "m.sql").write_bytes(old)
    task = tmp_path / "task"
    (task / "setup").mkdir(parents=True)
    (task / "solutions").mkdir()
    (task / "setup" / "changes.patch").write_bytes(unified_diff(old, new, "models/m.sql"))
    (task / "solutions" / "changes.patch").write_bytes(solution if solution is not None
                                                       else unified_diff(new, old, "models/m.sql"))
    return proj, task


def test_round_trip_ok(tmp_path):
    old, new = b"select\r\n  sum(x)\r\nfrom t", b"select\r\n  max(x)\r\nfrom t"
    proj, task = _setup(tmp_path, old, new)
    r = check_task(proj, TaskPatches("acme001", task, (("models/m.sql", old, new),)), ["m"], {"m"})
    assert r.ok and r.line() == "acme001: setup ✓ solution ✓ roundtrip ✓"
    assert (proj / "models" / "m.sql").read_bytes() == old


def test_bad_solution_detected(tmp_path):
    old, new = b"a\nb\nc\n", b"a\nB\nc\n"
    proj, task = _setup(tmp_path, old, new, solution=unified_diff(new, b"a\nX\nc\n", "models/m.sql"))
    r = check_task(proj, TaskPatches("acme001", task, (("models/m.sql", old, new),)), ["m"], {"m"})
    assert r.setup and r.solution and not r.roundtrip and not r.ok


def test_setup_that_does_not_apply(tmp_path):
    old, new = b"a\nb\nc\n", b"a\nB\nc\n"
    proj, task = _setup(tmp_path, old, new)
    (proj / "models" / "m.sql").write_bytes(b"totally\ndifferent\n")
    r = check_task(proj, TaskPatches("acme001", task, (("models/m.sql", old, new),)), ["m"], {"m"})
    assert not r.setup and not r.ok


def test_unknown_model_fails(tmp_path):
    old, new = b"a\nb\nc\n", b"a\nB\nc\n"
    proj, task = _setup(tmp_path, old, new)
    r = check_task(proj, TaskPatches("acme001", task, (("models/m.sql", old, new),)), ["m", "ghost"], {"m"})
    assert r.roundtrip and not r.ok and "ghost" in r.line()


def test_the_copy_lives_in_the_run_work_directory(tmp_path, monkeypatch):
    """A build passes its own work directory: a build killed mid-check (SIGKILL, no cleanup) leaves
    the project copy there for the next run's cleanup, never in the system's temp directory (a CI
    run left /tmp/ade-bench-validate-tiny003-*)."""
    import shutil
    import tempfile

    from adegen.tasks import patchcheck

    old, new = b"a\nb\nc\n", b"a\nB\nc\n"
    proj, task = _setup(tmp_path, old, new)
    work = tmp_path / "work"
    work.mkdir()
    before = set(Path(tempfile.gettempdir()).glob("ade-bench-validate-acme001-*"))
    kept: list[Path] = []
    remove = shutil.rmtree
    monkeypatch.setattr(patchcheck.shutil, "rmtree", lambda p, **kw: kept.append(Path(p)))  # as if killed
    r = check_task(proj, TaskPatches("acme001", task, (("models/m.sql", old, new),)), ["m"], {"m"}, workdir=work)
    assert r.ok and len(kept) == 1 and kept[0].parent == work and kept[0].name.startswith("ade-bench-validate-acme001-")
    assert set(Path(tempfile.gettempdir()).glob("ade-bench-validate-acme001-*")) == before
    remove(kept[0])


def test_a_patch_that_adds_a_model_file_round_trips(tmp_path):
    """A story that moves a CTE into a model of its own (adegen.rewrite.stories.extract_cte): the
    setup patch creates the file (`--- /dev/null`), the solution patch removes it again, and the
    round trip leaves the project as it was (GNU patch, as ade-bench applies it)."""
    old, new = b"with a as (\n    select 1 as x\n)\nselect * from a\n", b"with a as (\n    select * from {{ ref('n') }}\n)\nselect * from a\n"
    added = b"select 1 as x\nwhere true\n"
    proj, task = _setup(tmp_path, old, new)
    (task / "setup" / "changes.patch").write_bytes(unified_diff(old, new, "models/m.sql")
                                                   + unified_diff(None, added, "models/n.sql"))
    (task / "solutions" / "changes.patch").write_bytes(unified_diff(new, old, "models/m.sql")
                                                       + unified_diff(added, None, "models/n.sql"))
    assert b"--- /dev/null\n+++ b/models/n.sql\n@@ -0,0 +1,2 @@\n" in (task / "setup" / "changes.patch").read_bytes()
    files = (("models/m.sql", old, new), ("models/n.sql", None, added))
    r = check_task(proj, TaskPatches("acme001", task, files), ["m", "n"], {"m", "n"})
    assert r.ok, r.line()
    # a solution that fixes the new file but leaves it behind is no round trip
    (task / "solutions" / "changes.patch").write_bytes(unified_diff(new, old, "models/m.sql"))
    r = check_task(proj, TaskPatches("acme001", task, files), ["m"], {"m"})
    assert r.setup and not r.roundtrip and "models/n.sql" in r.line()


def test_a_purposeful_solution_gives_the_change_done_right(tmp_path):
    """A purposeful change (propose/purpose.py): the solution applies to the broken state and gives
    the right text, not the original; the inverse of the setup is refused for such a task."""
    old = b"select a, count(*) as n\nfrom t\ngroup by a\n"
    broken = b"select a, count(*) as n,\n  count(*) as done_n\nfrom t\nwhere s = 'done'\ngroup by a\n"
    right = b"select a, count(*) as n,\n  count(case when s = 'done' then 1 end) as done_n\nfrom t\ngroup by a\n"
    files = (("models/m.sql", old, broken),)
    proj, task = _setup(tmp_path, old, broken, solution=unified_diff(broken, right, "models/m.sql"))
    r = check_task(proj, TaskPatches("acme001", task, files, solved=(("models/m.sql", right),)), ["m"], {"m"})
    assert r.ok, r.line()
    proj, task = _setup(tmp_path / "inverse", old, broken)
    r = check_task(proj, TaskPatches("acme001", task, files, solved=(("models/m.sql", right),)), ["m"], {"m"})
    assert r.setup and r.solution and not r.roundtrip and "right text of models/m.sql" in r.line()
