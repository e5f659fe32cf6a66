"""The review page of an output directory: `report.html`, one self-contained static file.

`write_report(output_dir, run_doc=None)` reads what is on disk and writes
`<output_dir>/report.html` (atomically); `python -m adegen.report OUTPUT_DIR` does the same from
the command line. The page works from task folders alone (older runs, tasks written by other
tools) and shows more where a run record is there.

What is read
------------
Task folders, `<output_dir>/tasks/<id>/` (ade-bench's format): `task.yaml` (task_id, status,
description, prompts[{key, prompt}], difficulty, tags, solution_seeds, variants[0].project_name /
db_type / db_name), `setup/changes.patch`, `solutions/changes.patch`, `tests/*.sql`,
`seeds/solution__<table>.csv` and `seeds/_no-op.txt`.

Run records, `<output_dir>/.adegen/runs/<UTC timestamp>-<pid>.json` (written by the build and bulk
commands; file names sort by time). Every field is optional; a record the page cannot read is
named in the page's warnings and skipped. The fields read (RUN RECORD, version 1):

    run_id            str   the file's stem (else the file name)
    command           str   "build" | "bulk"
    started_at        str   ISO 8601 UTC;  finished_at  str
    -- every key of the --json document (python/adegen/schemas/build.schema.json), of which:
    project           {name, db_type, db_name, profile, target}
    database          {db_file, note}
    validation        {requested, usable, reason}
    timings_sec       {phase: seconds};  elapsed_sec  number
    dropped_candidates [{model, pattern_id, reason}]
    dropped_by_reason {reason: count}        (bulk runs; else counted from dropped_candidates)
    proposals         [{number, layer, pattern_name, prompt, screening{...}, ...}]
    tasks             [{task_id, model, pattern_id, family, difficulty, status, proven,
                        proof_detail, proof{ok, broken_fails, solved_passes, detail,
                        seconds{phase: s}}, proposal (number into proposals),
                        -- added by the run record:
                        layer, model_path, pattern_name,
                        prompts [{key, prompt}],
                        observation {compared_table, rows_differing, rows_total,
                                     columns_differ[], changed_tables{table: DAG distance},
                                     tables{table: {rows_differing, rows_total}} (optional),
                                     example, details{key, example_key_value, example_column,
                                     example_observed, example_expected, changed_columns{col: n},
                                     missing_rows, extra_rows, rows_intact, rows_broken}},
                        proof_seconds number}]
    graph             {models: [{name, layer, unique_id?}], edges: [[parent, child], ...]}
                      (the discovery graph; `graph_from_discovery(payload)` builds it)

`<output_dir>/calibration.jsonl` (written by `python -m adegen.calibrate` and bulk mode's
`--calibrate`): one row per agent run; a task's measured difficulty is the summary of its newest
calibration (`adegen.report.calibration.by_task`), shown next to the build's guess.

A task's facts come from the newest record naming it, a model's layer from any record's graph.
Without a record the page still shows each task's id, status, prompts, diff, tests and seeds;
model and family are then read from the setup patch (family inferred like the survey does),
and impact, proof seconds and the DAG say they were not recorded. `--project DIR` on the command
line draws the DAGs from a fresh discovery of DIR instead.
"""
from __future__ import annotations

from adegen.report.records import RECORDS_DIR, graph_from_discovery, load_records
from adegen.report.render import render_report, write_report

__all__ = ["RECORDS_DIR", "graph_from_discovery", "load_records", "render_report",
           "write_report"]
