"""The Cloud Monitoring metric types the alerts and the dashboard read, with their source.

Bigtable's: cloud.google.com/monitoring/api/metrics_gcp_a_b#bigtable and
cloud.google.com/bigtable/docs/metrics (read 2026-11-24): cluster metrics on the
`bigtable_cluster` resource (labels instance, cluster, zone), server and replication
metrics on `bigtable_table` (labels instance, cluster, table). Dataflow exports a
pipeline's Beam counters as `dataflow.googleapis.com/job/user_counter` with the counter's
name in `metric.labels.metric_name` (cloud.google.com/dataflow/docs/guides/using-cloud-monitoring,
read 2026-11-24).
"""

CLUSTER_RESOURCE, TABLE_RESOURCE, DATAFLOW_RESOURCE = "bigtable_cluster", "bigtable_table", "dataflow_job"
CPU = "bigtable.googleapis.com/cluster/cpu_load"
CPU_HOTTEST = "bigtable.googleapis.com/cluster/cpu_load_hottest_node"
STORAGE = "bigtable.googleapis.com/cluster/storage_utilization"
NODES = "bigtable.googleapis.com/cluster/node_count"
REPLICATION_DELAY = "bigtable.googleapis.com/replication/max_delay"
SERVER_ERRORS = "bigtable.googleapis.com/server/error_count"
SERVER_REQUESTS = "bigtable.googleapis.com/server/request_count"
LATENCY = "bigtable.googleapis.com/server/latencies"
DATAFLOW_COUNTER = "dataflow.googleapis.com/job/user_counter"


def bigtable_filter(metric: str, resource: str, instance_id: str, cluster_id: str | None = None) -> str:
    """A Monitoring filter for one Bigtable metric of an instance (and one of its clusters):
    the alerts and the dashboard read the same series."""
    text = f'metric.type="{metric}" AND resource.type="{resource}" AND resource.labels.instance="{instance_id}"'
    return text + (f' AND resource.labels.cluster="{cluster_id}"' if cluster_id else "")
