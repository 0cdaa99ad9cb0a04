"""Every pattern in the shipped schemas states its rule in words, so a value that breaks
it gets a message that says what is allowed (not only what the value is for)."""

from __future__ import annotations

import pytest

from ddb2bigtable.spec.schema_check import load_schema

from ..conftest import nodes_with


@pytest.mark.parametrize("name", ["spec-v1.schema.json", "stage-v1.schema.json"])
def test_every_pattern_has_its_rule_in_words(name):
    patterns = list(nodes_with("pattern", load_schema(name)))
    assert patterns, "the schema has patterns"
    assert [path for path, node in patterns if not node.get("description")] == []
