"""Tables serve has never written an attribute to that their record does not name: their
record is not marked yet (bigtable/table_types.py), as a table is until serve's first write
of such an attribute. The session's `served` Scratch table is marked by whichever test
writes one first, so the tests that need a load to record a type before serve writes get
a table of their own here, one per test, from one more serve process."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import count

import pytest

from ddb2bigtable.bigtable.emulator import stop_process
from ddb2bigtable.load.local_stage import up
from ddb2bigtable.spec.model import TableSpec
from ddb2bigtable.spec.reading import read_specs

from ...conftest import write_project
from ..conftest import SCRATCH, STAGE, Served, start_serve

FRESH_INSTANCE = "serve-fresh"
FRESH_TABLES = 8


@dataclass(frozen=True)
class FreshTable:
    name: str  # the DynamoDB name serve answers to
    spec: TableSpec
    arn: str  # an export's table ARN for it


@dataclass
class Fresh:
    served: Served
    _next: Iterator[int]

    def take(self) -> FreshTable:
        """A table no other test used."""
        i = next(self._next)
        (spec,) = read_specs([str(self.served.root / "specs" / "fresh.yaml")])
        return FreshTable(f"Fresh{i}", spec.tables[i], f"arn:aws:dynamodb:us-west-2:123456789012:table/Fresh{i}")


def _fresh_spec() -> str:
    head, table = SCRATCH.split("tables:\n")
    head = head.replace("{id: serve-scratch, display_name: Serve scratch}",
                        f"{{id: {FRESH_INSTANCE}, display_name: Serve fresh}}")
    return head + "tables:\n" + "".join(re.sub(r"\bScratch\b", f"Fresh{i}", table.replace(
        "- id: scratch", f"- id: fresh{i}")) for i in range(FRESH_TABLES))


@pytest.fixture(scope="session")
def fresh(bigtable_emulator, tmp_path_factory) -> Iterator[Fresh]:
    root = tmp_path_factory.mktemp("serve-fresh")
    write_project(root, {"fresh": _fresh_spec()},
                  {"emulator": True, "regions": "home", "deletion_protection": False, "autoscaling": False,
                   "load": {"runner": "local", "export": "exports"}}, stage_name=STAGE)
    result = up(root, STAGE)
    assert result.ok, result
    process, endpoint = start_serve(root, STAGE)
    yield Fresh(Served(root, endpoint, process), count())
    stop_process(process)
