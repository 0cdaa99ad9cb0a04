"""An instance's Cloud Monitoring dashboard, built from its plan (no hand-written JSON).

One row per cluster: CPU against the cluster's target, nodes against the autoscaling
range (or the fixed count), storage utilization against the planned share, and server
latency; each chart draws the plan's number as a threshold line, so a glance shows how
far reality is from the plan. The layout is Monitoring's `mosaicLayout` (48 columns).
"""

from __future__ import annotations

from typing import Any

from . import metrics, sizing
from .model import ClusterPlan

COLUMNS, TILE_HEIGHT = 48, 16


def _chart(title: str, filter_: str, thresholds: list[tuple[float, str]], aligner: str = "ALIGN_MEAN",
           reducer: str | None = None) -> dict[str, Any]:
    aggregation: dict[str, Any] = {"alignmentPeriod": "60s", "perSeriesAligner": aligner}
    if reducer:
        aggregation |= {"crossSeriesReducer": reducer, "groupByFields": ["resource.label.cluster"]}
    return {"title": title, "xyChart": {
        "dataSets": [{"plotType": "LINE", "timeSeriesQuery": {
            "timeSeriesFilter": {"filter": filter_, "aggregation": aggregation}}}],
        "thresholds": [{"value": value, "label": label} for value, label in thresholds],
    }}


def _row(instance_id: str, c: ClusterPlan) -> list[dict[str, Any]]:
    figures = sizing.NODE_FIGURES[c.storage_type]
    nodes = ([(c.autoscaling.min_nodes, "autoscaling min"), (c.autoscaling.max_nodes, "autoscaling max")]
             if c.autoscaling else [(c.nodes, "planned nodes")])

    def cluster(metric: str) -> str:
        return metrics.bigtable_filter(metric, metrics.CLUSTER_RESOURCE, instance_id, c.id)

    latency = metrics.bigtable_filter(metrics.LATENCY, metrics.TABLE_RESOURCE, instance_id, c.id)
    return [
        _chart(f"{c.id}: CPU", cluster(metrics.CPU), [(c.cpu_target / 100, "planned target")]),
        _chart(f"{c.id}: nodes", cluster(metrics.NODES), [(float(n), label) for n, label in nodes]),
        _chart(f"{c.id}: storage", cluster(metrics.STORAGE),
               [(figures.storage_target_gib / figures.storage_limit_gib, "planned share")]),
        _chart(f"{c.id}: server latency p99", latency, [], "ALIGN_PERCENTILE_99", "REDUCE_MAX"),
    ]


def dashboard(instance_id: str, clusters: list[ClusterPlan]) -> dict[str, Any]:
    """The dashboard's document (monitoring.Dashboard's `dashboard_json`, as a dict)."""
    tiles = []
    width = COLUMNS // 4
    for y, c in enumerate(clusters):
        for x, widget in enumerate(_row(instance_id, c)):
            tiles.append({"xPos": x * width, "yPos": y * TILE_HEIGHT, "width": width, "height": TILE_HEIGHT,
                          "widget": widget})
    return {"displayName": f"Bigtable {instance_id} (ddb2bigtable)"[:100],
            "mosaicLayout": {"columns": COLUMNS, "tiles": tiles}}
