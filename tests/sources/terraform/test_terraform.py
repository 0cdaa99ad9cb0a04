"""Terraform -> spec: the AWS provider's documented aws_dynamodb_table example, a file with
a replica resource, auto scaling, variables and provider aliases, and `terraform show
-json` state and plan documents, checked field by field; broken .tf files exit 2 through
the real CLI (tests/fixtures/README.md names where each file comes from)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ddb2bigtable.cli.app import main

from ..helpers import FIXTURES, import_files

HERE = FIXTURES / "terraform"


def test_provider_docs_example_table_with_gsi(tmp_path):
    got = import_files(tmp_path, HERE / "hashicorp-dynamodb-table.tf")
    source = got.table("GameScores")
    assert source["key"] == {"partition": {"name": "UserId", "type": "S"}, "sort": {"name": "GameTitle", "type": "S"}}
    assert (source["billing"], source["reads"], source["writes"]) == ("provisioned", 20, 20)
    assert source["gsis"] == [{"name": "GameTitleIndex", "key": {"partition": {"name": "GameTitle", "type": "S"},
                                                                 "sort": {"name": "TopScore", "type": "N"}},
                               "projection": ["UserId"], "reads": 10, "writes": 10}]
    assert "ttl" not in source, "ttl { enabled = false } is no TTL"
    assert source["tags"] == {"Name": "dynamodb-table-1", "Environment": "production"}
    assert (source["stream"], source["table_class"], source["deletion_protection"]) == ("none", "standard", False)
    assert source["point_in_time_recovery"] == {"enabled": False}
    assert "lsis" not in source and "replicas" not in source and "autoscaling" not in source
    assert got.codes("default-region") and source["region"] == "us-east-1"
    assert "# Terraform aws_dynamodb_table.basic-dynamodb-table.global_secondary_index[0].read_capacity" in got.text
    assert import_files(tmp_path, HERE / "hashicorp-dynamodb-table.tf", region="eu-west-1").table(
        "GameScores")["region"] == "eu-west-1"


def test_replicas_autoscaling_variables_and_provider_regions(tmp_path):
    got = import_files(tmp_path, HERE / "orders-global.tf", parameters=(("min_reads", "8"),))
    source = got.table("Orders")
    assert source["region"] == "us-east-1" and not got.codes("default-region")
    assert source["key"] == {"partition": {"name": "customer", "type": "S"}, "sort": {"name": "placed", "type": "N"}}
    assert (source["billing"], source["reads"], source["writes"]) == ("provisioned", 50, 20)
    assert source["autoscaling"] == {"min_reads": 8, "max_reads": 200, "target_utilization": 65.0}
    # the table has PITR on; the replica resource sets none, and the provider's default is false there
    assert source["replicas"] == [{"region": "eu-west-1", "point_in_time_recovery": {"enabled": False}},
                                  {"region": "us-west-2", "point_in_time_recovery": {"enabled": False}}]
    assert "# Terraform aws_dynamodb_table_replica.west (no point_in_time_recovery: false)" in got.text
    assert "# Terraform aws_dynamodb_table_replica.west: provider aws.west region" in got.text
    assert source["ttl"] == {"attribute": "expires"}
    assert source["stream"] == "new_and_old_images"
    assert source["point_in_time_recovery"] == {"enabled": True}
    assert (source["deletion_protection"], source["table_class"]) == (True, "standard_infrequent_access")
    assert source["tags"]["Team"] == "shop" and source["tags"]["Table"] == "Orders-prod"
    assert any("data.aws_caller_identity.current.account_id" in m for m in got.codes("estimate"))
    assert source["gsis"] == [{"name": "by-status", "key": {"partition": {"name": "status", "type": "S"},
                                                            "sort": {"name": "placed", "type": "N"}},
                               "projection": "keys_only", "reads": 10, "writes": 5,
                               "autoscaling": {"min_writes": 5, "max_writes": 40, "target_utilization": 70.0}}]
    assert source["lsis"] == [{"name": "by-status-local", "sort": {"name": "status", "type": "S"}, "projection": "all"}]
    lost = " ".join(got.codes("not-in-spec"))
    assert "AWS KMS key" in lost and "Cloud KMS key" in lost
    assert "point-in-time recovery" not in lost and "auto scaling of index" not in lost  # fields now (#19)
    assert "# Terraform aws_appautoscaling_policy.reads.target_tracking_scaling_policy_configuration[0]" in got.text

    unset = import_files(tmp_path, HERE / "orders-global.tf")
    assert any("variable min_reads has no value: pass --parameter min_reads=VALUE, or set it in a --var-file" in m
               for m in unset.codes("estimate"))


def test_provider_docs_replica_resource_through_provider_aliases(tmp_path):
    got = import_files(tmp_path, HERE / "hashicorp-dynamodb-table-replica.tf")
    source = got.table("TestTable")
    assert source["region"] == "us-west-2" and not got.codes("default-region")
    assert source["key"] == {"partition": {"name": "BrodoBaggins", "type": "S"}}
    assert source["billing"] == "on_demand" and source["stream"] == "new_and_old_images"
    assert source["replicas"] == [{"region": "us-east-2"}]
    assert "# Terraform aws_dynamodb_table_replica.example: provider aws.alt region" in got.text
    assert any(m.startswith("tags of the replica in us-east-2") for m in got.codes("not-in-spec"))
    assert "tags" not in source and "lsis" not in source and "gsis" not in source
    assert source["point_in_time_recovery"] == {"enabled": False} and source["deletion_protection"] is False


def test_a_directory_is_one_configuration(tmp_path):
    """Variables, providers, the table and its auto scaling in separate files, as modules are laid out."""
    config = tmp_path / "infra"
    config.mkdir()
    (config / "main.tf").write_text((HERE / "hashicorp-dynamodb-table.tf").read_text())
    (config / "providers.tf").write_text('provider "aws" {\n  region = var.region\n}\n')
    (config / "variables.tf").write_text('variable "region" {\n  default = "eu-west-1"\n}\n')
    (config / "autoscaling.tf").write_text((HERE / "hashicorp-appautoscaling-dynamodb.tf").read_text().replace(
        '"table/tableName"', '"table/${aws_dynamodb_table.basic-dynamodb-table.name}"'))
    got = import_files(tmp_path, config)
    source = got.table("GameScores")
    assert source["region"] == "eu-west-1" and not got.codes("default-region")
    # writes do not scale: only the read range (#19: reads and writes scale separately)
    assert source["autoscaling"] == {"min_reads": 5, "max_reads": 100, "target_utilization": 70.0}
    assert "# Terraform aws_appautoscaling_target.dynamodb_table_read_target.min_capacity" in got.text

    (config / "broken.tf").write_text('resource "aws_dynamodb_table" "x" {\n  name = \n}\n')
    (config / "main.tf").write_text((HERE / "hashicorp-dynamodb-table.tf").read_text().replace('"UserId"\n', '"Id"\n', 1))
    result = CliRunner().invoke(main, ["import", str(config), "--instance", "shop-prod"])
    assert result.exit_code == 2 and f"{config / 'broken.tf'}:2:" in result.stderr, result.stderr
    (config / "broken.tf").unlink()
    result = CliRunner().invoke(main, ["import", str(config), "--instance", "shop-prod"])
    assert result.exit_code == 2 and result.stderr.startswith(f"{config / 'main.tf'}:1:"), result.stderr
    empty = CliRunner().invoke(main, ["import", str(tmp_path / "infra" / ".."), "--instance", "shop-prod"])
    assert empty.exit_code == 2 and "must hold Terraform .tf files" in empty.stderr


def test_provider_docs_autoscaling_example_alone_names_the_missing_table():
    result = CliRunner().invoke(main, ["import", str(HERE / "hashicorp-appautoscaling-dynamodb.tf"),
                                       "--instance", "shop-prod"])
    assert result.exit_code == 2 and "no aws_dynamodb_table here" in result.stderr


def _check_events(source: dict) -> None:
    assert source["region"] == "eu-central-1"
    assert source["key"] == {"partition": {"name": "device", "type": "S"}, "sort": {"name": "at", "type": "N"}}
    assert source["billing"] == "on_demand" and "reads" not in source
    assert source["replicas"] == [{"region": "eu-west-3"}]
    assert source["ttl"] == {"attribute": "expires_at"}
    assert source["stream"] == "new_image"
    assert source["point_in_time_recovery"] == {"enabled": True, "recovery_period_days": 14}
    assert (source["table_class"], source["deletion_protection"]) == ("standard", False)
    assert source["tags"] == {"Service": "telemetry"}
    assert source["gsis"] == [{"name": "by-kind", "key": {"partition": {"name": "kind", "type": "S"},
                                                          "sort": {"name": "at", "type": "N"}},
                               "projection": ["device", "payload"]}]
    assert "lsis" not in source


def test_terraform_show_json_state(tmp_path):
    got = import_files(tmp_path, HERE / "show-state.json")
    _check_events(got.table("Events"))
    assert not got.codes("not-in-spec"), "empty state blocks are not settings"
    assert any("peak" in m for m in got.codes("estimate"))


def test_terraform_show_json_plan(tmp_path):
    """A plan holds the same resources under planned_values; its region is in the provider configuration."""
    doc = json.loads((HERE / "show-state.json").read_text())
    values = doc.pop("values")
    del values["root_module"]["resources"][0]["values"]["arn"]
    doc["planned_values"] = values
    values["root_module"]["child_modules"] = [{"address": "module.west", "resources": [{
        "address": "module.west.aws_dynamodb_table_replica.events", "mode": "managed",
        "type": "aws_dynamodb_table_replica", "name": "events", "provider_name": "registry.terraform.io/hashicorp/aws",
        "schema_version": 0, "values": {"arn": "arn:aws:dynamodb:eu-north-1:123456789012:table/Events",
                                        "global_table_arn": "arn:aws:dynamodb:eu-central-1:123456789012:table/Events",
                                        "point_in_time_recovery": False, "tags": None}, "sensitive_values": {}}]}]
    doc["configuration"] = {"provider_config": {"aws": {"name": "aws", "full_name": "registry.terraform.io/hashicorp/aws",
                                                        "expressions": {"region": {"constant_value": "eu-central-1"}}}}}
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(doc))
    got = import_files(tmp_path, plan)
    source = got.table("Events")
    # the replica's own PITR (off, unlike the table's) is a replica field now, not a loss (#19)
    assert source.pop("replicas") == [{"region": "eu-west-3"},
                                      {"region": "eu-north-1", "point_in_time_recovery": {"enabled": False}}]
    source["replicas"] = [{"region": "eu-west-3"}]
    _check_events(source)
    assert "# Terraform module.west.aws_dynamodb_table_replica.events.arn" in got.text
    assert not any("point_in_time_recovery" in m for m in got.codes("not-in-spec"))
    assert "# Terraform provider \"aws\" region" in got.text


def test_count_dynamic_blocks_and_locals_are_evaluated(tmp_path):
    """Was: count, dynamic blocks and modules "not expanded"; now evaluated as `terraform plan` does."""
    source = tmp_path / "dynamic.tf"
    source.write_text('''variable "indexes" {
  default = ["by-id"]
}

locals {
  base = "Thi"
  name = "${local.base}ngs"
}

resource "aws_dynamodb_table" "t" {
  count        = 1
  name         = local.name
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "id"
  attribute {
    name = "id"
    type = "S"
  }
  dynamic "global_secondary_index" {
    for_each = var.indexes
    content {
      name            = global_secondary_index.value
      hash_key        = "id"
      projection_type = "ALL"
    }
  }
  lifecycle {
    ignore_changes = [read_capacity]
  }
}
''')
    got = import_files(tmp_path, source)
    table = got.table("Things")
    assert table["billing"] == "on_demand" and [g["name"] for g in table["gsis"]] == ["by-id"]
    assert not got.codes("not-evaluated")
    assert "# Terraform aws_dynamodb_table.t[0].name" in got.text
    assert "# Terraform aws_dynamodb_table.t[0].global_secondary_index[0].name" in got.text


BAD_TABLE = '''resource "aws_dynamodb_table" "t" {
  name     = "T"
  hash_key = "pk"
  read_capacity = "lots"
  attribute {
    name = "id"
    type = "S"
  }
}
'''


@pytest.mark.parametrize("name, text, where, says", [
    ("broken.tf", 'resource "aws_dynamodb_table" "t" {\n  name = \n}\n', "broken.tf:2:",
     "not valid HCL (unexpected '}')"),
    ("unclosed.tf", 'resource "aws_dynamodb_table" "t" {\n  name = "T"\n', "unclosed.tf:", "not valid HCL"),
    ("key.tf", BAD_TABLE, "key.tf:1:", "aws_dynamodb_table.t: key attribute 'pk' has no attribute block"),
    ("type.tf", BAD_TABLE.replace('"pk"', '"id"'), "type.tf:1:", "read_capacity must be a whole number, got 'lots'"),
    ("bucket.tf", 'resource "aws_s3_bucket" "b" {\n  bucket = "x"\n}\n', "bucket.tf:1:", "no aws_dynamodb_table"),
    ("empty.json", '{"format_version": "1.0", "values": {"root_module": {}}}', "empty.json:1:",
     "no aws_dynamodb_table"),
])
def test_broken_terraform_exits_2_with_the_location(tmp_path, name, text, where, says):
    source = tmp_path / name
    source.write_text(text)
    out = tmp_path / "out.yaml"
    result = CliRunner().invoke(main, ["import", str(source), "--instance", "shop-prod", "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[0].startswith(str(tmp_path / where)), result.stderr
    assert says in result.stderr, result.stderr
    assert "Traceback" not in result.output + result.stderr and not out.exists()


def test_from_terraform_reads_hcl_under_any_name(tmp_path):
    source = tmp_path / "table.hcl"
    source.write_text((HERE / "hashicorp-dynamodb-table.tf").read_text())
    result = CliRunner().invoke(main, ["import", str(source), "--instance", "shop-prod", "--from", "terraform"])
    assert result.exit_code == 0, result.stderr
    assert "table: GameScores  # Terraform aws_dynamodb_table.basic-dynamodb-table.name" in result.stdout
    detected = CliRunner().invoke(main, ["import", str(source), "--instance", "shop-prod"])
    assert detected.exit_code == 0, detected.stderr


MRSC_TF = """\
resource "aws_dynamodb_table" "carts" {
  name         = "Carts"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "id"

  attribute {
    name = "id"
    type = "S"
  }
  attribute {
    name = "owner"
    type = "S"
  }

  on_demand_throughput {
    max_read_request_units  = 3000
    max_write_request_units = -1
  }
  warm_throughput {
    read_units_per_second  = 12000
    write_units_per_second = 4000
  }

  global_secondary_index {
    name            = "by-owner"
    hash_key        = "owner"
    projection_type = "KEYS_ONLY"
    on_demand_throughput {
      max_write_request_units = 500
    }
  }

  replica {
    region_name      = "us-west-2"
    consistency_mode = "STRONG"
  }
  global_table_witness {
    region_name = "us-east-2"
  }
}

provider "aws" {
  region = "us-east-1"
}
"""


def test_on_demand_limits_warm_throughput_and_mrsc_with_a_witness(tmp_path):
    """The AWS provider's on_demand_throughput, warm_throughput (table and index),
    replica consistency_mode and global_table_witness blocks: spec fields since #19."""
    path = tmp_path / "carts.tf"
    path.write_text(MRSC_TF)
    got = import_files(tmp_path, path)
    source = got.table("Carts")
    assert source["max_throughput"] == {"reads_per_second": 3000.0}  # -1: no write limit
    assert source["warm_throughput"] == {"reads_per_second": 12000.0, "writes_per_second": 4000.0}
    assert source["gsis"][0]["max_throughput"] == {"writes_per_second": 500.0}
    assert source["multi_region_consistency"] == "strong" and source["witness_region"] == "us-east-2"
    assert not any("throughput" in m for m in got.codes("not-in-spec"))
    assert any(w.code == "no-strong-multi-region" for w in got.plan.warnings)


def test_a_replica_block_without_pitr_has_none_whatever_the_tables(tmp_path):
    """`replica { region_name = ... }` leaves point_in_time_recovery at the provider's default,
    false: the spec's replica default (the table's) would price PITR where there is none."""
    path = tmp_path / "t.tf"
    path.write_text('''resource "aws_dynamodb_table" "t" {
  name         = "Things"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "id"
  attribute {
    name = "id"
    type = "S"
  }
  stream_enabled   = true
  stream_view_type = "NEW_AND_OLD_IMAGES"
  point_in_time_recovery {
    enabled = true
  }
  replica {
    region_name = "us-east-2"
  }
}
''')
    got = import_files(tmp_path, path, region="us-east-1")
    source = got.table("Things")
    assert source["point_in_time_recovery"] == {"enabled": True}
    assert source["replicas"] == [{"region": "us-east-2", "point_in_time_recovery": {"enabled": False}}]
