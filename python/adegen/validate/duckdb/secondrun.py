"""Worker side: the start of a screen for an `is_incremental()` slip (issue 52, item 2).

A fresh build never runs the filter, so such a mutant is screened the way its task's setup.sh
runs it: the intact build stands for the first run (the filter is not part of a first run, so the
mutant's first run builds the same tables), the late rows (`laterows.plan`) are inserted into the
raw relation, and `dbt run --select <model>+` runs again over the existing tables. The reference is
the intact project after that same second run (snapshotted), never the fresh build: the expected
table is what a correct incremental model holds after the same sequence. The intact model has to
take every late row (its table gains exactly those rows), else the late rows show nothing a fix
could repair and the mutant is dropped."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from adegen.adebench.procedure import dbfiles
from adegen.core.drops import DropCode
from adegen.dbt import NO_ARTIFACTS
from adegen.sql.quote import ident
from adegen.validate.duckdb import laterows
from adegen.validate.duckdb.intact import dbt_in, model_relations, snapshot
from adegen.validate.duckdb.jobs import Baseline, ScreenJob
from adegen.validate.rules.contract import Observation


@dataclass(frozen=True)
class SecondRun:
    """What the mutant's screen starts from (the app's database then holds the intact build plus
    the late rows): `args`, the second run; `reference`, the intact project's tables after it."""

    args: list
    reference: str
    late: laterows.LateRows


def start(base: Baseline, job: ScreenJob, app: Path, live: Path, sel: dict) -> SecondRun | Observation:
    """Prepare `live`, `app`'s database, for the mutant's second run (the model file in `app` is
    still the intact one), or the drop that says why the slip cannot be shown."""
    model = base.models[job.uid]
    dbfiles.copy_file(Path(base.baseline_db), live)
    raw_only = {(s.lower(), a.lower()) for s, a in model_relations(base.models)}
    con = duckdb.connect(str(live))
    try:
        late = laterows.plan(con, (model["schema"], model["alias"]), (app / job.path).read_text(), raw_only,
                             base.seed_files)
        if isinstance(late, str):
            return Observation.dropped(DropCode.NO_LATE_ROWS, f"no late rows: {late}")
        con.execute(late.sql)  # one INSERT (a seed's CSV lines load the same rows in the task)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    work = Path(job.keep_db).parent
    work.mkdir(parents=True, exist_ok=True)
    first = work / f"{Path(job.keep_db).stem}.late-start.duckdb"
    dbfiles.copy_file(live, first)
    try:
        args = ["run", "--select", f"{model['name']}+"]
        run = dbt_in(app, args, env=NO_ARTIFACTS, timeout=job.budget.seconds)
        if not run.success:
            return Observation.dropped(DropCode.SCREENING_FAILED, "the intact project's second run (after the "
                                       f"late rows) failed: {run.first_error() or run.console[-300:]}")
        reference = work / f"{Path(job.keep_db).stem}.late-reference.duckdb"
        snapshot(live, reference, {u: base.models[u] for u in sel})
        gained = _rows(reference, model) - int(base.rows.get(f"{model['schema']}.{model['alias']}", 0))
        if gained != len(late.keys):
            return Observation.dropped(DropCode.NO_LATE_ROWS, (
                f"no late rows: the intact {model['name']} gained {gained} of the {len(late.keys)} late row(s) on "
                "its second run (a fix could not give the table they should add)"))
        dbfiles.copy_file(first, live)
        return SecondRun(args, str(reference), late)
    finally:
        for p in (first, Path(str(first) + ".wal")):
            p.unlink(missing_ok=True)


def _rows(db: Path, model: dict) -> int:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(f"select count(*) from {ident(model['schema'])}.{ident(model['alias'])}").fetchone()[0]
    finally:
        con.close()
