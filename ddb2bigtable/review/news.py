"""Risks and warnings that are news between two plans.

A warning's identity is its code and its subject (instance, table, cluster), not its text:
dropping a replica turns "copied to all 3 clusters" into "all 2 clusters" in a warning the
base plan already had, and a reviewer must see that as the same warning with a changed
message (both texts shown), not as a new one. A warning whose text did not change is not
news. Risks the diff computes itself (storage near the floor) are compared the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..plan.model import PlanWarning, StagePlan
from ..plan.sizing import NODE_FIGURES
from .change import Change, Flag

STORAGE_RISK = 0.9  # storage per node above 90 % of the target leaves no room before the floor
CAPACITY = "capacity below the model's need"  # the node-cap warning, flagged RISK


@dataclass(frozen=True)
class _Note:
    identity: tuple[str | None, ...]
    scope: str
    name: str  # what the line is about: a warning code, or a risk
    text: str
    flag: Flag


def _scope(plan: StagePlan, w: PlanWarning) -> str:
    if w.cluster:
        regions = {c.id: c.gcp_region for i in plan.instances for c in i.clusters}
        return f"{w.instance}/cluster {regions.get(w.cluster, w.cluster)}"
    return w.instance + (f"/table {w.table}" if w.table else "")


def _notes(plan: StagePlan) -> list[_Note]:
    notes = [_Note((w.code, w.instance, w.table, w.cluster), _scope(plan, w),
                   CAPACITY if w.code == "node-cap" else w.code, w.message, "RISK" if w.code == "node-cap" else None)
             for w in plan.warnings]
    for i in plan.instances:
        for c in i.clusters:
            low = c.autoscaling.min_nodes if c.autoscaling else c.nodes
            target = NODE_FIGURES[c.storage_type].storage_target_gib
            if c.storage_gib / (low * target) > STORAGE_RISK:
                notes.append(_Note(("storage-floor", i.id, c.gcp_region), f"{i.id}/cluster {c.gcp_region}",
                                   "storage near the floor",
                                   f"{c.storage_gib / low:,.0f} GiB per node, above {STORAGE_RISK:.0%} of the "
                                   f"{target:,} GiB storage target per node: growth will force more nodes", "RISK"))
    return notes


def _grouped(notes: Iterable[_Note]) -> dict[tuple[str | None, ...], list[_Note]]:
    groups: dict[tuple[str | None, ...], list[_Note]] = {}
    for note in notes:
        groups.setdefault(note.identity, []).append(note)
    return groups


def _what(note: _Note, event: str) -> str:
    """`new warning: lsi`, `warning changed: made-multi-region`; risks keep their own name."""
    if note.flag:
        return note.name if event == "new" else f"{note.name} ({event})"
    return f"new warning: {note.name}" if event == "new" else f"warning {event}: {note.name}"


def news(old: StagePlan, new: StagePlan) -> list[Change]:
    """New, changed and resolved risks and warnings; risks first. Several warnings of one identity
    (an LSI warning per index) pair up in order once the unchanged ones are set aside. `why` holds
    the warning's text (as it always has in the JSON), `brief` what happened to it."""
    before, after = _grouped(_notes(old)), _grouped(_notes(new))
    out: list[Change] = []
    for identity in [*after, *(i for i in before if i not in after)]:
        olds, news_ = list(before.get(identity, [])), list(after.get(identity, []))
        for note in list(news_):
            same = next((o for o in olds if o.text == note.text), None)
            if same is not None:
                olds.remove(same)
                news_.remove(note)
        for a, b in zip(olds, news_, strict=False):
            out.append(Change(b.scope, _what(b, "changed"), a.text, b.text, b.flag, b.text, "its text changed"))
        for b in news_[len(olds):]:
            out.append(Change(b.scope, _what(b, "new"), "none", b.text, b.flag, b.text, "new with this change"))
        for a in olds[len(news_):]:
            out.append(Change(a.scope, _what(a, "resolved"), a.text, "resolved", None, a.text,
                              "no longer in the plan"))
    return sorted(out, key=lambda c: c.flag is None)
