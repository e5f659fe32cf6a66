"""Agent prompts written from the measured diff, at three hint levels, with automatic checks.

Entry point: `write_prompts(PromptRequest) -> PromptSet` (pure). `run_command` lets an external
program (for example one that asks a language model) write them instead; its texts must pass the
same checks or adegen's own are kept.

Modules: findings (what the diff shows), words (names -> domain words, rough counts), bank (reads
and checks the phrase banks, banks/*.yaml: sentences, openings, requests, words; the fields a
sentence may name in banks/placeholders.yaml), phrases and phrases_base (the sentences per kind
and level; the base report's frames and handles combined), fields (what fills them), render (the
task's voice and the per-task choices), echoes (whether a request repeats its report), levels
(base / medium / hard), checks (leaks, tool words, named tables), command (the external prompt
command).
"""
from adegen.prompts.checks import description_for, forbidden_tokens, leaks, tool_words
from adegen.prompts.levels import LEVELS, PromptRequest, PromptSet, model_facts, norm, write_prompts

__all__ = ["LEVELS", "PromptRequest", "PromptSet", "write_prompts", "norm", "model_facts", "leaks", "tool_words",
           "forbidden_tokens", "description_for"]
