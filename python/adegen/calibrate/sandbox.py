"""One task's sandbox: the broken state prepared exactly as the proof prepares it, graded by the
same test procedure, then removed. It is ade-bench's trial as `adegen.adebench.procedure` emulates it
(`TrialRunner` with agent "none": the project copy and its database in `<root>/app`, setup.sh,
then - instead of an agent of ade-bench's - whatever the caller does in `app`, then the task's
`test_setup` and ade-bench's test phase). Nothing outside `<root>` is written."""
from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from adegen.dbt import DbtCall, harness_env, project_files
from adegen.adebench.procedure.emulate import TrialConfig, TrialRunner
from adegen.adebench.procedure.parser import parse_dbt_output
from adegen.calibrate.tasks import TaskRef


@dataclass(frozen=True)
class SandboxConfig:
    workdir: Path  # the sandboxes are made under it
    mode: str = "inprocess"  # harness mode: "inprocess" (dbtRunner) or "script" (bash + dbt subprocesses)
    step_timeout: float = 900  # seconds per setup / test script or dbt call
    root: Path | None = None  # the sandbox's own directory (None: a new one under workdir)


@dataclass
class Grade:
    solved: bool
    reason: str
    tests: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


class Sandbox:
    """prepare() -> the agent works in `app` -> grade() -> remove() (also on any error: use `with`)."""

    def __init__(self, task: TaskRef, config: SandboxConfig):
        config.workdir.mkdir(parents=True, exist_ok=True)
        self.task = task
        self.runner = TrialRunner(task.task_dir, task.project_dir, task.db_file, "none", TrialConfig(
            workdir=config.workdir, mode=config.mode, timeout=config.step_timeout,
            packages_from=task.project_dir))
        if config.root is not None:  # the emulation maps /app onto <root>/app, so app stays there
            self.runner.root, self.runner.app = config.root.resolve(), config.root.resolve() / "app"
        self.root: Path = self.runner.root
        self.app: Path = self.runner.app

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def prepare(self) -> None:
        """The broken state: project copy, database, setup.sh (its setup/ removed, as ade-bench does)."""
        self.runner.prepare()
        self.runner.setup()

    def adopt(self, app: Path) -> None:
        """Instead of prepare(): the state someone left in `app` (a `--prepare` sandbox's project),
        to grade. The root's directories as prepare() makes them, then `app` copied whole as the
        project (its database, dbt's target/ and installed packages included); `app` is only read."""
        self.runner.prepare()
        shutil.rmtree(self.app)
        shutil.copytree(app, self.app, symlinks=True)

    def env(self) -> dict:
        """The environment an agent gets: the user's, with this interpreter's dbt first on PATH."""
        return harness_env()

    def files(self) -> dict[str, bytes]:
        return project_files(self.app)

    def dbt(self, args: list[str]) -> tuple[bool, str]:
        """One dbt call in the sandbox's project (the search agent rebuilds with it)."""
        r = self.runner.dbt.run(DbtCall(list(args), cwd=self.app, timeout=self.runner.timeout, project_env=True))
        return r.success, r.console

    def grade(self) -> Grade:
        """The task's test_setup, then ade-bench's test phase; solved = ade-bench's pass rule."""
        self.runner.setup_test_env()
        out = self.runner.run_tests()
        parsed = parse_dbt_output(out)
        return Grade(parsed.resolved, parsed.reason, dict(parsed.tests),
                     round(self.runner.seconds.get("tests", 0.0), 2))

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
