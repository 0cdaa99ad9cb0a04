"""`diff --fail-on`: which rules a diff trips, one line each with the figure that tripped it.

A failed CI step shows only what the command wrote; these lines say why it failed, whatever
format stdout carries (a PR comment, JSON for a bot, the terminal table).
"""

from __future__ import annotations

from dataclasses import dataclass

from .diff import StageDiff

SHOWN = 3  # destructive changes named on the rule's line; the rest are counted


@dataclass(frozen=True)
class Rule:
    """`destructive`, or `cost-increase:PCT` (a stage's Bigtable cost rising by more than PCT %)."""

    text: str  # as the user wrote it
    cost_percent: float | None = None  # None: the destructive rule


def parse_rule(value: str) -> Rule:
    """The rule `value` names; ValueError saying what is expected otherwise."""
    if value == "destructive":
        return Rule(value)
    if value.startswith("cost-increase:"):
        try:
            return Rule(value, float(value.split(":", 1)[1].rstrip("%")))
        except ValueError:
            pass
    raise ValueError("expected `destructive` or `cost-increase:PCT` (e.g. cost-increase:10)")


def _destructive(rule: Rule, diffs: list[StageDiff]) -> str | None:
    found = [(d.stage, c) for d in diffs for c in d.changes if c.flag == "DESTRUCTIVE"]
    if not found:
        return None
    named = "; ".join(f"{stage} {c.scope}: {c.what}" for stage, c in found[:SHOWN])
    more = f"; and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
    return f"--fail-on {rule.text}: {len(found)} destructive change{'s' if len(found) != 1 else ''} ({named}{more})"


def _cost(rule: Rule, threshold: float, diffs: list[StageDiff]) -> str | None:
    over = [d for d in diffs if (d.bigtable_percent or 0) > threshold]
    if not over:
        return None
    stages = "; ".join(f"{d.stage} Bigtable {d.bigtable_percent:+.1f} % (${d.bigtable_before:,.2f} → "
                       f"${d.bigtable_after:,.2f}/month)" for d in over)
    return f"--fail-on {rule.text}: {stages}, above {threshold:g} %"


def tripped(rules: list[Rule], diffs: list[StageDiff]) -> list[str]:
    """One line per rule that trips, in the order given; empty when none does."""
    lines = [_destructive(r, diffs) if r.cost_percent is None else _cost(r, r.cost_percent, diffs) for r in rules]
    return [line for line in lines if line]
