"""adegen.catalog.symptoms: the one symptom vocabulary that pattern files are validated against."""
from __future__ import annotations

import pytest

from adegen.catalog import patterns
from adegen.catalog import symptoms
from adegen.core.errors import InputError


def test_every_symptom_has_a_plain_meaning():
    assert patterns.SYMPTOMS == symptoms.IDS
    assert "structure_wrong" in symptoms.IDS
    for sid, s in symptoms.SYMPTOMS.items():
        assert s.id == sid and len(s.meaning) > 20 and symptoms.meaning(sid) == s.meaning


def test_shipped_patterns_use_registered_symptoms():
    cat = patterns.load_catalog()
    assert {p.symptom for p in cat.patterns} <= set(symptoms.IDS)


def test_unknown_symptom_is_refused(tmp_path):
    src = (patterns.paths.patterns_dir() / "base.yaml").read_text()
    first = src.index("symptom: ")
    end = src.index("\n", first)
    bad = tmp_path / "bad.yaml"
    bad.write_text(src[:first] + "symptom: looks_odd" + src[end:])
    with pytest.raises(InputError) as err:
        patterns.load_file(bad)
    assert err.value.field.endswith(".symptom") and "structure_wrong" in err.value.message
