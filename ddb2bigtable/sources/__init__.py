"""Specs from what teams already have: DynamoDB table definitions in, a spec v1 out.

One room per kind of source, and what every source shares at this level:
- `cloudformation/`: CloudFormation / SAM templates and CDK output, intrinsics evaluated.
- `terraform/`: `.tf` configurations evaluated as `terraform plan` would, and `terraform show -json`.
- `aws/`: live tables through boto3 (DescribeTable, TTL, backups, auto scaling, CloudWatch,
  replicas) and `aws dynamodb describe-table` output.

Shared:
- `detect.read_sources`: source files in (kind detected from the content, or forced),
  `model.Imported` out, every value tagged with its origin; bad input is `InputError`.
- `located.parse`: JSON/YAML with each value's line and column.
- `export_types.add_mappings`: `--export` attribute types sampled into the mapping's attributes.
- `emit.build`: the tables -> a spec document, estimates and losses as `model.Notice`;
  `emit.to_yaml` (a comment on every value) and `emit.to_json`.
- `estimates.complete`: what no source gave, filled in as explicit estimates.
- `spec_file.check_spec`: the written spec read back through the spec's own checks.
"""
