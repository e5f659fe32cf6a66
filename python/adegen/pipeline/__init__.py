"""The build's stages on one RunContext (see `run.run_build` for the order).

Modules: `context` (RunContext, UI, OutputPlan), `inputs` (load project, ade-bench), `validation`
(validator start, baseline, screening), `discovery` (discover, survey), `propose` (enumerate,
screen, select, pick), `workspace` (project copy, database), `realise` (one task: write, patch
check, prove, commit), `write` (all chosen tasks under the run lock), `summary` (next steps, exit
code)."""
from .context import UI, OutputPlan, RunContext, RunReport

__all__ = ["UI", "OutputPlan", "RunContext", "RunReport"]
