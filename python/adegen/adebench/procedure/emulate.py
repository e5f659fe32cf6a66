"""Emulation of one ade-bench trial on DuckDB, without Docker.

Layout of a scratch root (stands in for the container's absolute paths):

    <root>/app        /app       project copy + <db_name>.duckdb, cwd of every script
    <root>/sage       /sage      solution.sh + solutions/ (sage agent)
    <root>/scripts    /scripts   vendored test scripts + test-setup.sh
    <root>/tests      /tests     task tests (minus AUTO_*) + generated AUTO_* + run-tests.sh
    <root>/seeds      /seeds     task seeds/
    <root>/solutions  /solutions task solutions/

Scripts are **copies** with the absolute paths rewritten (`map_paths`); the task's own files are
never written. Two modes:

- "script": setup.sh, solution.sh and run-tests.sh (vendored run-dbt-test.sh) run with bash, dbt
  as subprocesses: the independent check.
- "inprocess": the same steps, but each top-level `dbt ...` line of the scripts (and the test
  phase of run-dbt-test.sh, ported step by step) runs through dbtRunner with its console output
  captured in the same format; other lines run with bash. A script with control flow, `cd`,
  variables or heredocs runs whole with bash (its dbt calls as subprocesses); a here-document
  with a quoted delimiter (`/scripts/run_sql.sh "$@" << 'SQL'`) is one bash step.

Sequence (harness.py::_run_trial / setup_orchestrator / sage_agent / _setup_test_env /
run-dbt-test.sh): project -> app, DB -> app/<db_name>.duckdb, `bash setup.sh --db-type=duckdb
--project-type=dbt` (cwd app, exit code ignored), rm setup.sh + setup/; agent "none" does nothing,
"sage" runs solution.sh (run_sql.sh/run_sql.py are in /scripts from setup on); test env: tests except AUTO_*, AUTO tests + macro (app/macros), seeds,
solutions, test-setup.sh; then run-tests.sh, whose console text is parsed by DbtParser's rules.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import yaml

from adegen.dbt import DbtCall, InProcessRunner, copy_tree, harness_env, run_process
from adegen.core.cputime import cpu_seconds
from adegen.dbt.runner import write_dbt_shim
from adegen.dbt import packages as pk
from adegen.core.errors import InputError
from adegen.adebench.procedure import yamlc
from adegen.adebench.procedure.parser import ParseResult, parse_dbt_output
from adegen.adebench.procedure.scriptplan import plan_script
from adegen.adebench.procedure.testgen import EQUALITY_MACRO_FILENAME, GradingSpec, check_test_names, generate_solution_tests

ARGS = ["--db-type=duckdb", "--project-type=dbt"]
_MAPPED = ("app", "sage", "scripts", "tests", "seeds", "solutions", "logs")
_PATH_RE = re.compile(r"(?<![\w./~$-])/(%s)(?=[/\s\"'`;|&)<>]|$)" % "|".join(_MAPPED), re.M)
SCRIPT_RESOURCES = ("run-dbt-test.sh", "seed-schema.sh", "merge_yaml.py", "setup-dbt-test.sh")
# what ade-bench puts in /scripts before setup.sh runs (base_setup): a setup may change the data
# with `/scripts/run_sql.sh "$@" << SQL` (adegen's stand-ins, resources/run_sql.*)
SETUP_RESOURCES = ("run_sql.sh", "run_sql.py")


def map_paths(text: str, root: Path) -> str:
    """Rewrite the container paths /app, /sage, /scripts, /tests, /seeds, /solutions, /logs."""
    return _PATH_RE.sub(lambda m: f"{root}/{m.group(1)}", text)


def resource_text(name: str) -> str:
    return resources.files(__package__).joinpath("resources", name).read_text()


@dataclass
class StepLog:
    name: str
    seconds: float
    output: str
    ok: bool = True


@dataclass
class HarnessResult:
    agent: str
    mode: str
    resolved: bool
    reason: str
    tests: dict[str, str]
    expected_test_count: int | None
    parsed: ParseResult | None
    seconds: dict[str, float] = field(default_factory=dict)
    test_output: str = ""
    steps: list[StepLog] = field(default_factory=list)
    root: Path | None = None

    @property
    def app(self) -> Path | None:
        return self.root / "app" if self.root else None

    def output_tail(self, n: int = 4000) -> str:
        return self.test_output[-n:]

    def summary(self) -> str:
        st = ", ".join(f"{k}={v}" for k, v in sorted(self.tests.items()))
        return (f"{self.agent}: {'RESOLVED' if self.resolved else 'UNRESOLVED'} ({self.reason}); "
                f"expected={self.expected_test_count} parsed={len(self.tests)} [{st}]")


# --------------------------------------------------------------------------- the runner

@dataclass
class TrialConfig:
    """How a trial runs (everything but the task, project, database and agent)."""

    workdir: Path
    mode: str = "script"              # "script": bash + dbt subprocesses; "inprocess": dbtRunner
    timeout: float = 900              # seconds per script / dbt call
    db_type: str = "duckdb"           # "snowflake": no database file, the caller's profile points
    env: dict = field(default_factory=dict)   # at a server; `env` goes to every script/dbt call
    # the project whose installed packages stand in for `dbt deps` when the copy declares hub/git
    # packages (offline; ade-bench's container downloads them)
    packages_from: Path | None = None


class TrialRunner:
    """One trial (one agent) of one task in one scratch root."""

    def __init__(self, task_dir: Path, project_dir: Path, db_file: Path | None, agent: str,
                 config: TrialConfig):
        if agent not in ("none", "sage"):
            raise ValueError(f"agent must be 'none' or 'sage', not {agent!r}")
        if config.mode not in ("script", "inprocess"):
            raise ValueError(f"mode must be 'script' or 'inprocess', not {config.mode!r}")
        self.task_dir = Path(task_dir).resolve()
        self.project_dir = Path(project_dir).resolve()
        self.config = config
        self.db_type = config.db_type
        self.args = [f"--db-type={config.db_type}", "--project-type=dbt"]
        self.env = dict(config.env or {})
        self.db_file = Path(db_file).resolve() if db_file is not None else None
        self.agent = agent
        self.mode = config.mode
        self.timeout = config.timeout
        self.dbt = InProcessRunner()
        self.spec = GradingSpec.load(self.task_dir, db_type=config.db_type)
        self.root = Path(config.workdir).resolve() / f"{self.task_dir.name}-{agent}-{uuid.uuid4().hex[:8]}"
        self.app = self.root / "app"
        self.steps: list[StepLog] = []
        self.seconds: dict[str, float] = {}
        self._phase = ""
        self._script_env: dict | None = None
        # fail before any work when a test name is too long
        names = [n for s in self.spec.solution_seeds for n in s.test_names()]
        tests_dir = self.task_dir / "tests"
        if tests_dir.is_dir():
            names += [p.stem for p in tests_dir.iterdir()
                      if p.is_file() and p.suffix == ".sql" and not p.name.startswith("AUTO_")]
        check_test_names(names, where=str(self.task_dir))

    # ---- helpers
    def _log(self, name: str, seconds: float, output: str, ok: bool = True) -> StepLog:
        st = StepLog(name, seconds, output, ok)
        self.steps.append(st)
        return st

    def _write_mapped(self, src_text: str, dst: Path, header: str | None = None) -> Path:
        dst.parent.mkdir(parents=True, exist_ok=True)
        text = map_paths(src_text, self.root)
        if header is not None:
            text = header + text
        dst.write_text(text)
        return dst

    def _env(self, extra: dict | None = None) -> dict:
        env = harness_env({**self.env, **(extra or {})})
        if self._deps_stand_in() and self.mode == "script":
            shim = self.root / "bin"
            env["PATH"] = str(shim) + os.pathsep + env["PATH"]
        return env

    def _bash(self, script: Path, name: str, timeout: float | None = None) -> str:
        rc, out, secs = run_process(["bash", str(script), *self.args], self.app, env=self._env(),
                                    timeout=timeout or self.timeout)
        self._log(name, secs, out, rc == 0)
        return out

    def _dbt(self, args: list[str], name: str, env: dict | None = None) -> str:
        if args[:1] == ["deps"] and self._deps_stand_in():
            return self._stand_in_deps(name)
        # only in-process mode splits scripts into dbt steps; script mode runs them whole with bash
        r = self.dbt.run(DbtCall(list(args), cwd=self.app, env={**self.env, **(env or {})},
                                 timeout=self.timeout, project_env=True))
        self._log(name, r.seconds, r.console, r.success)
        return r.console

    def _deps_stand_in(self) -> bool:
        """`dbt deps` would need the network: the copy declares hub/git packages."""
        if self.config.packages_from is None:
            return False
        try:
            return any(pk.is_remote(e) for e in pk.package_entries(self.app))
        except InputError:
            return False

    def _stand_in_deps(self, name: str) -> str:
        """What `dbt deps` installs, from the packages the user has installed (offline)."""
        t0 = time.monotonic()
        try:
            installed = pk.install_offline(self.app, self.config.packages_from)
            out, ok = f"[adegen] dbt deps offline: installed {', '.join(installed)} as the user has them\n", True
        except InputError as exc:
            out, ok = f"[adegen] dbt deps offline failed: {exc}\n", False
        self._log(f"{name} (offline stand-in)", time.monotonic() - t0, out, ok)
        return out

    def _run_script(self, script: Path, name: str) -> str:
        """Run a (mapped) script: whole with bash, or split into bash + in-process dbt steps."""
        if self.mode == "script":
            return self._bash(script, name)
        plan = plan_script(script.read_text())
        if plan is None:
            return self._bash(script, name)
        outs = []
        for i, step in enumerate(plan):
            if step[0] == "dbt":
                outs.append(self._dbt(step[1], f"{name}:dbt {' '.join(step[1])}", env=self._script_env))
            else:
                seg = script.with_name(f"{script.name}.part{i}.sh")
                seg.write_text("#!/bin/bash\n" + step[1] + "\n")
                outs.append(self._bash(seg, f"{name}:bash"))
                seg.unlink()
        return "".join(outs)

    # ---- phases
    def prepare(self) -> None:
        t0 = time.monotonic()
        self._make_dirs()
        self._place_project()
        self._check_profile()
        if self.db_type == "duckdb":
            self._place_database()
        if self.mode == "script" and self._deps_stand_in():
            write_dbt_shim(self.root / "bin", deps_store=self.config.packages_from)
        self.seconds["prepare"] = time.monotonic() - t0

    def _make_dirs(self) -> None:
        for d in ("sage/solutions", "scripts", "tests", "seeds", "solutions", "logs"):
            (self.root / d).mkdir(parents=True, exist_ok=True)

    def _place_project(self) -> None:
        copy_tree(self.project_dir, self.app)

    def _place_database(self) -> None:
        shutil.copyfile(self.db_file, self.app / f"{self.spec.db_name}.duckdb")

    def _check_profile(self) -> None:
        """Refuse to run when the project's profile would not use /app/<db_name>.duckdb."""
        prof_path = self.app / "profiles.yml"
        proj_path = self.app / "dbt_project.yml"
        try:
            proj = yamlc.safe_load(proj_path.read_text()) or {}
            profiles = yamlc.safe_load(prof_path.read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise InputError(f"project copy has no readable profiles.yml/dbt_project.yml: {exc}",
                             file=self.app) from exc
        prof = profiles.get(proj.get("profile")) or {}
        target = prof.get("outputs", {}).get(prof.get("target", "dev"), {})
        path = str(target.get("path", ""))
        if target.get("type") == "duckdb" and "{{" not in path:
            p = Path(path)
            resolved = (p if p.is_absolute() else self.app / p).resolve()
            want = (self.app / f"{self.spec.db_name}.duckdb").resolve()
            if resolved != want:
                raise InputError(f"profile path {path!r} does not point at ./{self.spec.db_name}.duckdb",
                                 file=prof_path)

    def setup(self) -> None:
        t0 = time.monotonic()
        setup_sh = self.task_dir / "setup.sh"
        if (self.task_dir / "setup").is_dir():
            shutil.copytree(self.task_dir / "setup", self.app / "setup", dirs_exist_ok=True)
        for name in SETUP_RESOURCES:  # executable, as in ade-bench's image: setup.sh calls them directly
            self._write_mapped(resource_text(name), self.root / "scripts" / name).chmod(0o755)
        if setup_sh.exists():
            script = self._write_mapped(setup_sh.read_text(), self.app / "setup.sh")
            self._phase = "setup"
            try:
                self._run_script(script, "setup")
            finally:
                self._phase = ""
            script.unlink(missing_ok=True)
        shutil.rmtree(self.app / "setup", ignore_errors=True)
        self.seconds["setup"] = time.monotonic() - t0

    def run_agent(self) -> None:
        t0 = time.monotonic()
        if self.agent == "sage":
            sol_dir = self.task_dir / "solutions"
            if sol_dir.is_dir():
                shutil.copytree(sol_dir, self.root / "sage" / "solutions", dirs_exist_ok=True)
            sol = self.task_dir / "solution.sh"
            if not sol.exists():
                raise InputError("sage needs solution.sh", file=self.task_dir)
            script = self._write_mapped(sol.read_text(), self.root / "sage" / "solution.sh")
            self._run_script(script, "solution")
        self.seconds["agent"] = time.monotonic() - t0

    def setup_test_env(self) -> list[str]:
        tests = self.root / "tests"
        src = self.task_dir / "tests"
        if src.is_dir():
            for f in sorted(src.iterdir()):
                if f.is_file() and not f.name.startswith("AUTO_"):
                    shutil.copy2(f, tests / f.name)
        macros_tmp = self.root / "macros-generated"
        names = []
        if self.spec.solution_seeds:
            names = generate_solution_tests(self.spec.solution_seeds, tests, macros_tmp)
        (tests / "agent.txt").write_text("")
        self._write_mapped(resource_text("run-tests.sh"), tests / "run-tests.sh")
        macro = macros_tmp / EQUALITY_MACRO_FILENAME
        if macro.exists():
            (self.app / "macros").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(macro, self.app / "macros" / EQUALITY_MACRO_FILENAME)
        for name in SCRIPT_RESOURCES:
            self._write_mapped(resource_text(name), self.root / "scripts" / name)
        seeds = self.task_dir / "seeds"
        if seeds.is_dir():
            shutil.copytree(seeds, self.root / "seeds", dirs_exist_ok=True)
        sols = self.task_dir / "solutions"
        if sols.is_dir():
            shutil.copytree(sols, self.root / "solutions", dirs_exist_ok=True)
        if self.spec.test_setup:
            self._write_mapped("#!/bin/bash\n" + self.spec.test_setup + "\n",
                               self.root / "scripts" / "test-setup.sh")
        return names

    def run_test_setup_only(self) -> None:
        """test_setup as run-dbt-test.sh runs it (for seed export), without the tests."""
        ts = self.root / "scripts" / "test-setup.sh"
        if ts.exists():
            self._script_env = {"DBT_STATIC_ANALYSIS": "off", "DBT_PARTIAL_PARSE": "False"}
            self._run_script(ts, "test_setup")

    def run_tests(self) -> str:
        t0, cpu0 = time.monotonic(), cpu_seconds()
        if self.mode == "script":
            rc, out, secs = run_process(["bash", str(self.root / "tests" / "run-tests.sh"), *self.args],
                                        self.app, env=self._env(), timeout=self.timeout)
            self._log("tests", secs, out, rc == 0)
        else:
            out = self._run_tests_inprocess()
        self.seconds["tests"] = time.monotonic() - t0
        # the work the tests took, which a loaded machine does not stretch (proof.test_timeout)
        self.seconds["tests_cpu"] = cpu_seconds() - cpu0
        return out

    def _run_tests_inprocess(self) -> str:
        """run-dbt-test.sh, step by step, with dbt in-process (same console text)."""
        env = {"DBT_STATIC_ANALYSIS": "off", "DBT_PARTIAL_PARSE": "False"}
        self._script_env = env
        pane: list[str] = []
        ts = self.root / "scripts" / "test-setup.sh"
        if ts.exists():
            pane.append(self._run_script(ts, "test_setup"))
        shutil.rmtree(self.app / "tests", ignore_errors=True)
        (self.app / "tests").mkdir()
        pane.append(f"Filtering for db_type='{self.db_type}', project_type='dbt'\n")
        count = 0
        for f in sorted((self.root / "tests").iterdir()):
            if not f.is_file():
                continue
            if f.suffix != ".sql":
                shutil.copyfile(f, self.app / "tests" / f.name)
                continue
            text = f.read_text(errors="replace")
            include = True
            if (re.search(r"^-- *db:", text, re.M)
                    and not re.search(r"^-- *db:.*" + re.escape(self.db_type), text, re.M)):
                include = False
            if (re.search(r"^-- *project-type:", text, re.M)
                    and not re.search(r"^-- *project-type:.*dbt", text, re.M)):
                include = False
            if include:
                pane.append(f"Including: {f.name}\n")
                shutil.copyfile(f, self.app / "tests" / f.name)
                count += 1
            else:
                pane.append(f"Excluding: {f.name}\n")
        pane.append(f"[ade-bench] expected_test_count={count}\n")
        (self.app / "seeds").mkdir(parents=True, exist_ok=True)
        for f in (self.root / "seeds").iterdir():
            if f.is_file():
                shutil.copyfile(f, self.app / "seeds" / f.name)
        pane.append(merge_no_op(self.app))
        pane.append(self._dbt(["seed"], "tests:dbt seed", env=env))
        pane.append(self._dbt(["test", "--select", "test_type:singular"], "tests:dbt test", env=env))
        return "".join(pane)

    def run(self, *, stop_before_tests: bool = False) -> HarnessResult:
        t_all = time.monotonic()
        self.prepare()
        self.setup()
        self.run_agent()
        self.setup_test_env()
        if stop_before_tests:
            self.run_test_setup_only()
            self.seconds["total"] = time.monotonic() - t_all
            return HarnessResult(self.agent, self.mode, False, "stopped before tests", {}, None, None,
                                 self.seconds, "", self.steps, self.root)
        out = self.run_tests()
        parsed = parse_dbt_output(out)
        self.seconds["total"] = time.monotonic() - t_all
        return HarnessResult(self.agent, self.mode, parsed.resolved, parsed.reason, dict(parsed.tests),
                             parsed.expected_test_count, parsed, self.seconds, out, self.steps,
                             self.root)


def merge_no_op(app: Path) -> str:
    """seed-schema.sh + merge_yaml.py, in Python (same files, same yaml.dump)."""
    no_op = app / "seeds" / "_no-op.txt"
    if not no_op.exists():
        return ""
    out = ["Merging schema into dbt_project.yml...\n"]
    if (app / "dbt_project" / "dbt_project.yml").exists():
        target = app / "dbt_project" / "dbt_project.yml"
    elif (app / "dbt_project.yml").exists():
        target = app / "dbt_project.yml"
    else:
        return out[0] + "Warning: dbt_project.yml not found\n"
    target.write_text(merged_yaml(target.read_text(), no_op.read_text()))
    out.append(f"Successfully merged seeds/_no-op.txt into {target.name} -> tmp\n")
    out.append(f"Merged schema into {target.name}\n")
    return "".join(out)


@functools.lru_cache(maxsize=32)
def merged_yaml(base_text: str, merge_text: str) -> str:
    """merge_yaml.py's output for dbt_project.yml text `base_text` and _no-op.txt text
    `merge_text` (a pure function of the two texts: grading merges the same pair again and again)."""
    base = yamlc.safe_load(base_text) or {}
    merge = yamlc.safe_load(merge_text) or {}

    def deep_merge(b, m):
        result = b.copy()
        for k, v in m.items():
            if k in result and isinstance(result[k], dict) and isinstance(v, dict):
                result[k] = deep_merge(result[k], v)
            else:
                result[k] = v
        return result

    return yaml.dump(deep_merge(base, merge), default_flow_style=False, sort_keys=False)


def run_harness(task_dir: Path, project_dir: Path, db_file: Path | None, agent: str, *, keep: bool = False,
                **config) -> HarnessResult:
    """Emulate `ade run <task> --db duckdb --project-type dbt --agent <none|sage>`; `config` are
    `TrialConfig` fields (workdir required). The scratch root is removed afterwards unless `keep`."""
    runner = TrialRunner(task_dir, project_dir, db_file, agent, TrialConfig(**config))
    try:
        res = runner.run()
    finally:
        if not keep:
            shutil.rmtree(runner.root, ignore_errors=True)
    if not keep:
        res.root = None
    return res
