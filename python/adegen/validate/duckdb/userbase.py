"""The user's built tables as the baseline, for a task that ships the user's own database file.

With `--db-path`, a task's `db_dir` names the user's file: ade-bench copies it, model tables and
all, and setup.sh's `dbt run` starts from it. Table and view models are rebuilt whatever the file
holds, but an incremental model whose table is there runs *incrementally*: it merges what its
`is_incremental()` branch selects into the user's table (a mutant whose rows the high-water mark
filters out changes nothing). A fresh build from the raw data cannot show that, which is why such
proofs used to take the full emulation (every script step replayed, twice, per task).

The rule relied on (dbt's, and ade-bench only runs dbt): a `dbt run` computes each selected model
from its upstream relations and, for an incremental model whose relation exists, from that
relation; a model that is not selected keeps its relation, and a model that fails keeps its old
one. Hence, with U the user's file and B = U after one `dbt run` of the intact project (the
baseline, `BASELINE`):

- setup.sh's `dbt run` of a mutant on U builds every model outside `roots+` (the mutated models and
  their descendants) with the intact code from intact upstreams: exactly B's relations;
- inside `roots+` it reads those same upstreams, and U's own relation where a model is incremental
  (or fails and keeps its relation).

So the broken state is B + `dbt run --select roots+` (nothing dropped, no --full-refresh) whenever
U and B hold the same model relations: U is a fixed point of the intact `dbt run` (`stale` is
empty; checked once per run, by row count and an order-free hash of every row, and by view SQL).
Otherwise it is U + setup.sh's whole `dbt run`, per task. Screening builds its mutants the same
way, so a mutant that ade-bench's incremental run would hide is dropped as equivalent before any
proof. The grading after setup (solution.sh, test_setup, seeds, dbt test) is ade-bench's procedure
replayed as for every fast proof, from that broken state; a solution seed that the solved state
does not reproduce fails there.

A seed-based project's setup.sh reloads its seeds before `dbt run`. When the user's file already
holds those CSVs (`dbt seed` on a copy changes none of its seed tables: checked once per run), that
step is a fixed point and the rule above holds as it is; otherwise the project keeps the full
emulation (every script step replayed per task).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from adegen.sql.quote import ident, literal

BASELINE = "your database after one `dbt run` of the intact project (incremental models ran incrementally)"


def held_incremental(models: dict, held: list) -> list[str]:
    """Aliases of the incremental models whose relations the user's file holds."""
    present = {(s.lower(), a.lower()) for s, a in held}
    return sorted(m["alias"] for m in models.values()
                  if m["materialized"] == "incremental" and (m["schema"].lower(), m["alias"].lower()) in present)


def applies(shipped: bool, models: dict, held: list) -> bool:
    """The baseline is built from the user's tables: the tasks ship the user's file and it holds
    incremental model tables (without those, a fresh build equals ade-bench's and stays the rule).
    A seed-based project's setup.sh reloads the seeds (`dbt seed`) before `dbt run`: the caller
    checks that this leaves the file's seed tables as they are (validate.duckdb.intact)."""
    return bool(shipped and held_incremental(models, held))


def _fingerprints(con, cat: str, rels: list[tuple[str, str]]) -> dict[tuple[str, str], tuple]:
    kinds = {(s.lower(), n.lower()): (t, sql) for s, n, t, sql in con.execute(
        "select t.table_schema, t.table_name, t.table_type, v.sql from information_schema.tables t "
        "left join duckdb_views() v on v.database_name = t.table_catalog and v.schema_name = t.table_schema "
        "and v.view_name = t.table_name where t.table_catalog = ?", [cat]).fetchall()}
    out = {}
    for schema, alias in rels:
        kind = kinds.get((schema.lower(), alias.lower()))
        if kind is None:
            out[(schema, alias)] = ("missing",)
        elif kind[0] == "VIEW":
            out[(schema, alias)] = ("view", kind[1])
        else:
            rel = f"{ident(cat)}.{ident(schema)}.{ident(alias)}"
            out[(schema, alias)] = ("table", *con.execute(
                f"select count(*), sum(hash(x)::hugeint) from {rel} as x").fetchone())
    return out


def stale(user_db: Path, built_db: Path, rels: list[tuple[str, str]]) -> list[str]:
    """"schema.alias" of the model relations `rels` that differ between the user's file and the
    baseline built from it (rows, by count and an order-free hash of each row; views by their
    SQL). Both files are only read."""
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH {literal(str(user_db))} AS adegen_user (READ_ONLY)")
        con.execute(f"ATTACH {literal(str(built_db))} AS adegen_built (READ_ONLY)")
        a = _fingerprints(con, "adegen_user", rels)
        b = _fingerprints(con, "adegen_built", rels)
    finally:
        con.close()
    return sorted(f"{s}.{n}" for (s, n) in rels if a[(s, n)] != b[(s, n)])


@dataclass(frozen=True)
class BrokenPlan:
    """How the broken state of a mutant is built: start from `start` (a copy), run dbt `args`."""

    start: str
    args: list
    exact_from_baseline: bool    # False: setup.sh's whole run on the user's file


def broken_plan(baseline_db: str, user_db: str, stale_rels: list, root_names: list[str]) -> BrokenPlan:
    if not stale_rels:
        return BrokenPlan(baseline_db, ["run", "--select", *[f"{n}+" for n in root_names]], True)
    return BrokenPlan(user_db, ["run"], False)
