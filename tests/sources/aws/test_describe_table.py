"""describe-table output -> spec: the AWS CLI's own example and a global table shaped like
the DescribeTable API reference, checked field by field."""

from __future__ import annotations

import json

from ..helpers import FIXTURES, import_files

HERE = FIXTURES / "describe-table"


def test_the_aws_cli_example_music_collection(tmp_path):
    got = import_files(tmp_path, HERE / "music-collection.json")
    source = got.table("MusicCollection")
    assert source["region"] == "us-east-1" and got.codes("default-region")
    assert source["key"] == {"partition": {"name": "Artist", "type": "S"}, "sort": {"name": "SongTitle", "type": "S"}}
    assert (source["billing"], source["reads"], source["writes"]) == ("provisioned", 5, 5)
    assert (source["storage_gb"], source["item_count"]) == (0.0, 0)
    assert source["item_size_kb"] == 1.0 and "# estimate: no source gives the item size" in got.text
    assert (source["stream"], source["table_class"]) == ("none", "standard")
    assert "autoscaling" not in source and "ttl" not in source and "tags" not in source
    missing = " ".join(got.codes("not-in-source"))
    assert "describe-time-to-live" in missing and "list-tags-of-resource" in missing
    assert "describe-scalable-targets" in missing
    assert got.spec.tables[0].id == "musiccollection"
    assert len(got.plan.instances) == 1


def test_a_global_table_with_indexes_replicas_and_a_kms_key(tmp_path):
    got = import_files(tmp_path, HERE / "orders-global.json", region="eu-west-1")
    source = got.table("Orders")
    assert source["region"] == "us-east-1", "the table ARN's region wins over --region"
    assert (source["reads"], source["writes"]) == (12000, 4000)
    assert source["item_size_kb"] == 2.62 and source["storage_gb"] == 850.0 and source["item_count"] == 340000000
    assert source["replicas"] == [{"region": "us-west-2", "reads": 6000}, {"region": "eu-west-1"}]
    assert source["stream"] == "new_and_old_images"
    assert source["deletion_protection"] is True and source["table_class"] == "standard"
    assert source["gsis"] == [{"name": "by-status", "key": {"partition": {"name": "status", "type": "S"},
                                                             "sort": {"name": "createdAt", "type": "N"}},
                               "projection": ["total", "currency"], "reads": 1000, "writes": 4000,
                               "warm_throughput": {"reads_per_second": 12000.0, "writes_per_second": 4000.0}}]
    assert source["warm_throughput"] == {"reads_per_second": 24000.0, "writes_per_second": 8000.0}
    assert source["lsis"] == [{"name": "by-total", "sort": {"name": "total", "type": "N"}, "projection": "keys_only"}]
    assert "# describe-table Table.ProvisionedThroughput.ReadCapacityUnits" in got.text
    lost = " ".join(got.codes("not-in-spec"))
    assert "AWS KMS key arn:aws:kms:us-east-1" in lost and "Cloud KMS key" in lost and "instance.kms_keys" in lost
    assert "warm throughput" not in lost  # a spec field since #19: a floor for the autoscaling min
    assert "pitr" not in lost and any("describe-continuous-backups" in m for m in got.codes("estimate"))
    assert {c.gcp_region for i in got.plan.instances for c in i.clusters} >= {"us-east4"}


def test_an_on_demand_table_gets_an_estimated_peak_with_the_cloudwatch_command(tmp_path):
    data = json.loads((HERE / "music-collection.json").read_text())
    data["Table"]["BillingModeSummary"] = {"BillingMode": "PAY_PER_REQUEST"}
    data["Table"]["ProvisionedThroughput"] = {"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 0,
                                              "WriteCapacityUnits": 0}
    data["Table"]["OnDemandThroughput"] = {"MaxReadRequestUnits": 2000, "MaxWriteRequestUnits": -1}
    path = tmp_path / "on-demand.json"
    path.write_text(json.dumps(data, indent=2))
    got = import_files(tmp_path, path, region="eu-west-1")
    source = got.table("MusicCollection")
    assert source["billing"] == "on_demand" and "reads" not in source and "writes" not in source
    # the estimate is AWS's initial rate, at most the table's own maximum (2,000 RRU/s here)
    assert source["peak"] == {"reads_per_second": 2000.0, "writes_per_second": 4000.0}
    peaks = [m for m in got.codes("estimate") if "ConsumedReadCapacityUnits" in m]
    assert len(peaks) == 2 and "--dimensions Name=TableName,Value=MusicCollection" in peaks[0]
    # OnDemandThroughput is max_throughput since #19 (-1: no write limit), and caps the estimated peak
    assert source["max_throughput"] == {"reads_per_second": 2000.0}
    assert not any("on-demand max throughput" in m for m in got.codes("not-in-spec"))
    assert not any(w.code == "peak-above-max" for w in got.plan.warnings)  # no measured peak to be above it
    assert not any("describe-scalable-targets" in m for m in got.codes("not-in-source"))


def test_mrsc_witness_and_a_replica_own_class_and_index_reads(tmp_path):
    """DescribeTable's MultiRegionConsistency, GlobalTableWitnesses, a replica's
    ReplicaTableClassSummary and its GSI ProvisionedThroughputOverride (API reference shapes)."""
    data = json.loads((HERE / "orders-global.json").read_text())
    table = data["Table"]
    table["MultiRegionConsistency"] = "STRONG"
    table["Replicas"] = table["Replicas"][:1]
    table["GlobalTableWitnesses"] = [{"RegionName": "us-east-2", "WitnessStatus": "ACTIVE"}]
    table["Replicas"][0]["ReplicaTableClassSummary"] = {"TableClass": "STANDARD_INFREQUENT_ACCESS"}
    table["Replicas"][0]["OnDemandThroughputOverride"] = {"MaxReadRequestUnits": 900}
    table["Replicas"][0]["GlobalSecondaryIndexes"] = [
        {"IndexName": "by-status", "ProvisionedThroughputOverride": {"ReadCapacityUnits": 300}}]
    path = tmp_path / "mrsc.json"
    path.write_text(json.dumps(data, indent=2))
    got = import_files(tmp_path, path)
    source = got.table("Orders")
    assert source["multi_region_consistency"] == "strong" and source["witness_region"] == "us-east-2"
    assert source["replicas"] == [{"region": "us-west-2", "reads": 6000, "gsis": [{"name": "by-status", "reads": 300}],
                                   "table_class": "standard_infrequent_access"}]
    assert "# describe-table Table.GlobalTableWitnesses[0].RegionName" in got.text
    assert any("on-demand max read throughput 900 of replica us-west-2" in m for m in got.codes("not-in-spec"))
    codes = {w.code for w in got.plan.warnings}
    assert {"no-strong-multi-region", "infrequent-access"} <= codes
