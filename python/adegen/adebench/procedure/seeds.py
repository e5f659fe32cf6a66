"""Solution seed export like ade-bench's `--seed` mode, plus the pitfall checks it lacks.

Export semantics from dbt-labs/ade-bench (main) `ade_bench/harness.py::_extract_duckdb_csv` /
`_extract_table_schema` (Apache-2.0, see resources/NOTICE.txt): `COPY <t> TO
'seeds/solution__<t>.csv' (HEADER, DELIMITER ',')` on the unqualified table name, and `_no-op.txt`
= "\\n\\n" + yaml.dump({"seeds": {project: {"solution__<t>": {"+column_types": {col:
lower(type)}}}}}, default_flow_style=False, sort_keys=False) with hugeint -> bigint.

One difference: ade-bench reads `<t>` unqualified (so in `main`, and under the model's name), while
its tests grade `ref('<t>')`, wherever dbt builds the model. adegen exports from that relation
(`relations`: adegen.dbt.relations), so a model with a custom schema (`main_<schema>`) or an alias
gets the seed of the table its tests compare; the file keeps the model's name (`solution__<t>`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import yaml

from adegen.dbt.relations import DEFAULT_SCHEMA, Relation
from adegen.sql.quote import ident, literal

BIGINT_MIN, BIGINT_MAX = -(2 ** 63), 2 ** 63 - 1


@dataclass
class SeedCheck:
    """Pitfalls found in one solved table."""

    table: str
    rows: int = 0
    columns: list[str] = field(default_factory=list)
    empty_string_columns: list[str] = field(default_factory=list)   # exclude: seed loads "" as NULL
    hugeint_overflow_columns: list[str] = field(default_factory=list)  # reject: dbt seed fails
    nondeterministic_columns: list[str] = field(default_factory=list)  # exclude
    row_count_unstable: bool = False                                   # reject
    problems: list[str] = field(default_factory=list)

    @property
    def exclude_columns(self) -> list[str]:
        out: list[str] = []
        for c in self.empty_string_columns + self.nondeterministic_columns:
            if c not in out:
                out.append(c)
        return out

    @property
    def rejected(self) -> bool:
        return bool(self.hugeint_overflow_columns or self.row_count_unstable
                    or (self.columns and len(self.exclude_columns) >= len(self.columns)))


def _in_main(table: str) -> Relation:
    """Where ade-bench's unqualified name reads a table: `main.<table>` of the file."""
    return Relation(None, DEFAULT_SCHEMA, table)


def table_schema(con, table: str | Relation) -> list[tuple[str, str]]:
    """(column_name, lower(data_type)) like `_extract_table_schema`: of the relation given, or (a
    bare name) of every table of that name, with no schema filter, as upstream reads it."""
    where = f"table_name = {literal(table)}" if isinstance(table, str) else (
        f"lower(table_schema) = lower({literal(table.schema)}) "
        f"AND lower(table_name) = lower({literal(table.identifier)}) AND table_catalog = current_database()")
    rows = con.execute(
        f"SELECT column_name, data_type FROM information_schema.columns WHERE {where} ORDER BY ordinal_position"
    ).fetchall()
    return [(n, t.lower()) for n, t in rows]


def export_solution_seeds(db_file: Path, tables: list[str], project_name: str, seeds_dir: Path,
                          relations: dict[str, Relation] | None = None) -> dict[str, list[tuple[str, str]]]:
    """Write seeds_dir/solution__<t>.csv for each table and seeds_dir/_no-op.txt; each table read
    from `relations[t]` (where dbt built it), else from `main.<t>`.

    Works on a private copy-free read-only connection with TimeZone UTC; rows are sorted (ORDER BY
    ALL), so the same data gives the same bytes."""
    seeds_dir = Path(seeds_dir)
    seeds_dir.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(db_file), read_only=True)
    schemas: dict[str, list[tuple[str, str]]] = {}
    try:
        con.execute("SET TimeZone = 'UTC'")
        for t in tables:
            rel = (relations or {}).get(t) or _in_main(t)
            schemas[t] = table_schema(con, rel)
            csv_path = seeds_dir / f"solution__{t}.csv"
            # ade-bench's COPY writes the scan order, which a threaded build may change from one run
            # to the next; sorted rows make the CSV the same bytes for the same data (grading is
            # set-based, so the order is free). A type DuckDB cannot sort keeps the scan order.
            try:
                con.execute(f"COPY (SELECT * FROM {rel.sql()} ORDER BY ALL) TO {literal(csv_path)} "
                            "(HEADER, DELIMITER ',');")
            except duckdb.Error:
                con.execute(f"COPY {rel.sql()} TO {literal(csv_path)} (HEADER, DELIMITER ',');")
    finally:
        con.close()
    write_no_op(seeds_dir / "_no-op.txt", project_name, schemas)
    return schemas


def no_op_text(project_name: str, schemas: dict[str, list[tuple[str, str]]]) -> str:
    content: dict = {"seeds": {project_name: {}}}
    for table, cols in schemas.items():
        column_types = {}
        for name, typ in cols:
            if typ.lower() == "hugeint":
                typ = "bigint"
            column_types[name] = typ
        content["seeds"][project_name][f"solution__{table}"] = {"+column_types": column_types}
    return "\n\n" + yaml.dump(content, default_flow_style=False, sort_keys=False)


def write_no_op(path: Path, project_name: str, schemas: dict[str, list[tuple[str, str]]]) -> None:
    Path(path).write_text(no_op_text(project_name, schemas))


def check_table(db_file: Path, table: str, *, other_db: Path | None = None,
                relation: Relation | None = None) -> SeedCheck:
    """Find the pitfalls of exporting `table` (read at `relation`, where dbt built it; else
    `main.<table>`): empty strings, hugeint beyond bigint, and (given `other_db`, the same solved
    state built a second time) columns whose values differ."""
    chk = SeedCheck(table=table)
    rel = relation or _in_main(table)
    here = rel.sql()
    con = duckdb.connect(str(db_file), read_only=True)
    try:
        con.execute("SET TimeZone = 'UTC'")
        cols = table_schema(con, rel)
        chk.columns = [c for c, _ in cols]
        chk.rows = con.execute(f"select count(*) from {here}").fetchone()[0]
        for name, typ in cols:
            qn = ident(name)
            if typ in ("varchar", "text", "string") or typ.startswith("varchar"):
                n = con.execute(f"select count(*) from {here} where {qn} = ''").fetchone()[0]
                if n:
                    chk.empty_string_columns.append(name)
                    chk.problems.append(f"{table}.{name}: {n} empty string(s) (dbt seed loads them as NULL)")
            if typ in ("hugeint", "uhugeint", "ubigint"):
                n = con.execute(
                    f"select count(*) from {here} where {qn} < {BIGINT_MIN} or {qn} > {BIGINT_MAX}"
                ).fetchone()[0]
                if n:
                    chk.hugeint_overflow_columns.append(name)
                    chk.problems.append(f"{table}.{name}: {n} value(s) outside the bigint range "
                                        "(dbt seed cannot load them)")
        if other_db is not None:
            con.execute(f"ATTACH {literal(other_db)} AS adegen_other (READ_ONLY)")
            other_cols = {r[0] for r in con.execute(
                "select column_name from information_schema.columns where table_catalog='adegen_other' "
                f"and lower(table_schema) = lower({literal(rel.schema)}) "
                f"and lower(table_name) = lower({literal(rel.identifier)})").fetchall()}
            other_rows = con.execute(f"select count(*) from adegen_other.{here}").fetchone()[0]
            if other_rows != chk.rows or set(chk.columns) != other_cols:
                chk.row_count_unstable = True
                chk.problems.append(f"{table}: two builds of the solved state differ in rows/columns "
                                    f"({chk.rows} vs {other_rows})")
            else:
                chk.nondeterministic_columns = differing_columns(con, here, f"adegen_other.{here}", chk.columns)
                if chk.nondeterministic_columns:
                    chk.problems.append(f"{table}: non-deterministic column(s) "
                                        + ", ".join(chk.nondeterministic_columns))
    finally:
        con.close()
    return chk


def differing_columns(con, a: str, b: str, columns: list[str]) -> list[str]:
    """Columns whose values differ between relations `a` and `b` (same rows and columns), found
    greedily: a column is non-deterministic when the relations are not equal (as multisets) with
    it but become so without it."""
    def diff(cols: list[str]) -> int:
        if not cols:
            return 0
        sel = ", ".join(f"cast({ident(c)} as varchar)" for c in cols)
        return con.execute(
            f"select count(*) from ((select {sel} from {a} except all select {sel} from {b}) "
            f"union all (select {sel} from {b} except all select {sel} from {a}))").fetchone()[0]

    if diff(columns) == 0:
        return []
    bad = [c for c in columns if diff([c])]
    remaining = [c for c in columns if c not in bad]
    # ties (e.g. row_number over equal keys) keep each column's multiset but pair values
    # differently: drop columns one at a time until the rest agree
    while remaining and diff(remaining) != 0:
        for c in list(remaining):
            trial = [x for x in remaining if x != c]
            if diff(trial) < diff(remaining):
                bad.append(c)
                remaining = trial
                break
        else:
            bad.extend(remaining)
            remaining = []
    return bad
