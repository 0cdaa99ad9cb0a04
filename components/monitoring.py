"""`ddb2bigtable:bigtable:Monitoring`: the plan's alert policies and dashboard, as resources.

Translation only: thresholds, filters, durations and the dashboard layout come from
`ddb2bigtable.plan.operations` and `ddb2bigtable.plan.dashboard`.
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from ddb2bigtable.plan.model import AlertPlan, InstancePlan

RUNBOOK = "docs/operations.md, section 'When an alert fires'"


def condition_args(alert: AlertPlan) -> gcp.monitoring.AlertPolicyConditionArgsDict:
    """One threshold condition; a ratio alert sums numerator and denominator across series."""
    reducer = "REDUCE_SUM" if alert.denominator else None
    aggregation: gcp.monitoring.AlertPolicyConditionConditionThresholdAggregationArgsDict = {
        "alignment_period": "60s", "per_series_aligner": alert.aligner, "cross_series_reducer": reducer}
    threshold: gcp.monitoring.AlertPolicyConditionConditionThresholdArgsDict = {
        "filter": alert.filter, "comparison": "COMPARISON_GT", "threshold_value": alert.threshold,
        "duration": f"{alert.duration_seconds}s", "aggregations": [aggregation],
    }
    if alert.denominator:
        threshold["denominator_filter"] = alert.denominator
        threshold["denominator_aggregations"] = [{
            "alignment_period": "60s", "per_series_aligner": alert.aligner, "cross_series_reducer": reducer}]
    name = alert.metric.rsplit("/", 1)[-1] + (" ratio" if alert.denominator else "")
    held = f" for {alert.duration_seconds // 60} min" if alert.duration_seconds >= 60 else ""
    return {"display_name": f"{name} > {alert.threshold:g}{held}", "condition_threshold": threshold}


class BigtableMonitoring(pulumi.ComponentResource):
    def __init__(self, name: str, plan: InstancePlan, project: str | None,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__("ddb2bigtable:bigtable:Monitoring", name, None, opts)
        operations = plan.operations
        assert operations is not None and operations.enabled  # the program creates this only then
        child = pulumi.ResourceOptions(parent=self)
        self.policies = [
            gcp.monitoring.AlertPolicy(
                f"{name}-{alert.id}", project=project, display_name=f"Bigtable {alert.id}"[:100],
                combiner="OR", severity=alert.severity, conditions=[condition_args(alert)],
                notification_channels=list(operations.channels),
                documentation={"content": f"{alert.why}\n\nWhat to do: {RUNBOOK}.", "mime_type": "text/markdown"},
                user_labels={"managed-by": "ddb2bigtable", "alert": alert.kind}, opts=child)
            for alert in operations.alerts
        ]
        self.dashboard = gcp.monitoring.Dashboard(f"{name}-dashboard", project=project,
                                                  dashboard_json=operations.dashboard_json,
                                                  opts=child)
        self.register_outputs({"policies": len(self.policies)})
