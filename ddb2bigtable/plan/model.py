"""The plan: what a stage of Bigtable should look like, with a reason for every number.

Frozen dataclasses only. The planner builds them, the Pulumi components turn them into
resources, `diff` compares two of them, and `render` prints them; none of those decide
anything the plan does not already say.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal


@dataclass(frozen=True)
class LoadShare:
    """One table's (or one GSI's view's) contribution to a cluster's load, kept so a
    reviewer can redo the sum from the DynamoDB units up."""

    table: str  # a table id, or `table/gsi` for the materialized view standing in for a GSI
    reads_per_second: float
    reads_per_node: float
    writes_per_second: float
    writes_per_node: float
    read_units: float = 0.0  # the DynamoDB units behind reads_per_second (RCU, or RRU/s on demand)
    write_units: float = 0.0
    read_conversion: str = ""  # how units became operations: "x 2 eventual", "÷ 2 for 6 KB items", ...
    write_conversion: str = ""
    note: str = ""  # a GSI's index item size and how it was found

    @property
    def nodes(self) -> float:
        """Nodes at 100 % CPU this table needs on the cluster."""
        return self.reads_per_second / self.reads_per_node + self.writes_per_second / self.writes_per_node


@dataclass(frozen=True)
class AutoscalingPlan:
    min_nodes: int
    max_nodes: int
    cpu_target: int  # percent
    storage_target_gib: int
    why: str


@dataclass(frozen=True)
class ClusterPlan:
    id: str
    zone: str
    gcp_region: str
    aws_regions: tuple[str, ...]  # DynamoDB replicas whose reads this cluster serves
    storage_type: str
    nodes: int  # fixed count, or the expected count inside the autoscaling range
    autoscaling: AutoscalingPlan | None
    cpu_target: int
    load: tuple[LoadShare, ...]
    storage_gib: float
    kms_key_name: str | None
    why: str
    # Nodes of load at 100 % CPU per capacity level: sized (the sum of `load`), and for
    # autoscaled clusters min, expected and max (clusters.LEVEL_WORDS says what each is).
    levels: tuple[tuple[str, float], ...] = ()

    @property
    def nodes_text(self) -> str:
        """What to buy: a fixed count, or the autoscaling range (`6`, `10-28`)."""
        auto = self.autoscaling
        return str(self.nodes) if auto is None else f"{auto.min_nodes}-{auto.max_nodes}"


@dataclass(frozen=True)
class GcPolicy:
    """A family's garbage collection; `mode` combines the two limits when both are set."""

    max_age_seconds: int | None
    max_versions: int | None
    mode: Literal["union", "intersection"] = "union"

    def describe(self) -> str:
        parts = []
        if self.max_age_seconds is not None:
            parts.append(f"max_age {format_duration(self.max_age_seconds)}")
        if self.max_versions is not None:
            parts.append(f"max_versions {self.max_versions}")
        if not parts:
            return "keep everything"
        return f" {self.mode} ".join(parts) if len(parts) == 2 else parts[0]


def format_duration(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0 and seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


# An aggregate family: int64 inputs (AddToCell), summed, read back as an 8-byte big-endian int64.
INT64_SUM: Literal["int64_sum"] = "int64_sum"


@dataclass(frozen=True)
class FamilyPlan:
    name: str
    gc: GcPolicy
    why: str
    aggregate: Literal["int64_sum"] | None = None  # None: a plain family (cells hold bytes)


@dataclass(frozen=True)
class BackupPlan:
    frequency_hours: int
    retention_days: int
    why: str


@dataclass(frozen=True)
class MaterializedViewPlan:
    """A continuous materialized view standing in for a GSI (an asynchronous index)."""

    id: str
    gsi: str
    query: str
    why: str


@dataclass(frozen=True)
class TablePlan:
    id: str
    source_table: str
    source_regions: tuple[str, ...]
    families: tuple[FamilyPlan, ...]
    change_stream_retention_hours: int | None
    backup: BackupPlan | None
    deletion_protection: bool
    materialized_views: tuple[MaterializedViewPlan, ...]
    storage_gib: float
    ttl_attribute: str | None
    why: str


TYPES_TABLE = TablePlan(
    id="_ddb2bigtable_types", source_table="", source_regions=(), change_stream_retention_hours=None, backup=None,
    families=(FamilyPlan("a", GcPolicy(None, None), "one cell per attribute, its type; every version kept: the "
                         "oldest is the type (the first writer's, also across clusters after replication)"),),
    deletion_protection=False, materialized_views=(), storage_gib=0.0, ttl_attribute=None,
    why="made by ddb2bigtable in every instance (pulumi up and up --stage local): the attribute types each "
        "table's cells are written with, one row per table, so load, replicate and serve write and read the same "
        "record")


@dataclass(frozen=True)
class AppProfilePlan:
    id: str
    routing: Literal["multi", "single"]
    cluster_ids: tuple[str, ...]  # multi: the clusters it may use (all = any); single: one
    row_affinity: bool
    allow_transactional_writes: bool
    priority: Literal["HIGH", "MEDIUM", "LOW"]
    why: str


@dataclass(frozen=True)
class CostLine:
    item: str
    quantity: float
    unit: str
    unit_price: float
    monthly_usd: float
    source: str
    as_of: str
    estimate: bool
    note: str = ""
    origin: str = "table"  # "lock" (prices.lock.json), "table" (the shipped table) or "estimate"
    sku: str = ""  # the lock's SKU (AWS: SKU/offer term) when origin is "lock"
    price_key: str = ""  # which figure: "bigtable.us-east4.node_hour" (diff compares prices by it)
    list_unit_price: float | None = None  # before the stage's discounts (None: no discount applies)
    list_monthly_usd: float | None = None
    discount: str = ""  # "committed use 3y -40 %; negotiated -5 %"
    discount_notes: tuple[str, ...] = ()  # each discount's figure, source and date
    why: str = ""  # why the quantity is what it is, when a reader would ask (a cluster at Bigtable's minimum)


@dataclass(frozen=True)
class CostEstimate:
    bigtable: tuple[CostLine, ...]
    dynamodb: tuple[CostLine, ...]
    hours_per_month: int
    lock_gaps: tuple[str, ...] = ()  # figures the price lock lacked ("prices.lock.json has no ..."), each once

    @property
    def bigtable_monthly_usd(self) -> float:
        return round(sum(line.monthly_usd for line in self.bigtable), 2)

    @property
    def dynamodb_monthly_usd(self) -> float:
        return round(sum(line.monthly_usd for line in self.dynamodb), 2)

    @property
    def estimate(self) -> bool:
        return any(line.estimate for line in (*self.bigtable, *self.dynamodb))

    @property
    def bigtable_list_monthly_usd(self) -> float:
        """Before the stage's discounts (equal to the total without any)."""
        return round(sum(_list(line) for line in self.bigtable), 2)

    @property
    def dynamodb_list_monthly_usd(self) -> float:
        return round(sum(_list(line) for line in self.dynamodb), 2)


def _list(line: CostLine) -> float:
    return line.monthly_usd if line.list_monthly_usd is None else line.list_monthly_usd


@dataclass(frozen=True)
class AlertPlan:
    """One alert policy: a threshold on one metric, held for `duration_seconds`."""

    id: str  # stable across plans: "<cluster>-cpu", "<instance>-replication", ...
    kind: str  # a key of operations.MEANING
    resource: str  # the monitored resource type
    metric: str
    filter: str  # the Cloud Monitoring filter, resource labels included
    threshold: float
    duration_seconds: int
    severity: str  # CRITICAL | WARNING (AlertPolicy.severity)
    why: str
    denominator: str | None = None  # a ratio alert's denominator filter
    aligner: str = "ALIGN_MEAN"  # per-minute alignment: MEAN for gauges, RATE for counts, MAX for delays


@dataclass(frozen=True)
class OperationsPlan:
    """Alert policies and a dashboard for one instance (plan/operations.py says why each)."""

    enabled: bool
    channels: tuple[str, ...]
    alerts: tuple[AlertPlan, ...]
    why: str
    dashboard_json: str = ""  # Monitoring's dashboard document (plan/dashboard.py), ready to send


@dataclass(frozen=True)
class InstancePlan:
    id: str
    display_name: str
    spec_file: str
    storage_type: str
    node_scaling_factor: int
    deletion_protection: bool
    labels: tuple[tuple[str, str], ...]
    clusters: tuple[ClusterPlan, ...]
    tables: tuple[TablePlan, ...]
    app_profiles: tuple[AppProfilePlan, ...]
    cost: CostEstimate
    operations: OperationsPlan | None = None

    @property
    def metadata_tables(self) -> tuple[TablePlan, ...]:
        """Tables every instance holds beside the spec's: the record of each table's
        attribute types (bigtable/table_types.py), protected as the instance is."""
        return (replace(TYPES_TABLE, deletion_protection=self.deletion_protection),)


@dataclass(frozen=True)
class PlanWarning:
    code: str  # stable, machine-readable: "hdd-reads", "hot-key", "lsi", ...
    instance: str
    table: str | None
    message: str
    # The cluster a cluster-wide warning is about (node-cap, hdd-reads): with code, instance and
    # table it is the warning's identity, so `diff` tells a changed message from a new warning.
    cluster: str | None = None


@dataclass(frozen=True)
class ServePlan:
    """`ddb2bigtable serve` for the stage: a Cloud Run service, or (`where` local, the emulator
    stage) the process `up --keep-running` starts. plan/serve.py says why each figure."""

    where: Literal["cloud-run", "local"]
    service: str  # the Cloud Run service's name
    project: str | None
    regions: tuple[str, ...]  # the GCP regions it runs in: a service in each
    image: str
    command: tuple[str, ...]  # what the container runs: `ddb2bigtable serve --stage S ...`
    port: int
    workers: int
    cpu: int
    startup_cpu_boost: bool  # more CPU while an instance starts: cold starts are serve's slowest requests
    memory: str
    concurrency: int
    min_instances: int
    max_instances: int
    signing: Literal["iam", "keys", "none"]
    invokers: tuple[str, ...]  # signing iam: who gets roles/run.invoker
    keys_env: str  # signing keys: the variable serve reads its key pairs from
    keys_secret: str | None  # ... filled from this Secret Manager secret by Cloud Run
    keys_secret_version: str
    ingress: Literal["all", "internal", "internal-and-cloud-load-balancing"]
    service_account_id: str  # the dedicated account it runs as
    instances: tuple[str, ...]  # it gets roles/bigtable.user on each of these, nothing wider
    app_profile: str  # the profile eventually consistent reads use
    deletion_protection: bool
    labels: tuple[tuple[str, str], ...]
    why: str
    reasons: tuple[tuple[str, str], ...] = ()  # (figure, why it is so), in the order `plan` shows them
    alerts: tuple[AlertPlan, ...] = ()  # plan/serve_alerts.py; none on the emulator or with alerts off
    alert_channels: tuple[str, ...] = ()  # the stage's alerts.channels


@dataclass(frozen=True)
class StagePlan:
    stage: str
    emulator: bool  # the stage runs on the Bigtable emulator: its cost is what the cloud would charge
    instances: tuple[InstancePlan, ...]
    warnings: tuple[PlanWarning, ...]
    project: str | None = None  # the GCP project the stack deploys to (gcp:project), if it names one
    serve: ServePlan | None = None  # the stage's `serve: {enabled: true}`; None when off
