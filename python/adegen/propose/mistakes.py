"""One mistake, one task: whether a proposal makes the same mistake as another of the run (the
same file left the same way, the same edited lines in another file, or the same pattern on the
same names). Pure functions over proposals."""
from __future__ import annotations

import difflib

from adegen.propose.candidate_sites import decode


def _slip(prop) -> bytes | None:
    """The proposal's own file after the slip alone: a story's neutral edits (adegen.rewrite.stories)
    are no part of the mistake, so a storied task and a pair making the same slip are one mistake."""
    mutant, site = getattr(prop, "mutant", None), getattr(prop, "site", None)
    original = getattr(prop, "original", None)
    if getattr(prop, "story", None) is None or not isinstance(original, bytes) or not hasattr(site, "after"):
        return mutant
    raw = decode(original)
    return (raw[:site.start] + site.after + raw[site.end:]).encode("utf-8", errors="surrogateescape")


def _edits(prop) -> set[tuple[str, bytes]]:
    """(file, its text after the mistake) for every file a proposal changes."""
    return {(prop.model_path, _slip(prop))} | {(s.path, s.mutant) for s in getattr(prop, "siblings", ())}


def _edit_text(prop) -> tuple | None:
    """(pattern, the lines the edit removes, the lines it writes), each line whitespace-normalised:
    the edit as a reader of the diff sees it, wherever the file."""
    original, mutant = getattr(prop, "original", None), _slip(prop)
    if not isinstance(original, bytes) or not isinstance(mutant, bytes):
        return None
    a, b = decode(original).splitlines(), decode(mutant).splitlines()
    removed, added = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            removed += [" ".join(x.split()) for x in a[i1:i2]]
            added += [" ".join(x.split()) for x in b[j1:j2]]
    return (prop.pattern_id, tuple(x for x in removed if x), tuple(x for x in added if x))


def same_mistake(prop, others: list) -> bool:
    """A proposal leaves some file exactly as another task of the run does (a sibling pair and a
    single-file task making its one edit, or two anchors of one upstream conversion), makes the
    very edit another task makes in another file (`where status != 'returned'` added to
    stg_orders and to orders) or the same pattern's edit on the same names (stg_payments's
    conversion repeated in orders and in customers): one mistake, one task."""
    mine, text, said = _edits(prop), _edit_text(prop), _placeholders(prop)
    return any(mine & _edits(o) or (text is not None and text == _edit_text(o))
               or (said is not None and said == _placeholders(o))
               for o in others if getattr(o, "mutant", None) is not None)


def _placeholders(prop) -> tuple | None:
    """(pattern, what the edit's site names: the code filtered out, the upstream model whose
    conversion is repeated, the ref swapped in), or None when it names nothing: the same pattern
    with the same names is the same misunderstanding, in whichever file."""
    said = getattr(getattr(prop, "site", None), "placeholders", None) or {}
    return (prop.pattern_id, tuple(sorted((k, str(v)) for k, v in said.items()))) if said else None
