"""Tasks on the clock fixtures (clockfix, spinefix), written as the build writes them, and ade-bench's
procedure run on them with the clock moved (test_clock.py, test_spine_build.py)."""
from __future__ import annotations

import subprocess
from pathlib import Path

from adegen.tasks.task_yaml import PromptEntry, SeedEntry, Variant
from adegen.tasks.taskgen import TaskPlan, build_task_files, unified_diff
from adegen.validate.duckdb import clockcheck


def mutant(project: Path, rel: str, old: str, new: str) -> tuple[bytes, bytes]:
    original = (project / rel).read_bytes()
    assert old.encode() in original
    return original, original.replace(old.encode(), new.encode())


def write_task(project: Path, root: Path, task_id: str, change: tuple[str, str, str], table: str) -> Path:
    """A task as the build writes it: setup patch (`change`: file, old text, new text), its exact
    inverse, one graded table."""
    rel, old, new = change
    original, changed = mutant(project, rel, old, new)
    plan = TaskPlan(task_id=task_id, description=f"{table} is wrong",
                    prompts=[PromptEntry("base", f"Something is off in {table}. Can you fix it?")],
                    difficulty="easy", tags=["dbt", project.name], test_setup_models=[Path(rel).stem, table],
                    solution_seeds=[SeedEntry(table)], variant=Variant("duckdb", project.name, project.name,
                                                                       str(project.parent)),
                    seed_based=True, max_test_timeout_sec=120, solution_rebuild=[Path(rel).stem])
    files = build_task_files(plan, unified_diff(original, changed, rel), unified_diff(changed, original, rel), [])
    task = root / task_id
    for name, data in files.files.items():
        (task / name).parent.mkdir(parents=True, exist_ok=True)
        (task / name).write_bytes(data)
    return task


def procedure_later(tasks: list[Path], project: Path, db: Path, workdir: Path, agent: str = "sage",
                    ) -> subprocess.CompletedProcess:
    """ade-bench's procedure (adegen.adebench.procedure.command) on `tasks`, under faketime
    SHIFT_DAYS ahead: exit 0 when every task behaves as ade-bench's CI expects for `agent`."""
    code = ("import sys; from adegen.adebench.procedure.command import main\n"
            f"sys.exit(max(main([t, *sys.argv[{len(tasks) + 1}:]]) for t in sys.argv[1:{len(tasks) + 1}]))")
    argv = clockcheck.shift_argv(clockcheck.faketime_path(), code, *map(str, tasks), "--project", str(project),
                                 "--db", str(db), "--mode", "inprocess", "--agent", agent, "--workdir", str(workdir))
    return subprocess.run(argv, env=clockcheck.shift_env(), capture_output=True, text=True, timeout=600)
