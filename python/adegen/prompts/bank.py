"""The phrase banks: the sentences and words of banks/*.yaml, read once and checked as they are
read. A bank that does not have the shape its reader expects, or a sentence that names a field
not in banks/placeholders.yaml (the fields `fields.fields` fills), stops the import with every
problem listed: a typo in a field would otherwise only rule its sentence out, silently.

`SHAPES` says what each bank holds: a type (str, int, float), a tuple of the strings allowed, a
one-item list (a list of such items), a longer list (a row of exactly those items), or a dict:
keyed by a type ({str: ...}, every key of that type) or by names (exactly those keys).
"""
from __future__ import annotations

import re
import string
from functools import lru_cache
from pathlib import Path

import yaml

FOLDER = Path(__file__).with_name("banks")

_BODY = {str: {str: [str]}}  # per kind, per level or frame, the sentences in order
SHAPES: dict[str, dict] = {
    "bodies": {"bodies": _BODY, "also": [str], "also_column": [str], "also_other": [str],
               "also_other_column": [str], "several": [str]},
    "base": {"leads": _BODY, "whole": _BODY, "follow": _BODY, "exact_now": [str], "exact_then": [str]},
    "asks": {"openers": [{"text": str, "mode": ("none", "sentence", "lead"), "tone": ("any", "data"), "times": int}],
             "none": int, "asks": {str: [str]}, "build": [str], "two_reports": [str]},
    "words": {"acronyms": [str], "abbreviations": {str: str}, "units": [str], "uncountable": [str],
              "metrics": [str], "layer_prefixes": [str], "build_words": [str], "key_suffixes": [str], "name_parts": [str],
              "grains": [str], "not_entities": [str], "singular_verbs": {str: str}, "they": {str: str},
              "factors_up": {int: str}, "factors_down": {int: str}, "rough_factors": [[float, float, str]]},
    "placeholders": {str: {"was": str, "means": str}},
    "mechanisms": {str: {"families": [str], "tokens": [str], "words": [str], "symptom_of": [str]}},
}
# the banks whose strings are sentences with fields in braces
SENTENCES = ("bodies", "base", "asks")


class BankError(ValueError):
    """A bank file that cannot be used as it is."""


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """safe_load that refuses a key given twice (plain YAML keeps the last one, dropping a kind's
    sentences without a word)."""

    def construct_mapping(self, node, deep=False):
        keys = [self.construct_object(k, deep=True) for k, _ in node.value]
        twice = sorted({str(k) for k in keys if keys.count(k) > 1})
        if twice:
            raise BankError(f"line {node.start_mark.line + 1}: {', '.join(twice)} given twice")
        return super().construct_mapping(node, deep)



def read(path: Path) -> dict:
    """A bank file as YAML, unchecked (BankError for a file that is not YAML or repeats a key)."""
    try:
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    except yaml.YAMLError as e:
        raise BankError(f"{path.name}: {e}") from None
    except BankError as e:
        raise BankError(f"{path.name}: {e}") from None
    return doc


def fields_of(text: str) -> list[str]:
    """The fields a sentence names, in order (ValueError for a malformed one: a lone brace, an
    empty or numbered field, a conversion or a format spec)."""
    out = []
    for _, name, spec, conv in string.Formatter().parse(text):
        if name is None:
            continue
        if not re.fullmatch(r"[A-Za-z_]\w*", name) or spec or conv:
            raise ValueError(f"malformed field {{{name}{'!' + conv if conv else ''}{':' + spec if spec else ''}}}")
        out.append(name)
    return out


def problems(name: str, doc, known: set[str] | frozenset[str]) -> list[str]:
    """What is wrong with bank `name`: entries that do not have its shape (SHAPES), and in a bank
    of sentences every field not in `known`."""
    found = _shape(doc, SHAPES[name], name)
    if name in SENTENCES:
        for where, text in _strings(doc, name):
            try:
                unknown = [f for f in fields_of(text) if f not in known]
            except ValueError as e:
                found.append(f"{where}: {e}: {text!r}")
                continue
            found += [f"{where}: unknown field {{{f}}}: {text!r}" for f in unknown]
    return found


def _shape(value, shape, where: str) -> list[str]:
    if isinstance(shape, tuple):
        return [] if value in shape else [f"{where}: {value!r} is not one of {', '.join(shape)}"]
    if isinstance(shape, type):
        ok = isinstance(value, shape) and not isinstance(value, bool) or (shape is float and _number(value))
        return [] if ok else [f"{where}: {value!r} is not a {shape.__name__}"]
    if isinstance(shape, list):
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        if len(shape) == 1:
            return [p for i, v in enumerate(value) for p in _shape(v, shape[0], f"{where}[{i}]")]
        if len(value) != len(shape):
            return [f"{where}: {len(value)} items, not {len(shape)}"]
        return [p for i, (v, s) in enumerate(zip(value, shape)) for p in _shape(v, s, f"{where}[{i}]")]
    if not isinstance(value, dict):
        return [f"{where}: not a mapping"]
    if len(shape) == 1 and isinstance(next(iter(shape)), type):  # {str: ...}: any key of that type
        (key, inner), = shape.items()
        return [p for k, v in value.items()
                for p in (_shape(k, key, f"{where} key") + _shape(v, inner, f"{where}.{k}"))]
    found = [f"{where}: no {k}" for k in shape if k not in value]
    found += [f"{where}: unexpected {k}" for k in value if k not in shape]
    return found + [p for k, v in value.items() if k in shape for p in _shape(v, shape[k], f"{where}.{k}")]


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _strings(value, where: str):
    """(where, text) of every string in a bank."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")


@lru_cache(maxsize=None)
def placeholders(folder: Path = FOLDER) -> dict[str, dict[str, str]]:
    """The documented fields: name -> {was: its name before the banks were data, means: what it holds}."""
    doc = read(folder / "placeholders.yaml")
    found = problems("placeholders", doc, frozenset())
    if found:
        raise BankError("placeholders.yaml:\n  " + "\n  ".join(found))
    return doc


@lru_cache(maxsize=None)
def load(name: str, folder: Path = FOLDER) -> dict:
    """Bank `name` (banks/<name>.yaml), checked; read once. Shared: copy before changing it."""
    doc = read(folder / f"{name}.yaml")
    found = problems(name, doc, frozenset(placeholders(folder)))
    if found:
        raise BankError(f"{name}.yaml:\n  " + "\n  ".join(found))
    return doc


@lru_cache(maxsize=None)
def old_names(text: str) -> str:
    """`text` with its fields under the names they had before the banks were data ({table} ->
    {t}). The shuffle of a sibling's sentence is salted with its template (levels._texts): salted
    with the old spelling, every task keeps the text it had. A change that may alter texts anyway
    can drop this."""
    was = {name: f["was"] for name, f in placeholders().items()}
    return re.sub(r"\{(\w+)\}", lambda m: "{" + was.get(m.group(1), m.group(1)) + "}", text)
