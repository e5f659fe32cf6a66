"""SQL type families (adegen.sql.types): the one place that says what a type holds; the measured facts'
value kinds and the prompt writer's type words both read it."""
from __future__ import annotations

import pytest

from adegen.facts.evidence import value_kind
from adegen.prompts.fields import type_words
from adegen.sql import types

# (type name as DuckDB's DESCRIBE writes it or another database spells it, family, value kind, words)
CASES = [
    ("BIGINT", "integer", "number", "whole numbers"),
    ("INTEGER[]", "integer", "number", "whole numbers"),
    ("UBIGINT", "integer", "number", "whole numbers"),
    ("int4", "integer", "number", "whole numbers"),
    ("DECIMAL(18,3)", "decimal", "number", "decimals"),
    ("DOUBLE", "decimal", "number", "decimals"),
    ("NUMBER(38,0)", "number", "number", "number(38,0)"),
    ("VARCHAR", "text", "text", "text"),
    ("bpchar", "text", "text", "text"),
    ("DATE", "date", "date", "date"),
    ("TIMESTAMP WITH TIME ZONE", "timestamp", "timestamp", "timestamp with time zone"),
    ("datetime", "timestamp", "timestamp", "datetime"),
    ("BOOLEAN", "bool", "bool", "boolean"),
    ("INTERVAL", "other", "other", "interval"),  # not an integer, though it starts with "int"
    ("TIME", "other", "other", "time"),
    ("BLOB", "other", "other", "blob"),
]


@pytest.mark.parametrize("sql_type,family,kind,words", CASES)
def test_one_family_read_by_the_facts_and_the_prompts(sql_type, family, kind, words):
    assert types.family(sql_type) == family and family in types.FAMILIES
    assert value_kind(sql_type) == kind
    assert type_words(sql_type) == words


def test_approximate_numbers():
    assert types.approximate("DOUBLE") and types.approximate("float") and types.approximate("REAL")
    assert not types.approximate("DECIMAL(18,3)") and not types.approximate("BIGINT")
