"""Requests generated from botocore's own model of DynamoDB, valid and mutated, for the
property test of serve (test_model_requests.py) and its long run (benchmarks/serve_fuzz.py).

Every input shape of every operation serve answers is walked from the service model
(`botocore.session.get_session().get_service_model("dynamodb")`): structures with their
required members and some optional ones, lists and maps, strings (enums, the lengths and
patterns the model gives), integers within the model's bounds, booleans, AttributeValues
with exactly one type. Each value may instead be a mutation: the wrong JSON type, half a
UTF-16 surrogate pair, a number past any integer, a list index past DynamoDB's range, a
value nested past DynamoDB's 32 levels, a name past 64 KB. Table names, keys and
expressions lean to ones that reach Scratch's item `KEY` in the served stage, so writes
happen and a refused one can be seen to leave the item as it was.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from hypothesis import strategies as st

SURROGATE = "\ud800"
KEY = {"pk": {"S": "fuzz"}, "sk": {"N": "1"}}
TABLES = ("Scratch", "FuzzMade")  # FuzzMade: what CreateTable, UpdateTable and DeleteTable may touch
WRITES = ("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems")
OPERATIONS = ("GetItem", "PutItem", "DeleteItem", "UpdateItem", "Query", "Scan", "BatchGetItem", "BatchWriteItem",
              "TransactGetItems", "TransactWriteItems", "DescribeTable", "ListTables", "CreateTable", "DeleteTable",
              "UpdateTable", "DescribeTimeToLive", "UpdateTimeToLive")
EXPRESSIONS = {
    "ConditionExpression": ["attribute_exists(pk)", "attribute_not_exists(a)", "a = :v", "size(l) > :n",
                            "a IN (:v, :n)", "begins_with(a, :v)", "#n = :v OR NOT a < :n", "l[3] = :v"],
    "UpdateExpression": ["SET a = :v", "SET l = list_append(if_not_exists(l, :e), :e)", "REMOVE a, l[0]",
                         "ADD n :n", "SET #n = :v REMOVE l[1]", "DELETE s :s", "SET a = a + :n",
                         "REMOVE l[99999999999999999999]", "SET l[2147483648] = :v"],
    "ProjectionExpression": ["a", "pk, sk", "#n", "l[0], a.b", "m.#n[2]", "l[99999999999999999999]"],
    "KeyConditionExpression": ["pk = :v", "pk = :p AND sk > :n", "pk = :p AND begins_with(sk, :v)",
                               "#n = :p", "pk = :p AND sk BETWEEN :n AND :n"],
}
EXPRESSIONS["FilterExpression"] = EXPRESSIONS["ConditionExpression"]
NAMES = {"#n": "a"}
VALUES = {":v": {"S": "x"}, ":n": {"N": "1"}, ":p": {"S": "fuzz"}, ":e": {"L": []}, ":s": {"SS": ["x"]}}


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"S": "x"}
    for _ in range(levels):
        value = {"L": [value]}
    return value


MUTANTS = st.sampled_from([
    SURROGATE, "a" + SURROGATE, 10 ** 20, -(10 ** 20), 1.5, True, None, [], {}, ["x"], {"x": 1}, "",
    "x" * 70_000, "REMOVE l[99999999999999999999]", "a[99999999999999999999]", _deep(40), _deep(300),
    {"S": SURROGATE}, {"N": "1e999"}, {"N": "NaN"}, {"SS": []}, {"B": "not base64!"}, {"M": {SURROGATE: {"S": "x"}}},
])


@cache
def _model() -> Any:
    import botocore.session

    return botocore.session.get_session().get_service_model("dynamodb")


# mixed with expressions a request is refused, and Scratch has no index of these names:
# left to the mutated requests
MUTATED_ONLY = ("AttributesToGet", "Expected", "ConditionalOperator", "KeyConditions", "QueryFilter", "ScanFilter",
                "AttributeUpdates", "IndexName")


def request(operation: str) -> st.SearchStrategy[dict[str, Any]]:
    """A body for `operation`: its input shape's members as the model has them, or with
    about one value in five mutated (and the legacy parameters beside the expressions)."""
    shape = _model().operation_model(operation).input_shape
    return _structure(shape, 0, False).map(_coherent) | _structure(shape, 0, True)


def _coherent(body: dict[str, Any]) -> dict[str, Any]:
    """A valid body's placeholders made to match its expressions, as a client's are:
    ExpressionAttributeNames and Values hold exactly those its expressions use (DynamoDB
    refuses one left unused, and one used but not given)."""
    texts = " ".join(v for k, v in body.items() if k in EXPRESSIONS and isinstance(v, str))
    names = {k: NAMES[k] for k in NAMES if k in texts}
    values = {k: VALUES[k] for k in VALUES if re.search(rf"{k}\b", texts)}
    out = {k: v for k, v in body.items() if k not in ("ExpressionAttributeNames", "ExpressionAttributeValues")}
    return out | ({"ExpressionAttributeNames": names} if names else {}) | (
        {"ExpressionAttributeValues": values} if values else {})


def _value(shape: Any, name: str, depth: int, mutate: bool) -> st.SearchStrategy[Any]:
    valid = _valid(shape, name, depth, mutate)
    return st.one_of(valid, valid, valid, valid, MUTANTS) if mutate else valid


def _valid(shape: Any, name: str, depth: int, mutate: bool) -> st.SearchStrategy[Any]:  # noqa: PLR0911 - one per shape kind
    named = _named(shape, name, depth, mutate)
    if named is not None:
        return named
    if shape.name == "AttributeValue":
        return _attribute(depth, mutate)
    if shape.type_name == "structure":
        return _structure(shape, depth + 1, mutate)
    if shape.type_name == "list":
        return st.lists(_value(shape.member, name, depth + 1, mutate), max_size=2 if depth < 4 else 0)
    if shape.type_name == "map":
        return st.dictionaries(_valid(shape.key, name + "Key", depth + 1, mutate),
                               _value(shape.value, name, depth + 1, mutate),
                               max_size=2 if depth < 4 else 0)
    if shape.type_name in ("integer", "long"):
        return st.integers(shape.metadata.get("min", -(2 ** 31)), shape.metadata.get("max", 2 ** 31 - 1))
    if shape.type_name == "boolean":
        return st.booleans()
    if shape.type_name == "double":
        return st.floats(allow_nan=False, allow_infinity=False)
    return _string(shape)


def _named(shape: Any, name: str, depth: int, mutate: bool) -> st.SearchStrategy[Any] | None:  # noqa: PLR0911
    """Members whose values lean to Scratch's item and expressions over it (None: any other)."""
    if shape.type_name == "string" and (name in ("TableName", "IndexName") or shape.name in ("TableName", "TableArn")):
        return st.sampled_from(TABLES) | _string(shape) if mutate else st.sampled_from(TABLES)
    if name in ("Key", "Item", "ExclusiveStartKey") and depth < 6:
        key = st.just(KEY) if name != "Item" else st.builds(lambda more: {**KEY, **more}, _attributes(depth + 1, mutate))
        return key | _attributes(depth + 1, mutate) if mutate else key
    if name in EXPRESSIONS and shape.type_name == "string":
        return st.sampled_from(EXPRESSIONS[name]) | _string(shape) if mutate else st.sampled_from(EXPRESSIONS[name])
    if name == "ExpressionAttributeNames":
        return st.just(NAMES) | st.dictionaries(st.sampled_from(["#n", "#m", "#" + SURROGATE]),
                                                _string(shape.value), max_size=2)
    if name == "ExpressionAttributeValues":
        return st.just(VALUES) | st.dictionaries(st.sampled_from([":v", ":n", ":x"]),
                                                 _attribute(depth + 1, mutate), max_size=3)
    return None


def _string(shape: Any) -> st.SearchStrategy[str]:
    if shape.enum:
        return st.sampled_from(shape.enum)
    low, high = shape.metadata.get("min", 0), min(shape.metadata.get("max", 40), 40)
    return st.text(st.characters(codec="utf-8"), min_size=low, max_size=max(low, high))


def _structure(shape: Any, depth: int, mutate: bool) -> st.SearchStrategy[dict[str, Any]]:
    required = set(shape.required_members)
    members = {n: _value(s, n, depth, mutate) for n, s in shape.members.items()
               if (depth < 8 or n in required) and (mutate or n not in MUTATED_ONLY)}
    return st.fixed_dictionaries({n: v for n, v in members.items() if n in required},
                                 optional={n: v for n, v in members.items() if n not in required})


def _attributes(depth: int, mutate: bool) -> st.SearchStrategy[dict[str, Any]]:
    names = ["a", "l", "m", "n", "s", *([SURROGATE, ""] if mutate else [])]
    return st.dictionaries(st.sampled_from(names), _attribute(depth, mutate), max_size=3)


def _attribute(depth: int, mutate: bool) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.builds(lambda s: {"S": s}, st.text(max_size=8)), st.builds(lambda n: {"N": str(n)}, st.integers()),
        st.builds(lambda n: {"N": repr(n)}, st.floats(allow_nan=False, allow_infinity=False)),
        st.just({"B": "AAEC"}), st.just({"NULL": True}), st.builds(lambda b: {"BOOL": b}, st.booleans()),
        st.builds(lambda s: {"SS": s}, st.lists(st.text(max_size=4), min_size=1, max_size=3, unique=True)),
        st.just({"NS": ["1", "2"]}), st.just({"BS": ["AA=="]}), *([MUTANTS] if mutate else []))
    if depth > 5:
        return scalars
    lists = st.builds(lambda items: {"L": items}, st.lists(_attribute(depth + 1, mutate), max_size=2))
    return st.one_of(scalars, lists, st.builds(lambda items: {"M": items}, _attributes(depth + 1, mutate)))
