"""What the DuckDB validator sends to its worker processes, and the baseline they send back: plain
picklable dataclasses (the pool runs module-level functions with these as arguments)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from adegen.core.graph import ProjectGraph
from adegen.dbt.relations import ModelRelations
from adegen.sql.quote import ident, literal
from adegen.validate.workers.budget import Budget
from adegen.validate.rules.contract import StorageChoice


@dataclass(frozen=True)
class WorkerConfig:
    """The run-wide facts every worker job needs."""

    root: str                       # <workdir>/adegen-validate
    project_dir: str
    db_name: str
    profile_name: str
    target_name: str
    target_config: dict
    schema: str
    db_source: str | None           # the database the raw data comes from (a copy of it is used)
    db_explicit: bool               # db_dir / ade-bench databases: used even for seed-based projects
    duckdb_settings: dict = field(default_factory=dict)   # memory/temp budget of the scratch profile
    db_shipped: bool = False        # the tasks name db_source itself (--db-path): ade-bench's `dbt run`
                                    # starts from the model tables it holds (validate.userbase)


@dataclass
class Baseline:
    """The intact build, once per run (`Validator.baseline_info()` returns `to_dict()`)."""

    ok: bool = False
    reason: str = ""
    seconds: dict = field(default_factory=dict)
    models: dict = field(default_factory=dict)       # uid -> {name, path, package, schema, alias, database, materialized}
    graph: ProjectGraph = field(default_factory=ProjectGraph)  # the models' DAG (a plain object: asdict copies it whole)
    seed_based: bool = False
    seed_sources: list = field(default_factory=list)
    seeds: list = field(default_factory=list)
    seed_files: dict = field(default_factory=dict)  # "schema.name" (lower case) of a seed -> its CSV in the project
    raw_db: str | None = None          # raw data only (prepare_database writes from it)
    baseline_db: str | None = None     # the intact build
    snapshot_db: str | None = None     # every model relation as a table (the oracle's reference)
    snapshot_tables: list = field(default_factory=list)
    rows: dict = field(default_factory=dict)          # "schema.alias" -> intact row count
    model_seconds: dict = field(default_factory=dict)  # uid -> intact build seconds
    storage: StorageChoice = field(default_factory=StorageChoice)
    user_relations: list = field(default_factory=list)  # model relations the user's database file holds
    db_copy: str = ""         # how the raw copy of the user's file was written (storage conversion: dbcopy)
    from_user: bool = False   # the baseline is the user's database after one intact `dbt run` (validate.userbase)
    user_stale: list = field(default_factory=list)  # model relations that run changed (the file was not up to date)
    nondeterministic: dict = field(default_factory=dict)  # model name -> unstable columns ([]: the rows differ)
    clock: dict = field(default_factory=dict)  # uid -> why the model reads the clock (adegen.dbt.clock): never graded
    # uid -> {"columns": [...], "why": ...}: reads the clock only in those columns (adegen.dbt.clock_columns),
    # graded without them (exclude_columns); [] reads a clock-dependent model but none of its clock columns
    clock_columns: dict = field(default_factory=dict)
    clock_windowable: dict = field(default_factory=dict)  # uid -> clock columns: rows read the clock (lineage)
    clock_spines: dict = field(default_factory=dict)  # uid -> {column: SpineDate}: dates carried from a date spine
    # uid -> {"column", "through", "columns", "why"}: rows grow with the clock, graded through a date
    # (validate.duckdb.clockwindow; moved out of `clock` by the shifted-clock check)
    clock_windows: dict = field(default_factory=dict)
    shifted_days: int = 0  # the shadow build ran this many days ahead (validate.clockcheck; 0: today's clock)
    packages: list = field(default_factory=list)
    package_notes: list = field(default_factory=list)
    output: str = ""
    traceback: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    def relation(self, uid: str) -> tuple[str, str]:
        m = self.models[uid]
        return m["schema"], m["alias"]

    def relations(self) -> ModelRelations:
        """model name -> where dbt builds it (adegen.dbt.relations: custom schemas, aliases)."""
        return ModelRelations.from_models(self.models)

    def uid_of(self, table: str) -> str | None:
        """The model a task's `table_name` names: ade-bench grades it as `ref('<table_name>')`,
        so by model name (never by alias: an aliased model's relation is not its name)."""
        t = table.lower()
        named = [u for u, m in self.models.items() if m["name"].lower() == t]
        return next((u for u in named if self.models[u].get("current", True)), named[0] if named else None)

    def clock_grading(self, uid: str) -> tuple[list[str], str | None]:
        """How model `uid`'s table is compared: the clock columns left out, and the window on its
        rows (a SQL condition; None: every row)."""
        win = self.clock_windows.get(uid)
        if win:
            return list(win.get("columns") or []), window_condition(win["column"], win["through"])
        return list((self.clock_columns.get(uid) or {}).get("columns") or []), None

    def uid_at(self, relation: str) -> str | None:
        """The model built at "schema.identifier" (a snapshot table's name)."""
        schema, _, identifier = relation.lower().partition(".")
        return next((u for u, m in self.models.items()
                     if (m["schema"].lower(), m["alias"].lower()) == (schema, identifier)), None)


def window_condition(column: str, through: str) -> str:
    """The rows of a table graded through a date (validate.duckdb.clockwindow)."""
    return f"{ident(column)} <= cast({literal(through)} as date)"


@dataclass(frozen=True)
class ScreenJob:
    uid: str
    path: str
    text: str
    symptom: str | None
    difficulty: str | None
    keep_db: str            # where an observable screen's database is kept (the broken state)
    budget: Budget
    compiled: str | None = None          # the mutant's SELECT from the compile check, when there is one
    compiled_catalog: str | None = None  # the catalog it was compiled against
    extra: tuple = ()                    # (uid, path, text) of sibling models changed the same way
    second_run: bool = False             # an is_incremental() slip: screened on a run over late rows


@dataclass(frozen=True)
class StateJob:
    """A proof's database state: kind "broken" (setup.sh's result) or "solved_again"."""

    kind: str
    task_dir: str
    project_copy: str
    workdir: str
    mutants: tuple = ()             # (model path, bytes setup.sh's patch leaves) per patched file
    tables: tuple = ()
    project_name: str = ""
    tables_all: tuple = ()          # (model name, Relation) of every model table (fastprove._model_tables)
    budget_seconds: float | None = None


@dataclass(frozen=True)
class GradeJob:
    task_dir: str
    project_copy: str
    broken_db: str
    seed_based: bool
    baseline_db: str
    project_name: str
    tables_all: tuple
    agents: tuple = ("none", "sage")  # graded one after the other in one worker


@dataclass(frozen=True)
class TrialJob:
    """A full emulated trial (the fallback when the fast path does not apply)."""

    task_dir: str
    project_copy: str
    db_file: str
    workdir: str
    mode: str
    agent: str = "sage"
