"""Stories (adegen.rewrite.stories): the slip made inside a change an engineer set out to make.

Two kinds of proof: on text, what each story writes and where it declines; on real dbt and DuckDB,
that a story's own edits change no table (every model of a project storied at once, the kinds spread
over the models, built and compared row for row with the intact build)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from adegen.rewrite.stories import KINDS, Where, drafts, tell
from adegen.rewrite.stories.base import Slip, compose

REPO = Path(__file__).resolve().parents[2]
JAFFLE = REPO.parent / "shared" / "corpus" / "jaffle_shop_duckdb"

INLINE_REFS = """select
    o.order_id,
    c.name,
    o.amount
from {{ ref('stg_orders') }} as o
left join {{ source('raw', 'customers') }} c
    on o.customer_id = c.customer_id
where o.amount > 0
"""

IMPORTED = """with

orders as (
    select * from {{ ref('stg_orders') }}
),

customers as (
    select * from {{ ref('stg_customers') }}
),

joined as (
    select orders.order_id, customers.name
    from orders
    left join customers on orders.customer_id = customers.customer_id
)

select * from joined
"""


def _end(raw: str) -> Slip:
    """A slip that changes nothing: the story alone."""
    return Slip(len(raw), len(raw), "")


def _kinds(raw: str, slip: Slip | None = None) -> dict[str, str]:
    slip = slip or _end(raw)
    told = {d.story.kind: compose(raw, slip, d) for d in drafts(raw, "m", slip)}
    return {k: t for k, t in told.items() if t is not None}


def test_import_ctes_moves_inline_refs_into_ctes():
    out = _kinds(INLINE_REFS)["import_ctes"]
    # the CTE named as people name it, without the layer prefix (a CTE named exactly like the model
    # it imports read as a program's, issue 51)
    assert out.startswith("with orders as (\n    select * from {{ ref('stg_orders') }}\n),\n\n"
                          "customers as (\n    select * from {{ source('raw', 'customers') }}\n)\n\nselect")
    assert "from orders as o" in out and "left join customers c" in out
    # where the short name is taken, the relation's own name
    taken = _kinds(INLINE_REFS.replace("o.amount\n", "o.amount as orders\n"))["import_ctes"]
    assert taken.startswith("with stg_orders as (") and "from stg_orders as o" in taken


def test_import_ctes_declines_a_name_the_model_already_uses():
    raw = INLINE_REFS.replace("c.name", "customers.name")  # `customers` is already an identifier here
    out = _kinds(raw)["import_ctes"]
    assert "customers as (" not in out and "orders as (" in out


def test_a_model_already_laid_out_in_ctes_gets_no_layout_story():
    """Re-layouting a layered model is noise a reviewer sees through (issue 51): a model with CTEs
    gets no import CTEs, even where it reads a ref inline; no style pass wraps a slip any more."""
    layered = IMPORTED.replace("from orders\n", "from {{ ref('stg_orders') }} as orders\n")
    assert "import_ctes" in _kinds(INLINE_REFS) and _kinds(layered) == {}
    shouting = "SELECT\n    ID,\n    AMOUNT\nFROM ORDERS\nLEFT JOIN X ON ORDERS.ID = X.ID\nWHERE AMOUNT > 0\n"
    trailing = "select\n    a,\n    b,\n    c,\n    d\nfrom t\n"
    assert _kinds(shouting) == {} and _kinds(trailing) == {}
    assert {k.KIND for k in KINDS} == {"import_ctes", "extract_cte"}


def test_no_story_edits_the_slip_span():
    at = INLINE_REFS.index("{{ ref('stg_orders') }}")
    slip = Slip(at, at + len("{{ ref('stg_orders') }}"), "{{ ref('raw_orders') }}")
    assert "import_ctes" not in _kinds(INLINE_REFS, slip)


def test_tell_is_stable_and_keeps_pair_tasks_plain():
    class Site:
        pattern_id, index, start, end, after, companions = "p", 0, 0, 0, "", ()

    site = Site()
    site.start = site.end = len(INLINE_REFS)
    first = tell(INLINE_REFS, site, "m")
    assert first == tell(INLINE_REFS, site, "m")
    # a cosmetic story wraps some sites, not most (COSMETIC_SHARE): the others stay plain edits
    told = [tell(INLINE_REFS, site, f"m{k}")[1] is not None for k in range(40)]
    assert 0 < sum(told) <= 0.5 * len(told) + 6, told
    site.companions = ("a sibling",)
    assert tell(INLINE_REFS, site, "m") == (INLINE_REFS, None)


# ------------------------------------------------------------------------------------------------
# neutrality on real dbt and DuckDB


# `dbt seed` then `dbt run` in one dbt process (one start and parse, not two): build, in DAG order, the
# seeds and models only (no tests, snapshots or unit tests)
SEED_AND_RUN = ("build", "--resource-type", "seed", "--resource-type", "model")


def _dbt(project: Path, *args: str) -> None:
    dbt = Path(sys.executable).with_name("dbt")
    r = subprocess.run([str(dbt), *args, "--project-dir", str(project), "--profiles-dir", str(project)],
                       cwd=project, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:]


def _neutral_slips(raw: str) -> list[Slip]:
    """Slips that change nothing: at the end of the model (the one-file stories), and at the start of
    each top-level CTE's body (a story that moves a CTE carries the slip in the CTE it moves)."""
    from adegen.rewrite.stories.base import Model
    from adegen.rewrite.stories.ctes import top_ctes

    return [_end(raw)] + [Slip(c.body_start, c.body_start, "") for c in top_ctes(Model(raw, "m"))]


def _storied_copy(src: Path, dst: Path) -> Counter:
    """`dst`: the project with every model that has a story rewritten by one (the kind least used so
    far, so every kind that fits somewhere is built), with the files a story adds; how many models
    each kind rewrote."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages", "*.duckdb*"))
    used: Counter = Counter({k.KIND: 0 for k in KINDS})
    paths = sorted((dst / "models").rglob("*.sql"))
    taken = frozenset(p.stem for p in paths)
    for path in paths:
        raw = path.read_text()
        where = Where(path.relative_to(dst).as_posix(), taken)
        fits = [(d, slip) for slip in _neutral_slips(raw) for d in drafts(raw, path.stem, slip, where)
                if compose(raw, slip, d) is not None and (d.story.files or slip == _end(raw))]
        if not fits:
            continue
        order = [k.KIND for k in KINDS]
        pick, slip = min(fits, key=lambda f: (used[f[0].story.kind], order.index(f[0].story.kind)))
        path.write_text(compose(raw, slip, pick))
        for rel, text in pick.story.files:
            assert not (dst / rel).exists(), rel
            (dst / rel).write_text(text)
        used[pick.story.kind] += 1
    return used


def _tables(db: Path) -> dict[str, list]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        names = [r[0] for r in con.execute(
            "select table_name from information_schema.tables where table_schema = 'main' order by 1").fetchall()]
        return {n: sorted(map(repr, con.execute(f'select * from main."{n}"').fetchall())) for n in names}
    finally:
        con.close()


def _jaffle(tmp: Path) -> Path:
    if not (JAFFLE / "dbt_project.yml").is_file():
        pytest.skip("the practice corpus (shared/corpus) is not next to the repository")
    dst = tmp / "intact"
    shutil.copytree(JAFFLE, dst, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages", "*.duckdb*"))
    return dst


def test_stories_change_no_table_of_a_real_project(tmp_path):
    """jaffle_shop (the practice corpus): intact vs every model storied, built by dbt on DuckDB."""
    intact = _jaffle(tmp_path)
    used = _storied_copy(intact, tmp_path / "storied")
    # Its models all have CTEs, so import_ctes (flat models only) fits none; orders' CTEs use a Jinja
    # loop variable set at the top of the file, so extract_cte fits customers alone.
    assert used == {"extract_cte": 1, "import_ctes": 0}, used
    for project in (intact, tmp_path / "storied"):
        _dbt(project, *SEED_AND_RUN)
    a, b = _tables(intact / "jaffle_shop.duckdb"), _tables(tmp_path / "storied" / "jaffle_shop.duckdb")
    assert a.keys() <= b.keys() and len(a) >= 5  # a CTE moved into a model of its own adds a table
    assert [n for n in a if a[n] != b[n]] == []


def test_stories_change_no_table_of_the_example_project(tmp_path, repo_root):
    """The example project (33 models): every kind that fits one of its models, built on DuckDB."""
    src = tmp_path / "intact"
    shutil.copytree(repo_root / "integration_tests", src,
                    ignore=shutil.ignore_patterns("target", "logs", "dbt_packages", "*.duckdb*"))
    (src / "packages.yml").write_text(f"packages:\n  - local: {repo_root}\n")
    used = _storied_copy(src, tmp_path / "storied")
    assert {k for k, n in used.items() if n} == {"import_ctes", "extract_cte"}, used
    for project in (src, tmp_path / "storied"):
        _dbt(project, "deps")
        _dbt(project, *SEED_AND_RUN)
    a, b = _tables(src / "acme.duckdb"), _tables(tmp_path / "storied" / "acme.duckdb")
    assert a.keys() <= b.keys() and len(a) >= 20
    assert len(b) - len(a) == used["extract_cte"] >= 2  # each moved CTE built as a model of its own
    assert [n for n in a if a[n] != b[n]] == []


def test_no_story_moves_a_jinja_statement():
    """A story edit that would cut an `{% endif %}` off its block (seen on a Fivetran package with a
    pass-through CTE under `{% if %}`) is refused: `compose` gives None, the site stays plain."""
    from adegen.rewrite.stories.base import Draft, Edit, Story

    raw = ("with\n\n{% if var('has_a', true) %}\na as (\n    select * from {{ ref('a') }}\n),\n{% endif %}\n\n"
           "b as (\n    select 1 as id\n)\n\nselect b.id from a cross join b\n")
    start, end = raw.index("a as ("), raw.index("\n\nb as (")
    cut = Draft(Story("inline", "Simplify m"), [Edit(start, end, "")], "")  # takes the `{% endif %}` along
    assert compose(raw, _end(raw), cut) is None
    kept = Draft(Story("inline", "Simplify m"), [Edit(start, raw.index("{% endif %}"), "")], "")
    assert compose(raw, _end(raw), kept) is not None


# ------------------------------------------------------------------------------------------------
# a CTE moved into a model of its own (extract_cte): two files, the slip in the new one

DEDUP = """with

payments as (
    select * from {{ ref('stg_payments') }}
),

orders as (
    select * from {{ ref('stg_orders') }}
),

latest as (
    select
        payment_id,
        order_id,
        amount
    from payments
    where status = 'success'
    qualify row_number() over (partition by payment_id order by updated_at desc) = 1
)

select orders.order_id, sum(latest.amount) as paid
from orders
left join latest on orders.order_id = latest.order_id
group by orders.order_id
"""

WHERE = Where("models/marts/fct_paid.sql", frozenset({"fct_paid", "stg_payments", "stg_orders"}))


def _extracted(raw: str, slip: Slip, where: Where = WHERE):
    told = {d.story.kind: d for d in drafts(raw, "fct_paid", slip, where)}
    d = told.get("extract_cte")
    return None if d is None else (compose(raw, slip, d), d.story)


def test_extract_cte_moves_the_slip_into_a_new_model_and_imports_it():
    at = DEDUP.index("    where status = 'success'\n")
    slip = Slip(at, at + len("    where status = 'success'\n"), "")  # the filter lost on the way
    text, story = _extracted(DEDUP, slip)
    (path, added), = story.files
    assert path == "models/marts/int_paid__latest.sql" and story.kind == "extract_cte"
    assert added == ("with\n\npayments as (\n    select * from {{ ref('stg_payments') }}\n)\n\n"
                     "select\n    payment_id,\n    order_id,\n    amount\nfrom payments\n"
                     "qualify row_number() over (partition by payment_id order by updated_at desc) = 1\n")
    # the model imports the new one as it imports the others; `payments`, read only by the moved CTE, goes
    assert "latest as (\n    select * from {{ ref('int_paid__latest') }}\n)" in text
    assert "payments as" not in text and "orders as (\n    select * from {{ ref('stg_orders') }}\n)" in text
    assert text.endswith("left join latest on orders.order_id = latest.order_id\ngroup by orders.order_id\n")


def test_extract_cte_declines_what_could_not_move_unchanged():
    at = DEDUP.index("status = 'success'")
    slip = Slip(at, at, "")
    assert _extracted(DEDUP, slip) is not None
    assert _extracted(DEDUP, slip, Where("models/marts/fct_paid.sql", WHERE.taken | {"int_paid__latest"})) is None
    assert _extracted(DEDUP, Slip(DEDUP.index("sum("), DEDUP.index("sum("), "")) is None  # not in a CTE
    starred = DEDUP.replace("        payment_id,\n        order_id,\n        amount\n", "        *\n")
    assert _extracted(starred, Slip(starred.index("status"), starred.index("status"), "")) is not None  # one relation
    joined = starred.replace("    from payments\n", "    from payments join orders using (order_id)\n")
    assert _extracted(joined, Slip(joined.index("status"), joined.index("status"), "")) is None  # `*` over a join
    chained = DEDUP.replace("from payments\n", "from orders\n").replace(
        "orders as (\n    select * from {{ ref('stg_orders') }}\n)", "orders as (\n    select * from {{ ref('stg_orders') }} where true\n)")
    assert _extracted(chained, Slip(chained.index("status"), chained.index("status"), "")) is None
    assert not [d for d in drafts(DEDUP, "fct_paid", slip) if d.story.files]  # no path: no new file
