"""Candidates that come as a diff (issue 51), without dbt: a diff's files become one candidate
(its first file's changed lines as the site, the others as companions); GNU patch applies a
diff to copies of the project's files, forward or in reverse; the git history's fixes are undone
on today's code (a real `git` repository in tmp); `--bug-command`'s answers are parsed; and an
empty `--bug-command` ends the build with one message (exit 2). The builds that screen and prove
such candidates are in test_diff_candidates.py."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from adegen.core.drops import Drop, DropCode
from adegen.propose import bug_command, history
from adegen.propose.diff_apply import apply_diff
from adegen.propose.diffs import (DiffBug, DiffCandidate, FileChange, candidate_for, changed_lines, check_files,
                                  code_tokens, span_site)
from adegen.propose.proposals import Scope
from adegen.propose.siblings import changed_files, is_pair
from adegen.rewrite.engine import apply_site
from adegen.discover.survey import Survey

REPO = Path(__file__).resolve().parents[2]
STG = "select\n    id,\n    amount\nfrom {{ ref('raw') }}\n"
MART = "select\n    s.id,\n    sum(s.amount) as total  -- per id\nfrom {{ ref('stg') }} as s\ngroup by 1\n"


def _model(name: str, path: str, depth: int, layer: str) -> dict:
    return {"unique_id": f"model.p.{name}", "name": name, "package_name": "p", "path": path, "depth": depth,
            "layer": layer, "enabled": True, "materialized": "table", "depends_on": [], "columns": ["id"]}


def _scope(tmp_path: Path) -> Scope:
    models = [_model("mart", "models/mart.sql", 2, "marts"), _model("stg", "models/stg.sql", 1, "staging")]
    (tmp_path / "models").mkdir(exist_ok=True)
    (tmp_path / "models" / "stg.sql").write_text(STG)
    (tmp_path / "models" / "mart.sql").write_text(MART)
    return Scope(tmp_path, "p", "duckdb", {"models": models, "sources": []}, Survey("p", [], [], [], 0))


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                          capture_output=True, text=True).stdout


def test_a_diff_of_two_files_is_one_candidate_whose_site_and_companion_rebuild_both(tmp_path):
    scope = _scope(tmp_path)
    files = (FileChange("models/mart.sql", MART.encode(), MART.replace("sum(", "max(").encode()),
             FileChange("models/stg.sql", STG.encode(), STG.replace("    amount\n", "    amount * 100 as amount\n").encode()))
    c = candidate_for(DiffBug("bug_command", "mart", "cents", "values", files, model="mart"), scope)
    assert isinstance(c, DiffCandidate)
    # the most upstream file is the candidate's own model; the mart rides along as a companion
    assert c.name == "stg" and c.pattern.id == "bug_command@mart" and c.pattern.symptom == "values_wrong"
    site = c.sites[0]
    assert (site.line, site.before, site.after) == (3, "    amount", "    amount * 100 as amount")
    assert apply_site(c.raw, site).encode() == files[1].mutant
    assert changed_files(site) == (("model.p.mart", "models/mart.sql", MART.replace("sum(", "max(")),)
    assert not is_pair(c)  # a diff's files need not be twins
    changes = c.companion_changes(None, "mart", scope.discovery)
    assert [(s.model, s.table, s.mutant) for s in changes] == [("mart", "mart", files[0].mutant)]
    assert c.pattern.rank_penalty < 0  # ranked up: tried before a pattern's guess


def test_a_diff_that_cannot_be_a_task_is_dropped_with_its_reason(tmp_path):
    scope = _scope(tmp_path)
    stg = STG.encode()

    def drop(*files):
        made = candidate_for(DiffBug("bug_command", "stg", "s", "values", files, model="stg"), scope)
        assert isinstance(made, Drop)
        return made.code, made.reason

    assert drop(FileChange("dbt_project.yml", b"a", b"b"))[0] is DropCode.DIFF_OUTSIDE_MODELS
    assert drop(FileChange("models/stg.sql", stg, stg)) == (DropCode.DIFF_NO_CHANGE,
                                                            "--bug-command for stg: changes nothing")
    relaid = STG.replace("    id,\n", "  id ,  -- the key\n").encode()
    assert drop(FileChange("models/stg.sql", stg, relaid))[1].endswith("changes only comments or whitespace")
    big = (STG + "".join(f"-- {i}\nunion all select {i}, {i}\n" for i in range(25))).encode()
    assert drop(FileChange("models/stg.sql", stg, big))[0] is DropCode.DIFF_TOO_BIG
    # a string literal's text is code, not layout
    assert code_tokens("where s = 'a b'") != code_tokens("where s = 'a  b'")
    assert changed_lines(b"a\nb\nc\n", b"a\nB\nc\nd\n") == 3
    assert check_files((FileChange("models/stg.sql", stg, stg.replace(b"amount", b"-amount")),), {"models/stg.sql"}) is None


def test_an_edit_of_names_only_is_no_change_of_logic():
    """A small commit that says nothing of fixing is offered only when it changed logic: its inverse
    then changes it back. Aliases and qualifiers renamed (jaffle_shop_duckdb's history is full of
    them) are a refactor."""
    from adegen.propose.diffs import logic_changed

    def changed(a: str, b: str) -> bool:
        return logic_changed(a.encode(), b.encode())

    assert not changed("from orders\n", "from orders o\n")
    assert not changed("select order_payments.total_amount\n", "select op.total_amount\n")
    assert changed("select sum(amount)\n", "select max(amount)\n")  # a function
    assert changed("left join o on a = b\n", "inner join o on a = b\n")  # a keyword
    assert changed("where x > 1\n", "where x >= 1\n") and changed("where s = 'a'\n", "where s = 'b'\n")


def test_the_site_of_a_diff_covers_whole_lines():
    before = "select\n    ds.race_id as points\nfrom x\n"
    after = "select\n    ds.driver_id as points\nfrom x\n"
    site = span_site("d", before, after)
    assert (site.line, site.before, site.after) == (2, "    ds.race_id as points", "    ds.driver_id as points")
    assert apply_site(before, site) == after
    # an insertion at the end, without a final newline
    site = span_site("d", "select 1", "select 1\nunion all select 2")
    assert apply_site("select 1", site) == "select 1\nunion all select 2"


def test_gnu_patch_applies_a_diff_forward_or_in_reverse_to_copies_only(tmp_path):
    scope = _scope(tmp_path)
    fix = ("--- a/models/stg.sql\n+++ b/models/stg.sql\n@@ -1,4 +1,4 @@\n select\n     id,\n"
           "-    amount * 100 as amount\n+    amount\n from {{ ref('raw') }}\n")
    undone = apply_diff(tmp_path, fix, reverse=True, allowed={"models/stg.sql"})
    assert undone.problem is None and undone.files[0].mutant == STG.replace("    amount\n", "    amount * 100 as amount\n").encode()
    assert (tmp_path / "models" / "stg.sql").read_text() == STG  # the project is never written
    # forward, the fix looks applied already: it does not apply (never the other way round)
    assert apply_diff(tmp_path, fix).problem[0] is DropCode.DIFF_NOT_APPLYING
    stale = fix.replace("-    amount * 100 as amount\n+    amount\n", "-    amount_cents\n+    amount_usd\n")
    assert apply_diff(tmp_path, stale).problem == (DropCode.DIFF_NOT_APPLYING, "does not apply: Hunk #1 FAILED at 1.")
    assert apply_diff(tmp_path, "not a diff at all").problem[0] is DropCode.DIFF_NOT_APPLYING
    escape = fix.replace("a/models/stg.sql", "a/../stg.sql").replace("b/models/stg.sql", "b/../stg.sql")
    assert apply_diff(tmp_path, escape).problem[0] is DropCode.DIFF_OUTSIDE_MODELS
    new_file = "--- /dev/null\n+++ b/models/new.sql\n@@ -0,0 +1 @@\n+select 1\n"
    assert apply_diff(tmp_path, new_file).problem[0] is DropCode.DIFF_OUTSIDE_MODELS
    assert apply_diff(tmp_path, fix, reverse=True, allowed={"models/mart.sql"}).problem[0] is DropCode.DIFF_OUTSIDE_MODELS
    # paths without a/ b/ prefixes read as the project's
    plain = fix.replace("a/models", "models").replace("b/models", "models")
    assert apply_diff(tmp_path, plain, reverse=True).problem is None
    assert scope.project_dir == tmp_path


def test_the_history_offers_each_fix_undone_on_todays_code(tmp_path):
    """Buggy, fixed ("Fix ..."), then the file moved on (a header line: the fix's hunk applies at an
    offset): the fix is undone on today's file. A fix of a comment, a fix a later commit took back
    (no longer applies) and a too-big fix are skipped with their reasons; small edits come after
    the fixes whatever their message, and one that only adds a comment is skipped quietly."""
    repo = tmp_path / "proj"
    (repo / "models").mkdir(parents=True)
    stg, mart = repo / "models" / "stg.sql", repo / "models" / "mart.sql"
    _git(repo, "init", "-q")
    stg.write_text(STG.replace("    amount\n", "    amount * 100 as amount\n"))
    mart.write_text(MART.replace("per id", "pre id"))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "first models")  # creates the files: nothing to undo
    stg.write_text(STG)
    _git(repo, "commit", "-qam", "Fix double conversion of amount (#12)")
    mart.write_text(MART)
    _git(repo, "commit", "-qam", "fix typo in a comment")
    mart.write_text(MART.replace("group by 1", "group by s.id"))
    _git(repo, "commit", "-qam", "Bugfix: group by the key")
    mart.write_text(MART)
    _git(repo, "commit", "-qam", "refactor the mart")
    stg.write_text("-- amounts in dollars\n" + STG)
    _git(repo, "commit", "-qam", "document stg")
    stg.write_text("-- amounts in dollars\n" + STG + "".join(f"-- line {i}\n" for i in range(50)))
    _git(repo, "commit", "-qam", "wrong: append notes")
    stg.write_text("-- amounts in dollars\n" + STG)  # today's file, not committed
    paths = {"models/stg.sql": "stg", "models/mart.sql": "mart"}

    scan = history.scan(repo, paths)
    assert [(b.story, b.model, b.kind) for b in scan.bugs] == [
        ("Fix double conversion of amount (#12)", "stg", "values"), ("refactor the mart", "mart", "values")]
    assert scan.bugs[0].files[0].mutant.decode() == "-- amounts in dollars\n" + STG.replace(
        "    amount\n", "    amount * 100 as amount\n")
    assert scan.bugs[1].files[0].mutant.decode() == MART.replace("group by 1", "group by s.id")
    reasons = {d.reason.split('"')[1]: d.code for d in scan.drops}
    assert reasons == {"wrong: append notes": DropCode.DIFF_TOO_BIG, "Bugfix: group by the key": DropCode.DIFF_NOT_APPLYING,
                       "fix typo in a comment": DropCode.DIFF_NO_CHANGE}
    assert all(d.pattern_id.startswith("history@") for d in scan.drops)
    assert scan.note == "history: 6 commit(s) modified model SQL, 6 tried"
    # `auto` reads a project that is a repository of its own; inside a larger one only with `on`
    outer = tmp_path / "outer"
    (outer / "proj").mkdir(parents=True)
    _git(outer, "init", "-q")
    assert history.scan(outer / "proj", {}).note.startswith("history not read: the project is inside the repository")
    assert history.scan(outer / "proj", {}, "on").note.startswith("history: 0 commit")
    assert history.scan(tmp_path, {}, "off").note == "history not read: off (--history off)"
    assert history.scan(tmp_path, {}).note == "history not read: not a git repository"


def test_a_bug_commands_answer_is_parsed_or_its_problem_named():
    assert bug_command.parse_answer("") is None and bug_command.parse_answer("{}") is None
    assert bug_command.parse_answer('{"diff": "x", "story": " a\\n b ", "kind": "build_error"}') == {
        "diff": "x", "story": "a b", "kind": "build_error"}
    assert bug_command.parse_answer('{"diff": "x"}')["kind"] == "values"
    assert bug_command.parse_answer("a diff, not JSON").startswith("output is not JSON")
    assert bug_command.parse_answer('["x"]') == "output is not a JSON object"
    assert bug_command.parse_answer('{"story": "s"}') == "no `diff` in its output"
    assert bug_command.parse_answer('{"diff": "x", "kind": "slow"}').startswith("`kind` must be one of values, build_error")


def test_a_bug_command_is_asked_about_a_model_with_its_sql_and_lineage(tmp_path):
    scope = _scope(tmp_path)
    scope.discovery["models"][0].update(depends_on=["model.p.stg", "source.p.raw.orders"])
    scope.discovery["models"][1].update(downstream_models=["model.p.mart"])
    scope.discovery["sources"] = [{"unique_id": "source.p.raw.orders", "source": "raw", "table": "orders"}]
    doc = bug_command.document(scope.discovery["models"][0], scope, MART)
    assert doc["model"]["sql"] == MART and doc["model"]["path"] == "models/mart.sql"
    assert doc["model"]["upstream"] == [{"name": "stg", "kind": "model", "path": "models/stg.sql"},
                                        {"name": "raw.orders", "kind": "source"}]
    assert bug_command.document(scope.discovery["models"][1], scope, STG)["model"]["downstream"] == [
        {"name": "mart", "path": "models/mart.sql"}]
    assert {m["path"] for m in doc["models"]} == {"models/stg.sql", "models/mart.sql"}
    writer = tmp_path / "w.py"
    writer.write_text("import json, sys\nd = json.load(sys.stdin)\nsql = d['model']['sql']\n"
                      "print(json.dumps({'diff': '--- a/' + d['model']['path'] + '\\n+++ b/' + d['model']['path'] + "
                      "'\\n@@ -3 +3 @@\\n-    amount\\n+    -amount as amount\\n', 'story': 'sign'}) "
                      "if d['model']['name'] == 'stg' else '')\n")
    answers = bug_command.ask_all(bug_command.BugCommand(f"{sys.executable} {writer}"), scope.discovery["models"], scope)
    assert [(a.model, a.story, a.files[0].mutant) for a in answers] == [
        ("stg", "sign", STG.replace("    amount\n", "    -amount as amount\n").encode())]
    failing = bug_command.ask(bug_command.BugCommand("exit 3"), scope.discovery["models"][1], scope)
    assert failing.code is DropCode.BUG_COMMAND_FAILED and failing.reason.endswith("the command failed: exit 3")
    slow = bug_command.ask(bug_command.BugCommand("sleep 5", timeout=0.5), scope.discovery["models"][1], scope)
    assert slow.reason.endswith("timed out after 0.5 s")


def test_an_empty_bug_command_is_one_clear_error(tmp_path):
    from reliability_kit import build_env, run_build

    r = run_build([REPO / "python" / "tests" / "fixtures" / "twinfix", "--output-dir", tmp_path / "o",
                   "--bug-command", " "], build_env(tmp_path / "home"), timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == ["adegen: error: --bug-command: must not be empty"]
    assert not (tmp_path / "o").exists()


def test_history_takes_auto_on_or_off(tmp_path):
    from adegen.cli.build_args import parse_args
    from adegen.core.errors import InputError

    args = [str(REPO / "integration_tests"), "--output-dir", str(tmp_path / "o")]
    assert parse_args(args).history == "auto" and parse_args(args + ["--history", "off"]).history == "off"
    with pytest.raises(InputError, match="--history: invalid choice"):
        parse_args(args + ["--history", "sometimes"])
