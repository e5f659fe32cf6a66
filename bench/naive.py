"""The naive per-task validation procedure: the baseline adegen's validator is compared against.

For one generated task directory (task.yaml + setup/changes.patch + solutions/changes.patch) and
the project copy it points to, do everything from scratch with plain subprocesses:

    fresh scratch copy of the project
    [dbt deps]          (only when the project has packages.yml)
    dbt seed
    dbt run
    patch -p1 < setup/changes.patch
    dbt run             (broken state)
    dbt test            (expected to fail once the task's tests are in place)
    patch -p1 < solutions/changes.patch
    dbt run
    dbt test            (expected to pass)

The task's own tests/*.sql and seeds/*.csv (what ade-bench adds at run time) are copied into the
scratch project before `dbt seed`, when present.

    python bench/naive.py TASK_DIR [--project DIR] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IGNORE = shutil.ignore_patterns("target", "logs", "dbt_packages", "*.duckdb.wal", ".user.yml")


def dbt_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(DBT_SEND_ANONYMOUS_USAGE_STATS="false", DO_NOT_TRACK="1",
               DBT_PARTIAL_PARSE="false")
    return env


def _load_yaml(path: Path) -> dict:
    import yaml  # pyyaml is an adegen dependency

    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def project_for_task(task_dir: Path) -> Path:
    """The project copy a task points to: variants[0].project_dir / project_name."""
    task = _load_yaml(task_dir / "task.yaml")
    variants = task.get("variants") or []
    if not variants:
        raise ValueError(f"{task_dir / 'task.yaml'}: no variants")
    v = variants[0]
    pdir = Path(str(v.get("project_dir", "")))
    if not pdir.is_absolute():
        pdir = (task_dir / pdir).resolve()
    return pdir / str(v.get("project_name", ""))


def _absolute_local_packages(scratch: Path, original: Path) -> None:
    """Relative `local:` packages stop resolving in a scratch copy: point them at the original."""
    import yaml

    for name in ("packages.yml", "dependencies.yml"):
        f = scratch / name
        if not f.is_file():
            continue
        data = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
        changed = False
        for entry in data.get("packages") or []:
            if isinstance(entry, dict) and isinstance(entry.get("local"), str):
                loc = Path(entry["local"])
                if not loc.is_absolute() and (original / loc).exists():
                    entry["local"] = str((original / loc).resolve())
                    changed = True
        if changed:
            f.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def naive_validate(task_dir: Path | str, project_dir: Path | str | None = None, *,
                   workdir: Path | str | None = None, dbt: str = "dbt",
                   step_timeout: float = 1800, keep: bool = False,
                   copy_task_files: bool = True) -> dict:
    """Run the naive procedure for one task. Never raises for a failing step; returns

    {task_id, ok, broken_fails, solved_passes, seconds, steps: [{name, rc, seconds, tail}], error}
    where `ok` means every step ran (rc of the broken-state `dbt test` may be non-zero) and the
    solved state tests pass.
    """
    task_dir = Path(task_dir).resolve()
    t0 = time.perf_counter()
    result: dict = {"task_id": task_dir.name, "ok": False, "broken_fails": None,
                    "solved_passes": None, "seconds": 0.0, "steps": [], "error": None}
    try:
        project = Path(project_dir).resolve() if project_dir else project_for_task(task_dir)
        if not (project / "dbt_project.yml").is_file():
            raise FileNotFoundError(f"no dbt_project.yml in {project}")
        for p in ("setup/changes.patch", "solutions/changes.patch"):
            if not (task_dir / p).is_file():
                raise FileNotFoundError(f"missing {task_dir / p}")
    except Exception as e:  # noqa: BLE001 - reported, not raised
        result["error"] = str(e)
        result["seconds"] = time.perf_counter() - t0
        return result

    root = Path(tempfile.mkdtemp(prefix=f"naive-{task_dir.name}-", dir=workdir))
    scratch = root / project.name
    try:
        shutil.copytree(project, scratch, ignore=IGNORE, symlinks=True)
        if copy_task_files:
            for sub, dest, pat in (("tests", "tests", "*.sql"), ("seeds", "seeds", "*.csv")):
                src = task_dir / sub
                if src.is_dir():
                    for f in sorted(src.glob(pat)):
                        (scratch / dest).mkdir(parents=True, exist_ok=True)
                        shutil.copy2(f, scratch / dest / f.name)
        _absolute_local_packages(scratch, project)
        prof = ["--profiles-dir", str(scratch)] if (scratch / "profiles.yml").is_file() else []
        env = dbt_env()

        def step(name: str, cmd: list[str], stdin: Path | None = None) -> int:
            s0 = time.perf_counter()
            try:
                with open(stdin, "rb") if stdin else open(os.devnull, "rb") as fin:
                    cp = subprocess.run(cmd, cwd=scratch, env=env, stdin=fin,
                                        capture_output=True, text=True, timeout=step_timeout)
                rc, out = cp.returncode, (cp.stdout + cp.stderr)
            except subprocess.TimeoutExpired:
                rc, out = -9, f"timeout after {step_timeout}s"
            except OSError as e:
                rc, out = -1, str(e)
            result["steps"].append({"name": name, "rc": rc,
                                    "seconds": round(time.perf_counter() - s0, 3),
                                    "tail": out.strip().splitlines()[-3:] if rc else []})
            return rc

        dbt_cmd = lambda *a: [dbt, *a, *prof]  # noqa: E731
        if (scratch / "packages.yml").is_file() or (scratch / "dependencies.yml").is_file():
            if step("dbt deps", dbt_cmd("deps")):
                raise RuntimeError("dbt deps failed")
        for name, cmd in (("dbt seed", dbt_cmd("seed")), ("dbt run", dbt_cmd("run"))):
            if step(name, cmd):
                raise RuntimeError(f"baseline {name} failed")
        if step("patch setup", ["patch", "-p1"], task_dir / "setup/changes.patch"):
            raise RuntimeError("setup patch did not apply")
        step("dbt run (broken)", dbt_cmd("run"))
        result["broken_fails"] = step("dbt test (broken)", dbt_cmd("test")) != 0
        if step("patch solution", ["patch", "-p1"], task_dir / "solutions/changes.patch"):
            raise RuntimeError("solution patch did not apply")
        run_rc = step("dbt run (solved)", dbt_cmd("run"))
        result["solved_passes"] = step("dbt test (solved)", dbt_cmd("test")) == 0 and run_rc == 0
        result["ok"] = bool(result["solved_passes"])
    except Exception as e:  # noqa: BLE001
        result["error"] = str(e)
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
        else:
            result["scratch"] = str(scratch)
    result["seconds"] = round(time.perf_counter() - t0, 3)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="naive per-task validation (baseline)")
    ap.add_argument("task_dir")
    ap.add_argument("--project", help="project copy (default: from task.yaml variants[0])")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    r = naive_validate(a.task_dir, a.project, keep=a.keep)
    if a.json:
        print(json.dumps(r, indent=2))
    else:
        for s in r["steps"]:
            print(f"{s['name']:<22} rc={s['rc']:<4} {s['seconds']:8.2f}s")
        print(f"task {r['task_id']}: ok={r['ok']} broken_fails={r['broken_fails']} "
              f"solved_passes={r['solved_passes']} {r['seconds']:.1f}s"
              + (f" error={r['error']}" if r["error"] else ""))
    return 0 if r["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
