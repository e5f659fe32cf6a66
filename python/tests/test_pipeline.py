"""adegen.pipeline: the stages called one by one on a RunContext, the way a bulk mode will call
them - one candidate realised into one task by `realise_task`, with several prompt levels and
graded tables (example project, real dbt discovery and GNU patch; no execution proof here)."""
from __future__ import annotations

import subprocess

import pytest
import yaml

from adegen.propose import proposals as pp
from adegen.cli.build_args import parse_args
from adegen.pipeline import RunContext, UI
from adegen.pipeline import discovery, inputs, propose, workspace
from adegen.pipeline.realise import TaskJob, realise_task
from adegen.adebench.install import AdeBench


@pytest.fixture()
def ctx(example_project, acme_discovery, tmp_path) -> RunContext:
    opts = parse_args([str(example_project), "--output-dir", str(tmp_path / "out"), "--no-validate"])
    ctx = RunContext(opts=opts, ui=UI(json_mode=True, interactive=False))
    inputs.load_project(ctx)
    ctx.ade = AdeBench(False, None, "not looked for")
    ctx.discovery = acme_discovery
    discovery.survey(ctx)
    return ctx


def _one_proposal(ctx):
    cands, _ = propose.enumerate_candidates(ctx)
    pset = pp.select(cands, ctx.scope(), count=1)
    assert pset.proposals
    return pset.proposals[0]


def _downstream_table(ctx, p) -> str:
    """A materialized model two edges below the proposal's compared table."""
    models = {m["unique_id"]: m for m in ctx.discovery["models"]}
    start = next(m for m in models.values() if m["name"] == p.compared_table)
    for child in start["downstream_models"]:
        for grand in models[child]["downstream_models"]:
            if models[grand]["materialized"] != "ephemeral":
                return models[grand]["name"]
    pytest.skip(f"{p.compared_table} has no grandchild")


def test_realise_one_candidate_into_a_task(ctx):
    p = _one_proposal(ctx)
    ctx.output = workspace.prepare(ctx)
    res = realise_task(ctx, TaskJob(p, "acme001", []))
    task = ctx.output.tasks_dir / "acme001"
    assert res is not None and res["path"] == str(task) and res["status"] == "dev" and not res["proven"]
    assert res["patch_check"]["line"] == "acme001: setup ✓ solution ✓ roundtrip ✓"
    data = yaml.safe_load((task / "task.yaml").read_text())
    assert data["status"] == "dev" and data["prompts"] == [{"key": "base", "prompt": p.prompt}]
    assert data["solution_seeds"] == [{"table_name": p.compared_table}]
    assert sorted(x.name for x in ctx.output.tasks_dir.iterdir()) == ["acme001"]  # no temp dir left
    r = subprocess.run(["patch", "-p1", "--dry-run", "--batch"], stdin=(task / "setup" / "changes.patch").open("rb"),
                       cwd=ctx.output.project_root, capture_output=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_prompt_levels_grade_every_table_they_name(ctx):
    p = _one_proposal(ctx)
    far = _downstream_table(ctx, p)
    p.levels = [pp.PromptLevel("base", p.prompt),
                pp.PromptLevel("medium", f"Numbers in {far} changed. Can you fix it?", (far,)),
                pp.PromptLevel("hard", f"Something upstream of {far} is off.", (far, p.compared_table))]
    ctx.output = workspace.prepare(ctx)
    assert realise_task(ctx, TaskJob(p, "acme001", [])) is not None
    data = yaml.safe_load((ctx.output.tasks_dir / "acme001" / "task.yaml").read_text())
    assert [x["key"] for x in data["prompts"]] == ["base", "medium", "hard"]
    assert [s["table_name"] for s in data["solution_seeds"]] == [p.compared_table, far]
    rebuilt = data["test_setup"].splitlines()[-1].split()[3:]
    between = pp.models_between(ctx.discovery, p.model_unique_id, far)
    assert set(between) <= set(rebuilt) and rebuilt[0] == p.model and rebuilt.index(far) > rebuilt.index(p.compared_table)
    assert p.to_json()["prompt_levels"][1] == {"key": "medium", "prompt": p.levels[1].text, "tables": [far]}


def test_run_record_from_the_context(ctx, acme_discovery):
    import json

    jsonschema = pytest.importorskip("jsonschema")
    from adegen.pipeline import record

    p = _one_proposal(ctx)
    ctx.output = workspace.prepare(ctx)
    ctx.doc.adegen_version, ctx.doc.exit_code = "test", 0
    entry = realise_task(ctx, TaskJob(p, "acme001", []))
    ctx.doc.tasks = [entry]
    runs = ctx.opts.output_dir / ".adegen" / "runs"
    runs.mkdir(parents=True)
    (runs / ".adegen-tmp-stale.json").write_text("{")  # left by a killed run
    record.clean_stale(ctx.opts.output_dir)
    path = record.write_record(ctx, ctx.started)
    assert [x.name for x in runs.iterdir()] == [path.name] and ctx.doc.run_record == str(path)
    rec = json.loads(path.read_text())
    schemas = ctx.opts.project_dir.parent / "python" / "adegen" / "schemas"
    for name in ("build.schema.json", "run_record.schema.json"):
        jsonschema.validate(rec, json.loads((schemas / name).read_text()))
    t = rec["tasks"][0]
    assert t["layer"] == p.layer and t["graded_tables"] == [p.compared_table] and t["observation"] is None
    graph_models = {m["unique_id"] for m in rec["graph"]["models"] if m["unique_id"].startswith("model.")}
    assert graph_models == {m["unique_id"] for m in acme_discovery["models"]}
    assert rec["command"] == "build" and rec["run_id"] == path.stem
