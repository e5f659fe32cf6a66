"""Calibration (`adegen.calibrate`) on the example project's built tasks (real dbt + DuckDB, no
mocks): fake agent commands - one applies the solution patch, one does nothing, one edits the wrong
model, one hangs (killed at the timeout with its children), one exits non-zero - each recorded
correctly with its sandbox removed; `builtin:search` solves every task and records its tries; the
pure parts (placeholders, usage parsing, diff, label, lineage) on small inputs. `--prepare` /
`--grade` (any solver, people included): sandboxes laid out, one solved by hand (the setup patch
reversed), one left alone, graded and recorded; a wrong DIR is one error naming the argument."""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from adegen.calibrate.command import main as calibrate_main
from adegen.calibrate.agent import AgentContext, check_template, parse_usage, render, run_agent_command
from adegen.calibrate.diff import diff_stats
from adegen.report.calibration import by_task, label, measured
from adegen.validate.duckdb.fastprove import patched_paths
from adegen.calibrate.runner import CalibrationConfig, calibrate, run_once
from adegen.calibrate.search import lineage
from adegen.calibrate.tasks import load_tasks
from adegen.core.errors import InputError
from reliability_kit import process_alive, tree_state


# --------------------------------------------------------------------------- pure parts


def test_render_quotes_every_placeholder_and_leaves_other_braces():
    ctx = AgentContext("it's $HOME `x`", Path("/s/prompt.txt"), Path("/s/app"), "acme001", "hard")
    cmd = render('agent -p {prompt} --dir {workdir} {project_dir} < {prompt_file} # {task_id}.{key} ${HOME} {"a": 1}',
                 ctx)
    assert shlex.split(cmd.split(" #")[0]) == ["agent", "-p", "it's $HOME `x`", "--dir", "/s/app", "/s/app",
                                                "<", "/s/prompt.txt"]
    assert "acme001.hard" in cmd and "${HOME}" in cmd and '{"a": 1}' in cmd


def test_unknown_placeholder_is_one_error_naming_the_flag():
    with pytest.raises(InputError) as e:
        check_template("agent {promt}", "--calibrate")
    assert e.value.field == "--calibrate" and "{promt}" in e.value.message
    assert check_template(" builtin:search ") == "builtin:search"
    with pytest.raises(InputError):
        check_template("  ")


def test_usage_from_claude_code_json_and_json_lines():
    claude = json.dumps({"type": "result", "num_turns": 7, "total_cost_usd": 0.42,
                         "usage": {"input_tokens": 100, "output_tokens": 50, "cache_read_input_tokens": 1000}})
    assert parse_usage(claude) == (1150, 7, 0.42)
    assert parse_usage("working...\n" + json.dumps({"tokens": 9, "turns": 2}) + "\ndone\n") == (9, 2, None)
    assert parse_usage("no json here {oops}") == (None, None, None)


def test_diff_counts_files_and_lines():
    d = diff_stats({"a.sql": b"x\ny\n", "b.sql": b"same\n", "gone.sql": b"1\n"},
                   {"a.sql": b"x\nz\nw\n", "b.sql": b"same\n", "new.sql": b"n\n"})
    assert d.files == ["a.sql", "gone.sql", "new.sql"]
    assert (d.lines_added, d.lines_removed) == (3, 2)


def test_label_rule():
    assert label(0, None, (1, 2)) == "unsolved"
    assert label(0.4, 0, (1, 2)) == "hard"
    assert label(0.5, 0, (1, 2)) == "medium"
    assert label(1, 1, (1, 2)) == "easy" and label(1, 1.5, (1, 2)) == "medium" and label(1, 3, (1, 2)) == "hard"
    rows = [{"task_id": "t1", "calibration_id": "a", "solved": False, "seconds": 9, "agent": "x", "key": "base"},
            {"task_id": "t1", "calibration_id": "b", "solved": True, "seconds": 30, "agent": "x", "key": "base"},
            {"task_id": "t1", "calibration_id": "b", "solved": True, "seconds": 50, "agent": "x", "key": "base"}]
    m = by_task(rows)["t1"]  # the newest calibration of the task only
    assert (m.runs, m.solved, m.solve_rate, m.median_seconds, m.label) == (2, 2, 1.0, 40.0, "easy")
    assert measured([{"solved": True, "seconds": 1, "tries": 80}]).label == "hard"


def test_grade_seconds_are_the_solvers_own_count_or_unknown(tmp_path):
    from adegen.calibrate.handoff import reported_seconds
    from adegen.core.errors import InputError

    assert reported_seconds(tmp_path) is None  # nothing reported: unknown, not the time since --prepare
    (tmp_path / "SOLVE_SECONDS").write_text(" 312.5\n")
    assert reported_seconds(tmp_path) == 312.5
    for bad in ("ten", "-3", "nan", "inf", ""):
        (tmp_path / "SOLVE_SECONDS").write_text(bad)
        with pytest.raises(InputError, match="seconds") as err:
            reported_seconds(tmp_path)
        assert err.value.field == "SOLVE_SECONDS" and "SOLVE_SECONDS" in str(err.value.file)
    assert measured([{"solved": True, "seconds": None}]).median_seconds is None


def test_lineage_walks_up_breadth_first():
    def node(name, deps, pkg="p"):
        return {"resource_type": "model", "name": name, "package_name": pkg, "original_file_path": f"m/{name}.sql",
                "depends_on": {"nodes": [f"model.p.{d}" for d in deps]}}
    manifest = {"metadata": {"project_name": "p"}, "nodes": {
        "model.p.fct": node("fct", ["b", "a"]), "model.p.a": node("a", ["stg"]), "model.p.b": node("b", ["stg"]),
        "model.p.stg": node("stg", []), "model.p.other": node("other", []), "model.q.pk": node("pk", [], "q")}}
    assert [n for n, _ in lineage(manifest, ("fct",))] == ["fct", "a", "b", "stg"]


def test_a_hanging_command_is_killed_with_its_children(tmp_path):
    pidfile = tmp_path / "child.pid"
    t0 = time.monotonic()
    run = run_agent_command(f"sleep 60 & echo $! > {pidfile}; sleep 60", tmp_path, timeout=1.5)
    assert run.timed_out and run.exit_code is None and time.monotonic() - t0 < 20
    # SIGKILL is delivered asynchronously: on a loaded machine the child may take a moment to die
    child, deadline = int(pidfile.read_text()), time.monotonic() + 10
    while process_alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process_alive(child)


# --------------------------------------------------------------------------- on the example's tasks


@pytest.fixture(scope="module")
def acme(acme_tasks_built):
    out, _doc = acme_tasks_built
    return out, load_tasks(out)


@pytest.fixture()
def cfg(tmp_path):
    def make(agent: str, timeout: float = 600) -> CalibrationConfig:
        return CalibrationConfig(agent=agent, workdir=tmp_path / "work", timeout=timeout)
    return make


def _sandbox_gone(rec, cfg_dir: Path) -> None:
    assert rec.sandbox_removed
    assert not any(cfg_dir.iterdir()), list(cfg_dir.iterdir())


def _rebuild_line(task_dir: Path) -> str:
    return next(ln for ln in (task_dir / "solution.sh").read_text().splitlines() if ln.startswith("dbt run"))


def test_a_command_applying_the_solution_patch_solves_it(acme, cfg):
    _out, tasks = acme
    task = tasks[0]
    c = cfg(f"patch -p1 < {shlex.quote(str(task.task_dir / 'solutions' / 'changes.patch'))} && "
            f"{_rebuild_line(task.task_dir)}")
    rec = run_once(task, c, 1, "t")
    assert rec.solved and rec.graded, rec.reason + rec.output_tail
    assert rec.exit_code == 0 and not rec.timed_out and rec.diff["files"] and rec.seconds > 0
    # every file the solution patch touches (one it removes again, `+++ /dev/null`, too)
    assert rec.diff["files"] == sorted(patched_paths(task.task_dir / "solutions" / "changes.patch"))
    _sandbox_gone(rec, c.workdir)


def test_a_command_doing_nothing_then_failing_is_recorded_unsolved(acme, cfg):
    """The agent reads its prompt, changes nothing and exits 3: its exit code and output are
    recorded, and the grade (which runs whatever the agent's exit code) finds the bug still there."""
    _out, tasks = acme
    c = cfg("test -f dbt_project.yml && test -s {prompt_file} && echo {task_id} {key} && "
            "echo 'agent gave up' >&2; exit 3")
    rec = run_once(tasks[1], c, 1, "t")
    assert rec.exit_code == 3 and not rec.timed_out and "agent gave up" in rec.output_tail
    assert not rec.solved and rec.graded and "failing tests" in rec.reason
    assert rec.diff == {"files": [], "lines_added": 0, "lines_removed": 0}
    assert f"{tasks[1].task_id} base" in rec.output_tail
    _sandbox_gone(rec, c.workdir)


def test_a_command_editing_the_wrong_model_leaves_it_unsolved(acme, cfg):
    out, tasks = acme
    task = tasks[2]
    broken = re.findall(r"^\+\+\+ b/(\S+)", (task.task_dir / "setup" / "changes.patch").read_text(), re.M)
    wrong = next(p.relative_to(task.project_dir).as_posix() for p in sorted(task.project_dir.glob("models/**/*.sql"))
                 if p.relative_to(task.project_dir).as_posix() not in broken)
    name = Path(wrong).stem
    c = cfg(f"printf '\\n-- looked here\\n' >> {wrong} && dbt run --select {name}")
    rec = run_once(task, c, 1, "t")
    assert not rec.solved and rec.exit_code == 0
    assert rec.diff == {"files": [wrong], "lines_added": 2, "lines_removed": 0}
    assert not (task.project_dir / wrong).read_text().endswith("-- looked here\n")  # the user's copy untouched
    _sandbox_gone(rec, c.workdir)


def test_a_hanging_agent_is_killed_at_the_timeout_and_unsolved(acme, cfg, tmp_path):
    _out, tasks = acme
    pidfile = tmp_path / "child.pid"
    c = cfg(f"(sleep 120; touch {tmp_path / 'late'}) & echo $! > {pidfile}; sleep 120", timeout=3)
    rec = run_once(tasks[3], c, 1, "t")
    assert rec.timed_out and rec.exit_code is None and not rec.solved
    assert rec.reason.startswith("agent killed at the 3s timeout") and rec.seconds < 30
    assert not process_alive(int(pidfile.read_text())) and not (tmp_path / "late").exists()
    _sandbox_gone(rec, c.workdir)


def test_builtin_search_solves_each_kind_of_task_and_records_its_tries(acme, cfg):
    """The search on every multi-file task of the build (a sibling pair, the compound, a CTE moved
    into a model of its own): each trial is a full one (about 20 CPU seconds). The search on
    single-file tasks, which differ only in what it tries first, is proven end to end by
    test_calibrate_bulk (bulk --calibrate builtin:search: solved, graded, tries, sandbox removed)."""
    out, every = acme
    # a purposeful change (two files: the model and its docs) is no slip to undo: its solution keeps
    # the purpose, which a search of inverse edits cannot write; it is left to agents
    tasks = [t for t in every if len(patched_paths(t.task_dir / "setup" / "changes.patch")) > 1
             and "purposeful-change" not in (t.task_dir / "task.yaml").read_text()]
    assert tasks, [t.task_id for t in every]
    c = cfg("builtin:search")
    before = tree_state(out)  # the task folders, the project copy and its database
    result = calibrate(tasks, c)
    assert tree_state(out) == before  # nothing outside the sandboxes changed
    assert len(result.records) == len(tasks)
    for rec in result.records:
        assert rec.solved, (rec.task_id, rec.reason, rec.notes, rec.output_tail)
        assert rec.tries and rec.tries >= 1 and rec.sandbox_removed
        task = next(t for t in tasks if t.task_id == rec.task_id)
        # the agent's diff touches the files the bug changed (two for a mistake in sibling models)
        assert sorted(rec.diff["files"]) == sorted(patched_paths(task.task_dir / "setup" / "changes.patch"))
    assert {m.label for m in result.measured.values()} <= {"easy", "medium", "hard"}
    print({r.task_id: (next(t.difficulty for t in tasks if t.task_id == r.task_id), r.tries) for r in result.records})
    assert not any(c.workdir.iterdir())


# --------------------------------------------------------------------------- any solver: --prepare / --grade


def _mtimes(root: Path) -> set[int]:
    return {(Path(h) / n).lstat().st_mtime_ns for h, ds, fs in os.walk(root) for n in ds + fs}


def test_prepare_then_grade_what_a_person_left(acme, tmp_path, capsys):
    """Two sandboxes: in one the solution patch is applied by hand (no dbt run: test_setup rebuilds),
    the other is left alone. Graded: solved and unsolved, recorded as agent runs are
    (calibration.jsonl, tasks.jsonl), the solver's sandboxes left as they were."""
    out, tasks = acme
    mine = tmp_path / "out"  # calibration writes into its OUTPUT_DIR: a copy of the shared build
    shutil.copytree(out, mine, symlinks=True)
    (mine / "tasks.jsonl").write_text("".join(json.dumps({"id": t.task_id}) + "\n" for t in tasks))
    solve, leave = tasks[0], tasks[1]
    dest = tmp_path / "by hand"
    assert calibrate_main([str(mine), "--prepare", str(dest), "--tasks", solve.task_id, leave.task_id]) == 0
    assert sorted(p.name for p in dest.iterdir()) == sorted([".adegen-prepared", solve.task_id, leave.task_id])
    for t in (solve, leave):
        box = dest / t.task_id
        assert sorted(p.name for p in box.iterdir()) == ["PROMPT.md", "app"]
        assert (box / "PROMPT.md").read_text() == t.prompts["base"] + "\n"
        # nothing of the task but its broken state: no solution, tests, task.yaml or seeds
        mine_only = {"task.yaml", "setup.sh", "solution.sh", "changes.patch", "_no-op.txt"} | {
            p.name for d in ("tests", "seeds") for p in (t.task_dir / d).glob("*")}
        assert not {p.name for p in box.rglob("*")} & mine_only
        assert not (box / "app" / "setup").exists()
        assert len(_mtimes(box / "app")) == 1  # setup.sh's one timestamp (in-process grading mode too)
        for rel in patched_paths(t.task_dir / "setup" / "changes.patch"):  # the broken state (a new model file too)
            intact = (t.project_dir / rel).read_bytes() if (t.project_dir / rel).is_file() else None
            assert (box / "app" / rel).read_bytes() != intact, rel
    # the person writes the task's solution (a purposeful change's keeps the purpose: not the setup reversed)
    r = subprocess.run(["patch", "-p1", "--batch", "-i", str(solve.task_dir / "solutions" / "changes.patch")],
                       cwd=dest / solve.task_id / "app", capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    (dest / solve.task_id / "SOLVE_SECONDS").write_text("95\n")  # the person's own count
    capsys.readouterr()
    assert calibrate_main([str(mine), "--grade", str(dest), "--solver", "a person", "--no-report"]) == 0, \
        capsys.readouterr()
    rows = {r["task_id"]: r for r in map(json.loads, (mine / "calibration.jsonl").read_text().splitlines())}
    done, left = rows[solve.task_id], rows[leave.task_id]
    assert done["solved"] and done["graded"] and done["agent"] == "a person" and done["key"] == "base", done
    assert done["diff"]["files"] == sorted(patched_paths(solve.task_dir / "solutions" / "changes.patch"))
    assert done["tests"] and set(done["tests"].values()) == {"passed"}
    assert not left["solved"] and left["graded"] and "failing tests" in left["reason"]
    assert left["diff"] == {"files": [], "lines_added": 0, "lines_removed": 0}
    assert done["exit_code"] is None and not done["timed_out"] and done["sandbox_removed"]
    assert done["calibration_id"] == left["calibration_id"]
    # seconds: what the solver reported, else unknown; never the time since --prepare
    assert done["seconds"] == 95.0 and left["seconds"] is None
    assert done["graded_at"] and done["graded_at"].endswith("+00:00")
    jsonl = (mine / "tasks.jsonl").read_text().splitlines()
    measured = {r["id"]: r.get("measured_difficulty") for r in map(json.loads, jsonl)}
    assert measured[solve.task_id]["solved"] == 1 and measured[solve.task_id]["agent"] == "a person"
    assert measured[leave.task_id]["label"] == "unsolved"
    assert measured[solve.task_id]["median_seconds"] == 95.0
    assert not any(measured[t.task_id] for t in tasks[2:])
    assert (dest / solve.task_id / "app" / "dbt_project.yml").is_file()  # left as the solver left it
    assert not list((dest / solve.task_id / "app").rglob("AUTO_*"))  # grading ran on a copy


def test_prepare_and_grade_refuse_a_wrong_dir(acme, tmp_path, capsys):
    """Bad input, exit 2, one message naming the argument; nothing is written anywhere."""
    out, _tasks = acme
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine\n")
    (tmp_path / "empty").mkdir()
    cases = [(["--prepare", str(full)], "--prepare", "not an empty directory"),
             (["--prepare", str(full / "notes.txt")], "--prepare", "not an empty directory"),
             (["--grade", str(tmp_path / "empty")], "--grade", "was not prepared"),
             (["--grade", str(tmp_path / "missing")], "--grade", "was not prepared"),
             (["--prepare", str(tmp_path / "new"), "--agent-command", "true"], "command line", "not allowed with"),
             (["--prepare", str(tmp_path / "new"), "--solver", "me"], "--solver", "only with --grade")]
    for args, names, says in cases:
        capsys.readouterr()
        assert calibrate_main([str(out), *args]) == 2, args
        err = capsys.readouterr().err
        assert f"{names}: " in err and says in err and "Traceback" not in err, (args, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "full"]
    assert [p.name for p in full.iterdir()] == ["notes.txt"] and not any((tmp_path / "empty").iterdir())


def test_a_failed_prepare_leaves_nothing_behind(acme, tmp_path, monkeypatch, capsys):
    """The first sandbox is made (a stand-in for setup), the second fails: DIR is as it was."""
    from adegen.calibrate.sandbox import Sandbox

    out, tasks = acme
    made = []

    def prepare(self):
        if made:
            raise InputError("setup failed", file=self.app)
        self.app.mkdir(parents=True)
        (self.app / "dbt_project.yml").write_text("name: x\n")
        made.append(self.root)

    monkeypatch.setattr(Sandbox, "prepare", prepare)
    (tmp_path / "empty").mkdir()
    for dest in (tmp_path / "new", tmp_path / "empty"):
        made.clear()
        assert calibrate_main([str(out), "--prepare", str(dest), "--tasks", tasks[0].task_id, tasks[1].task_id]) == 2
        assert made and "setup failed" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"] and not any((tmp_path / "empty").iterdir())
