"""Discovery's payload check (no dbt): fastjsonschema decides, jsonschema words the error, and the two
agree on discovery.schema.json - on the example's payload (the golden file) and on every one-value
change of it a broken macro could make."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest

from adegen.core.errors import DbtError
from adegen.discover import payload as P

GOLDEN = Path(__file__).parent / "golden" / "discovery_acme.json"
ODD_VALUES = (None, True, False, 0, -1, 2.0, 2.5, "", "x", "model.x", "dag_end", [], ["a", "a"], [1], {}, {"x": 1})


@pytest.fixture(scope="module")
def good() -> dict:
    doc = json.loads(GOLDEN.read_text())
    doc["project"]["dbt_version"] = "1.11.0"  # the golden file leaves out what varies between machines
    return doc


def _leaves(x, path=()):
    """Every place of the payload: each value of each mapping and list (lists keep 3 of their items)."""
    items = x.items() if isinstance(x, dict) else enumerate(x[:3]) if isinstance(x, list) else ()
    for k, v in items:
        yield path + (k,)
        yield from _leaves(v, path + (k,))


def _set(doc, path, value):
    out = copy.deepcopy(doc)
    node = out
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return out


def _fast_ok(doc) -> bool:
    import fastjsonschema

    try:
        P._checkers()[0](doc)
        return True
    except fastjsonschema.JsonSchemaValueException:
        return False


def test_the_example_payload_is_valid(good):
    P.validate_payload(good)
    assert _fast_ok(good)


def test_fastjsonschema_and_jsonschema_agree_on_every_one_value_change(good):
    full = jsonschema.Draft202012Validator(P.schema())
    models = good["models"][:2]
    small = {**good, "models": models, "candidates": good["candidates"][:2]}
    changed = 0
    for path in _leaves(small):
        for value in ODD_VALUES:
            doc = _set(small, path, value)
            assert _fast_ok(doc) == full.is_valid(doc), (path, value)
            changed += 1
    for extra in ("surprise", "layer"):  # an unknown key, at the top and in a model
        assert not _fast_ok({**small, extra: 1}) and not full.is_valid({**small, extra: 1})
    assert changed > 1000


def test_an_invalid_payload_gets_jsonschemas_message(good):
    doc = _set(good, ("models", 1, "depth"), -1)
    with pytest.raises(DbtError) as e:
        P.validate_payload(doc)
    assert str(e.value) == "discovery payload does not match discovery.schema.json at models/1/depth: " \
                           "-1 is less than the minimum of 0"
    with pytest.raises(DbtError, match=r"at \(top\): 'macros' is a required property"):
        P.validate_payload({k: v for k, v in good.items() if k != "macros"})
