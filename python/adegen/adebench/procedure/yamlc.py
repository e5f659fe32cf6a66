"""`yaml.safe_load` through libyaml when PyYAML has it: the same data (PyYAML's safe constructor
and resolver; only scanning and parsing are in C), several times faster. Grading reads the
dbt_project.yml of a grading app, which holds every `solution__*` seed's column types, several
times per trial."""
from __future__ import annotations

import copy
import functools
from pathlib import Path

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(text: str):
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader


@functools.lru_cache(maxsize=32)
def _load_text(text: str):
    return safe_load(text)


def safe_load_file(path) -> object:
    """safe_load of a file's text, parsed once per distinct text (grading reads the same large
    dbt_project.yml at every step); a fresh copy each call, so callers may change it."""
    return copy.deepcopy(_load_text(Path(path).read_text()))
