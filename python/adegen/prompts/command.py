"""`--prompt-command CMD`: let an external program (for example one that asks a language model)
write a task's prompts.

CMD runs once per task through the shell, with one JSON document on stdin:

    {"version": 1,
     "task": {"seed", "model", "project", "layer"},
     "diff": [<facts of each measured table, see adegen.facts.measured>],
     "changed_tables": [...],           # the only tables a prompt may name
     "forbidden": [...],                # words and tokens the leak and mechanism checks reject
     "avoid": [...],                    # texts already used: every prompt must differ from them
     "levels": [{"key": "base", "hint": "...", "table": "...", "finding": "...",
                 "adegen_prompt": "..."}, ...]}

and prints either a JSON object `{"base": "...", "medium": "...", "hard": "..."}` (a subset is
fine) or plain text, taken as the `base` prompt. Each text must pass the same checks as adegen's
own (leak, tool words, only changed tables named, not a repeat); a key whose text fails, or every
key when the command fails, times out or prints nothing usable, keeps adegen's prompt. The
per-key `sources` record which was used ("command", or "adegen (command: <why>)").
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace

from adegen.core.shell import run_shell
from adegen.facts.measured import read_table
from adegen.prompts import checks, mechanisms
from adegen.prompts.levels import (LEVELS, PromptRequest, PromptSet, measured_facts, norm, reasons_against,
                                   slip_mechanisms)

HINTS = {
    "base": "Name the table where the symptom shows, the quantity in plain words and the kind of wrong "
            "(too high, blank, duplicated, missing rows, wrong grain), as a person who looked at a "
            "dashboard would. At most one concrete handle a person would type (a business name, a short "
            "id, a date, a round value); quote a value now and what it should be only sometimes, never "
            "a long id or a time to the second. How many are affected in rough words ('most of the "
            "accounts'), if at all. Usually no request: the report is the request; if one, in the "
            "words of the symptom ('one row per account again').",
    "medium": "Less specific, or the symptom as a table further downstream shows it.",
    "hard": "Only the business-level symptom, on the named downstream table(s); no values.",
}
DEFAULT_TIMEOUT = 60.0
MAX_CHARS = 2000


@dataclass(frozen=True)
class PromptCommand:
    command: str
    timeout: float = DEFAULT_TIMEOUT


def document(req: PromptRequest, pset: PromptSet, avoid) -> dict:
    """The JSON document CMD reads on stdin."""
    facts = measured_facts(req)
    changed = sorted({t.table for t in map(read_table, facts)} or {req.table or req.model})
    allowed = {req.model, req.project_name, *changed}
    forbidden = checks.forbidden_tokens(site=req.site, pattern=req.pattern, model_path=req.model_path,
                                        allowed=allowed)
    # words that name how the slip works (the same for every key; a type change may say its type)
    forbidden += [w for w in mechanisms.words_for(slip_mechanisms(req), pset.findings.get("base", "").split(" ", 1)[0])
                  if w not in forbidden]
    return {
        "version": 1,
        "task": {"seed": req.seed, "model": req.model, "project": req.project_name, "layer": req.layer},
        "diff": facts,
        "changed_tables": changed,
        "forbidden": forbidden,
        "avoid": sorted(set(avoid)),
        "levels": [{"key": k, "hint": HINTS[k], "table": (pset.named.get(k) or [None])[0],
                    "tables": pset.named.get(k, []), "finding": pset.findings.get(k),
                    "adegen_prompt": pset.prompts[k]} for k in pset.prompts],
    }


def _run(cmd: PromptCommand, stdin: str) -> tuple[str | None, str]:
    """(stdout, "") or (None, why it failed)."""
    return run_shell(cmd.command, stdin, cmd.timeout)


def parse_output(text: str) -> dict[str, str]:
    """{key: prompt} from the command's stdout (a JSON object, or plain text = base)."""
    text = text.strip()
    if not text:
        return {}
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return {}
        if isinstance(data.get("prompts"), dict):
            data = data["prompts"]
        return {str(k): str(v).strip() for k, v in data.items() if k in LEVELS and isinstance(v, str) and v.strip()}
    return {"base": text}


def apply(cmd: PromptCommand, pset: PromptSet, avoid=frozenset()) -> PromptSet:
    """The task's prompts with the command's texts where they pass every check (pure apart from
    running the command). Keys stay adegen's: the command rewrites them, it cannot add levels the
    data does not support."""
    req = pset.request
    if req is None or not pset.prompts:
        return pset
    others = set(avoid)
    doc = document(req, pset, others)
    out, why = _run(cmd, json.dumps(doc))
    got = parse_output(out) if out is not None else {}
    if out is not None and not got:
        why = "no prompt in its output"
    result = replace(pset, prompts=dict(pset.prompts), sources=dict(pset.sources), named=dict(pset.named),
                     rejected=list(pset.rejected), tables=[])
    taken = {norm(t) for t in others}
    changed = doc["changed_tables"]
    allowed = {req.model, req.project_name, *changed}
    for key in pset.prompts:
        text = got.get(key)
        problem = why if (out is None or not got) else ("no text for this key" if text is None else "")
        if text is not None:
            reasons = reasons_against(text, req, changed, allowed, pset.findings.get(key, "").split(" ", 1)[0])
            if len(text) > MAX_CHARS:
                reasons.append(f"longer than {MAX_CHARS} characters")
            if norm(text) in taken or norm(text) in {norm(result.prompts[k]) for k in result.prompts if k != key}:
                reasons.append("repeats another prompt")
            if reasons:
                result.rejected.append((key, text, reasons))
                problem = "; ".join(reasons)[:200]
        if problem:
            result.sources[key] = f"adegen (command: {problem})"
        else:
            result.prompts[key] = text
            result.sources[key] = "command"
            result.named[key] = checks.names_in(text, changed)
        taken.add(norm(result.prompts[key]))
    for key in result.prompts:
        result.tables += [t for t in result.named.get(key, []) if t not in result.tables]
    return result


def rewrite_proposals(command: str, proposals, avoid=(), progress=lambda s: None,
                      timeout: float = DEFAULT_TIMEOUT) -> None:
    """Run the prompt command for each chosen proposal and update its prompts in place
    (`Proposal.use_prompt_set`: levels, base prompt, its source)."""
    cmd = PromptCommand(command, timeout)
    used = set(avoid)
    for p in proposals:
        pset = getattr(p, "prompt_set", None)
        if pset is None:
            continue
        mine = set(pset.prompts.values())
        new = apply(cmd, pset, (used | {t for q in proposals for t in q.prompts.values()}) - mine)
        p.use_prompt_set(new)
        used |= set(new.prompts.values())
        progress(f"prompt command for {p.model}: " + ", ".join(f"{k} {v}" for k, v in new.sources.items()))
