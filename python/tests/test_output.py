"""output: run lock, atomic task dirs, id numbering, standalone project copy."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from adegen import backends
from adegen.tasks import output as out
from adegen.core.errors import InputError


def test_lock_is_exclusive_and_stale_lock_is_taken_over(tmp_path):
    a = out.RunLock(tmp_path)
    a.acquire()
    with pytest.raises(InputError, match="another run is writing to"):
        out.RunLock(tmp_path).acquire()
    a.release()
    assert not (tmp_path / ".adegen.lock").exists()
    # a lock left by a dead process
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    import socket

    (tmp_path / ".adegen.lock").write_text(f"{p.pid} {socket.gethostname()}\n")
    b = out.RunLock(tmp_path)
    b.acquire()
    assert b.held
    b.release()


def test_a_lock_whose_pid_another_process_got_is_taken_over(tmp_path):
    """The lock holds the owner's start time too (one owner record, `owners`, as the run work
    directories have it): a live process that merely got the dead owner's pid holds nothing."""
    import os
    import socket

    from adegen.core import owners

    lock = tmp_path / ".adegen.lock"
    lock.write_text(f"{os.getpid()} {socket.gethostname()} 1\n")  # this pid, another start time
    b = out.RunLock(tmp_path)
    b.acquire()
    assert b.held and owners.alive(lock.read_text()) is True
    b.release()
    lock.write_text(owners.record() + "\n")  # the live owner itself: never taken over
    with pytest.raises(InputError, match="another run is writing to"):
        out.RunLock(tmp_path).acquire()


def test_task_writer_is_atomic_and_never_overwrites(tmp_path):
    tasks = tmp_path / "tasks"
    w = out.TaskWriter(tasks, "acme001")
    assert w.dir.name == "acme001" and w.dir.parent.name.startswith(".adegen-tmp-")
    w.write({"task.yaml": b"task_id: acme001\n", "setup.sh": b"#!/bin/bash\n"})
    assert not (tasks / "acme001").exists()
    assert out.highest_task_number(tasks, "acme") == 1  # a reservation in progress counts
    final = w.commit()
    assert final == tasks / "acme001" and os.access(final / "setup.sh", os.X_OK)
    assert (final / "tests").is_dir() and (final / "seeds").is_dir()
    assert [p.name for p in tasks.iterdir()] == ["acme001"]
    with pytest.raises(FileExistsError):
        out.TaskWriter(tasks, "acme001")
    w2 = out.TaskWriter(tasks, "acme002")
    w2.write({"task.yaml": b"x"})
    w2.discard()
    assert sorted(p.name for p in tasks.iterdir()) == ["acme001"]


def test_highest_task_number(tmp_path):
    for n in ("acme001", "acme017", "acme_other003", "acmex", "f1005"):
        (tmp_path / n).mkdir()
    assert out.highest_task_number(tmp_path, "acme") == 17
    assert out.format_task_id("acme", 18) == "acme018"


def _project(root: Path) -> Path:
    p = root / "proj"
    (p / "models").mkdir(parents=True)
    (p / "dbt_project.yml").write_text("name: proj\nprofile: proj\n")
    (p / "models" / "m.sql").write_bytes(b"select 1\r\n")
    for junk in ("target", "logs", "dbt_packages", ".git"):
        (p / junk).mkdir()
        (p / junk / "f").write_text("x")
    (p / "proj.duckdb").write_bytes(b"db")
    (p / "models" / "link_out.sql").symlink_to("/etc/hostname")
    (p / "models" / "link_in.sql").symlink_to("m.sql")
    return p


def test_copy_project_standalone(tmp_path):
    p = _project(tmp_path)
    adegen_root = tmp_path / "adegen_pkg"
    adegen_root.mkdir()
    (p / "packages.yml").write_text("packages:\n  - local: ../adegen_pkg\n  - package: dbt-labs/dbt_utils\n    version: 1.3.0\n")
    (p / "package-lock.yml").write_text("packages:\n  - local: ../adegen_pkg\n    name: adegen\n"
                                        "  - package: dbt-labs/dbt_utils\n    version: 1.3.0\nsha1_hash: abc\n")
    profiles = backends.get("duckdb").copy_profile(SimpleNamespace(
        profile_name="proj", target_name="dev", db_name="proj", schema="main", target_config={"path": "/abs/proj.duckdb"}))
    dest = tmp_path / "out" / "projects" / "proj"
    created, notes = out.copy_project(p, dest, profiles_yml=profiles, adegen_root=adegen_root)
    assert created and any("adegen" in n for n in notes)
    names = {q.relative_to(dest).as_posix() for q in dest.rglob("*")}
    assert names == {"dbt_project.yml", "models", "models/m.sql", "models/link_in.sql", "packages.yml",
                     "package-lock.yml", "profiles.yml"}
    assert (dest / "models" / "m.sql").read_bytes() == b"select 1\r\n"
    assert yaml.safe_load((dest / "packages.yml").read_text())["packages"] == [
        {"package": "dbt-labs/dbt_utils", "version": "1.3.0"}]
    lock = yaml.safe_load((dest / "package-lock.yml").read_text())
    assert lock["packages"] == [{"package": "dbt-labs/dbt_utils", "version": "1.3.0"}] and "sha1_hash" not in lock
    prof = yaml.safe_load((dest / "profiles.yml").read_text())
    assert prof["proj"]["outputs"]["dev"]["path"] == "./proj.duckdb"
    # never overwritten
    created, _ = out.copy_project(p, dest, profiles_yml=profiles, adegen_root=adegen_root)
    assert not created


def test_only_adegen_package_drops_packages_file(tmp_path):
    p = _project(tmp_path)
    (p / "packages.yml").write_text("packages:\n  - local: ../\n")
    (p / "package-lock.yml").write_text("packages:\n  - local: ../\n    name: adegen\nsha1_hash: x\n")
    dest = tmp_path / "copy"
    out.copy_project(p, dest, profiles_yml="{}", adegen_root=tmp_path)
    assert not (dest / "packages.yml").exists() and not (dest / "package-lock.yml").exists()


def test_local_package_outside_project_is_refused(tmp_path):
    p = _project(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (p / "packages.yml").write_text("packages:\n  - local: ../elsewhere\n")
    with pytest.raises(InputError, match="points outside the project"):
        out.rewrite_packages(p, tmp_path / "x", tmp_path / "adegen_pkg")


def test_snowflake_profile_uses_env():
    prof = yaml.safe_load(backends.get("snowflake").copy_profile(SimpleNamespace(
        profile_name="p", target_name="dev", db_name="ACME", schema="MAIN", target_config={})))
    o = prof["p"]["outputs"]["dev"]
    assert o["database"] == "ACME" and "SNOWFLAKE_ACCOUNT" in o["account"] and "path" not in o
