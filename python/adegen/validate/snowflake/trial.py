"""Trials of Snowflake proofs on the emulator: each on its own fresh fakesnow server, either in one
child process with dbt in-process (a watchdog per dbt call) or as bash + dbt subprocesses through
the timeout shim (script mode)."""
from __future__ import annotations

import json
import shutil
import sys
import threading
from pathlib import Path

from adegen.dbt.runner import TIMEOUT_MARK


class EmulatorTrials:
    """Mixin of EmulatorValidator: needs `_start_server`, `_stop_server`, `_export`, `_base`,
    `database`, `schema`, `dbt_timeout`, `project`."""

    def _trial(self, task_dir: Path, project: Path, data_file: Path | None, agent: str, work: Path,
               shim_dir: Path, export_tables: list[str], mode: str = "inprocess") -> dict:
        """One harness trial on its own fresh server (always stopped). mode "inprocess": the trial
        runs in one child process with dbt in-process (a watchdog bounds every dbt call); "script":
        bash + one dbt process per call through the timeout shim."""
        import os

        out: dict = {"agent": agent, "resolved": False, "unsupported": [], "timeouts": [], "seconds": {},
                     "expected": None, "summary": "", "tail": ""}
        srv = None
        try:
            srv = self._start_server(f"trial-{task_dir.name}-{agent}")
            if data_file is not None:
                srv.load_duckdb(data_file, database=self.database, schemas={"main": self.schema})
            path = os.pathsep.join([str(shim_dir), str(Path(sys.executable).parent), os.environ.get("PATH", "")])
            env = {"FAKESNOW_PORT": str(srv.port), "DBT_FAKESNOW": "1", "PATH": path,
                   "ADEGEN_DBT_TIMEOUT": str(int(self.dbt_timeout)), "DBT_PRINTER_WIDTH": "120"}
            job = {"task_dir": str(task_dir), "project": str(project), "agent": agent,
                   "workdir": str(work / "trials"), "env": env, "dbt_timeout": self.dbt_timeout,
                   "mode": mode, "packages_from": str(self.project.project_dir)}
            if mode == "script":
                out.update(run_trial(job))
            else:
                out.update(self._trial_child(job, work / f"{agent}-trial.json"))
            if export_tables and not out.get("error"):
                by_name = {m["name"].lower(): m for m in self._base["models"].values()}
                rels = [(by_name[t.lower()]["schema"], by_name[t.lower()]["alias"]) for t in export_tables]
                exp = work / f"{agent}-state.duckdb"
                self._export(srv, self.database, rels, exp, local_names=export_tables)
                out["export"] = str(exp)
        except Exception as exc:  # noqa: BLE001 - reported as unproven, never raised
            out["error"] = f"{type(exc).__name__}: {exc}"
        finally:
            if srv is not None:
                self._stop_server(srv)
        return out

    def _trial_child(self, job: dict, result_file: Path) -> dict:
        import os
        import signal
        import subprocess

        job_file = result_file.with_suffix(".job.json")
        job_file.write_text(json.dumps(job))
        result_file.unlink(missing_ok=True)
        pkg_parent = str(Path(__file__).resolve().parents[3])
        from adegen.dbt.runner import PROJECT_ENV_DROP

        env = {k: v for k, v in os.environ.items() if k not in PROJECT_ENV_DROP}   # see _run
        env.update(job["env"])
        env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        cmd = [sys.executable, "-c", "import sys; from adegen.validate.snowflake.trial import _trial_main; "
               "sys.exit(_trial_main(sys.argv[1], sys.argv[2]))", str(job_file), str(result_file)]
        # the whole trial: at most ~10 dbt calls, each bounded by the watchdog; this is the backstop
        limit = self.dbt_timeout * 12
        proc = subprocess.Popen(cmd, env=env, cwd=str(result_file.parent), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            log, _ = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return {"timeouts": [f"the whole trial exceeded {limit:.0f}s"], "error": None}
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if result_file.exists():
            return json.loads(result_file.read_text())
        tail = (log or b"").decode("utf-8", "replace")[-1500:]
        return {"error": f"the trial process exited with code {proc.returncode} without a result: {tail}"}


def run_trial(job: dict) -> dict:
    """Run one trial (harness emulation, --db-type=snowflake) and summarise it (plain data)."""
    from adegen.snowflake_emulator import unsupported_matches
    from adegen.adebench.procedure.emulate import TrialConfig, TrialRunner
    from adegen.adebench.procedure.parser import parse_dbt_output

    out: dict = {"resolved": False, "unsupported": [], "timeouts": [], "seconds": {}, "expected": None,
                 "summary": "", "tail": ""}
    agent = job["agent"]
    runner = TrialRunner(Path(job["task_dir"]), Path(job["project"]), None, agent, TrialConfig(
        workdir=Path(job["workdir"]), mode=job["mode"], timeout=job["dbt_timeout"] * 4, db_type="snowflake",
        env=job["env"], packages_from=Path(job["packages_from"]) if job.get("packages_from") else None))
    if job.get("hard_timeout"):
        runner.dbt = _HardTimeoutRunner(job, job["hard_timeout"])
    try:
        runner.prepare()
        runner.setup()
        runner.run_agent()
        runner.setup_test_env()
        text = runner.run_tests()
    finally:
        shutil.rmtree(runner.root, ignore_errors=True)
    parsed = parse_dbt_output(text)
    out.update(resolved=parsed.resolved, expected=parsed.expected_test_count, seconds=dict(runner.seconds),
               tail=text[-2500:], steps=[(st.name, round(st.seconds, 1), st.ok) for st in runner.steps])
    tests = ", ".join(f"{k}={v}" for k, v in sorted(parsed.tests.items()))
    out["summary"] = (f"{agent}: {'RESOLVED' if parsed.resolved else 'UNRESOLVED'} ({parsed.reason}); "
                      f"expected={parsed.expected_test_count} parsed={len(parsed.tests)} [{tests}]")
    for step in runner.steps:
        for u in unsupported_matches(step.output):
            r = f"{u.id}: {u.reason} ({u.excerpt})"
            if r not in out["unsupported"]:
                out["unsupported"].append(r)
        if TIMEOUT_MARK in step.output or "[adegen] TIMEOUT after" in step.output:
            out["timeouts"].append(step.name)
    return out


class _HardTimeoutRunner:
    """In the trial's child process: dbt in-process, and when one call exceeds the timeout the
    process ends (exit 124) after writing a result that names the call."""

    def __init__(self, job: dict, limit: float):
        from adegen.dbt import InProcessRunner

        self.job, self.limit, self.inner = job, float(limit), InProcessRunner()
        self.result_file = job["result_file"]

    def run(self, call):
        import os

        def expire():
            Path(self.result_file).write_text(json.dumps({
                "resolved": False, "unsupported": [], "seconds": {}, "expected": None,
                "summary": f"{self.job['agent']}: dbt {' '.join(call.args)} timed out", "tail": "",
                "timeouts": [f"dbt {' '.join(call.args)} exceeded {self.limit:.0f}s"]}))
            os._exit(124)

        timer = threading.Timer(self.limit, expire)
        timer.daemon = True
        timer.start()
        try:
            return self.inner.run(call)
        finally:
            timer.cancel()


def _trial_main(job_file: str, result_file: str) -> int:
    """Child process of an in-process trial: dbt runs in this process; a watchdog ends the process
    (exit 124, result with the timeout) when one dbt call exceeds the timeout."""
    import os

    job = json.loads(Path(job_file).read_text())
    os.environ.update(job["env"])
    job.update(result_file=result_file, hard_timeout=float(job["dbt_timeout"]))
    try:
        res = run_trial(job)
    except Exception as exc:  # noqa: BLE001
        res = {"error": f"{type(exc).__name__}: {exc}"}
    Path(result_file).write_text(json.dumps(res))
    return 0
