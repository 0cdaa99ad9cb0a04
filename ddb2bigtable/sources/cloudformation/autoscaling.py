"""`AWS::ApplicationAutoScaling::ScalableTarget` / `ScalingPolicy` -> the tables' auto scaling.

A scalable target points at `table/NAME` or `table/NAME/index/INDEX` (usually built with
`!Join`/`!Sub` from the table's `Ref`), with a dimension (`dynamodb:table:ReadCapacityUnits`,
...) and min/max; a target-tracking policy points at the target (`ScalingTargetId: !Ref`)
or at the same resource id and dimension, and gives the target utilisation. A target
whose table is not in the template is named in a warning, not dropped silently.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ..located import Located
from ..model import Notice, Scaling, TableDefinition
from .fields import Fields
from .intrinsics import Context, Unresolved, resolve

TARGET = "AWS::ApplicationAutoScaling::ScalableTarget"
POLICY = "AWS::ApplicationAutoScaling::ScalingPolicy"
_DIMENSION = re.compile(r"^dynamodb:(table|index):(Read|Write)CapacityUnits$")
_RESOURCE = re.compile(r"^table/([^/]+)(?:/index/([^/]+))?$")

Key = tuple[str, str | None, str]  # (table name, index name or None, "Read" | "Write")


def _fields(loc: Located, logical: str, resource: dict[str, Any], ctx: Context) -> Fields:
    props = resolve(resource.get("Properties") or {}, ctx)
    return Fields(loc, logical, loc.check(("Resources", logical, "Properties"), props, (dict,), "Properties"))


def scaling_key(f: Fields, notices: list[Notice], names: tuple[str, str] = ("ResourceId", "ScalableDimension")
                ) -> Key | None:
    """What a target or policy scales, or None (with a notice) when it cannot be told.

    `names` are the resource-id and dimension fields: CloudFormation's, or Terraform's
    `resource_id` / `scalable_dimension` (the Terraform reader asks the same question)."""
    resource, dimension = f.raw((names[0],)), f.raw((names[1],))
    for value, field in ((resource, names[0]), (dimension, names[1])):
        if isinstance(value, Unresolved):
            notices.append(Notice("unresolved", f.logical, f"{f.origin((field,))} is not resolved: {value.reason}; "
                                  "its auto scaling is left out"))
            return None
    found_resource, found_dimension = _RESOURCE.match(str(resource)), _DIMENSION.match(str(dimension))
    if not (found_resource and found_dimension):
        raise f.fail((names[0],), f"a DynamoDB scalable target needs ResourceId table/NAME[/index/INDEX] and a "
                     f"dynamodb:table|index:Read|WriteCapacityUnits dimension, got {resource!r} and {dimension!r}")
    return found_resource.group(1), found_resource.group(2), found_dimension.group(2)


def scalings(loc: Located, resources: dict[str, Any], ctx: Context) -> tuple[dict[Key, Scaling], list[Notice]]:
    """Every DynamoDB scalable target of the template with its policy's target value."""
    notices: list[Notice] = []
    targets: dict[str, tuple[Key, Scaling]] = {}
    for logical, resource in resources.items():
        if resource.get("Type") != TARGET:
            continue
        f = _fields(loc, logical, resource, ctx)
        if f.raw(("ServiceNamespace",)) != "dynamodb" or (key := scaling_key(f, notices)) is None:
            continue
        low, high = f.integer(("MinCapacity",), "MinCapacity"), f.integer(("MaxCapacity",), "MaxCapacity")
        if low is None or high is None:
            raise f.fail((), "a scalable target needs MinCapacity and MaxCapacity")
        targets[logical] = key, Scaling(low, high)
    found = {key: scaling for key, scaling in targets.values()}
    for logical, resource in resources.items():
        if resource.get("Type") != POLICY:
            continue
        f = _fields(loc, logical, resource, ctx)
        ref = (resource.get("Properties") or {}).get("ScalingTargetId")
        if isinstance(ref, dict) and isinstance(ref.get("Ref"), str) and ref["Ref"] in targets:
            key = targets[ref["Ref"]][0]
        elif f.has(("ResourceId",)) and f.raw(("ServiceNamespace",)) == "dynamodb":
            key = scaling_key(f, notices)
        else:
            continue
        target = f.number(("TargetTrackingScalingPolicyConfiguration", "TargetValue"), "TargetValue")
        if key is None or target is None:
            continue
        if key not in found:
            notices.append(Notice("autoscaling-unmatched", logical, f"policy for {key} has no scalable target in the "
                                  "template; its target value is left out"))
            continue
        found[key] = replace(found[key], target=target)
    return found, notices


def apply(tables: list[TableDefinition], found: dict[Key, Scaling]) -> tuple[list[TableDefinition], list[Notice]]:
    """The tables with the auto scaling that points at them; the rest named in notices."""
    out: list[TableDefinition] = []
    used: set[Key] = set()
    for table in tables:
        name = table.name.value
        own: tuple[Key, Key] = ((name, None, "Read"), (name, None, "Write"))
        read, write = found.get(own[0]), found.get(own[1])
        used |= {k for k in own if k in found}
        gsis = []
        for gsi in table.gsis:
            keys: tuple[Key, Key] = ((name, gsi.name.value, "Read"), (name, gsi.name.value, "Write"))
            used |= {k for k in keys if k in found}
            gsis.append(replace(gsi, read_scaling=found.get(keys[0], gsi.read_scaling),
                                write_scaling=found.get(keys[1], gsi.write_scaling)))
        out.append(replace(table, read_scaling=read or table.read_scaling, write_scaling=write or table.write_scaling,
                           gsis=tuple(gsis)))
    notices = [Notice("autoscaling-unmatched", f"table/{k[0]}" + (f"/index/{k[1]}" if k[1] else ""),
                      f"auto scaling of {k[2].lower()}s ({s.minimum.origin}) points at a table not defined in the "
                      "template: import that table's template (or describe-table output) too")
               for k, s in found.items() if k not in used]
    return out, notices
