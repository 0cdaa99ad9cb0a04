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


def test_capacity_and_ttl_descriptions_say_what_a_dynamodb_user_must_know():
    """The descriptions end up in validate's messages, so they carry what AWS's words hide:
    billing's default, that on-demand needs `peak`, that on-demand rates are request
    units (an eventual read is half a unit), and the TTL attribute's type."""
    source = load_schema("spec-v1.schema.json")["$defs"]["source"]["properties"]
    rate = load_schema("spec-v1.schema.json")["$defs"]["rate"]["properties"]
    assert "default provisioned" in source["billing"]["description"]
    assert "required for on_demand" in source["peak"]["description"]
    assert "RRU/s" in rate["reads_per_second"]["description"]
    assert "half a unit" in rate["reads_per_second"]["description"]
    assert "WRU/s" in rate["writes_per_second"]["description"]
    assert "Number (N) of epoch seconds" in source["ttl"]["properties"]["attribute"]["description"]
