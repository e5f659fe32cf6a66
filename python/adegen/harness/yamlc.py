"""`yaml.safe_load` through libyaml when PyYAML has it: the same data (PyYAML's safe constructor
and resolver; only scanning and parsing are in C), several times faster. Grading reads the
dbt_project.yml of a grading app, which holds every `solution__*` seed's column types, several
times per trial."""
from __future__ import annotations

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(text: str):
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader
