"""`aws://REGION/TABLE` and `aws://REGION/*`: live tables through boto3 -> `TableDefinition`.

DescribeTable answers in the same shape as `aws dynamodb describe-table`, so its response is
read by `describe_table.read` (origins say `DynamoDB DescribeTable Table...`); then what
DescribeTable leaves out comes from its own calls: DescribeTimeToLive,
DescribeContinuousBackups, ListTagsOfResource, Application Auto Scaling
(`live_autoscaling`), CloudWatch (`cloudwatch`): an on-demand table's peak and average
(and its GSIs'), a provisioned table's use of its capacity as a warning, and each
global-table replica's own settings and traffic in its region (`live_replicas`). A call the
endpoint does not serve (DynamoDB Local: tags, backups) or the credentials may not make is
a warning and the field stays an estimate; everything else that fails is an error.
"""

from __future__ import annotations

import math
import re
from dataclasses import fields, is_dataclass, replace
from typing import Any

from ...spec.checks import region_problem
from ...spec.errors import InputError, Problem
from ...spec.yaml_source import format_path
from ..located import Located, Path
from ..model import Dropped, GsiDef, Imported, Notice, Options, Rates, Sourced, TableDefinition, given
from . import describe_table
from .autoscaling import LiveScaling, read_scaling
from .clients import Clients, LiveOptions
from .cloudwatch import Measured, Usage, read_usage, utilisation
from .replicas import continuous_backups, legacy_replicas, replica_status, with_replicas

KIND = "aws"
_URL = re.compile(r"aws://([^/]*)/(.*)")
_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-\d+")
_TABLE = re.compile(r"[A-Za-z0-9_.-]{3,255}")
_LABEL = "DynamoDB DescribeTable"


def is_live(source: str) -> bool:
    return source.startswith("aws://")


def parse_url(url: str) -> tuple[str, str]:
    """(region, table or "*") of `aws://REGION/TABLE`; `InputError` for anything else."""
    found = _URL.fullmatch(url)
    if not found or not _REGION.fullmatch(found.group(1)) or not (
            found.group(2) == "*" or _TABLE.fullmatch(found.group(2))):
        raise InputError([Problem.about(url, "", "a live source is aws://REGION/TABLE or aws://REGION/* (every "
                                        "table of the region), e.g. aws://us-east-1/Orders")])
    wrong_region = region_problem(found.group(1))
    if wrong_region:
        raise InputError([Problem.about(url, "", f"{wrong_region} (a spec's region must be one the tool maps: "
                                        "docs/regions.md)")])
    return found.group(1), found.group(2)


class _Response(Located):
    """A DescribeTable response read like a file; problems name the URL, not a line."""

    def problem(self, path: Path, message: str) -> Problem:
        return Problem.about(self.file, format_path(path), message)


def _retag(value: Any) -> Any:
    """`value` with describe-table origins renamed for the live call."""
    if isinstance(value, Sourced | Dropped) and value.origin.startswith("describe-table"):
        value = replace(value, origin=_LABEL + value.origin.removeprefix("describe-table"))
    if is_dataclass(value) and not isinstance(value, type):
        return replace(value, **{f.name: _retag(getattr(value, f.name)) for f in fields(value) if f.init})
    if isinstance(value, tuple):
        return tuple(_retag(v) for v in value)
    return value


class _Table:
    """One live table: the calls, and what they add to the DescribeTable reading."""

    def __init__(self, clients: Clients, name: str, url: str):
        self.clients, self.name, self.url = clients, name, url
        self.notices: list[Notice] = []
        self.missing: list[str] = []

    def describe(self) -> tuple[TableDefinition, dict[str, Any]]:
        ddb = self.clients.dynamodb
        raw = self.clients.call(f"DescribeTable {self.name}", ddb.describe_table, TableName=self.name)["Table"]
        data = {k: v for k, v in raw.items() if k != "TableArn"}  # DynamoDB Local's ARN names no real region
        imported = describe_table.read(_Response(self.url, {"Table": data}, {}), Options(self.clients.region))
        table = _retag(imported.tables[0])
        return replace(table, region=given(self.clients.region, self.url), missing=()), raw

    def ttl(self) -> Sourced[str] | None:
        ddb = self.clients.dynamodb
        found, why = self.clients.optional("DescribeTimeToLive", ddb.describe_time_to_live, TableName=self.name)
        if found is None:
            self.missing.append(f"{why}: add `ttl: {{attribute: NAME}}` if TTL is enabled")
            return None
        described = found.get("TimeToLiveDescription", {})
        if described.get("TimeToLiveStatus") in ("ENABLED", "ENABLING") and described.get("AttributeName"):
            return given(described["AttributeName"], "DynamoDB DescribeTimeToLive AttributeName")
        return None

    def pitr(self) -> tuple[Sourced[bool] | None, Sourced[int] | None]:
        ddb = self.clients.dynamodb
        found, why = self.clients.optional("DescribeContinuousBackups", ddb.describe_continuous_backups,
                                           TableName=self.name)
        if found is None:
            self.missing.append(f"{why}: point_in_time_recovery stays an estimate")
            return None, None
        return continuous_backups(found)

    def tags(self, arn: str) -> tuple[tuple[str, Sourced[str]], ...]:
        ddb = self.clients.dynamodb
        out: list[tuple[str, Sourced[str]]] = []
        token: str | None = None
        while True:
            found, why = self.clients.optional("ListTagsOfResource", ddb.list_tags_of_resource, ResourceArn=arn,
                                               **({"NextToken": token} if token else {}))
            if found is None:
                self.missing.append(f"{why}: add the table's tags under `tags:`")
                return ()
            out += [(t["Key"], given(t["Value"], f"DynamoDB ListTagsOfResource {t['Key']}"))
                    for t in found.get("Tags", [])]
            token = found.get("NextToken")
            if not token:
                return tuple(out)


    def beyond(self, table: TableDefinition, arn: str) -> TableDefinition:
        """What DescribeTable does not show: Kinesis streaming destinations and contributor
        insights (spec fields), a resource-based policy (reported: IAM does it in Google
        Cloud). Each check only adds to the spec, so a failure to check is a warning."""
        ddb, changes = self.clients.dynamodb, dict[str, Any]()
        kinesis, why = self.clients.best_effort("DescribeKinesisStreamingDestination",
                                                ddb.describe_kinesis_streaming_destination, TableName=self.name)
        changes["kinesis_streams"] = tuple(
            given(d["StreamArn"], f"DynamoDB DescribeKinesisStreamingDestination KinesisDataStreamDestinations[{i}]")
            for i, d in enumerate((kinesis or {}).get("KinesisDataStreamDestinations") or [])
            if d.get("DestinationStatus") in ("ACTIVE", "ENABLING", "UPDATING") and d.get("StreamArn"))
        insights, why_insights = self.clients.best_effort("DescribeContributorInsights",
                                                          ddb.describe_contributor_insights, TableName=self.name)
        if insights:
            status = insights.get("ContributorInsightsStatus")
            changes["contributor_insights"] = given(status in ("ENABLED", "ENABLING"),
                                                    "DynamoDB DescribeContributorInsights ContributorInsightsStatus")
        policy, why_policy = self.clients.best_effort("GetResourcePolicy", ddb.get_resource_policy,
                                                      absent="PolicyNotFoundException", ResourceArn=arn)
        dropped = table.dropped
        if (policy or {}).get("Policy"):
            dropped += (Dropped("a resource-based policy", "DynamoDB GetResourcePolicy", "grant the same access "
                                "with IAM on the Bigtable instance or table (e.g. roles/bigtable.reader)"),)
        self.missing += [w for w in (why, why_policy, why_insights) if w]
        return replace(table, dropped=dropped, **changes)


def _with_scaling(table: TableDefinition, scaling: LiveScaling) -> TableDefinition:
    read, write = scaling.of(table.name.value)
    gsis = []
    for gsi in table.gsis:
        gsi_read, gsi_write = scaling.of(table.name.value, gsi.name.value)
        gsis.append(replace(gsi, read_scaling=gsi_read, write_scaling=gsi_write))
    return replace(table, read_scaling=read, write_scaling=write, gsis=tuple(gsis))


def _rates(usage: dict[tuple[str | None, str], Usage], index: str | None) -> tuple[Usage, Usage] | None:
    reads, writes = usage.get((index, "reads")), usage.get((index, "writes"))
    return (reads, writes) if reads and writes else None


def _with_usage(table: TableDefinition, measured: Measured) -> tuple[TableDefinition, list[Notice]]:
    """On-demand: peak, average and GSI peaks from the metrics. Provisioned: how used it is."""
    name, notices = table.name.value, list[Notice]()
    if table.billing.value == "on_demand":
        changes: dict[str, Any] = {}
        if pair := _rates(measured.usage, None):
            changes["peak"] = Rates(*(given(u.peak, u.peak_origin) for u in pair))
            changes["average"] = Rates(*(given(u.average, u.average_origin) for u in pair))
        gsis: list[GsiDef] = []
        for gsi in table.gsis:
            r, w = measured.usage.get((gsi.name.value, "reads")), measured.usage.get((gsi.name.value, "writes"))
            gsis.append(replace(gsi, reads=given(math.ceil(r.peak), r.peak_origin + ", rounded up") if r else None,
                                writes=given(math.ceil(w.peak), w.peak_origin + ", rounded up") if w else None))
        return replace(table, gsis=tuple(gsis), **changes), notices
    parts = [(None, table.reads, table.writes)] + [(g.name.value, g.reads, g.writes) for g in table.gsis]
    for index, reads, writes in parts:
        for what, units, unit in (("reads", reads, "RCU"), ("writes", writes, "WCU")):
            usage = measured.usage.get((index, what))
            if usage is not None and units is not None:
                subject = name if index is None else f"{name} index {index}"
                notices.append(Notice("capacity-use", subject, utilisation(usage, units.value, unit) +
                                      "; the spec keeps the provisioned figure, which the plan sizes for"))
    return table, notices


def _read_table(clients: Clients, url: str, name: str) -> tuple[TableDefinition, list[Notice]]:
    live = _Table(clients, name, url)
    table, raw = live.describe()
    pitr, days = live.pitr()
    live.notices += replica_status(name, raw)
    table = live.beyond(replace(table, ttl_attribute=live.ttl(), pitr=pitr, pitr_days=days,
                                tags=live.tags(raw.get("TableArn", ""))), raw.get("TableArn", ""))
    indexes = [g.name.value for g in table.gsis]
    if table.billing.value == "provisioned":
        scaling = read_scaling(clients, name, indexes)
        if scaling.unread:
            live.missing.append(f"{scaling.unread}: add `autoscaling:` if it is on")
        table = _with_scaling(table, scaling)
    measured = read_usage(clients, name, indexes, clients.options.days)
    if measured.unread:
        live.missing.append(f"{measured.unread}: peak/average stay estimates")
    elif not measured.usage:
        live.notices.append(Notice("no-metrics", name, f"CloudWatch has no ConsumedRead/WriteCapacityUnits for "
                                   f"the last {clients.options.days} days: the table had no traffic, or the "
                                   "metrics endpoint is not this account's"))
    table, used = _with_usage(table, measured)
    table, legacy_said = legacy_replicas(clients, table, raw)
    table, replicas_said = with_replicas(clients, table)
    live.notices += used + legacy_said + replicas_said
    return replace(table, missing=tuple(live.missing)), live.notices


def _table_names(clients: Clients) -> list[str]:
    paginator = clients.dynamodb.get_paginator("list_tables")
    pages = clients.call("ListTables", lambda: list(paginator.paginate()))
    return sorted(name for page in pages for name in page.get("TableNames", []))


def read(url: str, live: LiveOptions) -> Imported:
    """The table of `aws://REGION/TABLE`, or every table of `aws://REGION/*`."""
    region, name = parse_url(url)
    clients = Clients(url, region, live)
    names = _table_names(clients) if name == "*" else [name]
    if not names:
        raise InputError([Problem.about(url, "", f"the region {region} has no tables (ListTables is empty): check "
                                        "the region and the account")])
    tables, notices = [], []
    for each in names:
        table, said = _read_table(clients, f"aws://{region}/{each}", each)
        tables.append(table)
        notices += said
    return Imported(url, KIND, tuple(tables), tuple(notices))
