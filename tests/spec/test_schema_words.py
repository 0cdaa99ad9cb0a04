"""Every pattern in the shipped schemas states its rule in words, so a value that breaks
it gets a message that says what is allowed (not only what the value is for)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ddb2bigtable.spec.schema_check import load_schema


def _patterns(node: Any, path: str) -> Iterator[tuple[str, dict]]:
    if isinstance(node, dict):
        if "pattern" in node:
            yield path, node
        for key, value in node.items():
            yield from _patterns(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _patterns(value, f"{path}/{i}")


@pytest.mark.parametrize("name", ["spec-v1.schema.json", "stage-v1.schema.json"])
def test_every_pattern_has_its_rule_in_words(name):
    patterns = list(_patterns(load_schema(name), ""))
    assert patterns, "the schema has patterns"
    assert [path for path, node in patterns if not node.get("description")] == []
