"""Live DynamoDB tables through boto3, and `aws dynamodb describe-table` output.

- `live.read`: `aws://REGION/TABLE` and `aws://REGION/*`: DescribeTable, TTL, backups, tags.
- `describe_table.read`: DescribeTable's answer (from the API or the AWS CLI) -> a definition.
- `clients.Clients`: boto3 clients with timeouts, the endpoints boto3 reads, and their errors.
- `autoscaling.read_scaling`, `replicas.with_replicas`, `cloudwatch.read_usage` (p99 peak and
  average of consumed capacity).
"""
