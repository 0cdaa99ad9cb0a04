"""The plan shows everything `pulumi up` makes: the `_ddb2bigtable_types` table ddb2bigtable adds to
every instance (the record of attribute types) is listed in every format, with its family, GC rule
and why. Before, no plan output mentioned it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ddb2bigtable.plan.model import TYPES_TABLE
from ddb2bigtable.plan.planner import plan_files

from ..conftest import ROOT


def plan_output(fmt: str) -> str:
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "plan", "--stage", "prod", "--format", fmt],
                         cwd=ROOT, capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_json_lists_the_record_of_types_of_every_instance_beside_the_spec_tables():
    document = json.loads(plan_output("json"))
    plan = plan_files(ROOT, "prod")
    for instance, planned in zip(document["instances"], plan.instances, strict=True):
        assert [t["id"] for t in instance["tables"]] == [t.id for t in planned.tables]  # unchanged: the spec's
        (types,) = instance["metadata_tables"]
        assert types["id"] == "_ddb2bigtable_types" and types["deletion_protection"] is True  # prod protects
        (family,) = types["families"]
        assert family["name"] == "a" and family["gc"] == {"max_age_seconds": None, "max_versions": None,
                                                          "mode": "union"}
        assert "every version kept" in family["why"] and "load, replicate and serve" in types["why"]


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_the_table_and_markdown_list_it_per_instance_with_family_gc_rule_and_why(fmt):
    text = plan_output(fmt).replace("\\_", "_")  # markdown escapes the underscores
    instances = plan_files(ROOT, "prod").instances
    rows = [line for line in text.splitlines() if line.lstrip(" |").startswith(TYPES_TABLE.id)
            and "keep everything" in line]
    assert len(rows) == len(instances), rows
    assert all(" a " in row and "yes" in row for row in rows)
    whys = [line for line in text.splitlines() if f"{TYPES_TABLE.id}: made by ddb2bigtable" in line]
    assert len(whys) == len(instances)
