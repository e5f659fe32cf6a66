"""The stages of a run on one RunContext (`run.py` holds their order, for the build and bulk mode).

Modules: `run` (the order: the skeleton both commands share and the build's stages), `context`
(RunContext, UI, OutputPlan), `document` (RunDoc: the --json document), `inputs` (load project,
locate ade-bench, check inputs), `validation` (validator start, baseline, screening; `pending`: the
validator while its baseline builds), `discovery` (discover, survey), `propose` (enumerate, screen,
select, pick), `workspace` (project copy, database), `realise` (one task: write, patch check,
prove, commit), `write` (all chosen tasks under the run lock), `summary` (next steps, exit code),
`runtime` and `record` (the run's facts and record); bulk mode's `bulk`, `bulk_units`,
`bulk_loop`, `ledger`, `dataset`, `progress`."""
from adegen.pipeline.context import UI, OutputPlan, RunContext, RunReport

__all__ = ["UI", "OutputPlan", "RunContext", "RunReport"]
