"""Terraform -> table definitions: configurations evaluated as `terraform plan` would.

- `reader.read_configuration`: `.tf` files and folders; `reader.read`: `terraform show -json`.
- `syntax.parse` (python-hcl2), `files.Files` (reads within limits), `expressions.evaluate`,
  `values.Scope` and `functions.to_text` evaluate; `variables.root_values`, `modules.Module`
  and `calls.configuration` give blocks their meaning (variables, locals, count/for_each,
  dynamic blocks, module calls).
- `tables.read_table`: one `aws_dynamodb_table`, through CloudFormation's `Fields` and auto scaling.
"""
