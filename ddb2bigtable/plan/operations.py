"""Day-2 operations: the alerts that tell on-call when reality leaves the plan's numbers.

Every threshold comes from the sizing the plan already did, so an alert means "the
assumption behind this cluster's size no longer holds", with that assumption in its why:

- CPU above the cluster's planned target (its failover headroom is being used up);
- the hottest node above 90 % CPU (a hot tablet: Google's guidance is that one node over
  90 % means a skewed key range, not too few nodes);
- storage utilization above the planned storage target share (the node count was set
  so storage stays at or below it);
- autoscaling pinned at its maximum for 30 minutes (the capacity plan is too low);
- replication delay on multi-cluster instances above a minute;
- server errors above 1 % of requests;
- for stages whose load runs on Dataflow, any dead letter (the pipeline's `dead_lettered`
  counter, exported by Dataflow as a user counter, so no log-based metric is needed).

The metric types and their sources are in `metrics.py`. Ratios are fractions:
`cpu_load` 0.46 is 46 %.
"""

from __future__ import annotations

import json

from ..spec.stage import Stage
from . import sizing
from .dashboard import dashboard
from .metrics import (
    CLUSTER_RESOURCE,
    CPU,
    CPU_HOTTEST,
    DATAFLOW_COUNTER,
    DATAFLOW_RESOURCE,
    NODES,
    REPLICATION_DELAY,
    SERVER_ERRORS,
    SERVER_REQUESTS,
    STORAGE,
    TABLE_RESOURCE,
    bigtable_filter,
)
from .model import AlertPlan, ClusterPlan, OperationsPlan

# What each kind of alert means and what to do, for the plan's notes and the runbook.
MEANING: dict[str, str] = {
    "cpu": "CPU above the cluster's planned target: add nodes (or raise the autoscaling maximum) and check "
           "that traffic matches the spec's capacity",
    "hot-node": "one node above 90 % CPU: a hot key range; more nodes do not help: find the range in Key "
                "Visualizer and spread the row keys (salt, reorder key fields)",
    "storage": "storage above the share the node count was planned for: add nodes before the hard limit "
               "(writes fail at 100 %), or age out data with GC",
    "at-max": "autoscaling held at its maximum for 30 minutes: the capacity plan is too low; raise the "
              "spec's capacity or the stage's max_nodes_per_cluster",
    "replication": "replication more than a minute behind: reads through another cluster return old data; "
                   "look for a cluster at high CPU or a write burst",
    "errors": "more than 1 % of requests fail on the server: check the error codes in the metric's labels",
    "dead-letters": "the Dataflow load refused items: they are not in Bigtable; read the dead letters in "
                    "load.temp_location, fix the mapping or the data, rerun the load",
}
_PERCENT_KINDS = ("cpu", "hot-node", "storage", "errors")


def threshold_text(a: AlertPlan) -> str:
    """An alert's threshold as on-call reads it (`> 46 %`, `= 30 nodes`, `> 60 s`): one wording for `plan`
    and `diff`, since a ratio of 0.46 in one and 46 % in the other reads as two different alerts."""
    if a.kind in _PERCENT_KINDS:
        return f"> {a.threshold * 100:g} %"
    if a.kind == "at-max":
        return f"= {a.threshold + 0.5:.0f} nodes"
    if a.kind == "replication":
        return f"> {a.threshold:g} s"
    return f"> {a.threshold:g}"


def duration_text(a: AlertPlan) -> str:
    """How long the condition must hold: `30m`, `1h`, `90s`, or `at once`."""
    seconds = a.duration_seconds
    if not seconds:
        return "at once"
    if seconds % 3600 == 0:
        return f"{seconds // 3600}h"
    return f"{seconds // 60}m" if seconds % 60 == 0 else f"{seconds}s"


def rule_text(a: AlertPlan) -> str:
    """Threshold and duration in one phrase, for a line that says what an alert was and becomes."""
    duration = duration_text(a)
    return f"{threshold_text(a)} " + (duration if duration == "at once" else f"for {duration}")


HOT_NODE = 0.9  # Google: "a hot node above 90 % CPU" (docs/monitoring-instance, cpu_load_hottest_node)
REPLICATION_DELAY_SECONDS = 60
ERROR_RATIO = 0.01


def _cluster_filter(metric: str, instance_id: str, cluster_id: str) -> str:
    return bigtable_filter(metric, CLUSTER_RESOURCE, instance_id, cluster_id)


def _cluster_alerts(instance_id: str, c: ClusterPlan) -> list[AlertPlan]:
    figures = sizing.NODE_FIGURES[c.storage_type]
    share = figures.storage_target_gib / figures.storage_limit_gib
    held = 1800 if c.autoscaling else 600  # an autoscaler gets time to add nodes first
    alerts = [
        AlertPlan(f"{c.id}-cpu", "cpu", CLUSTER_RESOURCE, CPU, _cluster_filter(CPU, instance_id, c.id),
                  c.cpu_target / 100, held, "WARNING",
                  f"the plan sizes {c.id} for {c.cpu_target} % CPU; above it for {held // 60} min the "
                  + ("autoscaler did not keep up" if c.autoscaling else
                     "cluster runs hotter than it was sized for (latency rises; with several clusters, the "
                     "headroom kept for a failed one is being spent)")),
        AlertPlan(f"{c.id}-hot-node", "hot-node", CLUSTER_RESOURCE, CPU_HOTTEST,
                  _cluster_filter(CPU_HOTTEST, instance_id, c.id), HOT_NODE, 300, "CRITICAL",
                  "one node above 90 % CPU: a hot key range (more nodes do not help; look at Key Visualizer)"),
        AlertPlan(f"{c.id}-storage", "storage", CLUSTER_RESOURCE, STORAGE,
                  _cluster_filter(STORAGE, instance_id, c.id), share, 1800, "WARNING",
                  f"storage above the planned {share:.0%} of capacity ({figures.storage_target_gib:,} of "
                  f"{figures.storage_limit_gib:,} GiB per {c.storage_type.upper()} node): the data outgrew "
                  f"the plan's {c.storage_gib:,.0f} GiB"),
    ]
    if c.autoscaling:
        top = c.autoscaling.max_nodes
        alerts.append(AlertPlan(
            f"{c.id}-at-max", "at-max", CLUSTER_RESOURCE, NODES, _cluster_filter(NODES, instance_id, c.id),
            top - 0.5, 1800, "WARNING",
            f"autoscaling held at its maximum of {top} nodes for 30 min: the capacity plan is too low; "
            f"raise the spec's capacity (or max_nodes_per_cluster)"))
    return alerts


def plan_operations(stage: Stage, instance_id: str, clusters: list[ClusterPlan],
                    dataflow_load: bool) -> OperationsPlan:
    settings = stage.alerts
    if stage.emulator:
        return OperationsPlan(False, (), (), "the emulator stage has no Cloud Monitoring")
    alerts = [a for c in clusters for a in _cluster_alerts(instance_id, c)]
    if len(clusters) > 1:
        alerts.append(AlertPlan(
            f"{instance_id}-replication", "replication", TABLE_RESOURCE, REPLICATION_DELAY,
            bigtable_filter(REPLICATION_DELAY, TABLE_RESOURCE, instance_id), REPLICATION_DELAY_SECONDS, 600, "WARNING",
            f"replication between the {len(clusters)} clusters more than a minute behind: reads through "
            f"another cluster return old data", aligner="ALIGN_MAX"))
    alerts.append(AlertPlan(
        f"{instance_id}-errors", "errors", TABLE_RESOURCE, SERVER_ERRORS,
        bigtable_filter(SERVER_ERRORS, TABLE_RESOURCE, instance_id), ERROR_RATIO, 300, "CRITICAL",
        "more than 1 % of requests fail on the server side",
        denominator=bigtable_filter(SERVER_REQUESTS, TABLE_RESOURCE, instance_id), aligner="ALIGN_RATE"))
    if dataflow_load:
        alerts.append(AlertPlan(
            f"{instance_id}-dead-letters", "dead-letters", DATAFLOW_RESOURCE, DATAFLOW_COUNTER,
            f'metric.type="{DATAFLOW_COUNTER}" AND resource.type="{DATAFLOW_RESOURCE}" AND '
            f'metric.labels.metric_name="dead_lettered" AND '
            f'resource.labels.job_name=starts_with("{load_job_prefix(instance_id)}")',
            0, 0, "WARNING", "the load dead-lettered items: they are not in Bigtable; read the dead letters in "
                             "the stage's load.temp_location", aligner="ALIGN_MAX"))
    why = ("alerts from the plan's own targets" + ("" if settings.channels else
                                                    "; no notification channels: set alerts.channels"))
    if not settings.enabled:
        why = "off for this stage (alerts.enabled: false)"
    board = json.dumps(dashboard(instance_id, clusters), sort_keys=True)
    return OperationsPlan(settings.enabled, settings.channels, tuple(alerts), why, board)


def load_job_prefix(instance_id: str) -> str:
    """How every Dataflow load job of the instance is named (`load.beam.dataflow.job_name`
    adds the table and content), so the dead-letter alert can match all of them."""
    return f"ddb2bigtable-{instance_id}-"
