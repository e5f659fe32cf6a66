"""Reliability suite, part 1: the bad-input matrix of `python -m adegen.build` (real dbt + DuckDB).

Every case is a tiny project built in a temp dir (never the big example). The guarantee under test
(README "Guarantees"): bad input ends with exit 2 and ONE message naming the offending file and
field or argument, no Python traceback, nothing written to the output directory, and the project
tree byte-identical (content hash + file list, symlinks included). The few cases where exit 2 is
not what a data engineer expects say so in their `why`.

The cases run as subprocesses, up to three at once (a session fixture starts the selected cases
the first time one of them is asked for), so the dbt-bound ones overlap."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import duckdb
import pytest

from reliability_kit import (MODELS, PROFILES, RAW_CUSTOMERS, RAW_ORDERS, REPO, assert_complete_tasks,  # noqa: F401
                             build_cmd, make_project, rel_env, run_build, task_dirs, tree_state)

VALID_PATTERN = textwrap.dedent("""\
    patterns:
      - id: rel_custom
        name: Custom sum to min
        family: aggregation
        difficulty: easy
        db_types: all
        applies_when: ["sum"]
        mutation: Replace SUM with MIN.
        rewrite: {operator: replace_tokens, match: "sum", replace: "min"}
        precondition: [{check: rows_change}]
        symptom: values_too_low
        symptom_template: "{table} totals are too low."
        guidance: Any summed measure.
        realistic: Someone picks the wrong aggregate.
    """)


@dataclass
class Prepared:
    project: Path
    args: list
    out: Path
    cleanup: Callable[[], None] | None = None
    watch: list[Path] = field(default_factory=list)  # extra paths that must stay byte-identical


@dataclass
class Case:
    id: str
    prepare: Callable[[Path], Prepared]
    needles: tuple[str, ...]  # must all appear in the error message (file, field, argument)
    code: int = 2
    why: str = ""  # for code != 2: why a data engineer expects that instead


def _std(tmp: Path, *extra_args, **kw) -> Prepared:
    p = make_project(tmp, **kw)
    out = tmp / "out"
    return Prepared(p, [p, "--output-dir", out, "--no-validate", "--pick", "all", *extra_args], out)


def _pattern_case(cid: str, edit: Callable[[str], str], needles: tuple[str, ...]) -> Case:
    def prep(tmp: Path) -> Prepared:
        pd = tmp / "my patterns"
        pd.mkdir()
        (pd / "custom.yaml").write_text(edit(VALID_PATTERN), encoding="utf-8")
        return _std(tmp, "--patterns-dir", pd)
    return Case(f"pattern_{cid}", prep, needles + ("custom.yaml",))


def _with_project(**kw):
    return lambda tmp: _std(tmp, **kw)


def _args(*a, **kw):
    return lambda tmp: _std(tmp, *a, **kw)


def _missing_path(tmp):
    out = tmp / "out"
    return Prepared(tmp / "no such project", [tmp / "no such project", "--output-dir", out], out)


def _file_not_dir(tmp):
    f = tmp / "dbt_project.yml"
    f.write_text("name: x\n")
    out = tmp / "out"
    return Prepared(f, [f, "--output-dir", out], out)


def _no_dbt_project(tmp):
    p = make_project(tmp, extra={"dbt_project.yml": None})
    out = tmp / "out"
    return Prepared(p, [p, "--output-dir", out], out)


def _snowflake_db_path(tmp):
    d = tmp / "dbs"
    d.mkdir()
    pr = _std(tmp, "--db-path", d, adapter="snowflake")
    return pr


def _duckdb_no_data(tmp, content: bytes | None):
    """A project reading a source table from its DuckDB file (no seeds): validation needs the file."""
    models = {"models/_src.yml": "version: 2\nsources:\n  - name: raw\n    schema: main\n    tables:\n"
                                 "      - name: orders\n",
              "models/totals.sql": "select customer_id, sum(amount) as total\nfrom {{ source('raw', 'orders') }}\n"
                                   "group by customer_id\n"}
    p = make_project(tmp, models=models, seeds=False)
    if content is not None:
        (p / "tiny.duckdb").write_bytes(content)
    out = tmp / "out"
    return Prepared(p, [p, "--output-dir", out, "--pick", "all", "--no-purpose"], out)  # validation on: the DB matters


def _duckdb_in_ade_bench(tmp):
    """No seeds and no database in the project: ade-bench's databases directory holds it, and
    --ade-bench-dir says where ade-bench is (the check and the validator must both look there)."""
    models = {"models/_src.yml": "version: 2\nsources:\n  - name: raw\n    schema: main\n    tables:\n"
                                 "      - name: raw_orders\n      - name: raw_customers\n",
              **{k: v.replace("ref('raw_orders')", "source('raw', 'raw_orders')")
                 .replace("ref('raw_customers')", "source('raw', 'raw_customers')") for k, v in MODELS.items()}}
    p = make_project(tmp, models=models, seeds=False)
    ade = tmp / "ade-bench"
    dbs = ade / "shared" / "databases" / "duckdb"
    dbs.mkdir(parents=True)
    con = duckdb.connect(str(dbs / "tiny.duckdb"))
    for table, text in (("raw_orders", RAW_ORDERS), ("raw_customers", RAW_CUSTOMERS)):
        (tmp / f"{table}.csv").write_text(text)
        con.execute(f"create table main.{table} as select * from read_csv('{tmp / f'{table}.csv'}', header=true)")
    con.close()
    out = tmp / "out"
    # one proof reads the database there as well as three would
    return Prepared(p, [p, "--output-dir", out, "--pick", "1", "--count", "3", "--ade-bench-dir", ade, "--no-purpose"], out,
                    watch=[ade / "shared"])


def _duckdb_locked(tmp):
    pr = _duckdb_no_data(tmp, None)
    db = pr.project / "tiny.duckdb"
    code = (f"import duckdb, sys, time\ncon = duckdb.connect({str(db)!r})\n"
            "con.execute('create table if not exists main.orders as select 1 as customer_id, 2.5 as amount')\n"
            "con.execute('checkpoint')\nprint('ready', flush=True)\nsys.stdin.read()\n")
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "ready"

    def release():
        holder.stdin.close()
        holder.wait(timeout=30)
    pr.cleanup = release
    return pr


def _output_is_file(tmp):
    p = make_project(tmp)
    f = tmp / "out.txt"
    f.write_text("keep me\n")
    return Prepared(p, [p, "--output-dir", f, "--no-validate", "--pick", "all"], f, watch=[f])


def _output_parent_is_file(tmp):
    p = make_project(tmp)
    f = tmp / "afile"
    f.write_text("keep me\n")
    return Prepared(p, [p, "--output-dir", f / "out", "--no-validate", "--pick", "all"], f / "out", watch=[f])


def _output_inside_project(tmp):
    p = make_project(tmp)
    return Prepared(p, [p, "--output-dir", p / "tasks-out", "--no-validate", "--pick", "all"], p / "tasks-out")


def _output_read_only(tmp):
    """A read-only bind mount (root ignores permission bits, so chmod would prove nothing)."""
    p = make_project(tmp)
    ro = tmp / "ro-out"
    ro.mkdir()
    args = [p, "--output-dir", ro / "tasks-here", "--no-validate", "--pick", "all"]
    script = f"mount --bind -o ro {ro} {ro} && exec \"$@\""
    wrapped = ["unshare", "-m", "sh", "-c", script, "sh", *build_cmd(args)]
    return Prepared(p, ["__raw__", *wrapped], ro / "tasks-here", watch=[ro])


def _jinja_only_models(tmp):
    models = {f"models/gen/m{i:03d}.sql": "{{ 'select ' ~ %d ~ ' as id' }}\n" % i for i in range(500)}
    p = make_project(tmp, models=models)
    out = tmp / "out"
    return Prepared(p, [p, "--output-dir", out, "--no-validate", "--pick", "1", "--count", "3"], out)


def _long_line(tmp):
    cols = ", ".join(f"amount + {i} as a{i}" for i in range(12000))  # one line of ~250 kB
    models = {"models/staging/stg_orders.sql": f"select order_id, customer_id, amount, status, {cols} "
                                               "from {{ ref('raw_orders') }} where status != 'cancelled'\n",
              "models/marts/totals.sql": "select customer_id, sum(amount) as total, count(*) as n\n"
                                         "from {{ ref('stg_orders') }}\ngroup by customer_id\n"}
    return _std(tmp, models=models)


def _zero_rows(tmp):
    """Every model is empty (the seeds hold a header only): a bug can change nothing ade-bench's
    equality test can see."""
    models = {"models/staging/stg_orders.sql": "select order_id, customer_id, amount, status\n"
                                               "from {{ ref('raw_orders') }}\n",
              "models/marts/totals.sql": "select customer_id, sum(amount) as total, count(*) as n\n"
                                         "from {{ ref('stg_orders') }}\nwhere status != 'cancelled'\n"
                                         "group by customer_id\n"}
    p = make_project(tmp, models=models, extra={"seeds/raw_orders.csv": "order_id,customer_id,amount,status\n",
                                                "seeds/raw_customers.csv": None})
    out = tmp / "out"
    return Prepared(p, [p, "--output-dir", out, "--pick", "all", "--count", "3", "--no-purpose"], out)


CASES: list[Case] = [
    # --- the project path
    Case("path_missing", _missing_path, ("no such project", "does not exist")),
    Case("path_is_a_file", _file_not_dir, ("dbt_project.yml", "PROJECT_DIR", "not a directory")),
    Case("no_dbt_project_yml", _no_dbt_project, ("dbt_project.yml", "PROJECT_DIR")),
    Case("dbt_project_invalid_yaml", _with_project(extra={"dbt_project.yml": "name: [tiny\nprofile: tiny\n"}),
         ("dbt_project.yml", "invalid YAML")),
    Case("dbt_project_no_name", _with_project(extra={"dbt_project.yml": "profile: tiny\nversion: '1'\n"}),
         ("dbt_project.yml", "name")),
    # --- profiles
    Case("profiles_missing", _with_project(extra={"profiles.yml": None}), ("profiles.yml not found",)),
    Case("profile_missing", _with_project(profile="other", profiles=PROFILES.format(profile="tiny", adapter="duckdb",
                                                                                    db="tiny")),
         ("profiles.yml", "profile 'other'")),
    Case("target_missing", _args("--target", "prod"), ("profiles.yml", "tiny.outputs", "target 'prod' not found")),
    Case("env_var_unset", _with_project(profiles=PROFILES.format(profile="tiny", adapter="duckdb", db="t").replace(
        "./t.duckdb", "\"{{ env_var('ADEGEN_REL_UNSET_VAR') }}\"")),
        ("profiles.yml", "tiny.outputs.dev.path", "ADEGEN_REL_UNSET_VAR")),
    *[Case(f"adapter_{a}", _with_project(adapter=a), ("profiles.yml", "tiny.outputs.dev.type", f"'{a}'"))
      for a in ("postgres", "bigquery", "spark")],
    Case("db_type_contradicts_profile", _args("--db-type", "snowflake"),
         ("profiles.yml", "tiny.outputs.dev.type", "--db-type snowflake")),
    Case("db_path_on_snowflake_project", _snowflake_db_path, ("--db-path", "DuckDB only")),
    Case("db_path_missing_dir", _args("--db-path", "/nonexistent/adegen dir"), ("--db-path", "/nonexistent/adegen dir")),
    Case("db_name_empty", _args("--db-name", " "), ("--db-name",)),
    # --- the DuckDB file (validation on: the data is needed)
    Case("duckdb_missing", lambda t: _duckdb_no_data(t, None),
         ("profiles.yml", "tiny.outputs.dev.path", "tiny.duckdb", "does not exist")),
    Case("duckdb_garbage_bytes", lambda t: _duckdb_no_data(t, b"\x00garbage, not a database\xff" * 500),
         ("profiles.yml", "tiny.outputs.dev.path", "tiny.duckdb", "cannot be opened as a DuckDB database")),
    Case("duckdb_locked_by_writer", _duckdb_locked,
         ("profiles.yml", "tiny.outputs.dev.path", "tiny.duckdb", "locked by another process")),
    Case("duckdb_only_in_ade_bench_dir", _duckdb_in_ade_bench, (), code=0,
         why="ade-bench's databases directory (--ade-bench-dir) holds the project's database, where the tasks "
             "will find it: the input check and the proofs read it there"),
    # --- projects dbt cannot parse or that hold nothing to work on
    Case("jinja_syntax_error", _with_project(extra={"models/marts/broken.sql": "select {{ ref('stg_orders' }} as x\n"}),
         ("models/marts/broken.sql", "Compilation Error")),
    Case("unknown_ref", _with_project(extra={"models/marts/orphan.sql": "select * from {{ ref('no_such_model') }}\n"}),
         ("models/marts/orphan.sql", "no_such_model")),
    Case("zero_models", _with_project(models={}), ("dbt_project.yml", "model-paths", "no models")),
    Case("all_models_disabled", _with_project(extra={"dbt_project.yml": textwrap.dedent("""\
        name: tiny
        config-version: 2
        profile: tiny
        models:
          tiny:
            +enabled: false
        """)}), ("dbt_project.yml", "models", "no enabled models")),
    Case("non_utf8_model", _with_project(extra={"models/marts/latin1.sql": "select 'caf\xe9' as word\n".encode("latin-1")}),
         ("models/marts/latin1.sql", "encoding", "UTF-8")),
    Case("models_all_zero_rows", _zero_rows, ("No task could be",), code=1,
         why="The input is valid, the data is just empty: no bug can change what ade-bench's equality test "
             "sees, so no task can be proven. That is 'nothing could be produced' (exit 1, with the reason) "
             "and never a task marked ready - not bad input."),
    Case("five_hundred_jinja_only_models", _jinja_only_models, ("No task could be proposed",), code=1,
         why="A valid project whose models are pure Jinja has no SQL tokens outside Jinja and no ref, so no "
             "data bug applies; the configuration-only patterns are optional (patterns/optional, added with "
             "--patterns-dir). Expected: the 500 models parse and the run says, in bounded time, that "
             "nothing could be proposed (exit 1), writing nothing."),
    # --- patterns
    _pattern_case("missing_field", lambda y: y.replace("    guidance: Any summed measure.\n", ""),
                  ("rel_custom", "guidance", "missing required field")),
    _pattern_case("unknown_field", lambda y: y + "    colour: red\n", ("rel_custom", "colour", "unknown field")),
    _pattern_case("bad_family", lambda y: y.replace("family: aggregation", "family: astrology"),
                  ("rel_custom", "family", "astrology")),
    _pattern_case("bad_symptom", lambda y: y.replace("symptom: values_too_low", "symptom: gloomy"),
                  ("rel_custom", "symptom", "gloomy")),
    _pattern_case("bad_difficulty", lambda y: y.replace("difficulty: easy", "difficulty: brutal"),
                  ("rel_custom", "difficulty",)),
    _pattern_case("bad_db_types", lambda y: y.replace("db_types: all", "db_types: [oracle]"),
                  ("rel_custom", "db_types")),
    _pattern_case("applies_when_not_a_list", lambda y: y.replace('applies_when: ["sum"]', "applies_when: 7"),
                  ("rel_custom", "applies_when")),
    _pattern_case("unknown_requires_key", lambda y: y + "    requires: {min_vibes: 2}\n",
                  ("rel_custom", "requires.min_vibes")),
    _pattern_case("unknown_operator", lambda y: y.replace("operator: replace_tokens", "operator: teleport"),
                  ("rel_custom", "rewrite.operator", "teleport")),
    _pattern_case("anchor_not_in_applies_when", lambda y: y.replace('applies_when: ["sum"]', 'applies_when: ["count"]'),
                  ("rel_custom", "applies_when", "anchor")),
    _pattern_case("unknown_placeholder", lambda y: y.replace("{table} totals", "{tabel} totals"),
                  ("rel_custom", "symptom_template", "tabel")),
    _pattern_case("duplicate_of_shipped_id", lambda y: y.replace("id: rel_custom", "id: wrong_join_type"),
                  ("wrong_join_type", "duplicate pattern id")),
    _pattern_case("invalid_yaml", lambda y: y.replace('applies_when: ["sum"]', 'applies_when: ["sum"'),
                  ("invalid YAML",)),
    _pattern_case("empty_file", lambda y: "", ("patterns", "empty")),
    _pattern_case("no_patterns_key", lambda y: y.replace("patterns:", "things:"), ("patterns",)),
    Case("patterns_dir_without_yaml", lambda t: (t.joinpath("pd").mkdir(), t.joinpath("pd", "notes.txt").write_text("x"),
                                                 _std(t, "--patterns-dir", t / "pd"))[-1],
         ("--patterns-dir", "no pattern files")),
    Case("patterns_dir_missing", _args("--patterns-dir", "/nonexistent/patterns"), ("--patterns-dir", "does not exist")),
    # --- arguments
    Case("count_too_low", _args("--count", "2"), ("--count", "3 to 5")),
    Case("count_too_high", _args("--count", "6"), ("--count", "3 to 5")),
    Case("count_not_a_number", _args("--count", "many"), ("--count", "'many'")),
    Case("pick_unknown_number", _args("--pick", "7"), ("--pick", "proposal 7 does not exist")),
    Case("pick_zero", _args("--pick", "0"), ("--pick", "proposal 0 does not exist")),
    Case("pick_garbage", _args("--pick", "x,y"), ("--pick", "'x,y'")),
    Case("unknown_option", _args("--frobnicate"), ("command line", "--frobnicate")),
    # --- the output directory
    Case("output_is_a_file", _output_is_file, ("out.txt", "--output-dir", "not a directory")),
    Case("output_parent_is_a_file", _output_parent_is_file, ("afile", "--output-dir", "not a directory")),
    Case("output_inside_project", _output_inside_project, ("tasks-out", "--output-dir", "inside the dbt project")),
    Case("output_not_writable", _output_read_only, ("tasks-here", "--output-dir", "not writable")),
    # --- size extremes that must simply work (see the why)
    Case("model_with_250kB_line", _long_line, (), code=0,
         why="A generated model with one very long line is valid SQL: the lexer, rewrite engine and diff "
             "must treat it as one more line (tasks written, patches round-trip), in bounded time."),
]
assert len(CASES) >= 30
BY_ID = {c.id: c for c in CASES}


@dataclass
class Outcome:
    prepared: Prepared
    before: dict
    after: dict
    watch_before: dict
    watch_after: dict
    result: subprocess.CompletedProcess
    seconds: float


def _state(paths: list[Path]) -> dict:
    out = {}
    for p in paths:
        if p.is_dir():
            out[str(p)] = tree_state(p)
        elif p.exists():
            out[str(p)] = p.read_bytes()
    return out


def _execute(case: Case, tmp: Path, env: dict) -> Outcome:
    pr = case.prepare(tmp)
    before = tree_state(pr.project) if pr.project.is_dir() else {}
    wb = _state(pr.watch)
    t0 = time.monotonic()
    try:
        if pr.args and pr.args[0] == "__raw__":
            r = subprocess.run(pr.args[1:], env=env, cwd=REPO, capture_output=True, text=True, timeout=900,
                               stdin=subprocess.DEVNULL)
        else:
            r = run_build(pr.args, env, timeout=900)
        after = tree_state(pr.project) if pr.project.is_dir() else {}
        wa = _state(pr.watch)
    finally:
        if pr.cleanup:
            pr.cleanup()
    return Outcome(pr, before, after, wb, wa, r, time.monotonic() - t0)


SLOW = {"duckdb_only_in_ade_bench_dir", "models_all_zero_rows", "five_hundred_jinja_only_models", "model_with_250kB_line",
        "jinja_syntax_error", "unknown_ref", "all_models_disabled"}  # these run dbt


@pytest.fixture(scope="session")
def matrix(request, tmp_path_factory, rel_env):
    """case id -> Future[Outcome]; only the selected cases run: the dbt-bound ones three at a time
    in one lane (longest first), the instant ones in another, so neither waits for the other."""
    selected = [item.callspec.params["case"] for item in request.session.items
                if getattr(item, "originalname", "") == "test_bad_input" and hasattr(item, "callspec")]
    root = tmp_path_factory.mktemp("matrix")
    lanes = {True: ThreadPoolExecutor(max_workers=3), False: ThreadPoolExecutor(max_workers=2)}
    futs = {}
    for cid in sorted(selected, key=lambda c: (c not in SLOW, c != "models_all_zero_rows")):
        d = root / cid
        d.mkdir()
        futs[cid] = lanes[cid in SLOW].submit(_execute, BY_ID[cid], d, rel_env)
    yield futs
    for pool in lanes.values():
        pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize("case", [c.id for c in CASES])
def test_bad_input(case, matrix):
    c = BY_ID[case]
    o = matrix[case].result()
    r, pr = o.result, o.prepared
    err = r.stderr
    if pr.args[0] == "__raw__" and err.startswith(("unshare:", "mount:")):
        pytest.skip(f"no private read-only mount here: {err.strip()}")
    detail = f"exit {r.returncode}\n--- stderr\n{err[-3000:]}\n--- stdout\n{r.stdout[-1500:]}"
    assert r.returncode == c.code, detail
    assert "Traceback" not in err, detail
    assert o.before == o.after, "the project tree changed"
    assert o.watch_before == o.watch_after, "a watched path changed"
    if c.code == 0:  # must simply work
        assert c.why and assert_complete_tasks(pr.out, "tiny"), detail
        if case == "duckdb_only_in_ade_bench_dir":  # proven from the database ade-bench's directory holds
            assert "status: ready" in (pr.out / "tasks" / "tiny001" / "task.yaml").read_text(), detail
        return
    if case == "models_all_zero_rows":  # status: dev tasks may be written; never one marked ready
        for d in task_dirs(pr.out):
            assert "status: dev" in (d / "task.yaml").read_text(), d
    else:
        assert not pr.out.exists() or pr.out in pr.watch, f"{pr.out} was created\n{detail}"
    if c.code == 2:
        lines = [ln for ln in err.splitlines() if ln.startswith("adegen: error:")]
        assert len(lines) == 1, detail  # one message...
        msg = err[err.index("adegen: error:"):]
        for n in c.needles:  # ...naming the file and field or the argument
            assert n in msg, f"{n!r} not in the message\n{detail}"
    else:
        text = r.stdout + err
        for n in c.needles:
            assert n in text, f"{n!r} not in the output\n{detail}"
        assert c.why
