"""specs/shop-global.yaml -> a CloudFormation template (made here) -> import -> the same plan.

The template carries what CloudFormation can: keys, billing, provisioned capacity, auto
scaling bounds and targets, replicas and their read capacity, GSIs, TTL, stream, PITR,
class, deletion protection and tags. What it cannot carry is listed in NOT_IN_TEMPLATE with
the reason; the test replaces exactly those fields of the original by what the importer
puts there (its estimates) and then requires the imported spec's tables, and the prod
stage's whole plan, to be equal.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import yaml

from ddb2bigtable.plan.planner import plan_stage
from ddb2bigtable.sources import estimates
from ddb2bigtable.spec.model import InstanceSpec, Mapping, Rate, Source, SourceAutoscaling, Spec, TableSpec
from ddb2bigtable.spec.reading import read_spec
from ddb2bigtable.spec.stage import load_stage

from ...conftest import ROOT
from ..helpers import import_files

# field -> why a CloudFormation template does not hold it (the importer's estimate replaces it)
NOT_IN_TEMPLATE = {
    "reads/writes of an autoscaled global table": "AWS::DynamoDB::GlobalTable sets write capacity only by auto "
    "scaling, and a replica's reads by a fixed value or by auto scaling: the current units are not in the template, "
    "the importer takes the auto scaling minimum",
    "peak, average": "on-demand traffic is measured (CloudWatch), not declared",
    "item_size_kb, storage_gb, item_count": "the data's size is not part of a definition",
    "read_consistency, write_mode, conditional_writes": "how the application reads and writes is in its code",
    "mapping": "how items become rows is this tool's, not DynamoDB's",
    "instance display_name, labels, storage, row_affinity": "Bigtable settings; `import` writes only the id",
}

PROJECTIONS = {"all": {"ProjectionType": "ALL"}, "keys_only": {"ProjectionType": "KEYS_ONLY"}}


def _key(key) -> list[dict[str, str]]:
    return [{"AttributeName": key.partition.name, "KeyType": "HASH"}] + (
        [{"AttributeName": key.sort.name, "KeyType": "RANGE"}] if key.sort else [])


def _projection(projection) -> dict[str, Any]:
    return PROJECTIONS.get(projection) or {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(projection)}


def key_attribute_types(s: Source) -> dict[str, str]:
    """Every attribute a key of the table or of an index uses, with its type (both round trips)."""
    found = {}
    for key in (s.key, *(g.key for g in s.gsis)):
        for attr in (key.partition, key.sort):
            if attr:
                found[attr.name] = attr.type
    found.update({lsi.sort.name: lsi.sort.type for lsi in s.lsis})
    return found


def _attributes(s: Source) -> list[dict[str, str]]:
    return [{"AttributeName": n, "AttributeType": t} for n, t in key_attribute_types(s).items()]


def _common(s: Source) -> dict[str, Any]:
    props: dict[str, Any] = {"TableName": s.table, "AttributeDefinitions": _attributes(s), "KeySchema": _key(s.key),
                             "BillingMode": "PROVISIONED" if s.billing == "provisioned" else "PAY_PER_REQUEST"}
    if s.stream != "none":
        props["StreamSpecification"] = {"StreamViewType": s.stream.upper()}
    if s.ttl:
        props["TimeToLiveSpecification"] = {"AttributeName": s.ttl.attribute, "Enabled": True}
    return props


def _per_replica(s: Source) -> dict[str, Any]:
    pitr = s.point_in_time_recovery
    return {"DeletionProtectionEnabled": s.deletion_protection, "TableClass": s.table_class.upper(),
            "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": pitr.enabled,
                                                 **({"RecoveryPeriodInDays": pitr.recovery_period_days}
                                                    if pitr.enabled else {})},
            **({"Tags": [{"Key": k, "Value": v} for k, v in s.tags.items()]} if s.tags else {})}


def _global_table(s: Source) -> dict[str, Any]:
    scaling = s.autoscaling
    target = {"TargetValue": scaling.target_utilization}
    props = _common(s)
    props["WriteProvisionedThroughputSettings"] = {"WriteCapacityAutoScalingSettings": {
        "MinCapacity": scaling.min_writes, "MaxCapacity": scaling.max_writes,
        "TargetTrackingScalingPolicyConfiguration": target}}
    props["GlobalSecondaryIndexes"] = [{
        "IndexName": g.name, "KeySchema": _key(g.key), "Projection": _projection(g.projection),
        "WriteProvisionedThroughputSettings": {"WriteCapacityAutoScalingSettings": {
            "MinCapacity": g.writes, "MaxCapacity": g.writes, "TargetTrackingScalingPolicyConfiguration": target}}}
        for g in s.gsis]
    index_reads = [{"IndexName": g.name, "ReadProvisionedThroughputSettings": {"ReadCapacityUnits": g.reads}}
                   for g in s.gsis]
    home = {"Region": s.region, "ReadProvisionedThroughputSettings": {"ReadCapacityAutoScalingSettings": {
        "MinCapacity": scaling.min_reads, "MaxCapacity": scaling.max_reads,
        "TargetTrackingScalingPolicyConfiguration": target}}, "GlobalSecondaryIndexes": index_reads, **_per_replica(s)}
    others = [{"Region": r.region, "GlobalSecondaryIndexes": index_reads, **_per_replica(s),
               **({"ReadProvisionedThroughputSettings": {"ReadCapacityUnits": r.reads}} if r.reads else {})}
              for r in s.replicas]
    props["Replicas"] = [home, *others]
    return {"Type": "AWS::DynamoDB::GlobalTable", "Properties": props}


def _table(s: Source) -> dict[str, Any]:
    props = {**_common(s), **_per_replica(s)}
    if s.billing == "provisioned":
        props["ProvisionedThroughput"] = {"ReadCapacityUnits": s.reads, "WriteCapacityUnits": s.writes}
    if s.gsis:
        props["GlobalSecondaryIndexes"] = [{
            "IndexName": g.name, "KeySchema": _key(g.key), "Projection": _projection(g.projection),
            **({"ProvisionedThroughput": {"ReadCapacityUnits": g.reads, "WriteCapacityUnits": g.writes}}
               if s.billing == "provisioned" else {})} for g in s.gsis]
    return {"Type": "AWS::DynamoDB::Table", "Properties": props}


def to_template(spec: Spec) -> dict[str, Any]:
    resources = {}
    for t in spec.tables:
        s = t.source
        assert not s.lsis and (s.autoscaling is None or s.replicas), "extend the generator for these"
        resources[s.table + "Table"] = _global_table(s) if s.replicas else _table(s)
    return {"AWSTemplateFormatVersion": "2010-09-09", "Resources": resources}


def _without_what_templates_lack(original: Spec, imported: Spec) -> Spec:
    """The original spec with NOT_IN_TEMPLATE's fields set as the importer sets them."""
    tables = []
    for table, got in zip(original.tables, imported.tables, strict=True):
        s = table.source
        changes: dict[str, Any] = {"item_size_kb": 1.0, "storage_gb": 0.0, "item_count": None,
                                   "read_consistency": "eventual", "write_mode": "standard", "conditional_writes": False}
        if s.billing == "on_demand":
            changes.update(peak=Rate(estimates.ON_DEMAND_INITIAL_READS, estimates.ON_DEMAND_INITIAL_WRITES), average=None)
        if s.replicas and s.autoscaling:
            changes.update(reads=s.autoscaling.min_reads, writes=s.autoscaling.min_writes)
        tables.append(TableSpec(table.id, replace(s, **changes), Mapping(), got.location))
    return Spec(imported.path, InstanceSpec(original.instance.id, location=imported.instance.location), tuple(tables))


def _with_index_write_scaling(spec: Spec) -> Spec:
    """A global table's GSI writes are set by auto scaling only: the template's min = max range
    is carried as the index's write autoscaling (#19), which plans the same as fixed writes."""
    def scaled(s: Source) -> Source:
        if not (s.replicas and s.autoscaling):
            return s
        return replace(s, gsis=tuple(replace(g, autoscaling=SourceAutoscaling(
            min_writes=g.writes, max_writes=g.writes, target_utilization=s.autoscaling.target_utilization))
            for g in s.gsis))
    return replace(spec, tables=tuple(replace(t, source=scaled(t.source)) for t in spec.tables))


def test_shop_global_round_trips_through_cloudformation(tmp_path):
    original = read_spec(ROOT / "specs" / "shop-global.yaml")
    template = tmp_path / "shop-global.template.yaml"
    template.write_text(yaml.safe_dump(to_template(original), sort_keys=False))
    got = import_files(tmp_path, template, instance=original.instance.id, region="us-east-1")
    expected = _with_index_write_scaling(_without_what_templates_lack(original, got.spec))
    for mine, theirs in zip(got.spec.tables, expected.tables, strict=True):
        assert mine.id == theirs.id and mine.source == theirs.source, mine.id
    stage = load_stage("prod", ROOT)
    assert plan_stage(stage, [got.spec]) == plan_stage(stage, [expected])
    assert got.table("Orders")["replicas"] == [{"region": "us-west-2", "reads": 6000}, {"region": "eu-west-1"}]
    assert got.table("Orders")["tags"] == {"Team": "commerce", "Cost Center": "CC-4711"}
    assert got.table("Events")["table_class"] == "standard_infrequent_access"
    # the comparison is not vacuous: one carried field changed changes the plan
    changed = replace(expected, tables=(replace(expected.tables[0], source=replace(
        expected.tables[0].source, tags={})), *expected.tables[1:]))
    assert plan_stage(stage, [changed]) != plan_stage(stage, [expected])
