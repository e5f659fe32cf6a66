"""The Snowflake emulator's proof (`EmulatorProof`, a validate.proof strategy): ade-bench has no
`--seed` export for Snowflake, so the solution seeds are written by us from the emulator's intact
build (CSV + `_no-op.txt` in ade-bench's format, Snowflake column types); agent none and agent
sage run through the harness emulation (`--db-type=snowflake`), each on a fresh fakesnow server
(validate.snowflake_trial); the sage state must equal the intact build the seeds came from.
Results say "proven on emulator", never "proven on Snowflake" (architecture.md, "Snowflake
proofs on the emulator")."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from adegen.dbt.runner import write_dbt_shim
from adegen.adebench.procedure.seeds import check_table, export_solution_seeds, no_op_text
from adegen.validate.rules.proof import GradedTrials, ProveRequest, SolvedState, TrialSummary, ordered_union
from adegen.validate.snowflake.io import _SEMI_STRUCTURED

EMULATOR_LABEL = "proven on emulator"


@dataclass
class EmulatorRun:
    """The EmulatorValidator's run as its proof strategy sees it: the intact build, where things
    are, and what it does on servers and files (its own methods, handed over)."""

    base: dict                      # the intact build on the emulator (models, types, snapshot_db)
    root: Path                      # the validator's scratch root
    schema: str                     # where a table no model builds would be
    version: str                    # fakesnow's
    project_dir: Path               # the user's project (its installed packages stand in for `dbt deps`)
    pool: Any                       # a concurrent.futures executor for the two trials
    trial: Callable[..., dict]      # EmulatorTrials._trial: one trial on a fresh server
    profiles: Callable[..., Path]   # EmulatorIO._profiles: a profiles.yml pointing at a server
    copy_local: Callable[..., None]  # EmulatorIO._copy_local: snapshot tables into a local file


class EmulatorProof:
    """Seeds from the emulator's intact build; trials on fresh fakesnow servers."""

    name = "emulator"
    grading = "on the emulator"
    body_extra = ("seeds exported from the emulator's intact build (ade-bench has no --seed on "
                  "Snowflake); column types as fakesnow reports them")

    def __init__(self, emu: EmulatorRun, data_file: Path | None):
        self.emu, self.data_file = emu, data_file
        self.label = (f"{EMULATOR_LABEL} (fakesnow {emu.version}, dbt-snowflake; not run on Snowflake: re-check "
                      "with `ade run --db snowflake` before relying on it)")
        self._types: dict[str, dict[str, str]] = {}   # table -> column -> Snowflake type

    def workdir(self, req: ProveRequest) -> Path:
        return self.emu.root / "prove" / req.task_dir.name

    def solved_state(self, req: ProveRequest, work: Path) -> SolvedState:
        """The seeded tables of the intact build, copied into a local DuckDB file."""
        base, tables = self.emu.base, req.tables
        # a task names a model (ade-bench grades ref('<name>')): found where dbt built it
        by_name = {m["name"].lower(): m for m in base["models"].values() if m["materialized"] != "ephemeral"}
        clock = {base["models"][u]["name"].lower(): why for u, why in (base.get("clock") or {}).items()
                 if u in base["models"]}
        problems, rels = [], []
        for t in tables:
            m = by_name.get(t.lower())
            if m is None or f"{m['schema']}.{m['alias']}" not in base["types"]:
                problems.append(f"the intact build has no table {t}")
            if t.lower() in clock:
                problems.append(f"{t} depends on the clock ({clock[t.lower()]}): a solution seed exported today "
                                "fails when the task runs later")
            rels.append((m["schema"], m["alias"]) if m else (self.emu.schema, t))
        if problems:
            return SolvedState(None, problems)
        solved = SolvedState(work / "solved.duckdb")
        self.emu.copy_local(Path(base["snapshot_db"]), rels, tables, solved.db)
        for t, (s, a) in zip(tables, rels):
            self._types[t] = base["types"][f"{s}.{a}"]
            self._check(solved, t, base["types"].get(f"{s}.{a}#logical", {}))
        return solved

    def _check(self, solved: SolvedState, t: str, logical: dict[str, str]) -> None:
        chk = check_table(solved.db, t)
        if chk.rows == 0:
            solved.problems.append(f"{t} is empty in the intact build")
        if chk.rejected:
            solved.problems.extend(chk.problems or [f"{t}: every column would be excluded"])
        semi = [c for c, lt in logical.items() if lt.upper() in _SEMI_STRUCTURED]
        cols = ordered_union(chk.exclude_columns, semi)
        if semi:
            solved.notes.append(f"semi-structured column(s) of {t} excluded ({', '.join(semi)}): their text "
                                "form on fakesnow may differ from Snowflake's")
        if cols:
            solved.excludes[t] = cols
        floats = [c for c, ty in self._types[t].items() if ty == "float"]
        if floats:
            solved.notes.append(f"{t}: FLOAT column(s) {', '.join(floats)} - fakesnow returns FLOAT for some "
                                "expressions where Snowflake returns NUMBER")

    def write_seeds(self, req: ProveRequest, solved: SolvedState) -> None:
        """CSVs exactly as ade-bench's --seed writes them (DuckDB COPY of the exported rows);
        _no-op.txt with the Snowflake column types the emulator reported."""
        tables = req.tables
        if not tables:
            return
        schemas = export_solution_seeds(solved.db, tables, req.spec.project_name, req.task_dir / "seeds")
        sf_schemas = {t: [(c, self._types[t].get(c, "varchar")) for c, _ in cols] for t, cols in schemas.items()}
        (req.task_dir / "seeds" / "_no-op.txt").write_text(no_op_text(req.spec.project_name, sf_schemas))

    def grade(self, req: ProveRequest, solved: SolvedState, excludes: dict) -> GradedTrials:
        from adegen.snowflake_emulator import copy_project

        work = self.workdir(req)
        emu_project = copy_project(req.project_copy, work / "project")
        self.emu.profiles(emu_project, port="{{ env_var('FAKESNOW_PORT') | int }}")
        shim_dir = work / "bin"
        write_dbt_shim(shim_dir, deps_store=self.emu.project_dir, timeout_var="ADEGEN_DBT_TIMEOUT")
        futs = {a: self.emu.pool.submit(self.emu.trial, req.task_dir, emu_project, self.data_file, a, work,
                                        shim_dir, req.tables if a == "sage" else [], req.mode)
                for a in ("none", "sage")}
        res = {a: f.result() for a, f in futs.items()}
        none, sage = (_summary(a, res[a]) for a in ("none", "sage"))
        differs = self._differs(req.tables, solved, res["sage"], excludes) if sage.resolved else []
        return GradedTrials(none, sage, 0.0, "; ".join(differs) or None)

    @staticmethod
    def _differs(tables: list[str], solved: SolvedState, sage: dict, excludes: dict) -> list[str]:
        """How the sage state's seeded tables differ from the intact build (non-deterministic SQL,
        or scripts that do not rebuild them): the seeds would be wrong."""
        if not sage.get("export"):
            return []
        differs = []
        for t in tables:
            try:
                chk = check_table(solved.db, t, other_db=Path(sage["export"]))
            except Exception as exc:  # noqa: BLE001 - the table could not be read back
                differs.append(f"the solved state's {t} could not be compared with the intact build: {exc}")
                continue
            diff_cols = [c for c in chk.nondeterministic_columns if c not in excludes.get(t, [])]
            if chk.row_count_unstable or diff_cols:
                what = ("rows/columns" if chk.row_count_unstable else "column(s) " + ", ".join(diff_cols))
                differs.append(f"the solved state's {t} differs from the intact build in {what} "
                               "(non-deterministic SQL, or the task's scripts do not rebuild it)")
        return differs


def _summary(agent: str, r: dict) -> TrialSummary:
    return TrialSummary(agent, bool(r.get("resolved")), r.get("reason", ""), r.get("expected"), r.get("summary", ""),
                        r.get("tail", ""), dict(r.get("seconds") or {}), 0, list(r.get("unsupported") or []),
                        list(r.get("timeouts") or []), r.get("error"))
