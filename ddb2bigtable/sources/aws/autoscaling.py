"""Application Auto Scaling of a live table and its GSIs: scalable targets (min, max) and
target-tracking policies (the target utilisation), as the model's `Scaling`.

DynamoDB registers one scalable target per resource (`table/NAME`,
`table/NAME/index/INDEX`) and dimension (`dynamodb:table:ReadCapacityUnits`, ...
`dynamodb:index:WriteCapacityUnits`); a target-tracking policy on the same pair holds the
target value. Step scaling and scheduled actions do not exist for DynamoDB's predefined
metrics and are not read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model import Scaling, given
from .clients import Clients

_CHUNK = 50  # DescribeScalableTargets takes at most 50 resource ids


def resource_id(table: str, index: str | None = None) -> str:
    return f"table/{table}" + (f"/index/{index}" if index else "")


@dataclass
class LiveScaling:
    """Auto scaling per resource id and "reads"/"writes"; `unread` says why there is none."""

    found: dict[str, dict[str, Scaling]] = field(default_factory=dict)
    unread: str | None = None

    def of(self, table: str, index: str | None = None) -> tuple[Scaling | None, Scaling | None]:
        dims = self.found.get(resource_id(table, index), {})
        return dims.get("reads"), dims.get("writes")


def _dimension(name: str) -> str | None:
    if name.endswith(":ReadCapacityUnits"):
        return "reads"
    if name.endswith(":WriteCapacityUnits"):
        return "writes"
    return None


def _origin(target: dict[str, Any], field_name: str) -> str:
    return f"Application Auto Scaling {target['ResourceId']} {target['ScalableDimension']} {field_name}"


def _targets(clients: Clients, ids: list[str]) -> list[dict[str, Any]]:
    paginator = clients.autoscaling.get_paginator("describe_scalable_targets")
    found: list[dict[str, Any]] = []
    for start in range(0, len(ids), _CHUNK):
        pages = clients.call("DescribeScalableTargets", lambda chunk: list(paginator.paginate(
            ServiceNamespace="dynamodb", ResourceIds=chunk)), chunk=ids[start:start + _CHUNK])
        found += [t for page in pages for t in page.get("ScalableTargets", [])]
    return found


def _policy_targets(clients: Clients, resource: str) -> dict[str, tuple[float, str]]:
    """Target value and origin per dimension of one resource's target-tracking policies."""
    paginator = clients.autoscaling.get_paginator("describe_scaling_policies")
    pages = clients.call("DescribeScalingPolicies", lambda: list(paginator.paginate(
        ServiceNamespace="dynamodb", ResourceId=resource)))
    out: dict[str, tuple[float, str]] = {}
    for policy in (p for page in pages for p in page.get("ScalingPolicies", [])):
        config = policy.get("TargetTrackingScalingPolicyConfiguration") or {}
        dim = _dimension(str(policy.get("ScalableDimension", "")))
        if dim is not None and isinstance(config.get("TargetValue"), int | float):
            out[dim] = (float(config["TargetValue"]),
                        f"Application Auto Scaling policy {policy.get('PolicyName')} TargetValue")
    return out


def read_scaling(clients: Clients, table: str, indexes: list[str]) -> LiveScaling:
    """The auto scaling of `table` and its `indexes`; a denied or unserved API is `unread`."""
    from .clients import Denied, Unsupported

    ids = [resource_id(table)] + [resource_id(table, i) for i in indexes]
    try:
        targets = _targets(clients, ids)
        policies = {r: _policy_targets(clients, r) for r in sorted({t["ResourceId"] for t in targets})}
    except (Denied, Unsupported) as error:
        return LiveScaling(unread=str(error))
    out = LiveScaling()
    for target in targets:
        dim = _dimension(str(target.get("ScalableDimension", "")))
        if dim is None:
            continue
        aim = policies.get(target["ResourceId"], {}).get(dim)
        out.found.setdefault(target["ResourceId"], {})[dim] = Scaling(
            given(int(target["MinCapacity"]), _origin(target, "MinCapacity")),
            given(int(target["MaxCapacity"]), _origin(target, "MaxCapacity")),
            given(aim[0], aim[1]) if aim else None)
    return out
