"""Terraform evaluated as a plan would: each case is a symptom issue #28 reported on real team
modules (written out here in their shape), now read as Terraform reads it."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from ddb2bigtable.cli.app import main

from ..helpers import import_files

SEVEN_TABLES = """\
variable "project" {
  default = "shop"
}
variable "environment" {
  default = "production"
}

locals {
  entities = ["users", "categories", "posts", "projects", "skills", "education"]
  tables = merge(
    { for entity in local.entities : entity => { hash_key = "id", attributes = { id = "N" }, gsis = [], ttl = null } },
    {
      posts = {
        hash_key   = "id"
        attributes = { id = "N", published_flag = "S", published_at = "S" }
        gsis = [
          { name = "published-index", hash_key = "published_flag", range_key = "published_at", projection_type = "ALL" },
        ]
        ttl = null
      }
      meta = { hash_key = "pk", attributes = { pk = "S" }, gsis = [], ttl = "expires" }
    },
  )
}

resource "aws_dynamodb_table" "this" {
  for_each = local.tables

  name                        = "${var.project}-${each.key}"
  billing_mode                = "PAY_PER_REQUEST"
  hash_key                    = each.value.hash_key
  deletion_protection_enabled = var.environment == "production"

  dynamic "attribute" {
    for_each = each.value.attributes
    content {
      name = attribute.key
      type = attribute.value
    }
  }

  dynamic "global_secondary_index" {
    for_each = each.value.gsis
    iterator = gsi
    content {
      name            = gsi.value.name
      hash_key        = gsi.value.hash_key
      range_key       = lookup(gsi.value, "range_key", null)
      projection_type = gsi.value.projection_type
    }
  }

  dynamic "ttl" {
    for_each = each.value.ttl == null ? [] : [each.value.ttl]
    content {
      attribute_name = ttl.value
      enabled        = true
    }
  }
}
"""


def _write(tmp_path: Path, text: str, name: str = "main.tf") -> Path:
    folder = tmp_path / "tf"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    return folder


def test_for_each_over_a_local_gives_every_table_with_its_dynamic_blocks(tmp_path):
    got = import_files(tmp_path, _write(tmp_path, SEVEN_TABLES), region="eu-west-1")
    assert sorted(t["id"] for t in got.data["tables"]) == [
        "shop-categories", "shop-education", "shop-meta", "shop-posts", "shop-projects", "shop-skills", "shop-users"]
    posts = got.table("shop-posts")
    assert posts["key"] == {"partition": {"name": "id", "type": "N"}}
    assert posts["gsis"] == [{"name": "published-index", "key": {"partition": {"name": "published_flag", "type": "S"},
                                                                "sort": {"name": "published_at", "type": "S"}},
                              "projection": "all"}]
    assert posts["deletion_protection"] is True and "ttl" not in posts
    meta = got.table("shop-meta")
    assert meta["key"] == {"partition": {"name": "pk", "type": "S"}} and meta["ttl"] == {"attribute": "expires"}
    assert '# Terraform aws_dynamodb_table.this["posts"].global_secondary_index[0].hash_key' in got.text
    staging = import_files(tmp_path, _write(tmp_path, SEVEN_TABLES), region="eu-west-1",
                           parameters=(("environment", "staging"), ("project", "web")))
    assert staging.table("web-users")["deletion_protection"] is False


REPLICAS_AND_NAMES = """\
variable "regions" {
  type    = list(string)
  default = ["eu-west-1", "ap-southeast-2"]
}
variable "team" {}
variable "view" {
  default = null
}
variable "stream_on" {
  default = true
}

locals {
  fqname = "${var.team}-orders"
}

resource "aws_dynamodb_table" "orders" {
  name             = local.fqname
  billing_mode     = "PAY_PER_REQUEST"
  hash_key         = "id"
  stream_enabled   = var.stream_on
  stream_view_type = var.stream_on == false ? null : var.view
  attribute {
    name = "id"
    type = "S"
  }
  dynamic "replica" {
    for_each = toset(var.regions)
    content {
      region_name = replica.value
    }
  }
}
"""


def test_dynamic_replicas_a_local_name_and_variables_nobody_set(tmp_path):
    folder = _write(tmp_path, REPLICAS_AND_NAMES)
    (folder / "terraform.tfvars").write_text('team = "payments"\nteam_name = "typo"\n')
    (folder / "prod.auto.tfvars").write_text('view = "KEYS_ONLY"\n')
    (folder / "z.auto.tfvars.json").write_text('{"view": "NEW_IMAGE", "regions": ["eu-west-1", "ap-southeast-2"]}')
    got = import_files(tmp_path, folder, region="us-east-1")
    table = got.table("payments-orders")
    assert [r["region"] for r in table["replicas"]] == ["ap-southeast-2", "eu-west-1"]  # a set: sorted
    assert table["stream"] == "new_image"
    assert got.codes("unknown-parameter") == ["team_name is not a variable of this configuration (Terraform warns "
                                              "too): check its spelling"]
    assert "# Terraform aws_dynamodb_table.orders.stream_view_type" in got.text

    for name in ("prod.auto.tfvars", "terraform.tfvars", "z.auto.tfvars.json"):
        (folder / name).unlink()
    unset = import_files(tmp_path, folder, region="us-east-1")
    (entry,) = unset.data["tables"]
    # no expression reaches the spec: the name is a placeholder from the address, named in the estimate
    assert entry["source"]["table"] == "orders" and "local.fqname" not in unset.text
    said = " ".join(unset.codes("estimate"))
    assert "variable team has no value: pass --parameter team=VALUE, or set it in a --var-file" in said
    # stream_enabled resolves to true and the view is null: the stream is not dropped silently
    assert entry["source"]["stream"] != "none"
    assert "stream_view_type" in said


def test_the_newer_gsi_key_schema_blocks(tmp_path):
    folder = _write(tmp_path, """\
resource "aws_dynamodb_table" "t" {
  name         = "Tasks"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "task_id"
  attribute {
    name = "task_id"
    type = "S"
  }
  attribute {
    name = "user_id"
    type = "S"
  }
  attribute {
    name = "created_at"
    type = "N"
  }
  global_secondary_index {
    name            = "UserIndex"
    projection_type = "KEYS_ONLY"
    key_schema {
      attribute_name = "user_id"
      key_type       = "HASH"
    }
    key_schema {
      attribute_name = "created_at"
      key_type       = "RANGE"
    }
  }
}
""")
    got = import_files(tmp_path, folder, region="us-east-1")
    expected = [{"name": "UserIndex", "projection": "keys_only", "key": {
        "partition": {"name": "user_id", "type": "S"}, "sort": {"name": "created_at", "type": "N"}}}]
    assert got.table("Tasks")["gsis"] == expected
    # the same index from nested dynamic blocks, as a team mirroring CloudFormation's KeySchema writes it
    (folder / "main.tf").write_text((folder / "main.tf").read_text().replace("""    key_schema {
      attribute_name = "user_id"
      key_type       = "HASH"
    }
    key_schema {
      attribute_name = "created_at"
      key_type       = "RANGE"
    }""", """    dynamic "key_schema" {
      for_each = [{ name = "user_id", role = "HASH" }, { name = "created_at", role = "RANGE" }]
      content {
        attribute_name = key_schema.value.name
        key_type       = key_schema.value.role
      }
    }"""))
    assert "dynamic" in (folder / "main.tf").read_text()
    assert import_files(tmp_path, folder, region="us-east-1").table("Tasks")["gsis"] == expected


def test_an_unknown_for_each_imports_one_instance_and_names_what_to_give(tmp_path):
    folder = _write(tmp_path, """\
variable "tables" {}

resource "aws_dynamodb_table" "t" {
  for_each     = var.tables
  name         = "app-${each.key}"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = each.value.hash_key
  dynamic "attribute" {
    for_each = each.value.attributes
    content {
      name = attribute.key
      type = attribute.value
    }
  }
}
""")
    got = import_files(tmp_path, folder, region="us-east-1")
    (entry,) = got.data["tables"]
    assert entry["id"] == "table-t" and "each." not in got.text and "var." not in got.text
    assert any("for_each is not known (variable tables has no value: pass --parameter tables=VALUE" in m
               for m in got.codes("not-evaluated"))
    given = import_files(tmp_path, folder, region="us-east-1", parameters=(
        ("tables", '{ a = { hash_key = "pk", attributes = { pk = "S" } }, b = { hash_key = "n", '
                   'attributes = { n = "N" } } }'),))
    assert [t["id"] for t in given.data["tables"]] == ["app-a", "app-b"]
    assert given.table("app-b")["key"] == {"partition": {"name": "n", "type": "N"}}


def test_a_variable_whose_default_refers_to_itself_is_worded_so(tmp_path):
    folder = _write(tmp_path, """\
variable "name" {
  default = var.name
}
resource "aws_dynamodb_table" "t" {
  name         = var.name
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "id"
  attribute {
    name = "id"
    type = "S"
  }
}
""")
    got = import_files(tmp_path, folder, region="us-east-1")
    said = " ".join(got.codes("estimate"))
    assert "the default of variable name refers to itself" in said and "pass --parameter name=VALUE" in said
    assert "not a declared variable" not in said


def test_a_local_that_refers_to_itself_is_named_as_a_cycle(tmp_path):
    folder = _write(tmp_path, """\
locals {
  name = "${local.name}-x"
}
resource "aws_dynamodb_table" "t" {
  name         = local.name
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "id"
  attribute {
    name = "id"
    type = "S"
  }
}
""")
    got = import_files(tmp_path, folder, region="us-east-1")
    assert any("local.name refers to itself (local.name -> local.name)" in m for m in got.codes("estimate"))


def test_a_missing_local_module_folder_exits_2_at_the_module_block(tmp_path):
    folder = _write(tmp_path, 'module "db" {\n  source = "./nowhere"\n}\n')
    result = CliRunner().invoke(main, ["import", str(folder), "--instance", "shop-prod"])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"{folder / 'main.tf'}:1:1: ") and "is not a folder" in result.stderr


def test_a_for_each_over_an_empty_default_names_the_variable_to_give(tmp_path):
    folder = _write(tmp_path, """\
variable "tables" {
  type = map(object({
    hash_key     = string
    billing_mode = optional(string, "PAY_PER_REQUEST")
  }))
  default = {}
}
resource "aws_dynamodb_table" "this" {
  for_each     = var.tables
  name         = each.key
  billing_mode = each.value.billing_mode
  hash_key     = each.value.hash_key
  attribute {
    name = each.value.hash_key
    type = "S"
  }
}
""")
    result = CliRunner().invoke(main, ["import", str(folder), "--instance", "shop-prod"])
    assert result.exit_code == 2
    assert "aws_dynamodb_table.this: its for_each gives no instances (it comes from var.tables: pass --parameter " \
           "tables=VALUE" in result.stderr
    got = import_files(tmp_path, folder, region="us-east-1", parameters=(("tables", '{ Orders = { hash_key = "id" } }'),))
    assert got.table("Orders")["billing"] == "on_demand"  # optional(string, "PAY_PER_REQUEST")


def test_file_reads_inside_the_configuration_only(tmp_path):
    """A team's table list in a JSON file beside the module (`jsondecode(file(...))`) is read; a path
    outside the configuration's folders is not, and says so."""
    folder = _write(tmp_path, """\
locals {
  data = jsondecode(file("${path.module}/config/tables.json"))
}
resource "aws_dynamodb_table" "t" {
  for_each     = { for entry in local.data.tables : entry.name => entry }
  name         = each.key
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = each.value.hash_key
  attribute {
    name = each.value.hash_key
    type = "S"
  }
}
resource "aws_dynamodb_table" "u" {
  name         = "Host-${file("/etc/hostname")}"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "id"
  attribute {
    name = "id"
    type = "S"
  }
}
""")
    (folder / "config").mkdir()
    (folder / "config" / "tables.json").write_text(
        '{"tables": [{"name": "Users", "hash_key": "uid"}, {"name": "Carts", "hash_key": "cid"}]}')
    got = import_files(tmp_path, folder, region="us-east-1")
    assert got.table("Users")["key"] == {"partition": {"name": "uid", "type": "S"}}
    assert got.table("Carts")["key"] == {"partition": {"name": "cid", "type": "S"}}
    assert got.table("table-u")["table"] == "table-u"
    assert any('file("/etc/hostname") points outside the configuration\'s folders and is not read' in m
               for m in got.codes("estimate"))


def test_a_module_call_gets_the_provider_it_is_given(tmp_path):
    folder = _write(tmp_path, """\
provider "aws" {
  region = "eu-west-1"
}
provider "aws" {
  alias  = "us"
  region = "us-east-1"
}
module "home" {
  source = "./table"
  name   = "Home"
}
module "abroad" {
  source    = "./table"
  name      = "Abroad"
  providers = { aws = aws.us }
}
""")
    (folder / "table").mkdir()
    (folder / "table" / "main.tf").write_text("""\
variable "name" {}
resource "aws_dynamodb_table" "t" {
  name         = var.name
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "id"
  attribute {
    name = "id"
    type = "S"
  }
}
""")
    (folder / "table" / "extra.tf.json").write_text('{"resource": {}}')
    got = import_files(tmp_path, folder)
    assert (got.table("Home")["region"], got.table("Abroad")["region"]) == ("eu-west-1", "us-east-1")
    assert not got.codes("default-region")
    assert got.codes("not-evaluated") == ["JSON configuration files (.tf.json) are not read: write its resources as "
                                          ".tf, or import `terraform show -json` output"]


def test_every_unknown_argument_is_a_valid_placeholder_naming_its_variable(tmp_path):
    names = ("mode", "cls", "stream", "gsi", "r", "pitr", "ttl_on")
    folder = _write(tmp_path, "".join(f'variable "{n}" {{}}\n' for n in names) + """\
resource "aws_dynamodb_table" "t" {
  name             = "Things"
  billing_mode     = var.mode
  hash_key         = "id"
  table_class      = var.cls
  stream_enabled   = var.stream
  stream_view_type = "NEW_IMAGE"
  attribute {
    name = "id"
    type = "S"
  }
  global_secondary_index {
    name            = var.gsi
    hash_key        = "id"
    projection_type = "ALL"
  }
  replica {
    region_name = var.r
  }
  point_in_time_recovery {
    enabled = var.pitr
  }
  ttl {
    enabled        = var.ttl_on
    attribute_name = "exp"
  }
}
""")
    got = import_files(tmp_path, folder, region="us-east-1")  # the spec validates and plans
    said = " ".join(got.codes("estimate"))
    for name in names:
        assert f"variable {name} has no value: pass --parameter {name}=VALUE" in said, name
    table = got.table("Things")
    assert table["replicas"] == [{"region": "us-west-2"}] and table["stream"] == "new_image"
    assert table["ttl"] == {"attribute": "exp"} and "var." not in got.text


def test_two_instances_with_one_name_are_named_at_the_second(tmp_path):
    folder = _write(tmp_path, """\
resource "aws_dynamodb_table" "t" {
  for_each     = toset(["a", "b"])
  name         = "Same"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "id"
  attribute {
    name = "id"
    type = "S"
  }
}
""")
    result = CliRunner().invoke(main, ["import", str(folder), "--instance", "shop-prod", "--region", "us-east-1"])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"{folder / 'main.tf'}:1:1: "), result.stderr
    assert """aws_dynamodb_table.t["b"] has the name 'Same' in us-east-1, as aws_dynamodb_table.t["a"] does""" \
        in result.stderr


def test_a_module_whose_inputs_use_its_own_outputs_is_named_as_a_cycle(tmp_path):
    folder = _write(tmp_path, 'module "x" {\n  source = "./m"\n  name   = module.x.table\n}\n')
    (folder / "m").mkdir()
    (folder / "m" / "main.tf").write_text("""\
variable "name" {}
resource "aws_dynamodb_table" "t" {
  name         = var.name
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "id"
  attribute {
    name = "id"
    type = "S"
  }
}
output "table" {
  value = aws_dynamodb_table.t.name
}
""")
    got = import_files(tmp_path, folder, region="us-east-1")
    assert [t["id"] for t in got.data["tables"]] == ["x.t"]
    assert any("module.x refers to itself" in m for m in got.codes("estimate"))
