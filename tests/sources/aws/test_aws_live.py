"""`import aws://REGION/TABLE`: live tables in DynamoDB Local (keys, GSIs, LSIs, TTL,
streams, deletion protection) with their auto scaling and CloudWatch metrics in a moto
server, and in moto's DynamoDB what DynamoDB Local does not serve (tags, point-in-time
recovery); each spec checked field by field, validated and planned, every estimate warned.

Neither DynamoDB Local nor moto 5.2.5 serves global-table replicas (2019.11.21: UpdateTable
ReplicaUpdates is refused or ignored) or a table class: replicas in DescribeTable go
through describe_table's parser, tested in test_describe_table.py.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
import yaml
from click.testing import CliRunner

from ddb2bigtable.cli.app import main
from ddb2bigtable.plan.planner import plan_stage
from ddb2bigtable.sources.aws.clients import LiveOptions
from ddb2bigtable.sources.detect import read_sources
from ddb2bigtable.sources.emit import build, to_yaml
from ddb2bigtable.sources.model import Options
from ddb2bigtable.spec.errors import InputError
from ddb2bigtable.spec.reading import read_spec
from ddb2bigtable.spec.stage import load_stage

from ...conftest import ROOT
from ..helpers import check_comments_and_estimates

pytestmark = pytest.mark.slow  # DynamoDB Local and a moto server per session

REGION = "us-west-2"


def _key(name, kind):
    return [{"AttributeName": name, "KeyType": kind}]


def make_orders(ddb, name="Orders"):
    """A provisioned table with a GSI, an LSI, TTL, a stream and deletion protection."""
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": t} for a, t in
                              (("customerId", "S"), ("orderId", "S"), ("status", "S"), ("createdAt", "N"),
                               ("total", "N"))],
        KeySchema=_key("customerId", "HASH") + _key("orderId", "RANGE"),
        BillingMode="PROVISIONED", ProvisionedThroughput={"ReadCapacityUnits": 100, "WriteCapacityUnits": 40},
        GlobalSecondaryIndexes=[{"IndexName": "by-status", "KeySchema": _key("status", "HASH") + _key("createdAt", "RANGE"),
                                 "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["total"]},
                                 "ProvisionedThroughput": {"ReadCapacityUnits": 20, "WriteCapacityUnits": 10}}],
        LocalSecondaryIndexes=[{"IndexName": "by-total", "KeySchema": _key("customerId", "HASH") + _key("total", "RANGE"),
                                "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        DeletionProtectionEnabled=True)
    ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expiresAt"})
    for i in range(20):
        ddb.put_item(TableName=name, Item={"customerId": {"S": f"c{i % 4}"}, "orderId": {"S": f"o{i:04d}"},
                                           "status": {"S": "open"}, "createdAt": {"N": str(1700000000 + i)},
                                           "total": {"N": str(i * 3)}, "note": {"S": "x" * 2000}})


def register_scaling(aas, resource, dims):
    for dim, low, high, target in dims:
        kind = "index" if "/index/" in resource else "table"
        dimension = f"dynamodb:{kind}:{dim}CapacityUnits"
        aas.register_scalable_target(ServiceNamespace="dynamodb", ResourceId=resource, ScalableDimension=dimension,
                                     MinCapacity=low, MaxCapacity=high)
        aas.put_scaling_policy(
            PolicyName=f"{resource}-{dim}", ServiceNamespace="dynamodb", ResourceId=resource,
            ScalableDimension=dimension, PolicyType="TargetTrackingScaling",
            TargetTrackingScalingPolicyConfiguration={"TargetValue": target, "PredefinedMetricSpecification": {
                "PredefinedMetricType": f"DynamoDB{dim}CapacityUtilization"}})


def put_minutes(cloudwatch, table, metric, per_minute, index=None):
    """One Sum per minute, `per_minute(k)` for the minute k = 1..len ago. The import's
    window ends at its own current minute: put late in a minute, the import may read in
    the next one and average over one more (empty) minute, so late puts wait for it."""
    if (second := datetime.now(UTC).second) >= 40:
        time.sleep(61 - second)
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    dims = [{"Name": "TableName", "Value": table}]
    if index:
        dims.append({"Name": "GlobalSecondaryIndexName", "Value": index})
    data = [{"MetricName": metric, "Dimensions": dims, "Timestamp": now - timedelta(minutes=k), "Value": value,
             "Unit": "Count"} for k, value in per_minute]
    for start in range(0, len(data), 20):
        cloudwatch.put_metric_data(Namespace="AWS/DynamoDB", MetricData=data[start:start + 20])


class Imported:
    def __init__(self, tmp_path, urls, live):
        found = read_sources(urls, Options(), None, live)
        doc = build("shop-imported", [t for i in found for t in i.tables], urls)
        self.text = to_yaml(doc)
        self.notices = tuple(n for i in found for n in i.notices) + doc.notices
        check_comments_and_estimates(self.text, self.notices)
        path = tmp_path / "imported.yaml"
        path.write_text(self.text)
        self.spec = read_spec(path)
        self.plan = plan_stage(load_stage("prod", ROOT), [self.spec])
        self.data = yaml.safe_load(self.text)

    def table(self, name):
        return next(t["source"] for t in self.data["tables"] if t["source"]["table"] == name)

    def said(self, code):
        return [f"{n.subject}: {n.message}" for n in self.notices if n.code == code]


@pytest.fixture(scope="module")
def local_tables(dynamodb_local_server, moto):
    ddb = dynamodb_local_server.client()
    make_orders(ddb)
    ddb.create_table(TableName="Events", AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "B"},
                                                               {"AttributeName": "kind", "AttributeType": "S"}],
                     KeySchema=_key("id", "HASH"), BillingMode="PAY_PER_REQUEST",
                     GlobalSecondaryIndexes=[{"IndexName": "by-kind", "KeySchema": _key("kind", "HASH"),
                                              "Projection": {"ProjectionType": "ALL"}}])
    aas = moto.client("application-autoscaling", REGION)
    register_scaling(aas, "table/Orders", [("Read", 50, 500, 60.0), ("Write", 20, 200, 60.0)])
    register_scaling(aas, "table/Orders/index/by-status", [("Read", 10, 100, 70.0)])
    cloudwatch = moto.client("cloudwatch", REGION)
    put_minutes(cloudwatch, "Orders", "ConsumedReadCapacityUnits", [(k, 60.0 * 30) for k in range(1, 61)])
    put_minutes(cloudwatch, "Events", "ConsumedReadCapacityUnits", [(k, 60.0 * k) for k in range(1, 121)])
    put_minutes(cloudwatch, "Events", "ConsumedWriteCapacityUnits", [(k, 300.0) for k in range(1, 121)])
    put_minutes(cloudwatch, "Events", "ConsumedWriteCapacityUnits", [(k, 120.0) for k in range(1, 121)], "by-kind")
    return LiveOptions(14, dynamodb_local_server.endpoint, moto.endpoint)


def test_a_provisioned_table_from_dynamodb_local_with_auto_scaling_and_metrics(tmp_path, aws_env, local_tables):
    got = Imported(tmp_path, [f"aws://{REGION}/Orders"], local_tables)
    source = got.table("Orders")
    assert source["region"] == REGION and f"region: {REGION}  # aws://{REGION}/Orders" in got.text
    assert source["key"] == {"partition": {"name": "customerId", "type": "S"}, "sort": {"name": "orderId", "type": "S"}}
    assert (source["billing"], source["reads"], source["writes"]) == ("provisioned", 100, 40)
    assert "reads: 100  # DynamoDB DescribeTable Table.ProvisionedThroughput.ReadCapacityUnits" in got.text
    assert source["autoscaling"] == {"min_reads": 50, "max_reads": 500, "min_writes": 20, "max_writes": 200,
                                     "target_utilization": 60.0}
    assert ("min_reads: 50  # Application Auto Scaling table/Orders dynamodb:table:ReadCapacityUnits MinCapacity"
            in got.text)
    assert "target_utilization: 60.0  # Application Auto Scaling policy table/Orders-Read TargetValue" in got.text
    assert source["ttl"] == {"attribute": "expiresAt"} and "# DynamoDB DescribeTimeToLive AttributeName" in got.text
    assert source["stream"] == "new_and_old_images" and source["deletion_protection"] is True
    assert source["table_class"] == "standard", "DynamoDB Local reports no TableClassSummary: STANDARD"
    assert source["item_count"] == 20 and 1.9 < source["item_size_kb"] < 2.2
    gsi = dict(source["gsis"][0])
    gsi_scaling = gsi.pop("autoscaling", None)
    assert [gsi] == [{"name": "by-status", "key": {"partition": {"name": "status", "type": "S"},
                                                   "sort": {"name": "createdAt", "type": "N"}},
                      "projection": ["total"], "reads": 20, "writes": 10}]
    assert source["lsis"] == [{"name": "by-total", "sort": {"name": "total", "type": "N"}, "projection": "keys_only"}]
    # DynamoDB Local serves neither tags nor continuous backups: said, and PITR stays an estimate
    missing = " ".join(got.said("not-in-source"))
    assert "ListTagsOfResource is not served by this endpoint" in missing and "tags" not in source
    assert "DescribeContinuousBackups is not served" in missing
    assert "point_in_time_recovery" in " ".join(got.said("estimate"))
    # the index's own auto scaling: in the spec where the spec has GSI autoscaling, else reported
    assert gsi_scaling == {"min_reads": 10, "max_reads": 100, "target_utilization": 70.0} or (
        gsi_scaling is None and any("auto scaling of index by-status (reads 10-100)" in m
                                    for m in got.said("not-in-spec")))
    # how used the provisioned capacity is
    use = got.said("capacity-use")
    assert any(m.startswith("Orders: ConsumedReadCapacityUnits: p99 30 RCU/s (30 %)") for m in use), use
    # no write data point while reads have some: nothing written (DynamoDB publishes no point for a quiet minute)
    assert any(m.startswith("Orders: ConsumedWriteCapacityUnits: p99 0 WCU/s (0 %)") for m in use), use
    assert got.plan.instances and got.spec.tables[0].source.autoscaling is not None


def test_an_on_demand_table_gets_its_peak_and_average_from_cloudwatch(tmp_path, aws_env, local_tables):
    got = Imported(tmp_path, [f"aws://{REGION}/Events"], local_tables)
    source = got.table("Events")
    assert source["billing"] == "on_demand" and "reads" not in source and "autoscaling" not in source
    assert source["key"] == {"partition": {"name": "id", "type": "B"}}
    # minute k ago consumed 60k units (k RRU/s), k = 1..120: p99 (nearest rank) is 119
    assert source["peak"]["reads_per_second"] == 119
    assert 59.5 <= source["average"]["reads_per_second"] <= 60.5
    assert 4.9 <= source["peak"]["writes_per_second"] <= 5 and 4.9 <= source["average"]["writes_per_second"] <= 5
    assert "# CloudWatch p99 of ConsumedReadCapacityUnits/s, 0.08 days (from the first data point; --days 14) " \
           "(1-minute sums / 60)" in got.text or "# CloudWatch p99 of ConsumedReadCapacityUnits/s, 0.08" in got.text
    assert "# CloudWatch mean of ConsumedReadCapacityUnits/s" in got.text
    assert source["gsis"][0]["writes"] == 2
    assert source["gsis"][0]["reads"] == 0, "no GSI read data point beside the table's: no queries"
    assert "reads: 0  # CloudWatch: no ConsumedReadCapacityUnits data point in" in got.text
    assert not any("peak" in m for m in got.said("estimate"))
    assert got.plan.instances


def test_every_table_of_a_region_and_the_command_line(tmp_path, aws_env, local_tables):
    out = tmp_path / "shop.yaml"
    result = CliRunner().invoke(main, ["import", f"aws://{REGION}/*", "--instance", "shop-imported", "-o", str(out),
                                       "--endpoint-url", local_tables.endpoint_url, "--metrics-endpoint-url",
                                       local_tables.metrics_endpoint_url, "--days", "3"])
    assert result.exit_code == 0, result.output
    tables = [t["source"]["table"] for t in yaml.safe_load(out.read_text())["tables"]]
    assert tables == ["Events", "Orders"]
    assert "3 days" in out.read_text() or "(from the first data point; --days 3)" in out.read_text()
    assert "warning: Orders: ConsumedReadCapacityUnits: p99 30 RCU/s" in result.stderr
    assert result.stderr.count("[estimate]") == out.read_text().count("  # estimate:")
    assert f"wrote {out}: 2 table(s)" in result.stderr


def test_tags_and_point_in_time_recovery_from_moto(tmp_path, aws_env, moto):
    ddb = moto.client("dynamodb", "eu-west-1")
    ddb.create_table(TableName="Carts", AttributeDefinitions=[{"AttributeName": "cartId", "AttributeType": "S"}],
                     KeySchema=_key("cartId", "HASH"), BillingMode="PAY_PER_REQUEST",
                     Tags=[{"Key": "team", "Value": "checkout"}, {"Key": "cost-center", "Value": "42"}],
                     DeletionProtectionEnabled=False)
    ddb.update_continuous_backups(TableName="Carts", PointInTimeRecoverySpecification={
        "PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": 21})
    ddb.put_resource_policy(ResourceArn=ddb.describe_table(TableName="Carts")["Table"]["TableArn"],
                            Policy='{"Version": "2012-10-17", "Statement": []}')
    got = Imported(tmp_path, ["aws://eu-west-1/Carts"], LiveOptions(14, moto.endpoint, moto.endpoint))
    source = got.table("Carts")
    assert source["tags"] == {"team": "checkout", "cost-center": "42"}
    assert "team: checkout  # DynamoDB ListTagsOfResource team" in got.text
    assert source["point_in_time_recovery"] == {"enabled": True, "recovery_period_days": 21}
    assert "# DynamoDB DescribeContinuousBackups PointInTimeRecoveryDescription.RecoveryPeriodInDays" in got.text
    assert source["deletion_protection"] is False
    # no metrics for Carts: the on-demand peak stays AWS's initial throughput, as an estimate, with a warning
    assert source["peak"] == {"reads_per_second": 12000.0, "writes_per_second": 4000.0}
    assert got.said("no-metrics") and any("peak.reads_per_second" in m for m in got.said("estimate"))
    assert any("a resource-based policy (DynamoDB GetResourcePolicy): grant the same access with IAM" in m
               for m in got.said("not-in-spec"))
    # moto 5.2.5 answers 500 to DescribeKinesisStreamingDestination: a warning, not a failed import
    assert any("DescribeKinesisStreamingDestination could not be checked" in m for m in got.said("not-in-source"))


def run(*args):
    return CliRunner().invoke(main, ["import", *args, "--instance", "shop-imported"])


def test_an_unknown_table_a_bad_url_and_no_credentials_exit_2(tmp_path, aws_env, local_tables):
    endpoint = ["--endpoint-url", local_tables.endpoint_url, "--metrics-endpoint-url",
                local_tables.metrics_endpoint_url]
    result = run(f"aws://{REGION}/Nope", *endpoint)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"aws://{REGION}/Nope: DescribeTable Nope: " in result.stderr and "list-tables" in result.stderr
    result = run("aws://Orders", *endpoint)
    assert result.exit_code == 2 and "aws://REGION/TABLE" in result.stderr
    aws_env.delenv("AWS_ACCESS_KEY_ID")
    aws_env.delenv("AWS_SECRET_ACCESS_KEY")
    result = run(f"aws://{REGION}/Orders", *endpoint)
    assert result.exit_code == 2 and "Unable to locate credentials" in result.stderr
    assert "AWS_PROFILE" in result.stderr and "Traceback" not in result.output
    aws_env.setenv("AWS_PROFILE", "no-such-profile")
    result = run(f"aws://{REGION}/Orders", *endpoint)
    assert result.exit_code == 2 and "no-such-profile" in result.stderr and "Traceback" not in result.output


def test_a_stopped_local_endpoint_is_exit_2_saying_how_to_start_the_local_servers(tmp_path, aws_env):
    """Issue #53: connection refused on this machine is the local servers stopped, which the
    user fixes (exit 2, as every other bad input), not an outage (exit 1)."""
    from ddb2bigtable.bigtable.emulator import free_port

    result = run(f"aws://{REGION}/Orders", "--endpoint-url", f"http://127.0.0.1:{free_port()}")
    assert result.exit_code == 2 and "cannot reach" in result.stderr and "Traceback" not in result.output
    assert "bash scripts/local-servers.sh start" in result.stderr


def test_throttling_is_a_service_error_and_a_rejected_key_bad_input():
    from botocore.exceptions import ClientError

    from ddb2bigtable.sources.aws.clients import Clients
    from ddb2bigtable.spec.errors import ServiceError

    clients = Clients("aws://us-east-1/T", "us-east-1", LiveOptions())

    def failing(code):
        def call():
            raise ClientError({"Error": {"Code": code, "Message": "m"}}, "DescribeTable")
        return call

    with pytest.raises(ServiceError, match="throttled"):
        clients.call("DescribeTable T", failing("ThrottlingException"))
    with pytest.raises(InputError, match="refused the credentials"):
        clients.call("DescribeTable T", failing("UnrecognizedClientException"))


def answer_with(monkeypatch, after: dict | None = None, instead: dict | None = None):
    """Make every boto3 DynamoDB client add `after[operation]` to the server's real answer,
    or answer `instead[operation]` itself (for what neither DynamoDB Local nor moto serves)."""
    import boto3

    original = boto3.session.Session.client

    def client(self, service, *args, **kwargs):
        made = original(self, service, *args, **kwargs)
        if service == "dynamodb":
            for operation, fields in (after or {}).items():
                made.meta.events.register(f"after-call.dynamodb.{operation}",
                                          lambda parsed, fields=fields, **_: parsed.get("Table", {}).update(fields))
            for operation, response in (instead or {}).items():
                made.meta.events.register(f"before-call.dynamodb.{operation}",
                                          lambda response=response, **_: (_Ok(), response))
        return made

    monkeypatch.setattr(boto3.session.Session, "client", client)


class _Ok:
    status_code = 200
    headers: dict = {}


def test_replicas_keep_their_region_and_say_their_own_traffic_and_status(tmp_path, aws_env, dynamodb_local_server,
                                                                          moto):
    """DynamoDB Local serves no replicas: its real DescribeTable answer gets a Replicas list
    added on the way in (a botocore after-call hook); each replica's traffic is read from
    moto's CloudWatch in the replica's own region."""
    dynamodb_local_server.client().create_table(
        TableName="Sessions", AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=_key("id", "HASH"), BillingMode="PAY_PER_REQUEST")
    answer_with(aws_env, after={"DescribeTable": {"Replicas": [
        {"RegionName": REGION, "ReplicaStatus": "ACTIVE"},
        {"RegionName": "eu-west-1", "ReplicaStatus": "ACTIVE"},
        {"RegionName": "ap-northeast-1", "ReplicaStatus": "CREATING",
         "ReplicaTableClassSummary": {"TableClass": "STANDARD_INFREQUENT_ACCESS"}}]}})
    put_minutes(moto.client("cloudwatch", "eu-west-1"), "Sessions", "ConsumedReadCapacityUnits",
                [(k, 60.0 * 30) for k in range(1, 31)])
    got = Imported(tmp_path, [f"aws://{REGION}/Sessions"], LiveOptions(14, dynamodb_local_server.endpoint,
                                                                       moto.endpoint))
    source = got.table("Sessions")
    assert [r["region"] for r in source["replicas"]] == ["eu-west-1", "ap-northeast-1"], "the home region is no replica"
    assert source["replicas"][0].get("reads", 30) == 30  # on-demand replica reads: emitted once emit.py writes them
    assert source["replicas"][1]["table_class"] == "standard_infrequent_access"
    assert any("replica eu-west-1: ConsumedReadCapacityUnits p99 30 RRU/s, average 30" in m
               for m in got.said("replica-traffic"))
    assert any("replica ap-northeast-1 is CREATING" in m for m in got.said("replica-status"))
    assert {c.gcp_region for i in got.plan.instances for c in i.clusters} >= {"europe-west1", "asia-northeast1"}


def test_a_provisioned_replica_gets_its_own_auto_scaling_and_capacity_use(tmp_path, aws_env, dynamodb_local_server,
                                                                           moto):
    """DescribeTableReplicaAutoScaling is served by neither DynamoDB Local nor moto: the test
    answers it in the shape of the API reference; the rest is the servers' own."""
    ddb = dynamodb_local_server.client()
    make_orders(ddb, "Profiles")
    settings = {"MinimumUnits": 40, "MaximumUnits": 400, "ScalingPolicies": [
        {"PolicyName": "p", "TargetTrackingScalingPolicyConfiguration": {"TargetValue": 50.0}}]}
    answer_with(aws_env, after={"DescribeTable": {"Replicas": [
        {"RegionName": REGION, "ReplicaStatus": "ACTIVE"},
        {"RegionName": "eu-west-1", "ReplicaStatus": "ACTIVE", "ProvisionedThroughputOverride": {
            "ReadCapacityUnits": 80}}]}},
        instead={"DescribeTableReplicaAutoScaling": {"TableAutoScalingDescription": {
            "TableName": "Profiles", "TableStatus": "ACTIVE", "Replicas": [
                {"RegionName": "eu-west-1", "ReplicaProvisionedReadCapacityAutoScalingSettings": settings,
                 "GlobalSecondaryIndexes": [{"IndexName": "by-status",
                                             "ProvisionedReadCapacityAutoScalingSettings": settings}]}]}}})
    put_minutes(moto.client("cloudwatch", "eu-west-1"), "Profiles", "ConsumedReadCapacityUnits",
                [(k, 60.0 * 20) for k in range(1, 31)])
    got = Imported(tmp_path, [f"aws://{REGION}/Profiles"], LiveOptions(14, dynamodb_local_server.endpoint,
                                                                       moto.endpoint))
    replica = got.table("Profiles")["replicas"][0]
    assert replica["region"] == "eu-west-1" and replica["reads"] == 80
    assert replica["autoscaling"] == {"min_reads": 40, "max_reads": 400, "target_utilization": 50.0}
    assert replica["gsis"] == [{"name": "by-status", "autoscaling": {"min_reads": 40, "max_reads": 400,
                                                                      "target_utilization": 50.0}}]
    assert "# DynamoDB DescribeTableReplicaAutoScaling Replicas[0].ReplicaProvisionedReadCapacityAutoScalingSettings" \
        ".MinimumUnits" in got.text
    assert any(m.startswith("Profiles replica eu-west-1: ConsumedReadCapacityUnits: p99 20 RCU/s (25 %)")
               for m in got.said("capacity-use"))
    assert got.plan.instances


def test_the_percentile_counts_quiet_minutes_and_long_windows_use_coarser_points():
    from ddb2bigtable.sources.aws.cloudwatch import percentile, period_for

    assert percentile([float(k) for k in range(1, 101)], 100) == 99.0
    assert percentile([50.0], 100) == 0.0, "one busy minute in 100 is above the p99"
    assert percentile([50.0, 60.0], 100) == 50.0
    assert (period_for(14), period_for(15), period_for(16), period_for(63), period_for(64)) == (60, 60, 300, 300, 3600)


def test_the_standard_endpoint_variables_work_without_flags(tmp_path, aws_env, local_tables):
    aws_env.setenv("AWS_ENDPOINT_URL_DYNAMODB", local_tables.endpoint_url)
    aws_env.setenv("AWS_ENDPOINT_URL_CLOUDWATCH", local_tables.metrics_endpoint_url)
    aws_env.setenv("AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING", local_tables.metrics_endpoint_url)
    result = run(f"aws://{REGION}/Orders")
    assert result.exit_code == 0, result.output
    assert "min_reads: 50  # Application Auto Scaling table/Orders" in result.stdout
    assert "warning: Orders: ConsumedReadCapacityUnits: p99 30 RCU/s" in result.stderr


def test_a_2017_global_table_gets_its_replicas_from_describe_global_table(tmp_path, aws_env, dynamodb_local_server,
                                                                           moto):
    """Neither DynamoDB Local nor moto (500) serves DescribeGlobalTable: the test answers it in
    the API reference's shape and marks DynamoDB Local's real DescribeTable as version 2017."""
    dynamodb_local_server.client().create_table(
        TableName="Legacy", AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=_key("id", "HASH"), BillingMode="PAY_PER_REQUEST")
    answer_with(aws_env, after={"DescribeTable": {"GlobalTableVersion": "2017.11.29"}},
                instead={"DescribeGlobalTable": {"GlobalTableDescription": {
                    "GlobalTableName": "Legacy", "GlobalTableStatus": "ACTIVE",
                    "ReplicationGroup": [{"RegionName": REGION}, {"RegionName": "eu-central-1"}]}}})
    got = Imported(tmp_path, [f"aws://{REGION}/Legacy"], LiveOptions(14, dynamodb_local_server.endpoint,
                                                                     moto.endpoint))
    assert got.table("Legacy")["replicas"] == [{"region": "eu-central-1"}]
    assert "region: eu-central-1  # DynamoDB DescribeGlobalTable ReplicationGroup[1].RegionName" in got.text
    assert any("version 2017.11.29" in m for m in got.said("legacy-global-table"))
    assert {c.gcp_region for i in got.plan.instances for c in i.clusters} >= {"europe-west3"}
