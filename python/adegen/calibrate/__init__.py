"""Measured difficulty: run a coding agent (or the built-in search) on generated tasks the way
ade-bench would and record whether it solved each one and what it cost.

    python -m adegen.calibrate OUTPUT_DIR --agent-command CMD [--runs N] [--timeout S] [--key K]
                               [--tasks ID ...] [--jobs J]
    python -m adegen.calibrate OUTPUT_DIR --prepare DIR [--key K] [--tasks ID ...]   (any solver)
    python -m adegen.calibrate OUTPUT_DIR --grade DIR [--solver NAME]

Modules, one job each: `tasks` (an output directory's tasks: prompts, project, database),
`sandbox` (the broken state prepared and graded as the proof does, then removed), `agent` (the
command template, its placeholders, the process group killed at the timeout, token/turn counts),
`search` (`builtin:search`, the no-model baseline), `diff` (what the agent changed), `measure`
(the measured difficulty and its label; pure), `runner` (the loop, calibration.jsonl), `handoff`
(sandboxes laid out for any solver, people included, and what it left graded as a run), `apply`
(measured difficulty into tasks.jsonl), `__main__` (the command line). Nothing is imported here, so
the review page can read `measure` without loading the rest."""
