"""A template written for these tests: every short form the importer evaluates, and every
setting a spec cannot hold, each reported (never silently dropped)."""

from __future__ import annotations

import textwrap

from ..helpers import import_files

TEMPLATE = textwrap.dedent("""\
    AWSTemplateFormatVersion: "2010-09-09"
    Parameters:
      Env: {Type: String, Default: prod, AllowedValues: [dev, prod]}
      Classes: {Type: CommaDelimitedList, Default: "STANDARD,STANDARD_INFREQUENT_ACCESS"}
    Conditions:
      IsProd: !Equals [!Ref Env, prod]
      IsDev: !Not [!Condition IsProd]
    Mappings:
      Retention: {prod: {Days: 21}, dev: {Days: 1}}
    Resources:
      Sessions:
        Type: AWS::DynamoDB::Table
        Properties:
          TableName: !Sub "sessions-${Env}"
          BillingMode: PAY_PER_REQUEST
          AttributeDefinitions:
            - {AttributeName: sessionId, AttributeType: S}
            - {AttributeName: userId, AttributeType: S}
          KeySchema:
            - {AttributeName: sessionId, KeyType: HASH}
          GlobalSecondaryIndexes:
            - IndexName: !Join ["-", [by, user]]
              KeySchema: [{AttributeName: userId, KeyType: HASH}]
              Projection: {ProjectionType: INCLUDE, NonKeyAttributes: [expiresAt]}
              ContributorInsightsSpecification: {Enabled: true}
          TimeToLiveSpecification: {AttributeName: expiresAt, Enabled: true}
          StreamSpecification: {StreamViewType: NEW_IMAGE}
          PointInTimeRecoverySpecification:
            PointInTimeRecoveryEnabled: !If [IsProd, true, false]
            RecoveryPeriodInDays: !FindInMap [Retention, !Ref Env, Days]
          TableClass: !Select [1, !Ref Classes]
          DeletionProtectionEnabled: !If [IsDev, false, true]
          Tags:
            - {Key: Team, Value: identity}
            - {Key: Stack, Value: !Ref "AWS::StackName"}
          KinesisStreamSpecification: {StreamArn: !GetAtt Stream.Arn}
          ResourcePolicy: {PolicyDocument: {Version: "2012-10-17", Statement: []}}
          ContributorInsightsSpecification: {Enabled: true}
          OnDemandThroughput: {MaxReadRequestUnits: 5000, MaxWriteRequestUnits: 1000}
          WarmThroughput: {ReadUnitsPerSecond: 15000, WriteUnitsPerSecond: 5000}
          SSESpecification: {SSEEnabled: true, SSEType: KMS, KMSMasterKeyId: alias/sessions}
      Stream:
        Type: AWS::Kinesis::Stream
        Properties: {ShardCount: 1}
      DevOnly:
        Type: AWS::DynamoDB::Table
        Condition: IsDev
        Properties:
          AttributeDefinitions: [{AttributeName: k, AttributeType: S}]
          KeySchema: [{AttributeName: k, KeyType: HASH}]
          BillingMode: PAY_PER_REQUEST
    """)


def test_short_forms_are_evaluated_and_losses_reported(tmp_path):
    path = tmp_path / "sessions.yaml"
    path.write_text(TEMPLATE)
    got = import_files(tmp_path, path, region="eu-west-1")
    assert [t["source"]["table"] for t in got.data["tables"]] == ["sessions-prod"]
    assert got.codes("condition-false") and "DevOnly" in " ".join(n.subject for n in got.notices)
    source = got.table("sessions-prod")
    assert source["billing"] == "on_demand" and source["ttl"] == {"attribute": "expiresAt"}
    assert source["stream"] == "new_image"
    assert source["point_in_time_recovery"] == {"enabled": True, "recovery_period_days": 21}
    assert source["table_class"] == "standard_infrequent_access" and source["deletion_protection"] is True
    assert source["tags"] == {"Team": "identity", "Stack": "StackName"}
    assert any("AWS::StackName is known only to a deployed stack" in m for m in got.codes("estimate"))
    assert source["gsis"] == [{"name": "by-user", "key": {"partition": {"name": "userId", "type": "S"}},
                               "projection": ["expiresAt"]}]
    # spec fields since #19: the plan sizes from the limits and warns about the rest
    assert source["max_throughput"] == {"reads_per_second": 5000.0, "writes_per_second": 1000.0}
    assert source["warm_throughput"] == {"reads_per_second": 15000.0, "writes_per_second": 5000.0}
    assert source["contributor_insights"] is True
    placeholder = "arn:aws:kinesis:eu-west-1:000000000000:stream/UNRESOLVED"  # an ARN: the spec validates
    assert source["kinesis_streams"] == [placeholder]
    assert any(m.startswith(f"{placeholder} is an estimate") for m in got.codes("estimate"))
    lost = " | ".join(got.codes("not-in-spec"))
    for what in ("resource-based policy", "contributor insights of an index", "AWS KMS key alias/sessions"):
        assert what in lost, what
    for field in ("Kinesis", "on-demand max throughput", "warm throughput"):
        assert field not in lost, field
    assert lost.count("contributor insights") == 1  # the index's: the spec's flag is the table's
    assert "Cloud KMS key" in lost


def test_a_dev_parameter_flips_the_conditions(tmp_path):
    path = tmp_path / "sessions.yaml"
    path.write_text(TEMPLATE)
    got = import_files(tmp_path, path, region="eu-west-1", parameters=(("Env", "dev"),))
    assert [t["source"]["table"] for t in got.data["tables"]] == ["sessions-dev", "DevOnly"]
    source = got.table("sessions-dev")
    assert source["point_in_time_recovery"] == {"enabled": False} and source["deletion_protection"] is False


SCALING = textwrap.dedent("""\
    Resources:
      OrdersTable:
        Type: AWS::DynamoDB::Table
        Properties:
          TableName: Orders
          AttributeDefinitions:
            - {AttributeName: id, AttributeType: S}
            - {AttributeName: status, AttributeType: S}
          KeySchema: [{AttributeName: id, KeyType: HASH}]
          ProvisionedThroughput: {ReadCapacityUnits: 300, WriteCapacityUnits: 100}
          GlobalSecondaryIndexes:
            - IndexName: by-status
              KeySchema: [{AttributeName: status, KeyType: HASH}]
              Projection: {ProjectionType: KEYS_ONLY}
              ProvisionedThroughput: {ReadCapacityUnits: 50, WriteCapacityUnits: 100}
      ReadTarget:
        Type: AWS::ApplicationAutoScaling::ScalableTarget
        Properties:
          ServiceNamespace: dynamodb
          ResourceId: !Sub "table/${OrdersTable}"
          ScalableDimension: dynamodb:table:ReadCapacityUnits
          MinCapacity: 100
          MaxCapacity: 900
      WriteTarget:
        Type: AWS::ApplicationAutoScaling::ScalableTarget
        Properties:
          ServiceNamespace: dynamodb
          ResourceId: !Join ["/", [table, !Ref OrdersTable]]
          ScalableDimension: dynamodb:table:WriteCapacityUnits
          MinCapacity: 50
          MaxCapacity: 400
      IndexReadTarget:
        Type: AWS::ApplicationAutoScaling::ScalableTarget
        Properties:
          ServiceNamespace: dynamodb
          ResourceId: !Join ["/", [table, !Ref OrdersTable, index, by-status]]
          ScalableDimension: dynamodb:index:ReadCapacityUnits
          MinCapacity: 10
          MaxCapacity: 200
      ReadPolicy:
        Type: AWS::ApplicationAutoScaling::ScalingPolicy
        Properties:
          PolicyName: reads
          PolicyType: TargetTrackingScaling
          ServiceNamespace: dynamodb
          ResourceId: table/Orders
          ScalableDimension: dynamodb:table:ReadCapacityUnits
          TargetTrackingScalingPolicyConfiguration: {TargetValue: 70}
      WritePolicy:
        Type: AWS::ApplicationAutoScaling::ScalingPolicy
        Properties:
          PolicyName: writes
          PolicyType: TargetTrackingScaling
          ScalingTargetId: !Ref WriteTarget
          TargetTrackingScalingPolicyConfiguration: {TargetValue: 55}
      ElsewhereTarget:
        Type: AWS::ApplicationAutoScaling::ScalableTarget
        Properties:
          ServiceNamespace: dynamodb
          ResourceId: table/Elsewhere
          ScalableDimension: dynamodb:table:ReadCapacityUnits
          MinCapacity: 1
          MaxCapacity: 2
    """)


def test_scalable_targets_by_sub_join_and_policies_by_either_link(tmp_path):
    path = tmp_path / "orders.yaml"
    path.write_text(SCALING)
    got = import_files(tmp_path, path, region="us-east-1")
    source = got.table("Orders")
    # separate targets and the index's auto scaling are spec fields since #19, not losses
    assert source["autoscaling"] == {"min_reads": 100, "max_reads": 900, "min_writes": 50, "max_writes": 400,
                                     "read_target_utilization": 70.0, "write_target_utilization": 55.0}
    assert "write_target_utilization: 55.0  # CloudFormation WritePolicy.Properties." \
        "TargetTrackingScalingPolicyConfiguration.TargetValue" in got.text
    assert got.codes("not-in-spec") == []
    assert source["gsis"][0]["autoscaling"] == {"min_reads": 10, "max_reads": 200, "target_utilization": 70.0}
    assert source["gsis"][0]["reads"] == 50
    assert any("table/Elsewhere" == n.subject and "not defined in the template" in n.message
               for n in got.notices if n.code == "autoscaling-unmatched")
