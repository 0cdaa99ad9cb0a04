"""What a team really pays: the stage's `discounts:` applied to list-priced cost lines.

Three kinds, each on what the provider applies it to (figures, sources and dates in
`data/prices.json`, "discounts"):
- Bigtable committed use (spend-based, 1 or 3 years): a percentage off node compute only;
  storage, backups and replication traffic stay at list price.
- DynamoDB reserved capacity (1 or 3 years): an upfront payment plus an hourly rate per
  100 provisioned RCU or WCU, spread over the term's hours; only for Standard-class
  tables' provisioned RCU and WCU (AWS sells none for replicated WCU, Standard-IA or
  on-demand). A region without its own rates gets us-east-1's ratio to list, flagged
  estimate.
- A negotiated percentage per cloud (an enterprise or private pricing agreement), applied
  last, to every line of that cloud.

Choices a reviewer should know: the commitment and the reservation are assumed to cover
exactly the plan's expected usage (a real purchase is a fixed amount: usage above it pays
list price, unused commitment is still paid), and reservations are bought in blocks of
100 units, which the plan does not round to.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..spec.stage import DiscountSettings
from .model import CostLine
from .pricing import discount_figures, dynamodb

REFERENCE_REGION = "us-east-1"


@dataclass(frozen=True)
class Step:
    """One discount: a new unit price from the current one."""

    text: str  # "committed use 3y -40 %"
    factor: float = 1.0
    price: float | None = None  # an absolute price (reserved capacity), else `factor` x current
    estimate: bool = False
    note: str = ""

    def apply(self, unit_price: float) -> float:
        return self.price if self.price is not None else unit_price * self.factor


def _negotiated(percent: float, cloud: str) -> list[Step]:
    return [Step(f"negotiated -{percent:g} %", factor=1 - percent / 100,
                 note=f"negotiated {cloud} discount of {percent:g} % (stage discounts)")] if percent else []


def bigtable_steps(settings: DiscountSettings, unit: str) -> list[Step]:
    """Steps for a Bigtable line of `unit` (node-hour lines get the committed use discount)."""
    steps = []
    if settings.bigtable_committed_use and unit == "node-hour":
        cud = discount_figures()["bigtable_committed_use"]
        percent = cud["percent_off"][settings.bigtable_committed_use]
        steps.append(Step(f"committed use {settings.bigtable_committed_use} -{percent} %", factor=1 - percent / 100,
                          note=f"Bigtable committed use discount {settings.bigtable_committed_use}: {percent} % off "
                               f"node compute ({cud['source']}, as of {cud['as_of']})"))
    return steps + _negotiated(settings.bigtable_negotiated_percent, "Bigtable")


def _reserved_unit_hour(terms: dict[str, Any], term: str, kind: str, hours: int, per: int) -> float:
    rate = terms[term][kind]
    return (rate["upfront"] / hours + rate["hourly"]) / per


def dynamodb_steps(settings: DiscountSettings, unit: str, region: str, standard_class: bool) -> list[Step]:
    """Steps for a DynamoDB line: reserved capacity on a Standard table's RCU/WCU-hours."""
    steps = []
    term = settings.dynamodb_reserved_capacity
    kind = {"RCU-hour": "rcu", "WCU-hour": "wcu"}.get(unit)
    if term and kind and standard_class:
        reserved = discount_figures()["dynamodb_reserved_capacity"]
        hours, per = reserved["term_hours"][term], reserved["units_per_reservation"]
        where = f"({reserved['source']}, as of {reserved['as_of']})"
        own = reserved["regions"].get(region, {})
        if term in own:
            price = _reserved_unit_hour(own, term, kind, hours, per)
            steps.append(Step(f"reserved {term}", price=price,
                              note=f"DynamoDB reserved capacity {term} in {region}: upfront and hourly per {per} "
                                   f"{kind.upper()} over {hours:,} h {where}"))
        else:
            base = reserved["regions"][REFERENCE_REGION]
            ratio = _reserved_unit_hour(base, term, kind, hours, per) / _list(kind)
            steps.append(Step(f"reserved {term} (estimate)", factor=ratio, estimate=True,
                              note=f"no {term} reserved capacity rates for {region}; {REFERENCE_REGION}'s ratio to "
                                   f"list ({ratio:.0%} of list) used {where}"))
    return steps + _negotiated(settings.dynamodb_negotiated_percent, "DynamoDB")


def _list(kind: str) -> float:
    """us-east-1's list price of an RCU or WCU hour (shipped table), the base of the reference ratio."""
    return dynamodb(REFERENCE_REGION, f"{kind}_hour").value


def discounted(line: CostLine, steps: list[Step]) -> CostLine:
    """`line` at its discounted price, keeping the list price beside it."""
    if not steps:
        return line
    price = line.unit_price
    for step in steps:
        price = step.apply(price)
    notes = "; ".join(n for n in (line.note, *(s.note for s in steps if s.estimate)) if n)
    return replace(line, unit_price=float(f"{price:.8g}"), monthly_usd=round(line.quantity * price, 2),
                   list_unit_price=line.unit_price, list_monthly_usd=line.monthly_usd,
                   discount="; ".join(s.text for s in steps), discount_notes=tuple(s.note for s in steps),
                   estimate=line.estimate or any(s.estimate for s in steps), note=notes)
