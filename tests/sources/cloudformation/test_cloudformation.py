"""CloudFormation / SAM templates -> spec: AWS's sample templates, an AWS sample's table
with Application Auto Scaling and its global-table version, and SAM SimpleTables, checked
field by field (tests/fixtures/README.md names where each comes from)."""

from __future__ import annotations

from ..helpers import FIXTURES, import_files

HERE = FIXTURES / "cloudformation"


def test_aws_sample_dynamodb_table_with_a_parameter_without_default(tmp_path):
    got = import_files(tmp_path, HERE / "DynamoDB_Table.yaml")
    source = got.table("myDynamoDBTable")
    assert source["key"] == {"partition": {"name": "HashKeyElementName", "type": "S"}}
    assert any("parameter HashKeyElementName has no Default: pass --parameter HashKeyElementName=VALUE" in m
               for m in got.codes("estimate"))
    assert (source["billing"], source["reads"], source["writes"]) == ("provisioned", 5, 10)
    assert source["point_in_time_recovery"] == {"enabled": True}
    assert (source["stream"], source["table_class"], source["deletion_protection"]) == ("none", "standard", False)
    assert any("<stack>-myDynamoDBTable-<random>" in m for m in got.codes("estimate"))
    assert got.codes("default-region")

    given = import_files(tmp_path, HERE / "DynamoDB_Table.yaml", region="eu-west-1",
                         parameters=(("HashKeyElementName", "isbn"), ("ReadCapacityUnits", "50")))
    source = given.table("myDynamoDBTable")
    assert source["key"] == {"partition": {"name": "isbn", "type": "S"}}
    assert (source["region"], source["reads"], source["writes"]) == ("eu-west-1", 50, 10)
    assert not given.codes("default-region")
    assert "key.partition" not in " ".join(n.subject for n in given.notices)


def test_aws_sample_secondary_indexes_json(tmp_path):
    got = import_files(tmp_path, HERE / "DynamoDB_Secondary_Indexes.json")
    source = got.table("TableOfBooks")
    assert source["key"] == {"partition": {"name": "Category", "type": "S"}, "sort": {"name": "Title", "type": "S"}}
    assert (source["reads"], source["writes"]) == (5, 10)
    assert source["gsis"] == [{"name": "TitleIndex", "key": {"partition": {"name": "Title", "type": "S"}},
                               "projection": "keys_only", "reads": 5, "writes": 10}]
    assert source["lsis"] == [{"name": "LanguageIndex", "sort": {"name": "Language", "type": "S"},
                               "projection": "keys_only"}]
    assert source["point_in_time_recovery"] == {"enabled": True}
    assert "# CloudFormation TableOfBooks.Properties.GlobalSecondaryIndexes[0].ProvisionedThroughput.ReadCapacityUnits" \
        in got.text


def test_a_table_with_scalable_targets_and_policies(tmp_path):
    got = import_files(tmp_path, HERE / "global-table-1-initial.yaml", region="us-east-1")
    source = got.table("CfnTestPrices")
    assert source["key"] == {"partition": {"name": "priceId", "type": "S"}, "sort": {"name": "date", "type": "S"}}
    assert (source["reads"], source["writes"]) == (10, 10)
    assert source["autoscaling"] == {"min_reads": 10, "max_reads": 20, "min_writes": 10, "max_writes": 20,
                                     "target_utilization": 70.0}
    assert "# CloudFormation TableReadCapacityScalableTarget.Properties.MinCapacity" in got.text
    assert source["stream"] == "keys_only"
    assert got.spec.tables[0].source.autoscaling is not None


def test_a_global_table_with_per_replica_autoscaling(tmp_path):
    got = import_files(tmp_path, HERE / "global-table-6-test-scaling.yaml", region="us-east-1")
    source = got.table("CfnTestPrices")
    assert source["region"] == "us-east-1" and not got.codes("default-region")
    assert source["autoscaling"] == {"min_reads": 12, "max_reads": 22, "min_writes": 12, "max_writes": 22,
                                     "target_utilization": 72.0}
    assert (source["reads"], source["writes"]) == (12, 12)  # the floors: a global table's template has no current units
    assert any(m.startswith("12 is an estimate: the auto scaling minimum") for m in got.codes("estimate"))
    # the replica's own read auto scaling is a replica field since #19
    assert source["replicas"] == [{"region": "us-east-2", "reads": 13,
                                   "autoscaling": {"min_reads": 13, "max_reads": 23, "target_utilization": 73.0}}]
    assert not any("auto scaling" in m for m in got.codes("not-in-spec"))
    assert source["deletion_protection"] is True and source["stream"] == "keys_only"

    other = import_files(tmp_path, HERE / "global-table-6-test-scaling.yaml", region="us-east-2")
    source = other.table("CfnTestPrices")
    assert source["region"] == "us-east-2" and source["replicas"] == [
        {"region": "us-east-1", "reads": 12, "autoscaling": {"min_reads": 12, "max_reads": 22, "target_utilization": 72.0}}]
    assert source["autoscaling"]["min_reads"] == 13 and source["autoscaling"]["read_target_utilization"] == 73.0
    assert source["autoscaling"]["write_target_utilization"] == 72.0


def test_sam_simple_tables(tmp_path):
    got = import_files(tmp_path, HERE / "sam-api-backend.yaml")
    source = got.table("Table")
    assert source["key"] == {"partition": {"name": "id", "type": "S"}}
    assert source["billing"] == "on_demand" and "reads" not in source
    assert source["peak"] == {"reads_per_second": 12000.0, "writes_per_second": 4000.0}
    assert len([m for m in got.codes("estimate") if "peak" in m]) == 2

    tagged = import_files(tmp_path, HERE / "sam-simple-table-with-extra-tags.yaml")
    assert tagged.table("MinimalTableWithTags")["tags"] == {"TagKey1": "TagValue1", "TagKey2": "", "TagKey3": "value",
                                                            "TagKey4": "123"}

    sized = import_files(tmp_path, HERE / "sam-simple-table-ref-parameter-intrinsic.yaml",
                         parameters=(("ReadCapacity", "40"),))
    source = sized.table("MinimalTableRefParamLongForm")
    assert (source["billing"], source["reads"], source["writes"]) == ("provisioned", 40, 15)
    assert any("AWS-managed KMS key (SSEEnabled)" in m and "Cloud KMS key" in m for m in sized.codes("not-in-spec"))


GLOBAL_MRSC = """\
AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Carts:
    Type: AWS::DynamoDB::GlobalTable
    Properties:
      TableName: Carts
      BillingMode: PAY_PER_REQUEST
      MultiRegionConsistency: STRONG
      GlobalTableWitnesses: [{Region: us-east-2}]
      AttributeDefinitions: [{AttributeName: id, AttributeType: S}, {AttributeName: owner, AttributeType: S}]
      KeySchema: [{AttributeName: id, KeyType: HASH}]
      GlobalSecondaryIndexes:
        - IndexName: by-owner
          KeySchema: [{AttributeName: owner, KeyType: HASH}]
          Projection: {ProjectionType: KEYS_ONLY}
          WriteOnDemandThroughputSettings: {MaxWriteRequestUnits: 300}
          WarmThroughput: {ReadUnitsPerSecond: 100}
      WriteOnDemandThroughputSettings: {MaxWriteRequestUnits: 800}
      WarmThroughput: {ReadUnitsPerSecond: 12000, WriteUnitsPerSecond: 4000}
      Replicas:
        - Region: us-east-1
          ReadOnDemandThroughputSettings: {MaxReadRequestUnits: 3000}
          GlobalSecondaryIndexes:
            - IndexName: by-owner
              ReadOnDemandThroughputSettings: {MaxReadRequestUnits: 200}
          ContributorInsightsSpecification: {Enabled: true}
          KinesisStreamSpecification: {StreamArn: "arn:aws:kinesis:us-east-1:123456789012:stream/carts"}
          PointInTimeRecoverySpecification: {PointInTimeRecoveryEnabled: false}
        - Region: us-west-2
          TableClass: STANDARD_INFREQUENT_ACCESS
          PointInTimeRecoverySpecification: {PointInTimeRecoveryEnabled: true, RecoveryPeriodInDays: 7}
"""


def test_a_global_table_with_mrsc_limits_and_replica_settings(tmp_path):
    """AWS::DynamoDB::GlobalTable's MultiRegionConsistency, GlobalTableWitnesses, on-demand
    throughput settings, WarmThroughput and per-replica class/PITR/insights/Kinesis (the
    resource's documented properties): spec fields since #19, not losses."""
    path = tmp_path / "carts.yaml"
    path.write_text(GLOBAL_MRSC)
    got = import_files(tmp_path, path, region="us-east-1")
    source = got.table("Carts")
    assert source["multi_region_consistency"] == "strong" and source["witness_region"] == "us-east-2"
    assert source["max_throughput"] == {"reads_per_second": 3000.0, "writes_per_second": 800.0}
    assert source["warm_throughput"] == {"reads_per_second": 12000.0, "writes_per_second": 4000.0}
    (index,) = source["gsis"]
    assert index["max_throughput"] == {"reads_per_second": 200.0, "writes_per_second": 300.0}
    assert index["warm_throughput"] == {"reads_per_second": 100.0}
    assert source["contributor_insights"] is True
    assert source["kinesis_streams"] == ["arn:aws:kinesis:us-east-1:123456789012:stream/carts"]
    assert source["replicas"] == [{"region": "us-west-2", "table_class": "standard_infrequent_access",
                                   "point_in_time_recovery": {"enabled": True, "recovery_period_days": 7}}]
    # us-west-2 lacks the home region's insights, Kinesis and read cap (no cap there: the spec's
    # one cap would throttle its cluster's reads on paper): said, not flattened
    lost = got.codes("not-in-spec")
    assert len(lost) == 3 and all("of replica us-west-2, unlike the home region's" in m for m in lost)
    assert any(m.startswith("ReadOnDemandThroughputSettings of replica us-west-2") for m in lost), lost
    codes = {w.code for w in got.plan.warnings}
    assert {"no-strong-multi-region", "contributor-insights", "kinesis-stream"} <= codes
    assert source["peak"] == {"reads_per_second": 3000.0, "writes_per_second": 800.0}  # the estimate, at the caps
    assert "peak-above-max" not in codes  # nobody measured a peak above them
    (instance,) = got.plan.instances
    (table,) = instance.tables
    assert table.backup is not None and table.backup.retention_days == 7  # PITR on in the replica only


GLOBAL_HOME_SETTINGS = """\
Resources:
  Orders:
    Type: AWS::DynamoDB::GlobalTable
    Properties:
      TableName: Orders
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions: [{AttributeName: id, AttributeType: S}]
      KeySchema: [{AttributeName: id, KeyType: HASH}]
      StreamSpecification: {StreamViewType: NEW_AND_OLD_IMAGES}
      Replicas:
        - Region: us-east-1
          TableClass: STANDARD_INFREQUENT_ACCESS
          PointInTimeRecoverySpecification: {PointInTimeRecoveryEnabled: true}
          ReadOnDemandThroughputSettings: {MaxReadRequestUnits: 1000}
        - Region: us-east-2
          ReadOnDemandThroughputSettings: {MaxReadRequestUnits: 2000}
"""


def test_a_replica_without_the_home_regions_pitr_class_or_cap_does_not_inherit_them(tmp_path):
    """A GlobalTable replica that leaves out PointInTimeRecoverySpecification or TableClass has
    AWS's defaults there (PITR off, STANDARD), not the home region's; the spec's replica
    default is the table's, so the importer must write them. Its own read cap is a loss."""
    path = tmp_path / "orders.yaml"
    path.write_text(GLOBAL_HOME_SETTINGS)
    got = import_files(tmp_path, path, region="us-east-1")
    source = got.table("Orders")
    assert source["point_in_time_recovery"]["enabled"] is True and source["table_class"] == \
        "standard_infrequent_access"
    assert source["replicas"] == [{"region": "us-east-2", "table_class": "standard",
                                   "point_in_time_recovery": {"enabled": False}}]
    (lost,) = got.codes("not-in-spec")
    assert lost.startswith("ReadOnDemandThroughputSettings of replica us-east-2, unlike the home region's")
