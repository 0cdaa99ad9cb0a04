"""Column families, their garbage-collection policies and types, as the plan states them.

Which rule each family gets, and which families hold counters, is decided from the spec
alone (`spec/families.py`: the codec needs the same answer); here each one becomes a
`FamilyPlan` with the sentence a reviewer checks, and the planner warns where a family
defeats the table's TTL. A counter family is an aggregate family (int64 Sum): Google,
"Aggregate values at write time" (cloud.google.com/bigtable/docs/aggregates, read
2026-11-25) and "Data types" (cloud.google.com/bigtable/docs/data-types, read 2026-11-25:
Sum takes Int64 inputs, BigEndianBytes encoding; an existing family cannot be converted).
"""

from __future__ import annotations

from ..spec.families import ONE_VERSION, STREAM_FAMILY, TXN_FAMILY, FamilyGc, counter_families, family_gc
from ..spec.model import TableSpec
from .model import INT64_SUM, FamilyPlan, GcPolicy, PlanWarning

# DynamoDB Streams keep a record 24 hours ("In DynamoDB Streams, there is a 24 hour limit on data
# retention", API_streams_GetRecords, read 2026-12-07); serve's records are cells of this family
STREAM_RECORD_SECONDS = 24 * 3600
STREAM_FAMILY_PLAN = FamilyPlan(
    name=STREAM_FAMILY, gc=GcPolicy(STREAM_RECORD_SECONDS, None),
    why="serve's DynamoDB Streams records, each written with its item's write (docs/streams.md): kept 24h, "
        "DynamoDB's retention")


def plan_families(table: TableSpec, instance_id: str) -> tuple[list[FamilyPlan], list[PlanWarning]]:
    ttl = table.source.ttl
    families, warnings = [], []
    counters = counter_families(table)
    for family in family_gc(table):
        rule = family.rule
        policy = GcPolicy(rule.max_age_seconds, rule.max_versions, rule.mode)
        if family.origin == "ttl" and table.source.stream != "none":  # serve's sweep deletes, with the record
            policy = GcPolicy(None, rule.max_versions, rule.mode)
        why = _why(family, policy, table)
        if family.name in counters:
            families.append(FamilyPlan(name=family.name, gc=policy, why=f"{why}; {_counter_why(table)}",
                                       aggregate=INT64_SUM))
        else:
            families.append(FamilyPlan(name=family.name, gc=policy, why=why))
        if ttl and family.origin == "explicit" and rule.max_age_seconds is None:
            warnings.append(PlanWarning(
                "ttl-not-enforced", instance_id, table.id,
                f"family {family.name} has its own GC without max_age, so {ttl.attribute} expiry is not applied "
                f"to it"))
        elif ttl and family.origin == "one-version":
            warnings.append(PlanWarning(
                "ttl-not-enforced", instance_id, table.id,
                f"family {family.name} takes its cell timestamps from an attribute, so {ttl.attribute} expiry "
                f"cannot be applied to it by GC; delete expired rows in the application"))
    families.append(FamilyPlan(name=TXN_FAMILY, gc=GcPolicy(None, ONE_VERSION.max_versions, ONE_VERSION.mode),
                               why="serve's transaction locks and ClientRequestToken records (docs/transactions.md): "
                                   "one version, never aged out"))
    if table.source.stream != "none":
        families.append(STREAM_FAMILY_PLAN)
    return families, warnings + _counter_time_warnings(table, instance_id)


def _counter_time_warnings(table: TableSpec, instance_id: str) -> list[PlanWarning]:
    """A counter rule with `timestamp: write_time` (the video example had it before counter
    families): a counter's cell keeps one fixed time so that every AddToCell reaches it."""
    counters = {a.name for a in table.mapping.attributes if a.type == "counter"}
    return [PlanWarning(
        "counter-time", instance_id, table.id,
        f"rules[{j}] stores the counter {r.value} with timestamp {r.timestamp}, which is ignored: a counter's cell "
        f"keeps one fixed time (0, or the item's expiry on a TTL table) so that every AddToCell adds to it; "
        f"remove the timestamp")
        for j, r in enumerate(table.mapping.rules) if r.value in counters and r.timestamp == "write_time"]


def _counter_why(table: TableSpec) -> str:
    names = ", ".join(a.name for a in table.mapping.attributes if a.type == "counter")
    return (f"counters ({names}): an aggregate family (int64 Sum), so the application increments with AddToCell "
            f"through any app profile, serving included: Bigtable merges every cluster's additions and none is lost "
            f"(DynamoDB global tables keep the last writer's value); counters alone need no txn- profile")


def _why(family: FamilyGc, policy: GcPolicy, table: TableSpec) -> str:
    if family.origin == "explicit":
        return f"explicit policy from the mapping: {policy.describe()}"
    if family.origin == "timestamps":
        return "list items stored as timestamped cells: every version is data, none collected"
    if family.origin == "ttl" and table.source.ttl is not None and table.source.stream != "none":
        return (f"TTL on {table.source.ttl.attribute} with a stream: cell timestamp = expiry, no max_age: serve's "
                f"TTL sweep deletes each expired item with its REMOVE record (docs/streams.md), which a max_age "
                f"could collect first, losing the record; readers hide expired cells at once; max_versions 1 keeps "
                f"one version per item")
    if family.origin == "ttl" and table.source.ttl is not None:
        return (f"TTL on {table.source.ttl.attribute}: cell timestamp = expiry, max_age 1s drops it once expired "
                f"(one-second expiration pattern), max_versions 1 keeps one version per item")
    return "one version per item, as DynamoDB keeps"
