"""Spec cross-checks: what a JSON Schema cannot express.

Regions, Bigtable id rules, key attribute types, TTL on keys, index names and billing
consistency (the mapping's own checks: `mapping_checks.py`). Each check gets a part of the document the schema
found sound and returns located problems; none raises.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from . import ids
from .capacity_checks import check_billing, check_replica_settings
from .errors import Problem
from .mapping_checks import check_mapping
from .model import Gsi, KeyAttribute, Lsi, Source, TableSpec
from .regions import AWS_REGIONS, gcp_for
from .schema_check import did_you_mean
from .yaml_source import JsonPath, YamlDocument, format_path

KMS_KEY = re.compile(r"^projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+$")


def region_problem(region: str) -> str | None:
    """Why `region` is not an AWS region DynamoDB runs in, or None."""
    if region in AWS_REGIONS:
        return None
    if region.strip().lower() in AWS_REGIONS:
        return f"unknown AWS region {region!r}; region names are lower case: {region.strip().lower()!r}"
    hint = did_you_mean(region, AWS_REGIONS) or f"; expected one of {', '.join(AWS_REGIONS)}"
    return f"unknown AWS region {region!r}{hint}"



def check_instance(doc: YamlDocument, instance: dict[str, Any], tables: list[TableSpec | None],
                   sound: Callable[[str], bool]) -> list[Problem]:
    """The instance's own rules, field by field: `sound(field)` says whether the schema
    passed that field, so a bad `storage` does not hide a zone typo next to it."""
    out: list[Problem] = []
    if sound("id") and isinstance(instance.get("id"), str) and (why := ids.id_problem("instance", instance["id"])):
        out.append(doc.problem(("instance", "id"), why))
    if sound("labels"):
        out += _check_labels(doc, ("instance", "labels"), instance.get("labels", {}))
    used = {r for t in tables if t is not None for r in t.source.regions}
    for region, key in instance.get("kms_keys", {}).items() if sound("kms_keys") else ():
        path = ("instance", "kms_keys", region)
        if why := region_problem(region):
            out.append(doc.problem(path, why, key=True))
        elif None not in tables and region not in used:
            out.append(doc.problem(path, f"no table of this instance runs in {region}; remove this key "
                                         f"or fix the region", key=True))
        if not KMS_KEY.match(key):
            out.append(doc.problem(path, f"expected a Cloud KMS key name like projects/P/locations/L/"
                                         f"keyRings/R/cryptoKeys/K, got {key!r}"))
    for region, zone in instance.get("zones", {}).items() if sound("zones") else ():
        path = ("instance", "zones", region)
        if why := region_problem(region):
            out.append(doc.problem(path, why, key=True))
            continue
        zones = gcp_for(region).zones
        if zone not in zones:
            out.append(doc.problem(path, f"{zone!r} is not a Bigtable zone of {gcp_for(region).gcp_region} "
                                         f"(where {region} maps); choose one of {', '.join(zones)}"))
    return out


def _check_labels(doc: YamlDocument, path: JsonPath, labels: dict[str, str]) -> list[Problem]:
    out: list[Problem] = []
    if len(labels) > ids.MAX_LABELS:
        out.append(doc.problem(path, f"{len(labels)} labels; GCP allows at most {ids.MAX_LABELS}"))
    for key, value in labels.items():
        if not ids.LABEL_KEY.match(key):
            out.append(doc.problem((*path, key), f"label key {key!r} is not a GCP label key: a lowercase letter, "
                                                 f"then up to 62 of a-z, 0-9, '_' or '-'", key=True))
        if not ids.LABEL_VALUE.match(value):
            out.append(doc.problem((*path, key), f"label value {value!r} is not a GCP label value: "
                                                 f"up to 63 of a-z, 0-9, '_' or '-'"))
    return out


def check_table_ids(doc: YamlDocument, raw_tables: list[Any]) -> list[Problem]:
    out: list[Problem] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_tables):
        table_id = raw.get("id") if isinstance(raw, dict) else None
        if not isinstance(table_id, str):
            continue
        if table_id in seen:
            out.append(doc.problem(("tables", i, "id"), f"table id {table_id!r} is already used by "
                                                        f"tables[{seen[table_id]}]; table ids are unique "
                                                        f"in an instance"))
        seen.setdefault(table_id, i)
    return out


def check_table_id(doc: YamlDocument, p: JsonPath, table_id: str) -> list[Problem]:
    return [doc.problem((*p, "id"), why)] if (why := ids.id_problem("table", table_id)) else []


def check_table(doc: YamlDocument, p: JsonPath, table: TableSpec) -> list[Problem]:
    out = check_table_id(doc, p, table.id)
    out += check_source(doc, (*p, "source"), table.source)
    out += check_keys_and_mapping(doc, p, table)
    return out


def check_keys_and_mapping(doc: YamlDocument, p: JsonPath, table: TableSpec) -> list[Problem]:
    """An attribute's one type, and the mapping's own rules: what reads the source's keys,
    indexes and TTL besides the mapping (also run on a table whose source is partly broken,
    when those parts are sound)."""
    return _check_key_types(doc, p, table) + check_mapping(doc, p, table)


def check_source(doc: YamlDocument, sp: JsonPath, source: Source) -> list[Problem]:
    """What the table's source alone can break; run even when the rest of the table has
    schema problems, so one run shows the region typo next to them."""
    return (_check_regions(doc, sp, source) + _check_ttl(doc, sp, source) + _check_indexes(doc, sp, source)
            + check_billing(doc, sp, source) + check_replica_settings(doc, sp, source)
            + check_multi_region(doc, sp, source))


# What check_billing reads: it runs on a broken source only when all of these are sound or absent.
_CAPACITY_FIELDS = ("billing", "reads", "writes", "peak", "average", "autoscaling", "max_throughput", "gsis",
                    "replicas")


def check_sound_source(doc: YamlDocument, sp: JsonPath, source: Source, sound: Callable[[str], bool]) -> list[Problem]:
    """The cross-checks of a source with schema problems, each run when the fields it reads are
    sound (`sound(field)`; `source` holds only those, its key always among them), so one run shows
    an on_demand table's missing peak beside a typo in its stream. The regions are checked apart,
    replica by replica (`check_source_regions`)."""
    def all_sound(*names: str) -> bool:
        return all(sound(name) for name in names)

    out: list[Problem] = []
    if all_sound("ttl", "gsis", "lsis"):
        out += _check_ttl(doc, sp, source)
    if all_sound("gsis", "lsis"):
        out += _check_indexes(doc, sp, source)
    if all_sound(*_CAPACITY_FIELDS):
        out += check_billing(doc, sp, source)
    if all_sound("gsis", "replicas"):
        out += check_replica_settings(doc, sp, source)
    if all_sound("region", "replicas", "witness_region", "multi_region_consistency"):
        out += check_multi_region(doc, sp, source)
    return out


def _check_regions(doc: YamlDocument, sp: JsonPath, source: Source) -> list[Problem]:
    return check_source_regions(doc, sp, source.region, [r.region for r in source.replicas])


def check_source_regions(doc: YamlDocument, sp: JsonPath, home: str | None,
                         replicas: list[str | None]) -> list[Problem]:
    """The home and replica regions; a None is a part the schema already refused. Also
    run on a source with schema problems elsewhere, so a region typo shows beside them."""
    out: list[Problem] = []
    if home is not None and (why := region_problem(home)):
        out.append(doc.problem((*sp, "region"), why))
    seen: dict[str, int] = {}
    for j, region in enumerate(replicas):
        path = (*sp, "replicas", j, "region")
        if region is None:
            continue
        if why := region_problem(region):
            out.append(doc.problem(path, why))
        elif region == home:
            out.append(doc.problem(path, f"replica region {region} is the table's home region "
                                         f"(source.region); list only the other regions"))
        elif region in seen:
            out.append(doc.problem(path, f"replica region {region} is already listed at "
                                         f"replicas[{seen[region]}]; keep one of them"))
        seen.setdefault(region, j)
    return out


def _key_usages(sp: JsonPath, source: Source) -> list[tuple[KeyAttribute, JsonPath, str]]:
    """Every key attribute of the table and its indexes: (attribute, path, what it keys)."""
    uses = [(source.key.partition, (*sp, "key", "partition"), "the table's partition key")]
    if source.key.sort:
        uses.append((source.key.sort, (*sp, "key", "sort"), "the table's sort key"))
    for j, gsi in enumerate(source.gsis):
        uses.append((gsi.key.partition, (*sp, "gsis", j, "key", "partition"), f"the partition key of GSI {gsi.name}"))
        if gsi.key.sort:
            uses.append((gsi.key.sort, (*sp, "gsis", j, "key", "sort"), f"the sort key of GSI {gsi.name}"))
    for j, lsi in enumerate(source.lsis):
        uses.append((lsi.sort, (*sp, "lsis", j, "sort"), f"the sort key of LSI {lsi.name}"))
    return uses


def _check_key_types(doc: YamlDocument, p: JsonPath, table: TableSpec) -> list[Problem]:
    """An attribute has one type, whether it keys the table, an index, or is mapped."""
    out: list[Problem] = []
    first: dict[str, tuple[str, JsonPath]] = {}
    for attr, path, _ in _key_usages((*p, "source"), table.source):
        known = first.setdefault(attr.name, (attr.type, path))
        if known[0] != attr.type:
            out.append(doc.problem((*path, "type"), f"attribute {attr.name!r} is {attr.type} here but "
                                                    f"{known[0]} at {format_path(known[1])}; "
                                                    f"an attribute has one type"))
    for j, mapped in enumerate(table.mapping.attributes):
        if mapped.name in first and mapped.type is not None and mapped.type != first[mapped.name][0]:
            key_type, path = first[mapped.name]
            out.append(doc.problem((*p, "mapping", "attributes", j, "type"),
                                   f"{mapped.name!r} is a key attribute of type {key_type} "
                                   f"({format_path(path)}); declare it as {key_type} or leave the type out"))
    return out


def _check_ttl(doc: YamlDocument, sp: JsonPath, source: Source) -> list[Problem]:
    if source.ttl is None:
        return []
    for attr, _, role in _key_usages(sp, source):
        if attr.name == source.ttl.attribute:
            return [doc.problem((*sp, "ttl", "attribute"),
                                f"TTL attribute {attr.name!r} is {role}; the TTL must be a Number "
                                f"attribute (epoch seconds) that no key uses, such as expiresAt")]
    return []


def _check_indexes(doc: YamlDocument, sp: JsonPath, source: Source) -> list[Problem]:
    out: list[Problem] = []
    names: dict[str, str] = {}
    both: tuple[tuple[str, tuple[Gsi | Lsi, ...]], ...] = (("gsis", source.gsis), ("lsis", source.lsis))
    for kind, indexes in both:
        for j, index in enumerate(indexes):
            where = f"{kind}[{j}]"
            if index.name in names:
                out.append(doc.problem((*sp, kind, j, "name"), f"index name {index.name!r} is already used by "
                                                               f"{names[index.name]}; index names are unique "
                                                               f"across GSIs and LSIs"))
            names.setdefault(index.name, where)
    if source.lsis and source.key.sort is None:
        out.append(doc.problem((*sp, "lsis"), "local secondary indexes need a table with a sort key "
                                              "(source.key.sort); make this index a GSI instead", key=True))
    return out


# AWS, "AWS::DynamoDB::GlobalTable GlobalTableWitness" (docs.aws.amazon.com/AWSCloudFormation/
# latest/UserGuide/aws-properties-dynamodb-globaltable-globaltablewitness.html, read
# 2026-11-24): "A MRSC global table can be configured with either three replicas, or with
# two replicas and one witness", the witness in a different Region than the replicas.
MRSC_REGIONS = 3


def check_multi_region(doc: YamlDocument, sp: JsonPath, source: Source) -> list[Problem]:
    """`multi_region_consistency: strong` with its three regions, and a witness that is
    a real region holding no replica."""
    out: list[Problem] = []
    witness = source.witness_region
    if witness is not None:
        path = (*sp, "witness_region")
        if source.multi_region_consistency != "strong":
            out.append(doc.problem(path, "a witness region is for multi-region strong consistency: add "
                                         "multi_region_consistency: strong, or remove the witness", key=True))
        elif why := region_problem(witness):
            out.append(doc.problem(path, why))
        elif witness in source.regions:
            out.append(doc.problem(path, f"witness region {witness} already holds a replica of the table; a "
                                         f"witness is a third region with no replica"))
    if source.multi_region_consistency == "strong":
        count = len(source.regions) + (witness is not None)
        if count != MRSC_REGIONS:
            held = f"{len(source.regions)} region(s)" + (" and a witness" if witness else "")
            out.append(doc.problem((*sp, "multi_region_consistency"),
                                   f"multi-region strong consistency runs in exactly {MRSC_REGIONS} regions (three "
                                   f"replicas, or two and a witness_region; AWS, read 2026-11-24); this table has "
                                   f"{held}"))
    return out
