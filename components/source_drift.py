"""Reads the live DynamoDB table with pulumi-aws and warns where it drifted from the spec."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_aws as aws

from ddb2bigtable.review.drift import LiveTable, drift
from ddb2bigtable.spec.model import TableSpec


def live_table(result: Any) -> LiveTable:
    """AWS's describe-table vocabulary (as pulumi-aws returns it) into the spec's."""
    ttl = result.ttl
    stream = (result.stream_view_type or "").lower() if result.stream_enabled else "none"
    return LiveTable(
        billing="on_demand" if result.billing_mode == "PAY_PER_REQUEST" else "provisioned",
        reads=int(result.read_capacity or 0),
        writes=int(result.write_capacity or 0),
        replica_regions=tuple(r.region_name for r in result.replicas or ()),
        ttl_attribute=ttl.attribute_name if ttl and ttl.enabled else None,
        gsi_names=tuple(g.name for g in result.global_secondary_indexes or ()),
        stream=stream or "none",
    )


def warn_on_source_drift(table: TableSpec) -> pulumi.Output[list[str]]:
    """Warnings (also logged) for `table`'s live source; an Output so `pulumi up` waits for it."""
    source = table.source
    result = aws.dynamodb.get_table_output(name=source.table, region=source.region)

    def report(live: Any) -> list[str]:
        messages = drift(table.id, source, live_table(live))
        for message in messages:
            pulumi.log.warn(f"source drift: {message}")
        return messages

    return result.apply(report)
