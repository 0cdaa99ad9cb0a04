"""`cutover check --through URL`: the sample read back through a `serve` endpoint, as the
application will read it once its `endpoint_url` points there.

Bigtable holding the right cells is half of a switch that changes only the endpoint; the
other half is `serve` decoding them into the very items DynamoDB answers (the same
mapping, the recorded types, TTL hidden). The endpoint speaks DynamoDB's API, so it is
read with the DynamoDB side's own reader (`StreamReader.current`: strongly consistent
BatchGetItem, the timeouts and error wording of every AWS call) and judged with
`item_difference`, as the direct read is.

Only items that match in Bigtable are judged here: one that differs in Bigtable is
already reported, and would differ through the endpoint for the same reason. What is
left is what the endpoint itself gets wrong.
"""

from __future__ import annotations

from typing import Any

from ..codec.codec import Codec
from ..codec.items import Item
from ..load.verify import Difference, canonical, item_difference
from ..spec.errors import Ddb2BigtableError, ServiceError
from ..spec.model import TableSpec
from .stream import StreamReader


def key_of(table: TableSpec, item: Item) -> dict[str, Any]:
    """The item's primary key attributes, as DynamoDB's requests take a key."""
    schema = table.source.key
    return {k.name: item.get(k.name) for k in (schema.partition, schema.sort) if k is not None}


def served_differences(table: TableSpec, codec: Codec, endpoint: StreamReader, items: list[Item],
                       now_micros: int) -> list[dict[str, Any]]:
    """Each item of `items` (DynamoDB's, already found equal in Bigtable) that the endpoint
    answers otherwise: {key, attributes, detail}, detail as `verify` words it. An answer
    DynamoDB's API never gives (botocore's parser, or the judging, fails on it: a string
    where a map belongs, a number that is none) is a ServiceError naming the endpoint."""
    try:
        return _differences(table, codec, endpoint, items, now_micros)
    except Ddb2BigtableError:
        raise
    except (AttributeError, TypeError, ValueError, LookupError, ArithmeticError, RecursionError) as error:
        raise ServiceError(f"{endpoint.where} answered BatchGetItem with what DynamoDB never answers "
                           f"({type(error).__name__}): check that --through is a `serve` endpoint of this "
                           f"stage") from None


def _differences(table: TableSpec, codec: Codec, endpoint: StreamReader, items: list[Item],
                 now_micros: int) -> list[dict[str, Any]]:
    expected = {}
    for item in items:
        wanted = codec.expected(item, now_micros=now_micros)
        if wanted is not None:  # expired meanwhile: serve hides it, as DynamoDB's reads may not yet
            expected[_identity(key_of(table, item))] = (item, wanted)
    answered = endpoint.current([key_of(table, item) for item, _ in expected.values()]) if expected else []
    served = {_identity(key_of(table, item)): item for item in answered}
    found = []
    for identity, (item, wanted) in expected.items():
        got = served.get(identity)
        difference = item_difference(wanted, [got] if got is not None else [], codec.row_key(item))
        if difference is not None:
            found.append(_entry(key_of(table, item), difference))
    return found


def _identity(key: dict[str, Any]) -> str:
    """A key as text that compares as DynamoDB compares keys (numbers by value)."""
    return repr(sorted(canonical(key).items()))


def _entry(key: dict[str, Any], difference: Difference) -> dict[str, Any]:
    detail = "not answered by the endpoint" if difference.kind == "missing" else difference.detail
    return {"key": key, "attributes": list(difference.attributes), "detail": detail}
