"""Terraform as teams write it, on real public modules (tests/fixtures/README.md names them):
terraform-aws-modules/dynamodb-table's examples through their module calls, storacha's
storoku (a `for_each` module call over a variable, `dynamic` attribute/GSI/LSI blocks,
`optional()` object attributes) and seyedk/aws-sls-tf (a registry module called with
`for_each` over a local, installed by `terraform init`). Each spec is compared field by
field with what the module and its inputs say."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from ddb2bigtable.cli.app import main

from ..helpers import FIXTURES, import_files

HERE = FIXTURES / "terraform"
TAM = HERE / "terraform-aws-dynamodb-table"
TAGS = {"Terraform": "true", "Environment": "staging"}
ID_N, TITLE_S, AGE_N = {"name": "id", "type": "N"}, {"name": "title", "type": "S"}, {"name": "age", "type": "N"}


def _without_estimates(source: dict) -> dict:
    """The fields the module gives (peak, sizes and the application's habits are estimates)."""
    for field in ("peak", "item_size_kb", "storage_gb", "read_consistency", "write_mode", "conditional_writes"):
        source.pop(field, None)
    return source


def test_module_basic_example_through_its_module_call(tmp_path):
    got = import_files(tmp_path, TAM / "examples" / "basic")
    (entry,) = got.data["tables"]  # module.disabled_dynamodb_table has create_table = false: no table
    source = _without_estimates(entry["source"])
    # the name is "my-table-${random_pet.this.id}": known only after apply, so the id comes from the address
    assert entry["id"] == source.pop("table") == "dynamodb_table.this-0"
    assert any("random_pet.this.id" in m and "the table id is taken from the resource address" in m
               for m in got.codes("estimate"))
    assert source.pop("tags") == {**TAGS, "Name": "unresolved-this-id"}
    assert source == {
        "region": "eu-west-1", "key": {"partition": ID_N, "sort": TITLE_S}, "billing": "on_demand",
        "max_throughput": {"reads_per_second": 1.0, "writes_per_second": 1.0}, "stream": "none",
        "point_in_time_recovery": {"enabled": False}, "table_class": "standard", "deletion_protection": False,
        "gsis": [{"name": "TitleIndex", "key": {"partition": TITLE_S, "sort": AGE_N}, "projection": ["id"],
                  "max_throughput": {"reads_per_second": 1.0, "writes_per_second": 1.0}}]}
    assert "# Terraform module.dynamodb_table.aws_dynamodb_table.this[0].global_secondary_index[0].hash_key" \
        in got.text
    assert any("resource-based policy (Terraform module.dynamodb_table.aws_dynamodb_resource_policy.this[0])" in m
               for m in got.codes("not-in-spec"))
    assert not got.codes("not-evaluated")


def test_module_autoscaling_example_links_targets_and_policies_per_gsi(tmp_path):
    got = import_files(tmp_path, TAM / "examples" / "autoscaling")
    (entry,) = got.data["tables"]
    source = _without_estimates(entry["source"])
    # ignore_changes_global_secondary_index = true: the module's third table resource is the one created
    assert source.pop("table") == "dynamodb_table.autoscaled_gsi_ignore-0"
    gsi = source.pop("gsis")
    assert gsi == [{"name": "TitleIndex", "key": {"partition": TITLE_S, "sort": AGE_N}, "projection": ["id"],
                    "reads": 10, "writes": 10,
                    # autoscaling_indexes.TitleIndex, target_value from the module's autoscaling_defaults (70)
                    "autoscaling": {"min_reads": 10, "max_reads": 30, "min_writes": 10, "max_writes": 30,
                                    "target_utilization": 70.0}}]
    assert source.pop("tags")["Environment"] == "staging"
    assert source == {
        "region": "eu-west-1", "key": {"partition": ID_N, "sort": TITLE_S}, "billing": "provisioned",
        "reads": 5, "writes": 5,
        # min_capacity = var.read_capacity, max from autoscaling_read, target_value 45 from the example
        "autoscaling": {"min_reads": 5, "max_reads": 10, "min_writes": 5, "max_writes": 10,
                        "target_utilization": 45.0},
        "stream": "none", "point_in_time_recovery": {"enabled": False}, "table_class": "standard",
        "deletion_protection": False}
    assert "# Terraform module.dynamodb_table.aws_appautoscaling_target.index_read[\"TitleIndex\"].max_capacity" \
        in got.text
    assert not got.codes("autoscaling-unmatched") and not got.codes("unresolved")


def test_module_global_tables_example_replica_stream_and_keys(tmp_path):
    got = import_files(tmp_path, TAM / "examples" / "global-tables")
    (entry,) = got.data["tables"]
    source = _without_estimates(entry["source"])
    source.pop("table"), source.pop("tags")
    assert source == {
        "region": "eu-west-1", "key": {"partition": ID_N, "sort": TITLE_S}, "billing": "on_demand",
        "replicas": [{"region": "us-east-1", "point_in_time_recovery": {"enabled": True}}],
        "stream": "new_and_old_images", "point_in_time_recovery": {"enabled": False}, "table_class": "standard",
        "deletion_protection": False,
        "gsis": [{"name": "TitleIndex", "key": {"partition": TITLE_S, "sort": AGE_N}, "projection": ["id"]}]}
    lost = " ".join(got.codes("not-in-spec"))
    assert "AWS KMS key unresolved-primary-arn" in lost and "of replica us-east-1" in lost


STOROKU_VARS = """\
app         = "upload"
environment = "prod"
tables = [
  {
    name       = "allocations"
    attributes = [{ name = "space", type = "S" }, { name = "multihash", type = "S" }]
    hash_key   = "space"
    range_key  = "multihash"
    global_secondary_indexes = [
      { name = "multihash", hash_key = "multihash", projection_type = "INCLUDE", non_key_attributes = ["size"] },
    ]
  },
  {
    name       = "receipts"
    attributes = [{ name = "cid", type = "S" }, { name = "ts", type = "N" }]
    hash_key   = "cid"
    range_key  = "ts"
    local_secondary_indexes = [{ name = "by-ts", range_key = "ts", projection_type = "KEYS_ONLY" }]
  },
]
"""


def test_team_module_for_each_module_call_with_dynamic_blocks(tmp_path):
    """storoku: `module "tables" { for_each = { for table in var.tables : table.name => table } }`, the
    module's attributes, GSIs and LSIs from `dynamic` blocks; optional() attributes default to [] and null."""
    var_file = tmp_path / "upload.tfvars"
    var_file.write_text(STOROKU_VARS)
    got = import_files(tmp_path, HERE / "storacha-storoku" / "app", var_files=(str(var_file),), region="us-west-2")
    assert [t["id"] for t in got.data["tables"]] == ["prod-upload-allocations", "prod-upload-receipts"]
    # is_production = var.environment == "prod" || startswith(...): PITR and deletion protection on
    common = {"region": "us-west-2", "billing": "on_demand", "stream": "none", "table_class": "standard",
              "point_in_time_recovery": {"enabled": True}, "deletion_protection": True}
    assert _without_estimates(got.table("prod-upload-allocations")) == {
        **common, "table": "prod-upload-allocations", "tags": {"Name": "prod-upload-allocations"},
        "key": {"partition": {"name": "space", "type": "S"}, "sort": {"name": "multihash", "type": "S"}},
        "gsis": [{"name": "multihash", "key": {"partition": {"name": "multihash", "type": "S"}},
                  "projection": ["size"]}]}
    assert _without_estimates(got.table("prod-upload-receipts")) == {
        **common, "table": "prod-upload-receipts", "tags": {"Name": "prod-upload-receipts"},
        "key": {"partition": {"name": "cid", "type": "S"}, "sort": {"name": "ts", "type": "N"}},
        "lsis": [{"name": "by-ts", "sort": {"name": "ts", "type": "N"}, "projection": "keys_only"}]}
    assert '# Terraform module.tables["receipts"].aws_dynamodb_table.table.local_secondary_index[0].range_key' \
        in got.text
    dev = import_files(tmp_path, HERE / "storacha-storoku" / "app", var_files=(str(var_file),),
                       parameters=(("environment", "dev"),), region="us-west-2")
    assert [t["id"] for t in dev.data["tables"]] == ["dev-upload-allocations", "dev-upload-receipts"]
    assert dev.table("dev-upload-receipts")["deletion_protection"] is False


SLS_VARS = """\
lambda_layers    = {}
api_integrations = {}
dynamodb_tables = {
  orders = {
    table_name = "sls-orders"
    hash_key   = "order_id"
    range_key  = "created_at"
    attributes = [
      { name = "order_id", type = "S" },
      { name = "created_at", type = "N" },
      { name = "customer_id", type = "S" },
    ]
    global_secondary_indexes = [
      { name = "by-customer", hash_key = "customer_id", range_key = "created_at", projection_type = "ALL" },
    ]
    tags = { team = "orders" }
  }
  carts = {
    table_name               = "sls-carts"
    hash_key                 = "cart_id"
    range_key                = null
    attributes               = [{ name = "cart_id", type = "S" }]
    global_secondary_indexes = []
    tags                     = {}
  }
}
"""


def _sls(tmp_path: Path, installed: bool) -> Path:
    """seyedk's aws/ folder with a terraform.tfvars, and the registry module where `terraform init` puts it."""
    root = tmp_path / "aws"
    shutil.copytree(HERE / "seyedk-aws-sls-tf" / "aws", root)
    (root / "terraform.tfvars").write_text(SLS_VARS)
    if installed:
        module = root / ".terraform" / "modules" / "dynamodb_tables"
        module.mkdir(parents=True)
        for name in ("main.tf", "autoscaling.tf", "variables.tf"):
            shutil.copy(TAM / name, module / name)
        (root / ".terraform" / "modules" / "modules.json").write_text(json.dumps({"Modules": [
            {"Key": "", "Source": "", "Dir": "."},
            {"Key": "dynamodb_tables", "Source": "registry.terraform.io/terraform-aws-modules/dynamodb-table/aws",
             "Version": "5.5.0", "Dir": ".terraform/modules/dynamodb_tables"}]}))
    return root


def test_team_registry_module_with_for_each_over_a_local(tmp_path):
    """`module "dynamodb_tables" { source = "terraform-aws-modules/dynamodb-table/aws"; for_each =
    local.dynamodb_tables }`, the local from a variable set in terraform.tfvars."""
    got = import_files(tmp_path, _sls(tmp_path, installed=True), region="eu-central-1")
    assert [t["id"] for t in got.data["tables"]] == ["sls-carts", "sls-orders"]
    orders = _without_estimates(got.table("sls-orders"))
    assert orders == {
        "table": "sls-orders", "region": "eu-central-1", "billing": "on_demand", "stream": "none",
        "key": {"partition": {"name": "order_id", "type": "S"}, "sort": {"name": "created_at", "type": "N"}},
        "point_in_time_recovery": {"enabled": False}, "table_class": "standard", "deletion_protection": False,
        "tags": {"team": "orders", "Name": "sls-orders"},
        "gsis": [{"name": "by-customer", "key": {"partition": {"name": "customer_id", "type": "S"},
                                                 "sort": {"name": "created_at", "type": "N"}}, "projection": "all"}]}
    assert got.table("sls-carts")["key"] == {"partition": {"name": "cart_id", "type": "S"}}
    assert '# Terraform module.dynamodb_tables["orders"].aws_dynamodb_table.this[0].name' in got.text


def test_registry_module_before_terraform_init_says_what_to_run(tmp_path):
    root = _sls(tmp_path, installed=False)
    result = CliRunner().invoke(main, ["import", str(root), "--instance", "shop-prod"])
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 2, result.stderr
    said = result.stderr.splitlines()[0]
    assert "module.dynamodb_tables" in said and "run `terraform init`" in said and "terraform show -json" in said


def _cloudposse(tmp_path: Path) -> Path:
    """cloudposse/terraform-aws-dynamodb's examples/complete, with the registry modules it calls (the
    null-label `context` module everywhere, the dynamodb-autoscaler) where `terraform init` puts them."""
    source = HERE / "cloudposse"
    root = tmp_path / "terraform-aws-dynamodb"
    shutil.copytree(source / "terraform-aws-dynamodb", root)
    example = root / "examples" / "complete"
    installed = example / ".terraform" / "modules"
    shutil.copytree(source / "terraform-null-label", installed / "this")
    shutil.copytree(source / "terraform-aws-dynamodb-autoscaler", installed / "autoscaler")
    label = {"Source": "registry.terraform.io/cloudposse/label/null", "Version": "0.25.0",
             "Dir": ".terraform/modules/this"}
    entries = [{"Key": "", "Source": "", "Dir": "."}, {"Key": "this", **label}]
    for table in ("dynamodb_table_1", "dynamodb_table_2"):
        entries += [{"Key": table, "Source": "../../", "Dir": "../.."}, {"Key": f"{table}.this", **label},
                    {"Key": f"{table}.dynamodb_autoscaler", "Source": "registry.terraform.io/cloudposse/"
                     "dynamodb-autoscaler/aws", "Version": "0.16.0", "Dir": ".terraform/modules/autoscaler"},
                    {"Key": f"{table}.dynamodb_autoscaler.this", **label}]
    (installed / "modules.json").write_text(json.dumps({"Modules": entries}))
    return example


def test_cloudposse_module_with_label_context_and_autoscaler_modules(tmp_path):
    """Names built by null-label (`replace` with a /regex/, `setintersection`, `format`, `lookup`), GSIs and
    LSIs from `dynamic` blocks, auto scaling in a nested registry module linked through the table's id."""
    example = _cloudposse(tmp_path)
    got = import_files(tmp_path, example, var_files=(str(example / "fixtures.us-east-2.tfvars"),))
    assert [t["id"] for t in got.data["tables"]] == ["eg-test-first", "eg-test-second"]
    first = _without_estimates(got.table("eg-test-first"))
    include = ["HashKey", "RangeKey"]
    scaling = {"min_reads": 5, "max_reads": 20, "min_writes": 5, "max_writes": 20, "target_utilization": 50.0}
    assert first == {
        "table": "eg-test-first", "region": "us-east-2", "billing": "provisioned", "reads": 5, "writes": 5,
        "key": {"partition": {"name": "HashKey", "type": "S"}, "sort": {"name": "RangeKey", "type": "S"}},
        "autoscaling": scaling, "ttl": {"attribute": "Expires"}, "stream": "none",
        "point_in_time_recovery": {"enabled": True}, "table_class": "standard", "deletion_protection": False,
        "tags": {"Name": "eg-test-first", "Namespace": "eg", "Stage": "test"},
        "gsis": [{"name": "DailyAverageIndex", "key": {"partition": {"name": "DailyAverage", "type": "N"},
                                                       "sort": {"name": "HighWater", "type": "N"}},
                  "projection": include, "reads": 5, "writes": 5, "autoscaling": scaling}],
        "lsis": [{"name": "TimestampSortIndex", "sort": {"name": "Timestamp", "type": "S"}, "projection": include},
                 {"name": "HighWaterIndex", "sort": {"name": "Timestamp", "type": "S"}, "projection": include}]}
    assert any("AWS-managed KMS key (server_side_encryption)" in m for m in got.codes("not-in-spec"))
    assert not got.codes("not-evaluated") and not got.codes("autoscaling-unmatched")
