"""Imported tables -> one spec v1 document, YAML with a comment on every value, or JSON.

The document is built once as a tree whose leaves keep their origin, in the spec's field
order (docs/spec.md), so the YAML and JSON forms hold the same values in the same stable
order. Every estimate leaf is also a `Notice`, and so is everything the spec cannot
express: the warnings on stderr and the `# estimate:` comments come from the same leaves.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from .estimates import complete
from .model import GsiDef, KeyAttr, Limits, LsiDef, Notice, Projection, ReplicaDef, Scaling, Sourced, TableDefinition


@dataclass(frozen=True)
class Leaf:
    """A value written on one line, with its comment (origin, or `estimate: why`)."""

    value: Any
    comment: str


Tree = dict[str, Any]  # str -> Leaf | Tree | list[Tree]


@dataclass(frozen=True)
class Document:
    """The spec as a tree plus the warnings that go with it."""

    tree: Tree
    notices: tuple[Notice, ...]
    sources: tuple[str, ...]


class _Builder:
    """Turns `Sourced` values into leaves, recording a notice for every estimate."""

    def __init__(self) -> None:
        self.notices: list[Notice] = []

    def leaf(self, sourced: Sourced[Any] | None, subject: str, value: Any = None) -> Leaf:
        if sourced is None:  # `estimates.complete` sets every field the spec needs
            raise ValueError(f"{subject}: no value and no estimate")
        shown = sourced.value if value is None else value
        if sourced.estimate is None:
            return Leaf(shown, sourced.origin)
        self.notices.append(Notice("estimate", subject, f"{_flow(shown)} is an estimate: {sourced.estimate}"))
        return Leaf(shown, f"estimate: {sourced.estimate}")


def _key(attr: KeyAttr) -> dict[str, str]:
    return {"name": attr.name, "type": attr.type}


def _projection(value: Projection) -> str | list[str]:
    return value if isinstance(value, str) else list(value)


def table_id(name: str, taken: set[str]) -> str:
    """The Bigtable table id for a DynamoDB name: lower case, Bigtable's characters, unique."""
    base = re.sub(r"[^a-z0-9_.-]", "-", name.lower()).lstrip("-.")[:47] or "table"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    taken.add(candidate)
    return candidate


def _scaling(b: _Builder, read: Scaling | None, write: Scaling | None, subject: str) -> Tree:
    """Spec autoscaling from the dimensions that scale; one target when both agree, else each its own."""
    tree: Tree = {}
    for word, s in (("reads", read), ("writes", write)):
        if s is not None:
            tree[f"min_{word}"] = b.leaf(s.minimum, f"{subject}.min_{word}")
            tree[f"max_{word}"] = b.leaf(s.maximum, f"{subject}.max_{word}")
    targets = [(word, s.target) for word, s in (("read", read), ("write", write)) if s is not None and s.target]
    if len({t.value for _, t in targets}) == 1:
        tree["target_utilization"] = b.leaf(targets[0][1], f"{subject}.target_utilization")
    else:
        for word, target in targets:
            tree[f"{word}_target_utilization"] = b.leaf(target, f"{subject}.{word}_target_utilization")
    return tree


def _limits(b: _Builder, limits: Limits | None, subject: str) -> Tree | None:
    if limits is None or limits.empty:
        return None
    return {f"{word}_per_second": b.leaf(value, f"{subject}.{word}_per_second")
            for word, value in (("reads", limits.reads), ("writes", limits.writes)) if value is not None}


def _throughputs(b: _Builder, tree: Tree, on_demand: bool, max_: Limits | None, warm: Limits | None,
                 subject: str) -> None:
    """`max_throughput` (on-demand only: a provisioned table's ceiling is its autoscaling) and
    `warm_throughput`, when the source gives them."""
    if on_demand and (limit := _limits(b, max_, f"{subject}max_throughput")):
        tree["max_throughput"] = limit
    if warm_tree := _limits(b, warm, f"{subject}warm_throughput"):
        tree["warm_throughput"] = warm_tree


def _replica(b: _Builder, t: TableDefinition, r: ReplicaDef, s: str) -> Tree:
    provisioned = t.billing.value == "provisioned"
    tree: Tree = {"region": b.leaf(r.region, f"{s}.region")}
    if r.reads is not None:  # on-demand: the replica's peak RRU/s (a reader that measured it)
        tree["reads"] = b.leaf(r.reads, f"{s}.reads")
    if r.read_scaling is not None and provisioned:
        tree["autoscaling"] = _read_scaling(b, r.read_scaling, f"{s}.autoscaling")
    gsis = []
    for name, reads, scaling in r.gsi_reads:
        entry: Tree = {"name": Leaf(name, "the table's GSI")}
        if reads is not None:
            entry["reads"] = b.leaf(reads, f"{s}.gsis.{name}.reads")
        if scaling is not None and provisioned:
            entry["autoscaling"] = _read_scaling(b, scaling, f"{s}.gsis.{name}.autoscaling")
        if len(entry) > 1:
            gsis.append(entry)
    if gsis:
        tree["gsis"] = gsis
    if r.table_class is not None:
        tree["table_class"] = b.leaf(r.table_class, f"{s}.table_class")
    if r.pitr is not None:
        pitr: Tree = {"enabled": b.leaf(r.pitr, f"{s}.point_in_time_recovery.enabled")}
        if r.pitr_days is not None and r.pitr.value:
            pitr["recovery_period_days"] = b.leaf(r.pitr_days, f"{s}.point_in_time_recovery.recovery_period_days")
        tree["point_in_time_recovery"] = pitr
    return tree


def _read_scaling(b: _Builder, s: Scaling, subject: str) -> Tree:
    tree: Tree = {"min_reads": b.leaf(s.minimum, f"{subject}.min_reads"),
                  "max_reads": b.leaf(s.maximum, f"{subject}.max_reads")}
    if s.target is not None:
        tree["target_utilization"] = b.leaf(s.target, f"{subject}.target_utilization")
    return tree


def _no_equivalent(b: _Builder, t: TableDefinition, tree: Tree, s: str) -> None:
    """Fields Bigtable has no equivalent for: the plan warns about each, so carry them."""
    if t.multi_region_consistency is not None and t.multi_region_consistency.value == "strong":
        tree["multi_region_consistency"] = b.leaf(t.multi_region_consistency, f"{s} multi_region_consistency")
        if t.witness_region is not None:
            tree["witness_region"] = b.leaf(t.witness_region, f"{s} witness_region")
    if t.contributor_insights is not None and t.contributor_insights.value:
        tree["contributor_insights"] = b.leaf(t.contributor_insights, f"{s} contributor_insights")
    if t.kinesis_streams:
        tree["kinesis_streams"] = [b.leaf(k, f"{s} kinesis_streams[{i}]") for i, k in enumerate(t.kinesis_streams)]


def _gsi(b: _Builder, gsi: GsiDef, subject: str, on_demand: bool) -> Tree:
    key: Tree = {"partition": b.leaf(gsi.partition, f"{subject}.key.partition", _key(gsi.partition.value))}
    if gsi.sort is not None:
        key["sort"] = b.leaf(gsi.sort, f"{subject}.key.sort", _key(gsi.sort.value))
    tree: Tree = {"name": b.leaf(gsi.name, f"{subject}.name"), "key": key,
                  "projection": b.leaf(gsi.projection, f"{subject}.projection", _projection(gsi.projection.value))}
    for field in ("reads", "writes"):
        if (value := getattr(gsi, field)) is not None:
            tree[field] = b.leaf(value, f"{subject}.{field}")
    if gsi.read_scaling is not None or gsi.write_scaling is not None:
        tree["autoscaling"] = _scaling(b, gsi.read_scaling, gsi.write_scaling, f"{subject}.autoscaling")
    _throughputs(b, tree, on_demand, gsi.max_throughput, gsi.warm_throughput, f"{subject}.")
    return tree


def _lsi(b: _Builder, lsi: LsiDef, subject: str) -> Tree:
    return {"name": b.leaf(lsi.name, f"{subject}.name"),
            "sort": b.leaf(lsi.sort, f"{subject}.sort", _key(lsi.sort.value)),
            "projection": b.leaf(lsi.projection, f"{subject}.projection", _projection(lsi.projection.value))}


def _capacity(b: _Builder, t: TableDefinition, tree: Tree, s: str) -> None:
    """Units and auto scaling (provisioned) or rates (on-demand), then the throughput limits."""
    if t.billing.value == "provisioned":
        tree["reads"] = b.leaf(t.reads, f"{s} reads")
        tree["writes"] = b.leaf(t.writes, f"{s} writes")
        if t.read_scaling is not None or t.write_scaling is not None:
            tree["autoscaling"] = _scaling(b, t.read_scaling, t.write_scaling, f"{s} autoscaling")
    else:
        for field, rates in (("peak", t.peak), ("average", t.average)):
            if rates is not None:
                tree[field] = {"reads_per_second": b.leaf(rates.reads, f"{s} {field}.reads_per_second"),
                               "writes_per_second": b.leaf(rates.writes, f"{s} {field}.writes_per_second")}
    _throughputs(b, tree, t.billing.value == "on_demand", t.max_throughput, t.warm_throughput, f"{s} ")


def _source(b: _Builder, t: TableDefinition) -> Tree:
    s = f"{t.name.value}:"
    key: Tree = {"partition": b.leaf(t.partition, f"{s} key.partition", _key(t.partition.value))}
    if t.sort is not None:
        key["sort"] = b.leaf(t.sort, f"{s} key.sort", _key(t.sort.value))
    tree: Tree = {"table": b.leaf(t.name, f"{s} table"), "region": b.leaf(t.region, f"{s} region"), "key": key,
                  "billing": b.leaf(t.billing, f"{s} billing")}
    _capacity(b, t, tree, s)
    tree["read_consistency"] = b.leaf(t.read_consistency, f"{s} read_consistency")
    tree["write_mode"] = b.leaf(t.write_mode, f"{s} write_mode")
    tree["item_size_kb"] = b.leaf(t.item_size_kb, f"{s} item_size_kb")
    tree["storage_gb"] = b.leaf(t.storage_gb, f"{s} storage_gb")
    if t.item_count is not None:
        tree["item_count"] = b.leaf(t.item_count, f"{s} item_count")
    if t.replicas:
        tree["replicas"] = [_replica(b, t, r, f"{s} replicas[{i}]") for i, r in enumerate(t.replicas)]
    if t.ttl_attribute is not None:
        tree["ttl"] = {"attribute": b.leaf(t.ttl_attribute, f"{s} ttl.attribute")}
    if t.stream is not None:
        tree["stream"] = b.leaf(t.stream, f"{s} stream")
    pitr: Tree = {"enabled": b.leaf(t.pitr, f"{s} point_in_time_recovery.enabled")}
    if t.pitr_days is not None and t.pitr is not None and t.pitr.value:
        pitr["recovery_period_days"] = b.leaf(t.pitr_days, f"{s} point_in_time_recovery.recovery_period_days")
    tree["point_in_time_recovery"] = pitr
    if t.table_class is not None:
        tree["table_class"] = b.leaf(t.table_class, f"{s} table_class")
    tree["deletion_protection"] = b.leaf(t.deletion_protection, f"{s} deletion_protection")
    tree["conditional_writes"] = b.leaf(t.conditional_writes, f"{s} conditional_writes")
    if t.tags:
        tree["tags"] = {k: b.leaf(v, f"{s} tags.{k}") for k, v in t.tags}
    if t.gsis:
        tree["gsis"] = [_gsi(b, g, f"{s} gsis[{i}]", t.billing.value == "on_demand") for i, g in enumerate(t.gsis)]
    if t.lsis:
        tree["lsis"] = [_lsi(b, lsi, f"{s} lsis[{i}]") for i, lsi in enumerate(t.lsis)]
    _no_equivalent(b, t, tree, s)
    return tree


def build(instance_id: str, tables: list[TableDefinition], sources: list[str]) -> Document:
    """The spec document for `tables` (in the given order), every estimate and loss noticed."""
    b = _Builder()
    taken: set[str] = set()
    entries = []
    for table in tables:
        done = complete(table)
        ident = table_id(done.name.value, taken)
        entries.append({"id": Leaf(ident, f"the Bigtable table id, from the DynamoDB name {done.name.value}"),
                        "source": _source(b, done)})
        b.notices += [Notice("not-in-spec", done.name.value, f"{d.what} ({d.origin}): {d.advice}")
                      for d in done.dropped]
        b.notices += [Notice("not-in-source", done.name.value, m) for m in done.missing]
    tree = {"version": Leaf(1, "spec format version"),
            "instance": {"id": Leaf(instance_id, "--instance")},
            "tables": entries}
    return Document(tree, tuple(b.notices), tuple(sources))


# --- rendering -----------------------------------------------------------------------------

def _flow(value: Any) -> str:
    """One value as inline YAML (quoted when YAML would read it as something else)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=10**9, sort_keys=False, allow_unicode=True)
    return text.strip().removesuffix("...").strip()


def _comment(text: str) -> str:
    return " ".join(text.split())


def _yaml_lines(tree: Tree, indent: int) -> Iterator[str]:
    pad = " " * indent
    for key, node in tree.items():
        name = _flow(key)
        if isinstance(node, Leaf):
            yield f"{pad}{name}: {_flow(node.value)}  # {_comment(node.comment)}"
        elif isinstance(node, dict):
            yield f"{pad}{name}:"
            yield from _yaml_lines(node, indent + 2)
        else:
            yield f"{pad}{name}:"
            for item in node:
                if isinstance(item, Leaf):  # a list of plain values (kinesis_streams)
                    yield f"{pad}  - {_flow(item.value)}  # {_comment(item.comment)}"
                    continue
                lines = list(_yaml_lines(item, indent + 4))
                yield f"{pad}  - {lines[0].lstrip()}"
                yield from lines[1:]


def to_yaml(doc: Document) -> str:
    header = ["# Imported by `ddb2bigtable import` from: " + ", ".join(doc.sources),
              "# Each value's comment says where it came from; replace every `# estimate:` with the real figure,",
              "# then run `ddb2bigtable validate` and `ddb2bigtable plan`."]
    return "\n".join([*header, *_yaml_lines(doc.tree, 0)]) + "\n"


def _plain(node: Any) -> Any:
    if isinstance(node, Leaf):
        return node.value
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items()}
    return [_plain(item) for item in node]


def to_json(doc: Document) -> str:
    """The same spec as JSON (which YAML, so `validate`, reads too); JSON has no comments."""
    return json.dumps(_plain(doc.tree), indent=2, ensure_ascii=False) + "\n"
