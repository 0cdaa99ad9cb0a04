"""Small real exports and specs for the advisor's tests: one table, items as plain JSON."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from ddb2bigtable.advise.findings import Finding
from ddb2bigtable.advise.run import advise
from ddb2bigtable.exports.writer import item_from_plain, write_export
from ddb2bigtable.spec.reading import read_spec

WHEN = datetime(2026, 11, 1, tzinfo=UTC)
ARN = "arn:aws:dynamodb:us-east-1:123456789012:table/Things"


def spec_file(tmp: Path, partition: tuple[str, str], sort: tuple[str, str] | None = None,
              mapping: dict[str, Any] | None = None, name: str = "things", table: str = "Things") -> Path:
    """A one-table spec keyed by (name, type) pairs, with an optional `mapping`, of the
    DynamoDB table `table`. It reads 30,000 RCU, more than one node serves, so the one-node
    minimum (`minimum-node`, test_cost.py) is not among the findings the data tests count."""
    key: dict[str, Any] = {"partition": {"name": partition[0], "type": partition[1]}}
    if sort:
        key["sort"] = {"name": sort[0], "type": sort[1]}
    spec: dict[str, Any] = {"id": name, "source": {"table": table, "region": "us-east-1", "key": key,
                                                   "reads": 30000, "writes": 10}}
    if mapping:
        spec["mapping"] = mapping
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "instance": {"id": f"{name}-inst"}, "tables": [spec]}))
    return path


def export_of(tmp: Path, items: Iterable[dict[str, Any]], per_file: int = 1000) -> Path:
    return write_export(tmp / "export", ARN, (item_from_plain(i) for i in items), export_time=WHEN,
                        items_per_file=per_file)


def findings(tmp: Path, items: Iterable[dict[str, Any]], partition: tuple[str, str],
             sort: tuple[str, str] | None = None, mapping: dict[str, Any] | None = None,
             sample: str = "10000", per_file: int = 1000) -> list[Finding]:
    spec = read_spec(spec_file(tmp, partition, sort, mapping))
    return list(advise([spec], export=str(export_of(tmp, items, per_file)), sample=sample).findings)


def codes(found: Iterable[Finding]) -> list[str]:
    return sorted(f.code for f in found)
