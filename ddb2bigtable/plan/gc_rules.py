"""Column families and their garbage-collection policies, as the plan states them.

Which rule each family gets is decided from the spec alone (`spec/families.py`: the codec
needs the same answer); here each one becomes a `FamilyPlan` with the sentence a reviewer
checks, and the planner warns where a family defeats the table's TTL.
"""

from __future__ import annotations

from ..spec.families import FamilyGc, family_gc
from ..spec.model import TableSpec
from .model import FamilyPlan, GcPolicy, PlanWarning


def plan_families(table: TableSpec, instance_id: str) -> tuple[list[FamilyPlan], list[PlanWarning]]:
    ttl = table.source.ttl
    families, warnings = [], []
    for family in family_gc(table):
        rule = family.rule
        policy = GcPolicy(rule.max_age_seconds, rule.max_versions, rule.mode)
        families.append(FamilyPlan(name=family.name, gc=policy, why=_why(family, policy, table)))
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
    return families, warnings


def _why(family: FamilyGc, policy: GcPolicy, table: TableSpec) -> str:
    if family.origin == "explicit":
        return f"explicit policy from the mapping: {policy.describe()}"
    if family.origin == "timestamps":
        return "list items stored as timestamped cells: every version is data, none collected"
    if family.origin == "ttl" and table.source.ttl is not None:
        return (f"TTL on {table.source.ttl.attribute}: cell timestamp = expiry, max_age 1s drops it once expired "
                f"(one-second expiration pattern), max_versions 1 keeps one version per item")
    return "one version per item, as DynamoDB keeps"
