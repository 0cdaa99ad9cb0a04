"""A DynamoDB table as its definitions describe it, every value with where it came from.

Each reader (describe-table output, CloudFormation, Terraform, later live AWS) fills
this model and nothing else, so the emitter and the estimates are written once. A value is
a `Sourced`: the value, the place that gave it (`CloudFormation Orders.Properties.
ProvisionedThroughput.ReadCapacityUnits`) and, when no source gave it, the estimate note
saying why the value is a guess and what to run or fill in instead. What a spec cannot
express is kept as `Dropped`, so it is reported instead of silently lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from ..spec.errors import clip_message

T = TypeVar("T")

KeyType = Literal["S", "N", "B"]
Projection = str | tuple[str, ...]  # "all" | "keys_only" | attribute names

# AWS's words -> the spec's, shared by every reader
STREAM_VIEWS = {"KEYS_ONLY": "keys_only", "NEW_IMAGE": "new_image", "OLD_IMAGE": "old_image",
                "NEW_AND_OLD_IMAGES": "new_and_old_images"}
TABLE_CLASSES = {"STANDARD": "standard", "STANDARD_INFREQUENT_ACCESS": "standard_infrequent_access"}


@dataclass(frozen=True)
class Sourced(Generic[T]):
    """One value and its origin; `estimate` is set when no source gave the value."""

    value: T
    origin: str
    estimate: str | None = None  # why it is a guess and what to run or fill in

    @property
    def is_estimate(self) -> bool:
        return self.estimate is not None


def given(value: T, origin: str) -> Sourced[T]:
    return Sourced(value, origin)


def guessed(value: T, why: str) -> Sourced[T]:
    return Sourced(value, "estimate", why)


@dataclass(frozen=True)
class KeyAttr:
    name: str
    type: KeyType


@dataclass(frozen=True)
class Scaling:
    """Target-tracking auto scaling of one dimension (reads or writes), in units."""

    minimum: Sourced[int]
    maximum: Sourced[int]
    target: Sourced[float] | None = None  # percent; None when no policy was found


@dataclass(frozen=True)
class Rates:
    """On-demand request units per second."""

    reads: Sourced[float]
    writes: Sourced[float]


@dataclass(frozen=True)
class Limits:
    """Units per second, either or both: on-demand maximum or warm throughput."""

    reads: Sourced[float] | None = None
    writes: Sourced[float] | None = None

    @property
    def empty(self) -> bool:
        return self.reads is None and self.writes is None


@dataclass(frozen=True)
class GsiDef:
    name: Sourced[str]
    partition: Sourced[KeyAttr]
    sort: Sourced[KeyAttr] | None
    projection: Sourced[Projection]
    reads: Sourced[int] | None = None
    writes: Sourced[int] | None = None
    read_scaling: Scaling | None = None
    write_scaling: Scaling | None = None
    max_throughput: Limits | None = None
    warm_throughput: Limits | None = None


@dataclass(frozen=True)
class LsiDef:
    name: Sourced[str]
    sort: Sourced[KeyAttr]
    projection: Sourced[Projection]


@dataclass(frozen=True)
class ReplicaDef:
    """A global-table replica besides the home region; `reads` None = the home region's."""

    region: Sourced[str]
    reads: Sourced[int] | None = None
    read_scaling: Scaling | None = None  # the replica's own read auto scaling
    gsi_reads: tuple[tuple[str, Sourced[int] | None, Scaling | None], ...] = ()  # (index, RCU, read scaling)
    table_class: Sourced[str] | None = None  # where it differs from the table's
    pitr: Sourced[bool] | None = None  # where it differs from the table's
    pitr_days: Sourced[int] | None = None


@dataclass(frozen=True)
class Dropped:
    """A setting the spec cannot express: reported as a warning, never silently lost."""

    what: str
    origin: str
    advice: str


@dataclass(frozen=True)
class TableDefinition:
    """One DynamoDB table; None means the source says nothing about that field."""

    name: Sourced[str]
    region: Sourced[str]
    partition: Sourced[KeyAttr]
    sort: Sourced[KeyAttr] | None
    billing: Sourced[str]  # "provisioned" | "on_demand"
    reads: Sourced[int] | None = None
    writes: Sourced[int] | None = None
    read_scaling: Scaling | None = None
    write_scaling: Scaling | None = None
    peak: Rates | None = None
    average: Rates | None = None
    item_size_kb: Sourced[float] | None = None
    storage_gb: Sourced[float] | None = None
    item_count: Sourced[int] | None = None
    replicas: tuple[ReplicaDef, ...] = ()
    ttl_attribute: Sourced[str] | None = None
    stream: Sourced[str] | None = None  # the spec's words: none, keys_only, new_image, ...
    pitr: Sourced[bool] | None = None
    pitr_days: Sourced[int] | None = None
    table_class: Sourced[str] | None = None  # standard | standard_infrequent_access
    deletion_protection: Sourced[bool] | None = None
    tags: tuple[tuple[str, Sourced[str]], ...] = ()
    read_consistency: Sourced[str] | None = None  # no definition says: always an estimate today
    write_mode: Sourced[str] | None = None
    conditional_writes: Sourced[bool] | None = None
    gsis: tuple[GsiDef, ...] = ()
    lsis: tuple[LsiDef, ...] = ()
    max_throughput: Limits | None = None  # on-demand OnDemandThroughput
    warm_throughput: Limits | None = None
    multi_region_consistency: Sourced[str] | None = None  # eventual | strong
    witness_region: Sourced[str] | None = None
    contributor_insights: Sourced[bool] | None = None
    kinesis_streams: tuple[Sourced[str], ...] = ()
    dropped: tuple[Dropped, ...] = ()
    missing: tuple[str, ...] = ()  # what the source cannot tell, with the command that can


@dataclass(frozen=True)
class Notice:
    """A warning for stderr: `code` is stable for scripts, `message` says what to do."""

    code: str
    subject: str
    message: str

    def __str__(self) -> str:
        return f"warning: {clip_message(self.subject)}: {clip_message(self.message)} [{self.code}]"


@dataclass(frozen=True)
class Imported:
    """What one source file gave: its tables and the warnings about the file itself."""

    path: str
    kind: str
    tables: tuple[TableDefinition, ...]
    notices: tuple[Notice, ...] = field(default=())


DEFAULT_REGION = "us-east-1"  # when neither --region nor the source names one (docs/cli.md)


@dataclass(frozen=True)
class Options:
    """What the command line adds to a source: the region, template parameters, Terraform --var-file."""

    region: str | None = None
    parameters: tuple[tuple[str, str], ...] = ()
    var_files: tuple[str, ...] = ()

    def region_of(self, subject: str, found: Sourced[str] | None = None) -> tuple[Sourced[str], list[Notice]]:
        """The source's own region, else --region, else the documented default (with a warning)."""
        if found is not None:
            return found, []
        if self.region is not None:
            return given(self.region, "--region"), []
        return (given(DEFAULT_REGION, f"default region {DEFAULT_REGION}: the source names none"),
                [Notice("default-region", subject, f"the source names no region: {DEFAULT_REGION} assumed; "
                        "pass --region REGION if the table lives elsewhere")])
