"""Price changes between two plans, apart from capacity changes.

A refreshed price lock (or a new shipped table) moves the monthly cost without any spec
changing; a reviewer must see that as its own news, not mixed into "nodes went 4 -> 6".
Each figure is matched by its `price_key` ("bigtable.us-east4.node_hour") and compared at
list price (a changed discount is the stage's own change, shown in its cost), so a cluster
whose node count also changed still shows one price change, and its effect is priced at
the head's quantities and discounts. What is left of the cost change is capacity.
"""

from __future__ import annotations

from dataclasses import replace

from ..plan.model import CostLine, InstancePlan, StagePlan
from .diff import Change, StageDiff


def _origin(line: CostLine) -> str:
    if line.origin == "lock":
        return f"lock, SKU {line.sku}, effective {line.as_of}"
    return f"{line.origin}, {line.as_of}"


def _list(line: CostLine) -> float:
    """The figure's own price: before the stage's discounts (a discount is the stage's news)."""
    return line.unit_price if line.list_unit_price is None else line.list_unit_price


def price_changes(old: InstancePlan, new: InstancePlan) -> list[Change]:
    """One change per figure whose list price moved, with its monthly effect on what is paid
    (each head line's paid price scaled by old list / new list: its discounts kept)."""
    before = {line.price_key: line for line in (*old.cost.bigtable, *old.cost.dynamodb) if line.price_key}
    after: dict[str, list[CostLine]] = {}
    for line in (*new.cost.bigtable, *new.cost.dynamodb):
        if line.price_key:
            after.setdefault(line.price_key, []).append(line)
    out = []
    for key in sorted(before.keys() & after.keys()):
        a, lines = before[key], after[key]
        b = lines[0]
        if _list(a) == _list(b):
            continue
        effect = sum(line.quantity * line.unit_price * (1 - _list(a) / _list(b)) if _list(b) else 0.0
                     for line in lines)
        sign = "+" if effect >= 0 else "-"
        out.append(Change(f"{new.id}/price {key}", "unit price", f"${_list(a):g} per {a.unit} ({_origin(a)})",
                          f"${_list(b):g} per {b.unit} ({_origin(b)})", None,
                          f"{sign}${abs(effect):,.2f}/month at the head's quantities: a price change, "
                          "not a capacity change"))
    return out


def with_price_changes(diff: StageDiff, old: StagePlan | None, new: StagePlan | None) -> StageDiff:
    """`diff` with the price changes of every instance both plans have, after its own changes."""
    if old is None or new is None:
        return diff
    before = {i.id: i for i in old.instances}
    moved = [c for i in new.instances if i.id in before for c in price_changes(before[i.id], i)]
    if not moved:
        return diff
    return replace(diff, changes=diff.changes + tuple(moved), status="changed")
