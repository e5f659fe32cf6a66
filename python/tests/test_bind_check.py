"""The bind check (propose.bind_check, issue 53 item 5): compiled mutants planned on the intact
build before screening; one that does not bind is a compile drop naming the binder's error, while
build-error patterns, runtime errors, undecidable models and self-referencing mutants are left to
screening."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest

from adegen.core.drops import DropCode
from adegen.propose.bind_check import bind_check
from adegen.propose.mutant_compile import CompileResult
from adegen.propose.site import checked_drop
from adegen.realism import ProbeDB

INTACT = 'select status, count(*) as n, sum(amount) as total from "shop"."main"."orders" group by status'
NO_BIND = 'select total + 1 as t2, sum(amount) as total from "shop"."main"."orders" group by status'
RUNTIME = 'select status, cast(status as integer) as n from "shop"."main"."orders"'


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    db = tmp_path_factory.mktemp("bind") / "baseline.duckdb"
    con = duckdb.connect(str(db))
    con.execute("create table orders as select i as id, 'complete' as status, i * 1.5 as amount from range(5) r(i)")
    con.close()
    p = ProbeDB(Path(db), None)
    yield p
    p.close()


def cand(mutants: dict, *, intact: str = INTACT, symptom: str = "values_wrong", stories: dict | None = None,
         path: str = "models/m.sql"):
    ok = lambda sql: CompileResult(True, "", sql, "shop")  # noqa: E731 - the compile database's catalog
    c = SimpleNamespace(model={"name": "m", "path": path}, pattern=SimpleNamespace(id="p", symptom=symptom),
                        sites=[SimpleNamespace(line=i + 1) for i in range(len(mutants))],
                        compiled_intact=ok(intact), compile_results={i: ok(s) for i, s in enumerate(mutants.values())},
                        story_results={i: ok(s) for i, s in (stories or {}).items()}, preconditions={},
                        name="m")
    return c


def test_a_mutant_that_does_not_bind_is_a_compile_drop(probe):
    c = cand({"good": INTACT.replace("count(*)", "count(id)"), "bad": NO_BIND, "runtime": RUNTIME})
    count = bind_check([c], probe)
    assert (count.checked, count.dropped, count.undecided) == (3, 1, 0)
    assert c.compile_results[0].ok and c.compile_results[2].ok  # a cast that fails on the data: screening's
    drop = checked_drop(c, 1)
    assert drop.code == DropCode.NOT_COMPILE
    assert "does not bind on the intact build: Binder Error: Column \"total\" referenced that exists in the " \
           "SELECT clause" in drop.reason
    assert checked_drop(c, 0) is None


def test_the_compile_catalog_is_mirrored(probe):
    """Compiled SQL names the compile database's catalog ("shop"), not the intact build's file."""
    c = cand({"good": INTACT}, path="models/mirror.sql")
    assert bind_check([c], probe).checked == 1 and c.compile_results[0].ok
    assert probe.catalog == "shop" and probe.db_file.stem == "baseline"


def test_build_error_patterns_and_undecidable_models_are_left_to_screening(probe):
    expect_error = cand({"bad": NO_BIND}, symptom="build_error")
    temp_macro = cand({"bad": NO_BIND}, intact=INTACT.replace("sum(amount)", "my_temp_macro(amount)"),
                      path="models/other.sql")
    own = cand({"bad": NO_BIND.replace('"orders"', '"orders__adegen_m3"')}, path="models/third.sql")
    count = bind_check([expect_error, temp_macro, own], probe)
    assert count.dropped == 0 and count.undecided == 1
    assert all(c.compile_results[0].ok for c in (expect_error, temp_macro, own))


def test_a_story_that_does_not_bind_falls_back_to_the_plain_mutant(probe):
    c = cand({"good": INTACT.replace("count(*)", "count(id)")}, stories={0: NO_BIND}, path="models/story.sql")
    count = bind_check([c], probe)
    assert (count.dropped, count.stories) == (0, 1)
    assert c.compile_results[0].ok and c.story_results[0].ok is False
    assert checked_drop(c, 0) is None  # the plain mutant is screened (candidate_sites.storied_mutant
    # takes the story only where its result is not ok=False)


def test_no_intact_build_checks_nothing():
    c = cand({"bad": NO_BIND})
    assert bind_check([c], None).checked == 0 and c.compile_results[0].ok
