"""Column families and their garbage-collection policies.

DynamoDB keeps one version of an item and deletes it at its TTL; Bigtable keeps every
version until GC says otherwise. So by default each family keeps one version, and a TTL
table uses Google's "one-second expiration" pattern: the cell timestamp is the item's
expiry and the family drops cells older than one second (readers filter timestamps >= now,
because GC is lazy, exactly as DynamoDB's TTL deletion is). Explicit policies from the
mapping win; the planner warns where they defeat the TTL.
"""

from __future__ import annotations

from ..spec.model import TableSpec
from .model import FamilyPlan, GcPolicy, PlanWarning

TTL_POLICY = GcPolicy(max_age_seconds=1, max_versions=1, mode="union")
ONE_VERSION = GcPolicy(max_age_seconds=None, max_versions=1)
KEEP_ALL = GcPolicy(max_age_seconds=None, max_versions=None)


def family_names(table: TableSpec) -> list[str]:
    """The default family, declared families, then families only named by attributes or rules."""
    m = table.mapping
    names = [m.default_family]
    for name in [f.name for f in m.families] + [a.family for a in m.attributes] + [r.family for r in m.rules]:
        if name and name not in names:
            names.append(name)
    return names


def plan_families(table: TableSpec, instance_id: str) -> tuple[list[FamilyPlan], list[PlanWarning]]:
    m = table.mapping
    ttl = table.source.ttl
    explicit = {f.name: f.gc for f in m.families if f.gc is not None}
    timestamp_lists = {a.family or m.default_family for a in m.attributes if a.layout == "timestamps"}
    non_ttl_stamped = {r.family or m.default_family for r in m.rules if r.timestamp not in (None, "ttl")}
    families, warnings = [], []
    for name in family_names(table):
        rule = explicit.get(name)
        if rule is not None:
            policy = GcPolicy(rule.max_age_seconds, rule.max_versions, rule.mode)
            why = f"explicit policy from the mapping: {policy.describe()}"
            if ttl and rule.max_age_seconds is None:
                warnings.append(PlanWarning(
                    "ttl-not-enforced", instance_id, table.id,
                    f"family {name} has its own GC without max_age, so {ttl.attribute} expiry is not applied to it"))
        elif name in timestamp_lists:
            policy, why = KEEP_ALL, "list items stored as timestamped cells: every version is data, none collected"
        elif ttl and name not in non_ttl_stamped:
            policy = TTL_POLICY
            why = (f"TTL on {ttl.attribute}: cell timestamp = expiry, max_age 1s drops it once expired "
                   f"(one-second expiration pattern), max_versions 1 keeps one version per item")
        else:
            policy, why = ONE_VERSION, "one version per item, as DynamoDB keeps"
            if ttl:
                warnings.append(PlanWarning(
                    "ttl-not-enforced", instance_id, table.id,
                    f"family {name} takes its cell timestamps from an attribute, so {ttl.attribute} expiry "
                    f"cannot be applied to it by GC; delete expired rows in the application"))
        families.append(FamilyPlan(name=name, gc=policy, why=why))
    return families, warnings
