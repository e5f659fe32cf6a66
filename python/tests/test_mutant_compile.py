"""The mutant compile in discovery's scratch copy (partial parse reused) decides exactly like the
fresh-copy compile, and leaves the scratch copy clean."""
from __future__ import annotations

import shutil

from adegen.core import settings
from adegen.discover.payload import Scratch, run_discovery
from adegen.propose.mutant_compile import compile_mutants
from adegen.discover.project import load_project


def _mutants(proj):
    out = []
    for i, rel in enumerate(["models/staging/stg_orders.sql", "models/marts/customer_summary.sql"]):
        text = (proj / rel).read_text(encoding="utf-8")
        out.append((f"ok{i}", rel, text))
        out.append((f"noparse{i}", rel, text.replace("select", "selec t from from", 1)))
    out.append(("bad", "models/staging/stg_orders.sql",
                (proj / "models/staging/stg_orders.sql").read_text() + "\n{{ adegen_no_such_macro() }}\n"))
    return out


def test_scratch_compile_matches_fresh_copy(fixtures_dir, tmp_path):
    proj = tmp_path / "tiny"
    shutil.copytree(fixtures_dir / "tiny_duckdb", proj)
    info = load_project(proj)
    run_discovery(proj)  # the scratch copy and its partial-parse state
    muts = _mutants(proj)
    fast = compile_mutants(info, muts)
    with settings.override(compile_fresh_copy=True):
        slow = compile_mutants(info, muts, workdir=tmp_path)
    assert {k: v.ok for k, v in fast.items()} == {k: v.ok for k, v in slow.items()}
    assert fast["ok0"].ok and fast["ok1"].ok and fast["noparse0"].ok is False
    assert fast["ok0"].compiled == slow["ok0"].compiled
    scratch = Scratch(info)
    assert not list(scratch.project.rglob("*__adegen_m*"))
    assert not scratch.compile_db.exists()
    # discovery afterwards still sees only the project's own models
    again = run_discovery(proj)
    assert not [m for m in again["models"] if "__adegen_m" in m["name"]]


def test_one_broken_mutant_does_not_undecide_the_batch(fixtures_dir, tmp_path):
    """A Jinja syntax error in one mutant stops `dbt compile` for every node (a real project's
    story text did: every candidate of the run was left without compiled SQL, so none could be
    measured or screened). That mutant does not compile; the others are compiled again without it."""
    proj = tmp_path / "tiny"
    shutil.copytree(fixtures_dir / "tiny_duckdb", proj)
    info = load_project(proj)
    run_discovery(proj)
    rel = "models/staging/stg_orders.sql"
    text = (proj / rel).read_text(encoding="utf-8")
    res = compile_mutants(info, [("ok", rel, text), ("jinja", rel, text + "\n{% if true %}\n"),
                                 ("noref", rel, text.replace("select", "select {{ ref('adegen_no_such') }} as x,", 1)),
                                 ("ok2", "models/marts/customer_summary.sql",
                                  (proj / "models/marts/customer_summary.sql").read_text())])
    # a Jinja syntax error is found before dbt runs; an unknown ref stops dbt's compile, is named by
    # its error, and the others are compiled again without it
    assert res["jinja"].ok is False and "Jinja syntax error at line" in res["jinja"].reason, res["jinja"].reason
    assert res["noref"].ok is False and "could not compile" in res["noref"].reason, res["noref"].reason
    assert res["ok"].ok and res["ok"].compiled and res["ok2"].ok, {k: v.reason for k, v in res.items()}
    assert not list(Scratch(info).project.rglob("*__adegen_m*"))
