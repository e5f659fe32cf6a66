"""End-to-end tests of `python -m adegen.build` on the example project (real dbt + DuckDB).

Most runs use --no-validate (execution validation has its own end-to-end test at the bottom).
Runs are session-scoped and shared between tests to keep the whole file within a few minutes."""
from __future__ import annotations

import hashlib
import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "python" / "adegen" / "schemas" / "build.schema.json"


def tree_hash(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_symlink():
            out[rel] = "link:" + os.readlink(p)
        elif p.is_file():
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
        else:
            out[rel] = "dir"
    return out


@pytest.fixture(scope="session")
def clean_env(tmp_path_factory) -> dict:
    """No ade-bench: a private HOME and a PATH without `ade`."""
    home = tmp_path_factory.mktemp("home")
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep)
            if p and not (Path(p) / "ade").exists()]
    bindir = Path(sys.executable).parent
    for tool in ("dbt",):
        found = shutil.which(tool)
        if found and str(Path(found).parent) not in path:
            path.append(str(Path(found).parent))
    env = dict(os.environ, HOME=str(home), PATH=os.pathsep.join(path + [str(bindir)]),
               PYTHONPATH=str(REPO / "python"), PYTHONUNBUFFERED="1")
    env.pop("DBT_PROFILES_DIR", None)
    return env


def run_build(args: list, env: dict, *, cwd: Path | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    """One build in a subprocess; every task it writes passes `task_shapes.check_written`."""
    from task_shapes import check_written

    r = subprocess.run([sys.executable, "-m", "adegen.build", *map(str, args)], env=env, cwd=cwd or REPO,
                       capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    check_written(r)
    return r


def load_json(r: subprocess.CompletedProcess) -> dict:
    jsonschema = pytest.importorskip("jsonschema")
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    return doc


@pytest.fixture(scope="session")
def project_before(example_project) -> dict:
    return tree_hash(example_project)


@pytest.fixture(scope="session")
def first_run(example_project, clean_env, project_before, tmp_path_factory):
    out = tmp_path_factory.mktemp("out1") / "ade-bench-tasks"
    t0 = time.monotonic()
    r = run_build([example_project, "--output-dir", out, "--pick", "all", "--yes", "--no-validate", "--json"],
                  clean_env)
    elapsed = time.monotonic() - t0
    assert r.returncode == 0, r.stderr[-3000:]
    return out, load_json(r), r, elapsed


@pytest.fixture(scope="session")
def second_run(first_run, example_project, clean_env):
    out, _, _, _ = first_run
    r = run_build([example_project, "--output-dir", out, "--pick", "all", "--yes", "--no-validate"], clean_env)
    return out, r


def test_first_run_writes_tasks(first_run, example_project):
    out, doc, r, elapsed = first_run
    tasks = doc["tasks"]
    assert 3 <= len(tasks) <= 5, r.stderr[-2000:]
    assert [t["task_id"] for t in tasks] == [f"acme{n:03d}" for n in range(1, len(tasks) + 1)]
    assert sorted(p.name for p in (out / "tasks").iterdir()) == [t["task_id"] for t in tasks]
    assert (out / "projects" / "acme" / "dbt_project.yml").is_file()
    assert doc["report"] == str(out / "report.html") and (out / "report.html").is_file()  # the review page
    for t in tasks:
        d = out / "tasks" / t["task_id"]
        for f in ("task.yaml", "setup.sh", "solution.sh", "setup/changes.patch", "solutions/changes.patch"):
            assert (d / f).is_file(), f
        assert (d / "tests").is_dir() and (d / "seeds").is_dir()
        assert t["patch_check"]["line"] == f"{t['task_id']}: setup ✓ solution ✓ roundtrip ✓"
        assert t["status"] == "dev" and not t["proven"]  # --no-validate: unproven, said clearly
        for sql in (d / "tests").glob("*.sql"):
            assert not sql.name.upper().startswith("AUTO_") and len(sql.stem) <= 55
    pairs = {(p["model"], p["pattern_id"]) for p in doc["proposals"]}
    assert len(pairs) == len(doc["proposals"])
    assert len({p["family"] for p in doc["proposals"]}) >= 2  # spread across families
    assert doc["next_steps"] and any("--seed" in s for s in doc["next_steps"])
    assert any("ade-bench is not installed" in s for s in doc["next_steps"])


def test_task_yaml_fields_and_ade_bench_models(first_run):
    out, doc, _, _ = first_run
    for t in doc["tasks"]:
        data = yaml.safe_load((out / "tasks" / t["task_id"] / "task.yaml").read_text())
        assert set(data) <= {"task_id", "status", "description", "prompts", "author_name", "author_email",
                             "difficulty", "tags", "test_setup", "solution_seeds", "variants", "max_test_timeout_sec"}
        for k in ("task_id", "status", "description", "prompts", "author_name", "author_email", "difficulty",
                  "tags", "variants"):
            assert k in data, k
        assert data["task_id"] == t["task_id"] and data["prompts"][0]["key"] == "base"
        assert data["difficulty"] in ("easy", "medium", "hard") and "acme" in data["tags"]
        assert data["test_setup"].splitlines()[-1].startswith("dbt run --select ")
        v = data["variants"][0]
        assert v == {"db_type": "duckdb", "db_name": "acme", "project_type": "dbt", "project_name": "acme",
                     "project_dir": str(out / "projects")}
        assert all(isinstance(s, dict) and set(s) >= {"table_name"} for s in data["solution_seeds"])
    hm = pytest.importorskip("ade_bench.harness_models", reason="ade-bench is not installed")
    for t in doc["tasks"]:
        data = yaml.safe_load((out / "tasks" / t["task_id"] / "task.yaml").read_text())
        for v in data["variants"]:
            hm.VariantConfig(**v)
        for s in data["solution_seeds"]:
            hm.SolutionSeedConfig(**s)


def test_patches_round_trip_with_gnu_patch(first_run, tmp_path):
    out, doc, _, _ = first_run
    for t in doc["tasks"]:
        work = tmp_path / t["task_id"]
        shutil.copytree(out / "projects" / "acme", work, symlinks=True)
        before = tree_hash(work)
        d = out / "tasks" / t["task_id"]
        for patch, expect_change in ((d / "setup" / "changes.patch", True), (d / "solutions" / "changes.patch", False)):
            with patch.open("rb") as fh:
                r = subprocess.run(["patch", "-p1", "--batch"], stdin=fh, cwd=work, capture_output=True, text=True)
            assert r.returncode == 0, r.stdout + r.stderr
            assert (tree_hash(work) != before) == expect_change
        text = (d / "setup" / "changes.patch").read_text()
        assert text.startswith("--- a/models/") and "\n+++ b/models/" in text


def test_standalone_copy(first_run):
    out, _, _, _ = first_run
    copy = out / "projects" / "acme"
    names = {p.name for p in copy.iterdir()}
    assert not names & {"target", "logs", "dbt_packages", ".git", "acme.duckdb"}
    prof = yaml.safe_load((copy / "profiles.yml").read_text())
    assert prof["acme"]["outputs"][prof["acme"]["target"]]["path"] == "./acme.duckdb"
    for f in ("packages.yml", "package-lock.yml"):
        if (copy / f).exists():
            assert "adegen" not in (copy / f).read_text() and "local: ../" not in (copy / f).read_text()


def test_prompts_do_not_leak(first_run):
    """No prompt quotes the changed code: neither side of the edit appears as words of its own (a
    column the user sees, `distinct_products`, may hold the word `distinct` a fix restores)."""
    _, doc, _, _ = first_run
    for p in doc["proposals"]:
        assert p["prompt"] and p["model_path"].split("/")[-1] not in p["prompt"]
        for side in (p["site"]["before"], p["site"]["after"]):
            if len(side.strip()) >= 6:
                assert not re.search(rf"(?<![\w]){re.escape(side.strip())}(?![\w])", p["prompt"]), (side, p["prompt"])


def test_second_run_new_pairs_and_continued_ids(first_run, second_run):
    _, doc1, _, _ = first_run
    out, r = second_run
    assert r.returncode == 0, r.stderr[-3000:]
    n1 = len(doc1["tasks"])
    ids = sorted(p.name for p in (out / "tasks").iterdir())
    assert len(ids) > n1 and ids[n1] == f"acme{n1 + 1:03d}"
    assert "Existing tasks for project acme" in r.stdout
    new = []
    for tid in ids[n1:]:
        data = yaml.safe_load((out / "tasks" / tid / "task.yaml").read_text())
        new.append(data["description"])
    old_pairs = {(p["model"], p["family"]) for p in doc1["proposals"]}
    # second-run proposals (text output) name model + pattern; none repeats a first-run model+family
    matches = list(re.finditer(r"^\[\d\] (\S+) \(\w+\) - (\S+) \((\S+)\)", r.stdout, re.M))
    assert len(matches) >= 3
    for m in matches:
        assert (m.group(1), m.group(3)) not in old_pairs
    assert "Patch validation:" in r.stdout and "roundtrip ✓" in r.stdout


def test_existing_task_excludes_overlapping_candidates_non_tty(first_run, example_project, clean_env, tmp_path):
    out1, doc1, _, _ = first_run
    # an ade-bench checkout whose tasks/ holds acme001 = the first proposal of run 1
    ade = tmp_path / "ade-bench"
    shutil.copytree(REPO / "python" / "tests" / "fixtures" / "ade_tasks" / "ade-bench", ade)
    shutil.rmtree(ade / "tasks" / "acme001")
    shutil.copytree(out1 / "tasks" / "acme001", ade / "tasks" / "acme001")
    first = doc1["proposals"][0]
    out = tmp_path / "out"
    r = run_build([example_project, "--output-dir", out, "--ade-bench-dir", ade, "--no-validate", "--json"],
                  clean_env)
    assert r.returncode == 0, r.stderr[-3000:]
    doc = load_json(r)
    assert not out.exists()  # no terminal, no --pick: nothing written
    assert doc["survey"]["tasks"] and doc["excluded"]["count"] >= 1
    assert doc["excluded"]["line"].startswith(f"Excluded {doc['excluded']['count']} candidate")
    assert {"model": first["model"], "pattern_id": first["pattern_id"], "task_id": "acme001"} in doc["excluded"]["items"]
    assert all((p["model"], p["family"]) != (first["model"], first["family"]) for p in doc["proposals"])
    assert any(p["closest_task"] for p in doc["proposals"])
    # with --json the human text goes to stderr: the brief, the line and the non-TTY notice
    assert "Existing tasks for project acme (" in r.stderr and doc["excluded"]["line"] in r.stderr
    assert "[1] " in r.stderr and "nothing was written" in r.stderr


def test_interactive_choice_through_pty(example_project, clean_env, tmp_path):
    import pty

    out = tmp_path / "o"
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "adegen.build", str(example_project), "--output-dir", str(out),
                          "--no-validate"], stdin=slave, stdout=slave, stderr=subprocess.PIPE, env=clean_env,
                         cwd=REPO)
    os.close(slave)
    buf = b""
    answered = set()
    deadline = time.monotonic() + 400
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                buf += chunk
            if b"skip [s]?" in buf and "ade" not in answered:
                os.write(master, b"s\n")
                answered.add("ade")
            if b"Which proposals should I generate?" in buf and "pick" not in answered:
                os.write(master, b"2\n")
                answered.add("pick")
            if p.poll() is not None and not ready:
                break
        p.wait(timeout=60)
    finally:
        os.close(master)
        if p.poll() is None:
            p.kill()
    text = buf.decode("utf-8", "replace")
    assert p.returncode == 0, text[-2000:] + p.stderr.read().decode()[-2000:]
    assert answered == {"ade", "pick"}
    assert "install it later" in text and "Skipping the install" in text
    assert [d.name for d in (out / "tasks").iterdir()] == ["acme001"]
    assert "acme001: setup ✓ solution ✓ roundtrip ✓" in text


@pytest.fixture(scope="session")
def acme_named_copy(example_project, tmp_path_factory) -> Path:
    """The example project in a directory named like its dbt project (needed by --no-copy)."""
    from adegen.tasks.output import copy_ignore

    dst = tmp_path_factory.mktemp("named") / "acme"
    shutil.copytree(example_project, dst, symlinks=True,
                    ignore=lambda d, n: copy_ignore(example_project)(d, n) - {"dbt_packages", "acme.duckdb"})
    for f in ("packages.yml", "package-lock.yml"):  # keep pointing at the adegen package
        if (dst / f).is_file():
            (dst / f).write_text((dst / f).read_text().replace("local: ../", f"local: {REPO}"))
    return dst


def test_no_copy_and_db_path(acme_named_copy, clean_env, tmp_path):
    out = tmp_path / "o"
    dbdir = tmp_path / "dbs"
    dbdir.mkdir()
    r = run_build([acme_named_copy, "--output-dir", out, "--no-copy", "--db-path", dbdir, "--pick", "1",
                   "--no-validate", "--no-report"], clean_env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "not self-contained" in r.stderr
    assert not (out / "report.html").exists() and "Review page" not in r.stderr + r.stdout  # --no-report
    assert not (out / "projects").exists()
    data = yaml.safe_load((out / "tasks" / "acme001" / "task.yaml").read_text())
    assert data["variants"][0]["project_dir"] == str(acme_named_copy.parent)
    assert data["variants"][0]["db_dir"] == str(dbdir)


def test_no_copy_requires_matching_dir_name(example_project, clean_env, tmp_path):
    out = tmp_path / "o"
    r = run_build([example_project, "--output-dir", out, "--no-copy", "--pick", "1", "--no-validate"], clean_env)
    assert r.returncode == 2 and "must equal the dbt project name" in r.stderr
    assert "Traceback" not in r.stderr and not out.exists()


@pytest.mark.parametrize("args,needle", [
    (["--db-path", "/nonexistent/dir"], "--db-path"),
    (["--db-type", "snowflake", "--db-path", "."], "--db-path"),
    (["--count", "7"], "--count"),
    (["--pick", "x,y"], "--pick"),
])
def test_bad_arguments_exit_2(example_project, clean_env, tmp_path, args, needle):
    out = tmp_path / "o"
    r = run_build([example_project, "--output-dir", out, *args], clean_env, timeout=120)
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


def test_not_a_project_exit_2(tmp_path, clean_env):
    r = run_build([tmp_path, "--output-dir", tmp_path / "o"], clean_env, timeout=120)
    assert r.returncode == 2 and "dbt_project.yml" in r.stderr and "Traceback" not in r.stderr


def test_help(clean_env):
    r = run_build(["--help"], clean_env, timeout=120)
    assert r.returncode == 0
    for opt in ("--output-dir", "--no-copy", "--db-type", "--db-name", "--db-path", "--ade-bench-dir",
                "--patterns-dir", "--count", "--pick", "--yes", "--json", "--no-validate"):
        assert opt in r.stdout


def test_project_unchanged(first_run, second_run, example_project, project_before):
    assert tree_hash(example_project) == project_before


def test_end_to_end_with_validation(acme_tasks_built, example_project, project_before):
    # the session's validated build of every proposal (conftest.acme_tasks_built)
    out, doc = acme_tasks_built
    if not doc["validation"].get("usable"):
        pytest.skip(f"execution validation unusable here: {doc['validation'].get('reason')}")
    assert doc["exit_code"] == 0 and len(doc["tasks"]) >= 3
    for t, rt in zip(doc["tasks"], load_record(doc)["tasks"]):
        d = out / "tasks" / t["task_id"]
        assert t["proven"] and t["status"] == "ready", t
        assert any(p.name.startswith("solution__") for p in (d / "seeds").iterdir())
        assert (d / "seeds" / "_no-op.txt").is_file() and rt["proof_seconds"]
        if t["family"] == "purposeful-change" and t["pattern_id"] != "purpose:dedup_dropped":
            # on by default: measured on the intact build, not screened
            assert rt["purpose"]["measured"]["rows_differ"] and rt["graded_tables"] == [t["model"]]
            continue
        if t["family"] == "purposeful-change":  # a dropped dedup: screened, reported where it shows
            assert rt["purpose"]["measured"]["rows_broken"] > rt["purpose"]["measured"]["rows_today"]
            assert rt["graded_tables"][0] == rt["purpose"]["measured"]["reported_on"]
            continue
        assert rt["observation"]["changed_tables"]
        assert rt["observation"]["compared_table"] in rt["graded_tables"]
    assert all(p["screening"]["observable"] for p in doc["proposals"])
    assert (out / "databases" / "acme.duckdb").is_file() or doc["database"]["db_file"]
    assert tree_hash(example_project) == project_before


def test_tasks_are_commits_not_token_edits(acme_tasks_built):
    """Every task of the validated build, as its setup patch shows it: at least half change 3 or more
    lines or 2 or more files as one change (the slip inside a story, or one mistake in two sibling
    models), one changes two or more models, and none uses a retired form (adegen.catalog.retired)."""
    from unidiff import PatchSet

    from adegen.catalog.patterns import load_catalog
    from adegen.catalog.retired import RETIRED_OPERATORS

    out, doc = acme_tasks_built
    operator = {p.id: str(p.rewrite.get("operator")) for p in load_catalog().patterns}
    shapes = []
    for t in load_record(doc)["tasks"]:
        patch = PatchSet((out / "tasks" / t["task_id"] / "setup" / "changes.patch").read_text())
        lines = sum(max(h.added, h.removed) for f in patch for h in f)
        shapes.append((t["task_id"], len(patch), lines))
        assert operator.get(t["pattern_id"]) not in RETIRED_OPERATORS, t["pattern_id"]
    commits = [s for s in shapes if s[1] >= 2 or s[2] >= 3]
    assert len(commits) * 2 >= len(shapes), shapes
    assert any(files >= 2 for _, files, _ in shapes), shapes
    assert doc["change_shape"]["at_least_half"] and doc["change_shape"]["commits"] == len(commits)
    # a CTE moved into a model of its own, the slip lost on the way: the setup patch adds the new
    # model's file, the solution removes it, and the task is proven like any other
    moved = [t for t in doc["tasks"] if "--- /dev/null" in (Path(t["path"]) / "setup" / "changes.patch").read_text()]
    assert len(moved) == 1 and moved[0]["proven"], [t["task_id"] for t in moved]
    solution = (Path(moved[0]["path"]) / "solutions" / "changes.patch").read_text()
    assert "+++ /dev/null" in solution


RECORD_SCHEMA = REPO / "python" / "adegen" / "schemas" / "run_record.schema.json"


def load_record(doc: dict) -> dict:
    """The run record a --json run names: valid against both schemas, and the same document plus
    its extras (task details, discovery graph)."""
    jsonschema = pytest.importorskip("jsonschema")
    path = Path(doc["run_record"])
    assert path.parent.name == "runs" and path.parent.parent.name == ".adegen"
    assert re.fullmatch(r"\d{8}T\d{6}Z-\d+\.json", path.name)
    rec = json.loads(path.read_text())
    jsonschema.validate(rec, json.loads(SCHEMA.read_text()))
    jsonschema.validate(rec, json.loads(RECORD_SCHEMA.read_text()))
    for key in ("proposals", "selected", "next_steps", "exit_code", "survey", "project"):
        assert rec[key] == doc[key], key
    assert [t["task_id"] for t in rec["tasks"]] == [t["task_id"] for t in doc["tasks"]]
    for t, d in zip(rec["tasks"], doc["tasks"]):
        assert {k: t[k] for k in d} == d  # the --json entry, extended
    assert not list(path.parent.glob(".adegen-tmp-*"))
    return rec


def test_run_record(first_run, acme_discovery):
    out, doc, _, _ = first_run
    rec = load_record(doc)
    proposals = {p["number"]: p for p in doc["proposals"]}
    for t in rec["tasks"]:
        p = proposals[t["proposal"]]
        assert t["layer"] == p["layer"] and t["prompts"][0] == {"key": "base", "prompt": p["prompt"], "tables": []}
        assert t["observation"] is None and t["proof_seconds"] is None  # --no-validate
    names = {m["name"] for m in rec["graph"]["models"] if m["unique_id"].startswith("model.")}
    assert names == {m["name"] for m in acme_discovery["models"]}
    # edges join table names (parent -> child); every child is a model
    assert all(child in names for _, child in rec["graph"]["edges"]) and len(rec["graph"]["edges"]) > 30


def test_ctrl_c_leaves_nothing_half_written(example_project, clean_env, tmp_path):
    import signal

    out = tmp_path / "o"
    p = subprocess.Popen([sys.executable, "-m", "adegen.build", str(example_project), "--output-dir", str(out),
                          "--pick", "all", "--no-validate"], env=clean_env, cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    seen = ""
    for line in p.stdout:
        seen += line
        if line.startswith("Project copy:") or "left adegen out" in line:
            p.send_signal(signal.SIGINT)
            break
    rest, err = p.communicate(timeout=300)
    assert p.returncode in (0, 130, -2), err[-2000:]  # -2: ended by the SIGINT itself
    assert "Traceback" not in err
    assert not (out / ".adegen.lock").exists()
    tasks = out / "tasks"
    for d in (tasks.iterdir() if tasks.is_dir() else []):
        assert not d.name.startswith(".adegen-tmp-"), d
        for f in ("task.yaml", "setup.sh", "solution.sh", "setup/changes.patch", "solutions/changes.patch"):
            assert (d / f).is_file()
    projects = out / "projects"
    assert not any(x.name.startswith(".adegen-tmp-") for x in (projects.iterdir() if projects.is_dir() else []))


def test_a_five_task_build_traces_symptoms_upstream_and_never_states_a_fix(acme_tasks_built):
    """Issue 28: at least two of the five tasks change a model upstream of the table their base
    prompt names (the base names that table, not the changed model); every proposal met its data
    precondition; no prompt key states its fix; at most one config-only task."""
    from adegen.catalog.patterns import load_catalog
    from adegen.prompts import checks

    _out, doc = acme_tasks_built
    props = doc["proposals"]
    assert len(props) == 5
    deep = [p for p in props if p["upstream_of_prompt"]]
    assert len(deep) >= 2, [(p["model"], p["compared_table"]) for p in props]
    for p in deep:
        assert p["compared_table"] != p["model"]
        assert p["compared_table"] in p["prompt"] and p["model"] not in p["prompt"]
    catalog = load_catalog()
    for p in props:
        assert p["precondition"] and all(v["holds"] for v in p["precondition"]), p
        pattern = catalog.by_id[p["pattern_id"]]
        site = SimpleNamespace(placeholders={})
        for level in p["prompt_levels"]:
            assert checks.states_fix(level["prompt"], site, pattern) == [], level
    assert sum(catalog.by_id[p["pattern_id"]].family == "config-materialization" for p in props) <= 1


def test_acme_keeps_its_payment_conversion_back_for_a_deeper_report(acme_run_record):
    # the example's only dollar amount is passed straight through to fct_payments.amount
    for t in acme_run_record["tasks"]:
        assert not (t["pattern_id"] == "unit_conversion_dropped" and t["model"] == "stg_payments"), t["task_id"]
    kept = [d for d in acme_run_record["dropped_candidates"] if d["model"] == "stg_payments"
            and d["pattern_id"] == "unit_conversion_dropped"]
    assert any("the very column the change converts" in d["reason"] for d in kept), kept
