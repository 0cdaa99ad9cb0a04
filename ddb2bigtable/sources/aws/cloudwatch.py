"""Measured traffic of a live table: CloudWatch's ConsumedRead/WriteCapacityUnits of the
table and its GSIs over the last `--days`, as a peak and an average per second.

DynamoDB publishes each metric as a Sum per minute. Divided by the period it is the mean
consumption per second in that minute; the **peak is the 99th percentile** of those
per-second values over the window (nearest rank, minutes without a data point count as 0,
since DynamoDB publishes nothing for a minute without traffic), so a single burst does not
size the cluster, and the **average** is the window's total over its seconds. The window
starts at the table's first data point when that is later than `--days` ago (a new table
is not averaged over days it did not exist; a table idle at the window's start is
measured a little high, never low). CloudWatch keeps 1-minute points for 15 days: longer
windows use 5-minute (63 days) or 1-hour periods, said in the comment.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from .clients import Clients, Denied, Unsupported

PERCENTILE = 99
METRICS = {"reads": "ConsumedReadCapacityUnits", "writes": "ConsumedWriteCapacityUnits"}


@dataclass(frozen=True)
class Usage:
    """Per-second consumption of one metric over the window, and how it was measured."""

    peak: float
    average: float
    metric: str
    window: str  # "14 days", "0.08 days (from the first data point; --days 14)"
    period: int  # seconds per CloudWatch point
    quiet: bool = False  # no data point at all while the table's other metrics have some

    @property
    def peak_origin(self) -> str:
        if self.quiet:
            return f"CloudWatch: no {self.metric} data point in {self.window}, none consumed"
        return (f"CloudWatch p{PERCENTILE} of {self.metric}/s, {self.window} ({self.period // 60}-minute sums / "
                f"{self.period})")

    @property
    def average_origin(self) -> str:
        if self.quiet:
            return self.peak_origin
        return f"CloudWatch mean of {self.metric}/s, {self.window} (total / seconds)"


Key = tuple[str | None, str]  # (index name or None for the table, "reads" | "writes")


@dataclass
class Measured:
    usage: dict[Key, Usage]
    unread: str | None = None  # why there are no metrics at all (denied, not served)


def period_for(days: float) -> int:
    return 60 if days <= 15 else 300 if days <= 63 else 3600


def _window(days: int, now: datetime) -> tuple[datetime, datetime, int]:
    period = period_for(days)
    end = datetime.fromtimestamp(now.timestamp() // period * period, UTC)
    return end - timedelta(days=days), end, period


def percentile(values: list[float], slots: int, pct: int = PERCENTILE) -> float:
    """Nearest-rank percentile of `values` padded with zeros to `slots` values."""
    ranked = sorted(values) if len(values) >= slots else [0.0] * (slots - len(values)) + sorted(values)
    return ranked[max(0, math.ceil(pct / 100 * len(ranked)) - 1)] if ranked else 0.0


def _queries(table: str, indexes: list[str | None], period: int) -> dict[str, tuple[Key, dict[str, Any]]]:
    out = {}
    for i, index in enumerate(indexes):
        dims = [{"Name": "TableName", "Value": table}]
        if index is not None:
            dims.append({"Name": "GlobalSecondaryIndexName", "Value": index})
        for what, metric in METRICS.items():
            ident = f"m{i}_{what}"
            out[ident] = ((index, what), {"Id": ident, "ReturnData": True, "MetricStat": {
                "Metric": {"Namespace": "AWS/DynamoDB", "MetricName": metric, "Dimensions": dims},
                "Period": period, "Stat": "Sum"}})
    return out


def read_usage(clients: Clients, table: str, indexes: list[str], days: int, now: datetime | None = None) -> Measured:
    """Peak and average of the table's and each GSI's consumed capacity. With no data point
    at all nothing is measured (the reader keeps its estimates); otherwise a metric without
    one consumed nothing in the window (DynamoDB publishes no point for a quiet minute)."""
    start, end, period = _window(days, now or datetime.now(UTC))
    queries = _queries(table, [None, *indexes], period)
    points: dict[str, list[float]] = {ident: [] for ident in queries}
    first = end
    try:
        pages = clients.call("GetMetricData", lambda: list(clients.cloudwatch.get_paginator("get_metric_data").paginate(
            MetricDataQueries=[q for _, q in queries.values()], StartTime=start, EndTime=end)))
    except (Denied, Unsupported) as error:
        return Measured({}, str(error))
    for page in pages:
        for result in page.get("MetricDataResults", []):
            points.setdefault(result["Id"], []).extend(float(v) for v in result.get("Values", []))
            first = min([first, *(t.astimezone(UTC) for t in result.get("Timestamps", []))])
    slots = max(1, int((end - first).total_seconds()) // period)
    label = f"{days} days" if first <= start + timedelta(seconds=period) else \
        f"{slots * period / 86400:.2f} days (from the first data point; --days {days})"
    usage = {}
    if not any(points.values()):
        return Measured({})
    for ident, (key, query) in queries.items():
        sums = points.get(ident) or []
        if not sums:  # DynamoDB publishes nothing for a minute without traffic
            usage[key] = Usage(0.0, 0.0, query["MetricStat"]["Metric"]["MetricName"], label, period, quiet=True)
            continue
        per_second = [s / period for s in sums]
        average = sum(sums) / (slots * period)
        usage[key] = Usage(round(max(percentile(per_second, slots), average), 2), round(average, 2),
                           query["MetricStat"]["Metric"]["MetricName"], label, period)
    return Measured(usage)


def utilisation(usage: Usage, provisioned: int, unit: str) -> str:
    """How much of a provisioned capacity the measured traffic uses, in words."""
    share = (lambda v: f"{100 * v / provisioned:.0f} %") if provisioned else (lambda v: "n/a")
    return (f"{usage.metric}: p{PERCENTILE} {usage.peak:g} {unit}/s ({share(usage.peak)}) and average "
            f"{usage.average:g} ({share(usage.average)}) of {provisioned} provisioned, {usage.window}")
