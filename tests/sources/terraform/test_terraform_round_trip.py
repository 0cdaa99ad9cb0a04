"""specs/shop-global.yaml -> `terraform show -json` state (made here) -> import -> the same plan.

The state carries what the AWS provider's `aws_dynamodb_table` does: keys, billing,
capacity (the table's and each GSI's), replicas, TTL, stream, PITR, class, deletion
protection, tags, and `aws_appautoscaling_target` / `_policy` resources for the table's
reads and writes. What it cannot carry is in NOT_IN_TERRAFORM with the reason, and on top
of what the CloudFormation round trip already lacks; the test sets exactly those fields of
the original as the importer sets them and requires equal tables and an equal prod plan.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from ddb2bigtable.plan.planner import plan_stage
from ddb2bigtable.spec.model import Replica, Spec
from ddb2bigtable.spec.reading import read_spec
from ddb2bigtable.spec.stage import load_stage

from ...conftest import ROOT
from ..cloudformation.test_round_trip import _without_what_templates_lack, key_attribute_types
from ..helpers import import_files

NOT_IN_TERRAFORM = {
    "a replica's own read capacity": "the replica block of aws_dynamodb_table has no capacity override: every "
    "replica takes the home region's units",
}
_ACCOUNT = "123456789012"


def _attributes(s: Any) -> list[dict[str, str]]:
    return [{"name": n, "type": t} for n, t in key_attribute_types(s).items()]


def _projection(projection: Any) -> dict[str, Any]:
    if projection in ("all", "keys_only"):
        return {"projection_type": projection.upper(), "non_key_attributes": []}
    return {"projection_type": "INCLUDE", "non_key_attributes": list(projection)}


def _table(s: Any) -> dict[str, Any]:
    provisioned = s.billing == "provisioned"
    pitr = s.point_in_time_recovery
    return {
        "arn": f"arn:aws:dynamodb:{s.region}:{_ACCOUNT}:table/{s.table}", "name": s.table, "id": s.table,
        "attribute": _attributes(s), "hash_key": s.key.partition.name,
        "range_key": s.key.sort.name if s.key.sort else None,
        "billing_mode": "PROVISIONED" if provisioned else "PAY_PER_REQUEST",
        "read_capacity": s.reads if provisioned else 0, "write_capacity": s.writes if provisioned else 0,
        "global_secondary_index": [{"name": g.name, "hash_key": g.key.partition.name,
                                    "range_key": g.key.sort.name if g.key.sort else None, **_projection(g.projection),
                                    "read_capacity": g.reads or 0, "write_capacity": g.writes or 0} for g in s.gsis],
        "local_secondary_index": [{"name": i.sort.name, "range_key": i.sort.name, **_projection(i.projection)}
                                  for i in s.lsis],
        "ttl": [{"attribute_name": s.ttl.attribute if s.ttl else "", "enabled": s.ttl is not None}],
        "stream_enabled": s.stream != "none", "stream_view_type": "" if s.stream == "none" else s.stream.upper(),
        "point_in_time_recovery": [{"enabled": pitr.enabled, "recovery_period_in_days":
                                    pitr.recovery_period_days if pitr.enabled else None}],
        "table_class": s.table_class.upper(), "deletion_protection_enabled": s.deletion_protection,
        "tags": dict(s.tags), "tags_all": dict(s.tags), "server_side_encryption": [], "import_table": [],
        "replica": [{"region_name": r.region, "kms_key_arn": "", "point_in_time_recovery": pitr.enabled,
                     "propagate_tags": True} for r in s.replicas],
    }


def _resource(kind: str, name: str, values: dict[str, Any]) -> dict[str, Any]:
    return {"address": f"{kind}.{name}", "mode": "managed", "type": kind, "name": name,
            "provider_name": "registry.terraform.io/hashicorp/aws", "schema_version": 0, "values": values,
            "sensitive_values": {}}


def to_state(spec: Spec) -> dict[str, Any]:
    resources = []
    for t in spec.tables:
        s = t.source
        resources.append(_resource("aws_dynamodb_table", t.id, _table(s)))
        if s.autoscaling is None:
            continue
        a = s.autoscaling
        for unit, low, high in (("Read", a.min_reads, a.max_reads), ("Write", a.min_writes, a.max_writes)):
            common = {"service_namespace": "dynamodb", "resource_id": f"table/{s.table}",
                      "scalable_dimension": f"dynamodb:table:{unit}CapacityUnits"}
            name = f"{t.id}_{unit.lower()}s"
            resources.append(_resource("aws_appautoscaling_target", name,
                                       {**common, "min_capacity": low, "max_capacity": high}))
            resources.append(_resource("aws_appautoscaling_policy", name, {
                **common, "name": name, "policy_type": "TargetTrackingScaling",
                "target_tracking_scaling_policy_configuration": [{"target_value": a.target_utilization}]}))
    return {"format_version": "1.0", "terraform_version": "1.9.8", "values": {"root_module": {"resources": resources}}}


def test_shop_global_round_trips_through_terraform_state(tmp_path):
    original = read_spec(ROOT / "specs" / "shop-global.yaml")
    state = tmp_path / "terraform.tfstate.json"
    state.write_text(json.dumps(to_state(original), indent=2))
    got = import_files(tmp_path, state, instance=original.instance.id)
    lacking = _without_what_templates_lack(original, got.spec)
    expected = replace(lacking, tables=tuple(
        replace(t, source=replace(t.source, reads=o.source.reads, writes=o.source.writes,
                                  replicas=tuple(Replica(r.region, None) for r in t.source.replicas)))
        for t, o in zip(lacking.tables, original.tables, strict=True)))
    for mine, theirs in zip(got.spec.tables, expected.tables, strict=True):
        assert mine.id == theirs.id and mine.source == theirs.source, mine.id
    stage = load_stage("prod", ROOT)
    assert plan_stage(stage, [got.spec]) == plan_stage(stage, [expected])
    assert got.table("Orders")["replicas"] == [{"region": "us-west-2"}, {"region": "eu-west-1"}]
    assert got.table("Orders")["autoscaling"]["min_reads"] == 4000
    assert not got.codes("default-region"), "every table's region comes from its ARN"
