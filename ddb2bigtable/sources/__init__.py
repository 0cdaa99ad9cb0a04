"""Specs from what teams already have: DynamoDB table definitions in, a spec v1 out.

- `detect.read_sources`: source files in (kind detected from the content, or forced),
  `model.Imported` out, every value tagged with its origin; bad input is `InputError`.
- `aws_live.read`: live tables (`aws://REGION/TABLE`, `aws://REGION/*`) through boto3
  (`aws_clients`: clients and errors), DescribeTable read by `describe_table`, plus TTL,
  backups, tags, `live_autoscaling`, `cloudwatch` (p99 peak and average), `live_replicas`.
- `export_types.add_mappings`: `--export` attribute types sampled into the mapping's attributes.
- `describe_table.read`: `aws dynamodb describe-table` output.
- `cloudformation.read`: CloudFormation / SAM templates (YAML short forms or JSON), with
  `intrinsics.resolve` for parameters and intrinsic functions.
- `terraform.read_configuration`: `.tf` files and folders, evaluated as `terraform plan` would
  (`tf_syntax` parses with python-hcl2, `tf_files` reads within limits, `tf_expr`,
  `tf_values` and `tf_functions` evaluate, `tf_variables`, `tf_module` and `tf_calls` give blocks their
  meaning), and `terraform.read`: `terraform show -json` output; `tf_tables` maps one
  `aws_dynamodb_table`, reusing the CloudFormation reader's `Fields` and auto scaling.
- `emit.build`: the tables -> a spec document, estimates and losses as `model.Notice`;
  `emit.to_yaml` (a comment on every value) and `emit.to_json`.
- `estimates.complete`: what no source gave, filled in as explicit estimates.
"""
