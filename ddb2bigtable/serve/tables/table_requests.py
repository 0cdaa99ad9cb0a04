"""A CreateTable request checked as DynamoDB checks it, and the spec table it stands for.

The checks answer with DynamoDB's own messages, so code that matches them (and the
conformance suite) sees what it would see against DynamoDB: the constraint messages of
AWS's request validation ("1 validation error detected: Value ... at 'tableName' failed to
satisfy constraint: ..."), and for the key schema the texts DynamoDB Local 1.25.1 answers
(read from it on 2026-11-25), except where AWS's differ and say more: an unused or a
missing attribute definition, a duplicated one, an existing table.

A checked request becomes a `TableSpec` with the default mapping, the one a spec without
mapping rules gets: row key `<partition>#<sort>`, every attribute a column of family `cf`
(spec/model.py `Mapping()`), so what serve writes into it reads back through the same
codec as a loaded table's rows. Its indexes become the spec's GSIs and LSIs, which emulator
stages answer from the table itself (index_ops.py).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from ...spec.errors import clip
from ...spec.model import Gsi, KeyAttribute, KeySchema, Lsi, Mapping, Source, TableSpec
from ..errors import validation

NAME = re.compile(r"[a-zA-Z0-9_.-]+")
KEY_TYPES = ("B", "N", "S")
PROJECTIONS = ("ALL", "KEYS_ONLY", "INCLUDE")
BILLING = ("PROVISIONED", "PAY_PER_REQUEST")
PREFIX = "ddb_"  # Bigtable ids of created tables: apart from the plan's, never starting with '-' or '.'
HASHED_PREFIX = "ddh_"  # ids of created tables whose names are too long for PREFIX + name
ID_LENGTH = 50  # Bigtable's longest table id (spec/ids.py TABLE_ID)
_LEGACY_HASHED = re.compile(r"ddb_.{29}_[0-9a-f]{16}")  # the hashed ids of tables created before issue 50
# DynamoDB's per-table limits (AWS, "Quotas in Amazon DynamoDB", Secondary indexes,
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html, read
# 2026-11-25): 20 global indexes (the default quota), 5 local ones, 100 projected attributes
# summed over every index; attribute names of keys and projections 1-255 characters.
MAX_GSIS, MAX_LSIS, MAX_PROJECTED, MAX_ATTRIBUTE_NAME = 20, 5, 100, 255
NAME_RULE = ("Names of key attributes and attributes projected into an index must be between 1 and 255 "
             "characters, inclusive")  # DynamoDB Local 1.25.1's words (2026-11-25)
KEPT = ("TableName", "KeySchema", "AttributeDefinitions", "BillingMode", "ProvisionedThroughput",
        "GlobalSecondaryIndexes", "LocalSecondaryIndexes")  # what the registry keeps of a request


def _constraint(value: Any, where: str, rule: str) -> Exception:
    shown = "null" if value is None else f"'{clip(str(value))}'"  # a 1 MB name is not sent back whole
    return validation(f"1 validation error detected: Value {shown} at '{where}' failed to satisfy constraint: {rule}")


def check_name(value: Any, where: str) -> str:
    """A table or index name: 3-255 characters of a-z, A-Z, 0-9, '_', '-', '.'."""
    if not isinstance(value, str):
        raise _constraint(None, where, "Member must not be null")
    if len(value) < 3:
        raise _constraint(value, where, "Member must have length greater than or equal to 3")
    if len(value) > 255:
        raise _constraint(value, where, "Member must have length less than or equal to 255")
    if not NAME.fullmatch(value):
        raise _constraint(value, where, "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+")
    return value


def _attribute_name(value: Any) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= MAX_ATTRIBUTE_NAME:
        raise validation(NAME_RULE)
    return value


def bigtable_id(name: str) -> str:
    """The Bigtable table id of a table CreateTable makes: `ddb_<name>`; past Bigtable's 50
    characters, `ddh_`, the name's start and a hash of the whole name. Neither form can be
    the other's or an older table's (`legacy_bigtable_id`): a name of 46 characters whose
    `ddb_<name>` would have the older hashed form (`ddb_`, 29 characters, `_`, 16 hex digits)
    is hashed too, so `Orders`-like names and hashed ones never meet (issue 50: a name that
    spelled another's hashed id got its Bigtable table)."""
    whole = PREFIX + name
    if len(whole) <= ID_LENGTH and not _LEGACY_HASHED.fullmatch(whole):
        return whole
    return _hashed(HASHED_PREFIX + name, name)


def legacy_bigtable_id(name: str) -> str:
    """The id serve gave a created table before issue 50: `ddb_<name>`, or past 50
    characters `ddb_`, its start and a hash. A table created then keeps it (its registry
    row holds it), so none of its data is left behind."""
    whole = PREFIX + name
    return whole if len(whole) <= ID_LENGTH else _hashed(whole, name)


def _hashed(whole: str, name: str) -> str:
    digest = hashlib.sha256(name.encode()).hexdigest()[:16]
    return f"{whole[:ID_LENGTH - len(digest) - 1]}_{digest}"


def _key_schema(elements: Any, where: str) -> tuple[str, str | None]:
    """(hash key, range key or None) of a KeySchema, with DynamoDB's messages."""
    if not isinstance(elements, list) or not elements:
        raise validation("No defined key schema.  A key schema containing at least a hash key must be defined for "
                         "all tables")
    if len(elements) > 2:
        raise validation("Key Schema too big.  Key Schema must at most consist of the hash and range key of a table")
    for i, element in enumerate(elements, 1):
        if not isinstance(element, dict) or not isinstance(element.get("AttributeName"), str):
            raise _constraint(None, f"{where}.{i}.member.attributeName", "Member must not be null")
        if element.get("KeyType") not in ("HASH", "RANGE"):
            raise _constraint(element.get("KeyType"), f"{where}.{i}.member.keyType",
                              "Member must satisfy enum value set: [HASH, RANGE]")
    for element in elements:
        _attribute_name(element["AttributeName"])
    kinds = [e["KeyType"] for e in elements]
    if kinds.count("HASH") > 1:
        raise validation("Too many hash keys specified.  All Dynamo DB tables must have exactly one hash key")
    if "HASH" not in kinds:
        raise validation("No Hash Key specified in schema.  All Dynamo DB tables must have exactly one hash key")
    if kinds[0] != "HASH":
        raise validation("Invalid KeySchema: The first KeySchemaElement is not a HASH key type")
    if len(elements) == 2 and elements[0]["AttributeName"] == elements[1]["AttributeName"]:
        raise validation("Both the Hash Key and the Range Key element in the KeySchema have the same name")
    return elements[0]["AttributeName"], elements[1]["AttributeName"] if len(elements) == 2 else None


def _definitions(value: Any) -> dict[str, str]:
    if not isinstance(value, list) or not value:
        raise validation("No Attribute Schema Defined")
    types: dict[str, str] = {}
    for i, d in enumerate(value, 1):
        name, kind = (d.get("AttributeName"), d.get("AttributeType")) if isinstance(d, dict) else (None, None)
        if not isinstance(name, str):
            raise _constraint(None, f"attributeDefinitions.{i}.member.attributeName", "Member must not be null")
        if kind is None:
            raise _constraint(None, f"attributeDefinitions.{i}.member.attributeType", "Member must not be null")
        if kind not in KEY_TYPES:
            raise _constraint(kind, f"attributeDefinitions.{i}.member.attributeType",
                              "Member must satisfy enum value set: [B, N, S]")
        _attribute_name(name)
        if name in types:
            raise validation(f"Attribute Name is duplicated: {name}")
        types[name] = kind
    return types


def _projection(value: Any, where: str) -> str | tuple[str, ...]:
    kind = value.get("ProjectionType") if isinstance(value, dict) else None
    if kind not in PROJECTIONS:
        raise _constraint(kind, f"{where}.projection.projectionType",
                          "Member must satisfy enum value set: [ALL, INCLUDE, KEYS_ONLY]")
    extra = value.get("NonKeyAttributes")
    if kind != "INCLUDE":
        if extra is not None:
            raise validation(f"One or more parameter values were invalid: ProjectionType is {kind}, but "
                             f"NonKeyAttributes is specified")
        return kind.lower()
    if not isinstance(extra, list) or not extra:
        raise validation("One or more parameter values were invalid: NonKeyAttributes must not be empty when "
                         "ProjectionType is INCLUDE")
    for name in extra:
        _attribute_name(name)
    if len(set(extra)) != len(extra):
        raise validation("One or more parameter values were invalid: Duplicate attributes in NonKeyAttributes")
    return tuple(extra)


def _provisioned(billing: str, value: Any) -> tuple[int, int]:
    if billing == "PAY_PER_REQUEST":
        if value is not None:
            raise validation("One or more parameter values were invalid: Neither ReadCapacityUnits nor "
                             "WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST")
        return 0, 0
    reads = value.get("ReadCapacityUnits") if isinstance(value, dict) else None
    writes = value.get("WriteCapacityUnits") if isinstance(value, dict) else None
    if not isinstance(reads, int) or not isinstance(writes, int) or isinstance(reads, bool) or isinstance(writes, bool):
        raise validation("One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must "
                         "both be specified when BillingMode is PROVISIONED")
    if reads < 1 or writes < 1:  # DynamoDB Local's words
        raise validation("Table read and write throughput must be at least 1, and cannot be null")
    return reads, writes


def _index(index: Any, at: str, local: bool, table_key: tuple[str, str | None],
           billing: str) -> tuple[str, set[str], int]:
    """One index of a request checked: its name, key attributes and NonKeyAttributes count."""
    (pk, sk), name = table_key, check_name(index.get("IndexName") if isinstance(index, dict) else None,
                                           f"{at}.indexName")
    ipk, isk = _key_schema(index.get("KeySchema"), f"{at}.keySchema")
    if local and ipk != pk:
        raise validation(f"One or more parameter values were invalid: Index KeySchema does not have the same "
                         f"leading hash key as table KeySchema for index: {name}. index hash key: {ipk}, "
                         f"table hash key: {pk}")
    if local and (isk is None or sk is None):
        raise validation(f"One or more parameter values were invalid: Index KeySchema does not have a range "
                         f"key for index: {name}" if isk is None else "One or more parameter values were "
                         "invalid: Table KeySchema does not have a range key, which is required when "
                         "specifying a LocalSecondaryIndex")
    projection = _projection(index.get("Projection"), at)
    if not local and billing != "PAY_PER_REQUEST" and index.get("ProvisionedThroughput") is None:
        # AWS's words (awsdocs/amazon-dynamodb-developer-guide#246, read 2026-11-25); an UpdateTable
        # to PROVISIONED names each index too, as the table's own message misled
        raise validation(f"One or more parameter values were invalid: ProvisionedThroughput is not specified "
                         f"for index: {name}")
    if not local:
        _provisioned(billing, index.get("ProvisionedThroughput"))
    return name, {ipk, *([isk] if isk else [])}, len(projection) if isinstance(projection, tuple) else 0


def checked_request(body: dict[str, Any]) -> dict[str, Any]:
    """The request's table definition (KEPT) once DynamoDB would accept it; what the table
    is built from (`table_spec`), in this worker and in every other."""
    check_name(body.get("TableName"), "tableName")
    pk, sk = _key_schema(body.get("KeySchema"), "keySchema")
    types = _definitions(body.get("AttributeDefinitions"))
    billing = body.get("BillingMode", "PROVISIONED")
    if billing not in BILLING:
        raise _constraint(billing, "billingMode", "Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]")
    used = {pk, *([sk] if sk else [])}
    names: set[str] = set()
    projected = 0
    for field, local, most in (("GlobalSecondaryIndexes", False, MAX_GSIS), ("LocalSecondaryIndexes", True, MAX_LSIS)):
        indexes = body.get(field)
        if indexes is None:
            continue
        if not isinstance(indexes, list) or not indexes:
            raise validation(f"One or more parameter values were invalid: List of {field} is empty")
        if len(indexes) > most:  # DynamoDB Local's words
            raise validation(f"GlobalSecondaryIndex count exceeds the per-table limit of {most}" if not local
                             else f"Cannot have more than {most} local secondary indexes per table")
        for i, index in enumerate(indexes, 1):
            name, keys, count = _index(index, f"{field[0].lower()}{field[1:]}.{i}.member", local, (pk, sk), billing)
            if name in names:
                raise validation(f"One or more parameter values were invalid: Duplicate index name: {name}")
            names.add(name)
            used |= keys
            projected += count
            if projected > MAX_PROJECTED:
                raise validation(f"One or more parameter values were invalid: No more than {MAX_PROJECTED} attributes "
                                 f"per table can be projected into secondary indexes (NonKeyAttributes of every index)")
    if missing := sorted(used - set(types)):
        raise validation(f"One or more parameter values were invalid: Some index key attributes are not defined in "
                         f"AttributeDefinitions. Keys: [{', '.join(missing)}], AttributeDefinitions: "
                         f"[{', '.join(types)}]")
    if set(types) - used:
        raise validation("One or more parameter values were invalid: Number of attributes in KeySchema does not "
                         "exactly match number of attributes defined in AttributeDefinitions")
    _provisioned(billing, body.get("ProvisionedThroughput"))
    return {k: body[k] for k in KEPT if k in body} | {"BillingMode": billing}


def _key(elements: list[dict[str, str]], types: dict[str, str]) -> KeySchema:
    attrs = [KeyAttribute(e["AttributeName"], types[e["AttributeName"]]) for e in elements]  # type: ignore[arg-type]
    return KeySchema(attrs[0], attrs[1] if len(attrs) > 1 else None)


def table_spec(definition: dict[str, Any], table_id: str, region: str) -> TableSpec:
    """The spec table of a checked request: its keys and indexes, the default mapping."""
    types = {d["AttributeName"]: d["AttributeType"] for d in definition["AttributeDefinitions"]}
    throughput = definition.get("ProvisionedThroughput") or {}
    gsis = tuple(Gsi(g["IndexName"], _key(g["KeySchema"], types), _projection(g["Projection"], ""),
                     reads=(g.get("ProvisionedThroughput") or {}).get("ReadCapacityUnits"),
                     writes=(g.get("ProvisionedThroughput") or {}).get("WriteCapacityUnits"))
                 for g in definition.get("GlobalSecondaryIndexes") or ())  # null: none, as an absent list
    lsis = tuple(Lsi(s["IndexName"], _key(s["KeySchema"], types).sort,  # type: ignore[arg-type]
                     _projection(s["Projection"], ""))
                 for s in definition.get("LocalSecondaryIndexes") or ())
    source = Source(table=definition["TableName"], region=region, key=_key(definition["KeySchema"], types),
                    billing="provisioned" if definition["BillingMode"] == "PROVISIONED" else "on_demand",
                    reads=throughput.get("ReadCapacityUnits", 0), writes=throughput.get("WriteCapacityUnits", 0),
                    gsis=gsis, lsis=lsis)
    return TableSpec(id=table_id, source=source, mapping=Mapping())
