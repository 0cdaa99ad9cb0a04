"""Families that hold cells with different retention needs (seeds, "Column families":
"put columns with different retention needs in different families": GC is set per
family, so a value that needs only its latest version, kept in a family that keeps 1,000
versions of something else, pays for 999 cells it does not need).

What each sampled item writes where, by the plan the codec picks for it:

- *versions*: cells that are versions on purpose: a list in the `timestamps` layout (each
  element a cell), or a rule that keeps several items as versions of one column (the
  seeds' comments);
- *latest*: everything else: attributes and values rewritten in place, whose older
  versions are only kept because the family keeps versions;
- *expiring*: on a TTL table, cells of items with a live TTL value that are stamped with
  that expiry (or, the family not being a TTL family, with the write time);
- *timed*: cells stamped with an item's own time or the write time by a rule.

Two mixes are reported: *latest* cells in a family that keeps more than one version
beside *versions* cells (every update of them keeps its old cell as well: the family's
GC keeps it for the versions' sake), and, on a TTL table, *expiring* cells beside
*timed* ones (the family cannot get the one-second expiration pattern, so the items'
TTL is never applied: `plan` warns `ttl-not-enforced` on the family; this says which
cells to move). Pure function of the codec and the sampled items.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ..codec.codec import Codec
from ..codec.items import Item
from ..codec.rules import RulePlan
from ..spec.families import family_gc
from ..spec.model import TableSpec
from .findings import FAMILIES, Finding

MIN_CELLS_ITEMS = 5  # items writing each kind of cell: fewer is an anecdote


def _needs(codec: Codec, plan: RulePlan, item: Item) -> list[tuple[str, str, str]]:
    """(family, need, source) for what one item writes; source names it in the evidence."""
    table = codec.table
    keys = {table.source.key.partition.name} | ({table.source.key.sort.name} if table.source.key.sort else set())
    ttl = table.source.ttl.attribute if table.source.ttl else None
    expiring = ttl is not None and "N" in item.get(ttl, {})
    timed = plan.timestamp is not None and plan.timestamp != "ttl"
    if plan.is_value:
        family = codec.value_family(plan)
        need = "versions" if plan.versions_are_items else "latest"
        source = plan.describe()
        out = [(family, need, source)]
    else:
        out = []
        for name in item:
            if name in keys:
                continue
            how, family = codec.layout.get(name, ("json", ""))
            family = family or codec.json_family(plan, name)
            out.append((family, "versions" if how == "timestamps" else "latest", f"`{name}`"))
    if ttl is not None and (timed or expiring):
        out += [(family, "timed", plan.describe()) if timed else (family, "expiring", f"`{ttl}`")
                for family in dict.fromkeys(f for f, _, _ in out)]
    return out


def mixed_retention(codec: Codec, items: Iterable[Item]) -> list[Finding]:
    table = codec.table
    keeps = {f.name: f.rule.max_versions for f in family_gc(table)}
    ttl = table.source.ttl.attribute if table.source.ttl else None
    # items alike (same plan, same attribute names, same TTL state) write alike: decide once per shape
    shapes: dict[tuple[object, ...], tuple[set[tuple[str, str, str]], list[int]]] = {}
    for item in items:
        plan = codec.plan_for(item)
        shape = (plan.index, ttl is not None and "N" in item.get(ttl, {}), *item)
        entry = shapes.get(shape)
        if entry is None:
            entry = shapes[shape] = (set(_needs(codec, plan, item)), [0])
        entry[1][0] += 1
    items_by: Counter[tuple[str, str]] = Counter()
    sources: dict[tuple[str, str], Counter[str]] = {}
    for needs, (n,) in shapes.values():
        for family, need in {(family, need) for family, need, _ in needs}:
            items_by[(family, need)] += n
        for family, need, source in needs:
            sources.setdefault((family, need), Counter())[source] += n
    found = []
    for family in keeps:
        def shown(need: str, family: str = family) -> str:
            return ", ".join(s for s, _ in sources.get((family, need), Counter()).most_common(3))

        if keeps[family] != 1 and _both(items_by, family, "versions", "latest"):
            found.append(Finding(
                "mixed-retention", "warning", table.id,
                f"family `{family}` keeps {'every version' if keeps[family] is None else f'{keeps[family]} versions'}"
                f" for {shown('versions')} ({items_by[(family, 'versions')]:,} sampled items), and also holds "
                f"{shown('latest')}, written in place ({items_by[(family, 'latest')]:,} items): every update of "
                "those keeps its old cells too",
                FAMILIES,
                "give the versioned data a family of its own so the others keep one version, as DynamoDB does",
                _snippet(codec, family)))
        if codec.table.source.ttl and _both(items_by, family, "expiring", "timed"):
            found.append(Finding(
                "mixed-retention", "warning", table.id,
                f"family `{family}` holds cells of {items_by[(family, 'expiring')]:,} sampled items that expire by "
                f"{shown('expiring')} beside cells stamped by {shown('timed')} "
                f"({items_by[(family, 'timed')]:,} items): GC cannot expire the one without deleting the other, "
                "so the TTL is not applied to this family (plan: ttl-not-enforced)",
                FAMILIES,
                "give the rules that stamp cells with their own time a family of their own: this one then gets "
                "the TTL's one-second expiration pattern"))
    return found


def lists_in_default_family(table: TableSpec) -> list[Finding]:
    """Spec only (no sample): a `timestamps` list left in the default family, where every
    attribute without a family of its own goes: the family then keeps every version of
    all of them. With a sample, `mixed_retention` weighs what the items really write."""
    m = table.mapping
    lists = [a.name for a in m.attributes if a.layout == "timestamps" and (a.family or m.default_family)
             == m.default_family]
    if not lists:
        return []
    shown = ", ".join(f"`{name}`" for name in lists)
    return [Finding(
        "mixed-retention", "warning", table.id,
        f"family `{m.default_family}` keeps every version for {shown} (timestamps layout) and is also where "
        "every attribute without a family of its own goes, written in place: every update of those keeps its "
        "old cells too (spec only: give --export to see what the items write)",
        FAMILIES,
        "give the versioned data a family of its own so the others keep one version, as DynamoDB does",
        _lists_snippet(table, lists))]


def _both(items_by: Counter[tuple[str, str]], family: str, one: str, other: str) -> bool:
    return items_by.get((family, one), 0) >= MIN_CELLS_ITEMS and items_by.get((family, other), 0) >= MIN_CELLS_ITEMS


def _snippet(codec: Codec, family: str) -> str:
    lists = [name for name, (how, fam) in codec.layout.items() if how == "timestamps" and fam == family]
    return _lists_snippet(codec.table, lists) if lists else ""


def _lists_snippet(table: TableSpec, lists: list[str]) -> str:
    declared = {a.name: a.type for a in table.mapping.attributes}
    return ("families:\n" + "".join(f"  - name: {name}   # keeps every element as a version\n" for name in lists)
            + "attributes:\n" + "".join(
                f"  - {{name: {name}, {f'type: {declared[name]}, ' if declared.get(name) else ''}"
                f"layout: timestamps, family: {name}}}\n" for name in lists)).rstrip("\n")
