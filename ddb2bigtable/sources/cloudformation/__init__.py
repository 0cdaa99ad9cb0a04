"""CloudFormation / SAM templates (YAML short forms or JSON) -> table definitions.

- `template.read`: a template's `AWS::DynamoDB::Table`, `AWS::DynamoDB::GlobalTable` and
  `AWS::Serverless::SimpleTable` resources, with their auto scaling.
- `intrinsics.resolve`: parameters and intrinsic functions (`Ref`, `Fn::Sub`, `Fn::If`, ...).
- `tables.read_table`, `global_tables.read_global_table`: one resource each;
  `fields.Fields`: typed reads of a resource's properties (Terraform's reader shares them);
  `autoscaling.scalings`: Application Auto Scaling targets and policies.
"""
