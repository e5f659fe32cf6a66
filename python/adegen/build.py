"""`python -m adegen.build PROJECT_DIR` (console script `adegen`): Phases 1-4 of the spec.

1. ade-bench detection, discovery summary, survey of existing tasks;
2. proposals (novelty, spread, compile check, screening);
3. generation of the selected tasks (atomic, never overwriting);
4. mandatory patch round trip, then execution proof (unless --no-validate).

The user's project is never modified."""
from __future__ import annotations

import json
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__
from .cli_args import Options, parse_args, parse_pick
from .errors import AdegenError, InputError

EMULATOR_LABEL = "proven on emulator"  # = adegen.validate.snowflake.EMULATOR_LABEL (fakesnow, not Snowflake)


# ---------------------------------------------------------------------------------------------
# console


def _timing(doc: dict, name: str, since: float) -> None:
    doc.setdefault("timings_sec", {})[name] = round(time.monotonic() - since, 1)


class UI:
    """Text to stdout (or stderr in --json mode so stdout stays one JSON document)."""

    def __init__(self, json_mode: bool, interactive: bool):
        self.json_mode = json_mode
        self.interactive = interactive
        self.out = sys.stderr if json_mode else sys.stdout

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def warn(self, text: str) -> None:
        print(f"warning: {text}", file=sys.stderr, flush=True)

    def ask(self, question: str, default: str = "") -> str:
        """Only called when interactive (stdin is a terminal)."""
        print(question, end=" ", file=self.out, flush=True)
        line = sys.stdin.readline()
        if not line:
            return default
        return line.strip() or default


@dataclass
class RunReport:
    warnings: list[str] = field(default_factory=list)
    tasks: list[dict] = field(default_factory=list)
    dropped_tasks: list[dict] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# helpers bound to other modules (contracts in docs/architecture.md)


def _discovery_summary(d: dict) -> str:
    proj = d.get("project", {})
    db = d.get("database", {})
    models = d.get("models", [])
    own = [m for m in models if m.get("package_name", proj.get("name")) == proj.get("name")]
    layers: dict[str, int] = {}
    for m in own:
        layers[m.get("layer", "other")] = layers.get(m.get("layer", "other"), 0) + 1
    layer_txt = ", ".join(f"{n} {k}" for k, n in sorted(layers.items(), key=lambda kv: -kv[1]))
    where = db.get("path") or db.get("database") or "?"
    pk = d.get("packages") or []
    return "\n".join([
        f"Found dbt project: {proj.get('name')}",
        f"Database: {db.get('type')} at {where}",
        f"Models: {len(own)} ({layer_txt})",
        f"Sources: {len(d.get('sources', []))} source tables",
        f"Packages: {', '.join(pk) if pk else 'none'}",
        f"Top task candidates: {len(d.get('candidates', []))} models identified",
    ])


def _render_tests(project, proposals: list, ui: UI) -> dict[int, list[tuple[str, str]]]:
    """Assertion SQL for every selected proposal, in one renderer call (the package's macros).
    A renderer failure is dbt's error on a project discovery already parsed: it ends the run
    (exit 2) rather than writing tasks whose pattern needs an assertion without it."""
    from .assertions import render_assertions, resolve_placeholders

    entries, owners = [], []
    for p in proposals:
        for t in p.assertion_tests:
            try:
                args = resolve_placeholders(t["args"], t["context"])
            except AdegenError as exc:
                ui.warn(f"{p.pattern_id}: assertion {t['type']} skipped ({exc})")
                continue
            entries.append({"type": t["type"], "args": args})
            owners.append(p.number)
    out: dict[int, list[tuple[str, str]]] = {p.number: [] for p in proposals}
    if not entries:
        return out
    rendered = render_assertions(project.project_dir, project.name, entries)
    for owner, item in zip(owners, rendered):
        out[owner].append(item)
    return out


def _print_proposal(ui: UI, p) -> None:
    ui.say(f"[{p.number}] {p.model} ({p.layer}) - {p.pattern_id} ({p.family}), {p.difficulty}")
    ui.say(f"    Target: {p.model_path} line {p.site.line}: {p.why_model}")
    ui.say(f"    Bug: {p.pattern_name}: `{' '.join(str(p.site.before).split())}` -> "
           f"`{' '.join(str(p.site.after).split())}`")
    ui.say(f"    Prompt: {p.prompt}")
    for key, text in list(p.prompts.items())[1:]:
        ui.say(f"    Prompt ({key}): {text}")
    ui.say(f"    Realistic: {p.realistic}")
    if p.assertion_tests:
        ui.say("    Assertion tests: " + ", ".join(t["type"] for t in p.assertion_tests))
    else:
        ui.say("    Assertion tests: none (the AUTO equality test on "
               f"{p.compared_table} catches it)")
    ui.say(f"    Novelty: {p.novelty}")
    if p.observation is not None:
        o = p.observation
        ui.say(f"    Screening: {o.reason}")
    ui.say()


SNOWFLAKE_ENV = ("SNOWFLAKE_ACCOUNT", "SNOWFLAKE_USER", "SNOWFLAKE_PASSWORD", "SNOWFLAKE_ROLE",
                 "SNOWFLAKE_WAREHOUSE")


def snowflake_env_unset(environ=None) -> list[str]:
    """The spec's five SNOWFLAKE_* variables that are unset (or empty) in the environment."""
    import os

    env = os.environ if environ is None else environ
    return [v for v in SNOWFLAKE_ENV if not str(env.get(v, "") or "").strip()]


def _next_steps(opts: Options, project, ade, task_ids: list[str], db_note: str | None) -> list[str]:
    """The spec's "After Generating Files" list with real paths (one line per command)."""
    tasks_dir = shlex.quote(str(opts.output_dir / "tasks"))
    db = project.adapter_type
    steps = []
    if db == "duckdb":
        steps.append("1. Verify database access: " + (db_note or ""))
    else:
        unset = snowflake_env_unset()
        state = (f"NOT SET in this environment: {', '.join(unset)}" if unset
                 else "all five are set in this environment")
        steps.append("1. Verify database access: confirm these environment variables are set ("
                     + state + "):")
        steps += [f"   export {v}=...{'   # unset' if v in unset else ''}" for v in SNOWFLAKE_ENV]
        steps.append(f"   The source database {project.db_name} must exist and be accessible with these "
                     "credentials; ade-bench clones it per task.")
    steps.append("2. Review the generated tests/ directories (custom assertions must name real models and "
                 "columns; names never start with AUTO_).")
    if db == "duckdb":
        steps.append("3. Generate seeds (DuckDB only; tasks proven by adegen already carry seeds/ exported from the same database, and --seed re-exports them inside ade-bench):")
        steps += [f"   ade run {t} --db duckdb --project-type dbt --agent sage --seed --tasks-dir {tasks_dir}"
                  for t in task_ids]
    else:
        steps.append("3. --seed export is DuckDB-only: run without --seed and write test SQL by hand, or seed "
                     "from a DuckDB extract:")
        steps += [f"   ade run {t} --db snowflake --project-type dbt --agent sage --tasks-dir {tasks_dir}"
                  for t in task_ids]
    steps.append("4. Validate by running again without --seed:")
    steps += [f"   ade run {t} --db {db} --project-type dbt --agent sage --tasks-dir {tasks_dir}" for t in task_ids]
    steps.append("5. Test with a real agent:")
    steps += [f"   ade run {t} --db {db} --project-type dbt --agent claude --model claude-sonnet-4-5 "
              f"--tasks-dir {tasks_dir}" for t in task_ids]
    if not ade.found:
        steps.append("Reminder: ade-bench is not installed yet; install it before the tasks can run "
                     "(see the commands printed at the start).")
    return steps


# ---------------------------------------------------------------------------------------------
# main flow


def run(opts: Options, ui: UI) -> tuple[int, dict]:
    from . import survey as sv
    from .output import rewrite_packages
    from .paths import package_root
    from .project import check_duckdb_database, check_project_files, load_project

    t0 = time.monotonic()
    report = RunReport()
    doc: dict[str, Any] = {"adegen_version": __version__, "project_dir": str(opts.project_dir),
                           "output_dir": str(opts.output_dir), "validation": {"requested": opts.validate}}

    # --- inputs (exit 2 before anything is written) ---
    project = load_project(opts.project_dir, profiles_dir=opts.profiles_dir, target=opts.target,
                           db_type=opts.db_type, db_name=opts.db_name)
    if project.adapter_type not in ("duckdb", "snowflake"):
        raise InputError(f"database type {project.adapter_type!r} is not supported (only duckdb and snowflake)",
                         file=project.profiles_path, field="type")
    if opts.db_path is not None and project.adapter_type != "duckdb":
        raise InputError(f"--db-path is for DuckDB only: {project.profiles_path.name} gives type: snowflake for "
                         f"{project.name}, and Snowflake variants have no db_dir (ade-bench reaches the database "
                         f"{project.db_name} with the SNOWFLAKE_* credentials); drop --db-path",
                         field="--db-path")
    if opts.no_copy and opts.project_dir.name != project.name:
        raise InputError(f"with --no-copy the directory name must equal the dbt project name {project.name!r} "
                         f"(ade-bench finds the project as <project_dir>/<project_name>); got "
                         f"{opts.project_dir.name!r}", file=opts.project_dir / "dbt_project.yml", field="name")
    check_project_files(project)  # non-UTF-8 files, no models: exit 2 before dbt runs
    if opts.validate:
        check_duckdb_database(project, opts.db_path)  # missing, corrupt or locked database: exit 2 now
    with tempfile.TemporaryDirectory(prefix="adegen-pkgcheck-") as tmpd:
        # refuses local: packages outside the project
        notes = rewrite_packages(project.project_dir, Path(tmpd), package_root())
    if opts.no_copy and notes:
        ui.warn("--no-copy: the project's packages.yml lists adegen itself; ade-bench runs `dbt deps` on the "
                "project as it is, so remove that entry (or drop --no-copy) before running the tasks")
    doc["validation"]["emulate_snowflake"] = bool(opts.emulate_snowflake)
    if project.adapter_type == "snowflake":
        doc["snowflake_env_unset"] = snowflake_env_unset()
    elif opts.emulate_snowflake:
        ui.warn("--emulate-snowflake has no effect on a DuckDB project")
    doc["project"] = {"name": project.name, "db_type": project.adapter_type, "db_name": project.db_name,
                      "profile": project.profile_name, "target": project.target_name}

    # --- ade-bench ---
    ade = sv.detect_ade_bench(opts.ade_bench_dir)
    doc["ade_bench"] = {"found": ade.found, "path": str(ade.path) if ade.path else None, "how": ade.how}
    if ade.found:
        ui.say(f"ade-bench: found ({ade.how}{', ' + str(ade.path) if ade.path else ''})")
    else:
        ui.say(sv.INSTALL_MESSAGE)
        choice = "skip"
        if opts.yes:
            choice = "install"
        elif ui.interactive:
            ans = ui.ask("Install at ~/.ade-bench [i], pick a different location [p], or skip [s]?", "s").lower()
            choice = {"i": "install", "install": "install", "p": "pick", "pick": "pick"}.get(ans, "skip")
        if choice in ("install", "pick"):
            loc = "~/.ade-bench"
            if choice == "pick" and ui.interactive:
                loc = ui.ask("Location:", "~/.ade-bench") or "~/.ade-bench"
            ui.say("Installing needs the internet, so here are the exact commands to run yourself:")
            for c in sv.install_commands(loc, project.adapter_type):
                ui.say(f"  {c}")
        else:
            ui.say("Skipping the install; task generation works either way.")
        report.warnings.append("ade-bench is not installed")

    # --- validator: forked workers start before any in-process dbt run; the baseline build runs
    # in a worker while discovery runs here ---
    workroot = Path(tempfile.mkdtemp(prefix="adegen-build-"))
    pending = None
    if opts.validate:
        pending, why = _start_validator(project, opts, workroot, ui)
        if pending is None:
            doc["validation"].update({"usable": False, "reason": why})
    else:
        doc["validation"].update({"usable": False, "reason": "--no-validate"})
    try:
        return _after_validator_start(opts, ui, project, ade, pending, workroot, report, doc, t0)
    finally:
        import shutil

        v = pending.validator if pending is not None else None
        if v is not None and hasattr(v, "close"):
            try:
                v.close()
            except Exception:  # noqa: BLE001
                pass
        shutil.rmtree(workroot, ignore_errors=True)


def _after_validator_start(opts, ui, project, ade, pending, workroot, report, doc, t0):
    from . import survey as sv

    # --- discovery ---
    from .discover import run_discovery

    ui.say("Running discovery...")
    t1 = time.monotonic()
    discovery = run_discovery(opts.project_dir, patterns_dirs=opts.patterns_dirs,
                              profiles_dir=opts.profiles_dir, target=opts.target)
    _timing(doc, "discovery", t1)
    if not any(m.get("package_name") == project.name and m.get("enabled", True) for m in discovery.get("models", [])):
        raise InputError("the project has no enabled models (every model is disabled)",
                         file=opts.project_dir / "dbt_project.yml", field="models")
    ui.say(_discovery_summary(discovery))
    ui.say()

    # --- catalog + survey ---
    from .patterns import load_catalog

    catalog = load_catalog(opts.patterns_dirs)
    survey = sv.survey(sv.task_locations(ade, opts.output_dir), project.name, catalog)
    for w in survey.warnings:
        ui.warn(w)
    report.warnings.extend(survey.warnings)
    ui.say(survey.brief())
    ui.say()
    doc["survey"] = {
        "locations": [str(p) for p in survey.locations],
        "tasks": [{"task_id": t.task_id, "location": t.location, "difficulty": t.difficulty,
                   "description": t.description, "prompt": t.prompt, "tags": t.tags,
                   "changes": [{"file": c.file, "start": c.start, "end": c.end, "before": c.before,
                                "after": c.after, "family": c.family} for c in t.changes],
                   "patch_problem": t.patch_problem} for t in survey.tasks],
    }

    validator = None
    if pending is not None:
        t1 = time.monotonic()
        validator, why = pending.result()
        _timing(doc, "baseline_wait", t1)
        doc["validation"].update({"usable": validator is not None, "reason": why})
    return _propose_and_generate(opts, ui, project, discovery, catalog, survey, ade, validator,
                                 workroot, report, doc, t0)


class _PendingValidator:
    """A Validator whose baseline build runs in a background thread (the work itself happens in
    the validator's worker processes)."""

    def __init__(self, validator, ui: UI):
        import threading

        self.validator = validator
        self.ui = ui
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="adegen-baseline", daemon=True)
        self.thread.start()

    def _run(self):
        try:
            self.validator.baseline()
        except BaseException as exc:  # noqa: BLE001 - reported in result()
            self.error = exc

    def result(self):
        self.thread.join()
        if self.error is not None:
            exc = self.error
            self.ui.warn(f"baseline build failed ({exc}); tasks will be patch-validated only (status: dev)")
            return None, f"baseline failed: {exc}"
        return self.validator, "ok"


def _start_validator(project, opts: Options, workroot: Path, ui: UI) -> tuple[_PendingValidator | None, str]:
    progress = lambda s: ui.say(f"  {s}")  # noqa: E731
    try:
        from .validate.factory import make_validator  # type: ignore
    except ImportError:
        make_validator = None
    if make_validator is not None:
        v = make_validator(project, emulate_snowflake=opts.emulate_snowflake, workdir=workroot / "validate",
                           db_dir=opts.db_path, jobs=2, progress=progress)
    else:
        try:
            from .validate import Validator  # type: ignore
        except ImportError as exc:
            ui.warn(f"execution validation unavailable ({exc}); tasks will be patch-validated only (status: dev)")
            return None, f"validator not available: {exc}"
        v = Validator(project, db_dir=opts.db_path, workdir=workroot / "validate", jobs=2, progress=progress)
    ok, why = v.usable()
    if not ok:
        ui.warn(f"execution validation unusable ({why}); tasks will be patch-validated only (status: dev)")
        try:
            v.close()
        except Exception:  # noqa: BLE001
            pass
        return None, why
    pool = getattr(v, "pool", None)
    if callable(pool):
        pool().submit(int).result()  # start the worker processes now, before dbt runs in this process
    ui.say("Building the intact project once in the background (baseline)...")
    return _PendingValidator(v, ui), why


class _ValidatorBroken(Exception):
    pass


def _batched_screen(validator, cands, survey, discovery, opts, project, ui):
    """Screen the likely picks in one parallel batch (Validator.screen_many); later replacements
    are screened one at a time."""
    from . import proposals as pp

    cache: dict[tuple[int, int], Any] = {}
    dry = pp.select(cands, survey, discovery, count=opts.count + 2, project_name=project.name,
                    prefer_db_specific=project.adapter_type == "snowflake")
    items, keys = [], []
    for p in dry.proposals:
        c = p.candidate
        items.append((c.model["unique_id"], c.model["path"], pp.decode(p.mutant), c.pattern))
        keys.append((id(c), p.site.index))
    if items:
        ui.say(f"Screening {len(items)} candidates by execution (mutated model + downstream)...")
        many = getattr(validator, "screen_many", None)
        if many is not None:
            obs = many(items, progress=lambda s: ui.say(f"  {s}"))
        else:
            obs = [validator.screen(*it) for it in items]
        cache.update(zip(keys, obs))
        errors = {str(getattr(o, "example", "") or o.reason) for o in obs}
        if len(obs) >= 3 and all(o.build_error for o in obs) and len(errors) == 1:
            # the same build error for every mutant: the validator, not the mutants, is at fault
            raise _ValidatorBroken(f"every screened mutant failed with the same error: {errors.pop()[:200]}")

    def screen(c, site, text):
        key = (id(c), site.index)
        if key not in cache:
            ui.say(f"Screening {c.pattern.id} on {c.name} (line {site.line})...")
            cache[key] = validator.screen(c.model["unique_id"], c.model["path"], text, c.pattern)
        return cache[key]

    return screen


def _propose_and_generate(opts, ui, project, discovery, catalog, survey, ade, validator, workroot, report,
                          doc, t0) -> tuple[int, dict]:
    from . import proposals as pp

    t1 = time.monotonic()
    cands, excluded = pp.enumerate_candidates(opts.project_dir, discovery, catalog, survey,
                                              project.adapter_type, project.name, warn=ui.warn)
    cands = pp.rank(cands, survey)
    # Rounds: the candidates a selection would try first (4x --count, spread) are compiled in one
    # dbt run, screened in one parallel batch, then selected from; only if too many drop out is
    # the next pool taken. Snowflake projects: at least half the picks use Snowflake-specific patterns
    # (the spec's "prefer Snowflake-specific SQL ... but also include some ANSI SQL bugs").
    prefer_specific = project.adapter_type == "snowflake"
    remaining = list(cands)
    proposals_: list = []
    dropped: list = []
    for _round in range(3):
        if not remaining or len(proposals_) >= opts.count:
            break
        sel = pp.pool(remaining, survey, discovery, size=4 * opts.count, project_name=project.name,
                      prefer_db_specific=prefer_specific)
        if not sel:
            break
        ids = {id(c) for c in sel}
        remaining = [c for c in remaining if id(c) not in ids]
        pp.compile_check(project, sel, workdir=workroot, progress=ui.say)
        screen = None
        if validator is not None:
            try:
                screen = _batched_screen(validator, sel, survey, discovery, opts, project, ui)
            except _ValidatorBroken as exc:
                ui.warn(f"execution validation disabled: {exc}; tasks will be patch-validated only (status: dev)")
                doc["validation"].update({"usable": False, "reason": str(exc)})
                validator = None
        part = pp.select(sel, survey, discovery, count=opts.count - len(proposals_), project_name=project.name,
                         prefer_db_specific=prefer_specific,
                         screen=screen, progress=ui.say, taken=proposals_)
        proposals_ += part.proposals
        dropped += part.dropped
    for i, p in enumerate(proposals_, 1):
        p.number = i
    pset = pp.ProposalSet(proposals_, excluded, dropped, len(cands))
    _timing(doc, "proposals", t1)
    doc["proposals"] = [p.to_json() for p in pset.proposals]
    doc["excluded"] = {"count": len(pset.excluded),
                       "items": [{"model": m, "pattern_id": p, "task_id": t} for m, p, t in pset.excluded],
                       "line": pset.excluded_line()}
    doc["dropped_candidates"] = [{"model": m, "pattern_id": p, "reason": r} for m, p, r in pset.dropped]
    doc["tasks"] = []
    if not pset.proposals:
        ui.say("No task could be proposed: no catalog pattern yields a new, compilable, observable bug.")
        doc["exit_code"] = 1
        return 1, doc
    ui.say(f"Proposed tasks ({len(pset.proposals)}):")
    ui.say()
    for p in pset.proposals:
        _print_proposal(ui, p)
    if pset.excluded_line():
        ui.say(pset.excluded_line())
        ui.say()

    # --- selection ---
    n = len(pset.proposals)
    if opts.pick is not None:
        picked = parse_pick(opts.pick, n)
    elif ui.interactive:
        if opts.yes:
            picked = list(range(n))
        else:
            while True:
                ans = ui.ask(f"Which proposals should I generate? [all / 1,3 / none] (1-{n}):", "all")
                if ans.lower() in ("none", "n", "q", "quit", "no"):
                    picked = []
                    break
                try:
                    picked = parse_pick(ans, n)
                    break
                except InputError as exc:
                    ui.say(f"  {exc.message}")
    else:
        ui.say("Not a terminal and no --pick: nothing was written. Re-run with --pick all (or --pick 1,3).")
        doc["selected"] = []
        doc["exit_code"] = 0
        return 0, doc
    doc["selected"] = [i + 1 for i in picked]
    if not picked:
        ui.say("Nothing selected; nothing was written.")
        doc["exit_code"] = 0
        return 0, doc
    chosen = [pset.proposals[i] for i in picked]
    if opts.prompt_command:
        from .prompts.command import rewrite_proposals

        rewrite_proposals(opts.prompt_command, chosen, avoid={t for task in survey.tasks for t in task.prompt_texts},
                          progress=ui.say)
        doc["proposals"] = [p.to_json() for p in pset.proposals]
    return _generate(opts, ui, project, discovery, chosen, survey, ade, validator, report, doc, t0)


def _generate(opts, ui, project, discovery, chosen, survey, ade, validator, report, doc, t0):
    from . import output as out
    from .paths import package_root

    t1 = time.monotonic()
    tests_by_prop = _render_tests(project, chosen, ui)
    known_models = {m["name"] for m in discovery.get("models", [])}
    tasks_dir = opts.output_dir / "tasks"
    seed_based = bool(validator.seed_based()) if validator is not None else _looks_seed_based(project, discovery)
    written: list[str] = []
    proven_any = False
    lock = out.RunLock(opts.output_dir)
    lock.acquire()
    try:
        out.clean_stale_temp(tasks_dir)
        # project copy
        if opts.no_copy:
            project_dir_field = str(opts.project_dir.parent)
            project_root = opts.project_dir
            ui.warn("--no-copy: task.yaml points at the original project; the output is not self-contained")
            report.warnings.append("--no-copy: output is not self-contained")
        else:
            dest = opts.output_dir / "projects" / project.name
            profiles = out.render_profiles(project.profile_name, project.target_name, project.adapter_type,
                                           project.db_name, project.schema, project.target_config)
            created, notes = out.copy_project(opts.project_dir, dest, profiles_yml=profiles,
                                              adegen_root=package_root())
            for nte in notes:
                ui.say(nte)
            ui.say(f"Project copy: {dest}" + ("" if created else " (existing copy kept)"))
            project_dir_field = str(opts.output_dir / "projects")
            project_root = dest
        # database
        db_note = None
        db_file = None
        if project.adapter_type == "duckdb":
            if opts.db_path is not None:
                db_file = opts.db_path / f"{project.db_name}.duckdb"
                db_note = (f"db_dir is set to {opts.db_path}; it must contain {project.db_name}.duckdb"
                           + ("" if db_file.is_file() else " (it does not yet)"))
            else:
                target = (f"{ade.path}/shared/databases/duckdb/{project.db_name}.duckdb" if ade.path
                          else f"<ade-bench>/shared/databases/duckdb/{project.db_name}.duckdb")
                if validator is not None:
                    try:
                        db_file = validator.prepare_database(opts.output_dir / "databases")
                        db_note = (f"copy {db_file} to {target} (db_dir is not set, so the harness looks there), "
                                   f"or re-run with --db-path {db_file.parent}")
                    except AdegenError as exc:
                        ui.warn(f"could not prepare the database: {exc}")
                if db_note is None:
                    src = project.db_path or f"{project.db_name}.duckdb"
                    db_note = (f"the harness expects {target}; build the project's database ({src}), save it with "
                               "DuckDB storage version v1.0.0 and copy it there, or re-run with --db-path DIR")
        doc["database"] = {"db_file": str(db_file) if db_file else None, "note": db_note}

        number = max(survey.highest_number, out.highest_task_number(tasks_dir, project.name))
        for p in chosen:
            number += 1
            task_id = out.format_task_id(project.name, number)
            result = _generate_one(opts, ui, project, p, task_id, tests_by_prop.get(p.number, []),
                                   project_dir_field, project_root, known_models, seed_based, validator,
                                   db_file, tasks_dir, unproven_reason=_unproven_reason(opts, doc))
            if result is None:
                number -= 1  # the id was not used
                continue
            report.tasks.append(result)
            written.append(task_id)
            proven_any = proven_any or bool(result.get("proven"))
    except KeyboardInterrupt:
        ui.warn("interrupted: unfinished task directories were removed")
        raise
    finally:
        lock.release()
    doc["tasks"] = report.tasks
    _timing(doc, "generation", t1)
    if report.tasks:
        ui.say()
        ui.say("Patch validation:")
        for t in report.tasks:
            ui.say(f"  {t['patch_check']['line']}")
    for t in report.dropped_tasks:
        ui.warn(t)
    steps = _next_steps(opts, project, ade, written, doc.get("database", {}).get("note"))
    doc["next_steps"] = steps
    doc["elapsed_sec"] = round(time.monotonic() - t0, 1)
    if not written:
        ui.say("No task passed validation; nothing was written.")
        doc["exit_code"] = 1
        return 1, doc
    ui.say()
    ui.say(f"Wrote {len(written)} task(s) to {tasks_dir}:")
    for t in report.tasks:
        status = t.get("proof_label", "proven") if t.get("proven") else f"status: dev ({t.get('proof_detail')})"
        ui.say(f"  {t['task_id']}: {t['model']} / {t['pattern_id']} ({t['difficulty']}) - {status}")
    ui.say()
    if project.adapter_type == "snowflake":
        note = _snowflake_proof_note(report.tasks, _unproven_reason(opts, doc), validator is not None)
        doc["validation"]["snowflake_note"] = note
        ui.say(note)
        ui.say()
    if opts.run_harness:
        from . import ade_run

        ui.say("Phase 5 (--run-harness): ade-bench's harness")
        doc["harness_run"] = ade_run.run_tasks(written, project.adapter_type, tasks_dir, say=ui.say)
        for r in doc["harness_run"]["results"]:
            if r["verdict"] != "PASS":
                report.warnings.append(f"{r['task_id']}: harness {r['line']}")
        ui.say()
    ui.say("Next steps:")
    for s in steps:
        ui.say(f"  {s}")
    ui.say("Timings: " + ", ".join(f"{k} {v:.0f}s" for k, v in doc.get("timings_sec", {}).items())
           + f", total {time.monotonic() - t0:.0f}s")
    if validator is not None and not proven_any:
        ui.say("No task could be proven by execution (all are status: dev).")
        doc["exit_code"] = 1
        return 1, doc
    doc["exit_code"] = 0
    return 0, doc


def _snowflake_proof_note(tasks: list[dict], reason: str, validating: bool) -> str:
    """The summary's word on Snowflake tasks: proven on the emulator (never "on Snowflake"), or
    unproven and why (the validator factory's reason)."""
    proven = [t["task_id"] for t in tasks if t.get("proven")]
    unproven = [t["task_id"] for t in tasks if not t.get("proven")]
    parts = []
    if proven:
        parts.append(f"{len(proven)} Snowflake task(s) {EMULATOR_LABEL} (fakesnow, not a Snowflake account): "
                     f"{', '.join(proven)}; re-check them with `ade run --db snowflake` before relying on them.")
    if unproven:
        why = f"Snowflake tasks are unproven: {reason}" if not validating else "see each task's status line above"
        parts.append(f"{len(unproven)} Snowflake task(s) written with status: dev and UNPROVEN "
                     f"({', '.join(unproven)}): {why}.")
    return " ".join(parts)


def _looks_seed_based(project, discovery) -> bool:
    """Without a validator: raw data comes from `dbt seed` when a model depends on a seed or a
    source's identifier is the name of a seed CSV of the project."""
    if any(str(d).startswith("seed.") for m in discovery.get("models", []) for d in m.get("depends_on", [])):
        return True
    stems = set()
    for sp in project.seed_paths or ["seeds"]:
        d = Path(project.project_dir) / sp
        if d.is_dir():
            stems |= {p.stem.lower() for p in d.rglob("*.csv")}
    return any(str(s.get("identifier") or s.get("table") or "").lower() in stems
               for s in discovery.get("sources", []))


def _unproven_reason(opts, doc: dict) -> str:
    """Why tasks of this run cannot be proven (the validator factory's reason), for status: dev."""
    if not opts.validate:
        return "--no-validate"
    why = str((doc.get("validation") or {}).get("reason") or "execution validation unavailable")
    prefix = "Snowflake tasks are unproven: "
    return why[len(prefix):] if why.startswith(prefix) else why


def _generate_one(opts, ui, project, p, task_id, tests, project_dir_field, project_root, known_models,
                  seed_based, validator, db_file, tasks_dir, unproven_reason: str = "--no-validate"
                  ) -> dict | None:
    from . import output as out
    from .patchcheck import check_task
    from .taskgen import TaskSpec, build_task_files, unified_diff

    setup_patch = unified_diff(p.original, p.mutant, p.model_path)
    solution_patch = unified_diff(p.mutant, p.original, p.model_path)
    spec = TaskSpec(
        task_id=task_id, description=p.description, prompt=p.prompt, difficulty=p.difficulty, tags=p.tags,
        test_setup_models=p.test_setup_models, solution_tables=[p.compared_table],
        db_type=project.adapter_type, db_name=project.db_name, project_name=project.name,
        project_dir=project_dir_field, db_dir=str(opts.db_path) if opts.db_path else None,
        seed_based=seed_based, status="ready" if validator is not None else "dev",
        solution_rebuild=p.solution_rebuild,
    )
    if seed_based:
        spec.max_test_timeout_sec = 120
    files = build_task_files(spec, setup_patch, solution_patch, tests, build_may_fail=p.build_error)
    writer = out.TaskWriter(tasks_dir, task_id)
    try:
        writer.write(files.files)
        check = check_task(project_root, writer.dir, task_id, p.model_path, p.original, p.mutant,
                           p.test_setup_models + [p.compared_table], known_models)
        if not check.ok:
            ui.warn(f"{task_id} dropped: {check.line()}")
            writer.discard()
            return None
        proven, detail, proof_json = False, f"unproven: {unproven_reason}", None
        if validator is not None:
            if db_file is None and project.adapter_type == "duckdb":
                detail = "unproven: no database file to prove against"
            else:
                ui.say(f"Proving {task_id} (broken must fail, solved must pass)...")
                try:
                    proof = validator.prove(writer.dir, project_root, db_file)
                    proof_json = {"ok": bool(proof.ok), "broken_fails": bool(proof.broken_fails),
                                  "solved_passes": bool(proof.solved_passes), "seeds": list(proof.seeds),
                                  "expected_tests": int(proof.expected_tests), "detail": str(proof.detail)}
                    proven = bool(proof.ok)
                    if not proven:
                        detail = f"unproven: {proof.detail}"
                    elif project.adapter_type == "snowflake":
                        detail = EMULATOR_LABEL  # fakesnow, never "proven on Snowflake"
                    else:
                        detail = "proven"
                    if project.adapter_type == "snowflake":
                        proof_json["on"] = "emulator"
                except AdegenError as exc:
                    detail = f"unproven: {exc}"
        if not proven:
            _set_status_dev(writer.dir / "task.yaml")
        final = writer.commit()
    except BaseException:
        writer.discard()
        raise
    return {
        "task_id": task_id, "path": str(final), "model": p.model, "pattern_id": p.pattern_id,
        "family": p.family, "difficulty": p.difficulty, "proposal": p.number,
        "status": "ready" if proven else "dev", "proven": proven, "proof_detail": detail, "proof": proof_json,
        "proof_label": (detail if proven else "unproven"),
        "patch_check": {"setup": check.setup, "solution": check.solution, "roundtrip": check.roundtrip,
                        "models": check.models_ok, "line": check.line()},
        "files": sorted(str(Path(final, k).relative_to(final)) for k in files.files),
    }


def _set_status_dev(task_yaml: Path) -> None:
    text = task_yaml.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith("status:"):
            lines[i] = "status: dev\n"
            break
    task_yaml.write_text("".join(lines), encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# entry point


def main(argv: list[str] | None = None) -> int:
    """The one error boundary of the command: a problem the user can fix ends with one message
    (`adegen: error: ...`, exit 2 for bad input), Ctrl-C with exit 130 (unfinished task dirs are
    removed on the way out), anything unexpected with one line and exit 1 (`ADEGEN_DEBUG=1` adds
    the traceback). No traceback otherwise."""
    import os

    json_mode = "--json" in (argv if argv is not None else sys.argv[1:])
    previous_hook = sys.unraisablehook

    def unraisable(args):  # a Ctrl-C that landed in a finalizer: no "Exception ignored" traceback,
        if isinstance(args.exc_value, KeyboardInterrupt):  # and not lost either: re-delivered to the
            import _thread  # main thread once this hook has returned
            import threading

            threading.Timer(0.05, _thread.interrupt_main).start()
            return
        previous_hook(args)

    sys.unraisablehook = unraisable
    try:
        opts = parse_args(argv)
        interactive = sys.stdin.isatty() and opts.pick is None
        code, doc = run(opts, UI(opts.json, interactive))
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        print("adegen: interrupted; nothing half-written was left behind", file=sys.stderr)
        return 130
    except AdegenError as exc:
        error, code = exc.render(), exc.exit_code
    except OSError as exc:  # e.g. a disk that fills up or a directory that turns read-only mid-run
        where = f"{exc.filename}: " if exc.filename else ""
        error, code = f"{where}{exc.strerror or exc}", 1
    except Exception as exc:  # noqa: BLE001 - a bug: one line, the traceback on request
        if os.environ.get("ADEGEN_DEBUG"):
            import traceback

            traceback.print_exc()
        error, code = (f"internal error: {type(exc).__name__}: {exc} (re-run with ADEGEN_DEBUG=1 for the "
                       "traceback)"), 1
    else:
        if opts.json:
            print(json.dumps(doc, indent=2, default=str))
        return code
    print(f"adegen: error: {error}", file=sys.stderr)
    if json_mode:
        print(json.dumps({"adegen_version": __version__, "error": error, "exit_code": code}))
    return code


def exit_with(code: int) -> None:
    """sys.exit(code) once main() has returned: the outcome is final, so a Ctrl-C during interpreter
    teardown is ignored (it would end the process by SIGINT, without a message); after a handled
    Ctrl-C exit 130 at once, so an interrupt dbt or Jinja saw first cannot re-kill the process."""
    import os
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if code == 130:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    sys.exit(code)


def cli() -> None:
    """The `adegen` console script: the same command and exit guarantees as `python -m adegen.build`."""
    exit_with(main())


if __name__ == "__main__":
    cli()
