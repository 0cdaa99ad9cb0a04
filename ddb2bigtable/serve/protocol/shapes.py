"""A request's top-level members checked against the JSON types of botocore's DynamoDB model
(DynamoDB Streams' for its operations).

A member of the wrong JSON type (`"ConsistentRead": "yes"`, a KeyConditionExpression sent
as a list, `"Limit": 99999999999999999999`) is refused before the operation reads the
body, whatever else is wrong with the request. botocore's service model (`dynamodb`,
2012-08-10, the one every SDK serialises from) says each member's type; its scalar
members are checked here, once per request. DynamoDB Local 1.25.1 answers these with a
500 (checked 2026-11-29), so the words are serve's own, and the code is the
ValidationException serve gave a ProjectionExpression sent as a number before this
check (tests/serve/protocol/test_protocol.py pins it). Lists, maps and structures are
left to the operations, whose checks say what DynamoDB says of each.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from ..errors import ServeError, validation

INT_RANGE = {"integer": (-(2 ** 31), 2 ** 31 - 1), "long": (-(2 ** 63), 2 ** 63 - 1)}  # Java's int and long
KINDS = {bool: "a boolean", str: "a string", list: "a list", dict: "a map", int: "a number", float: "a number"}


@cache
def _scalars(operation: str) -> dict[str, str]:
    """The operation's top-level scalar members and their types (string, boolean, integer, long)."""
    import botocore.session

    session = botocore.session.get_session()
    model = session.get_service_model("dynamodb")
    if operation not in model.operation_names:  # a DynamoDB Streams operation (streams/stream_ops.py)
        model = session.get_service_model("dynamodbstreams")
    shape = model.operation_model(operation).input_shape
    members = shape.members if shape is not None else {}
    return {name: shape.type_name for name, shape in members.items()
            if shape.type_name in ("string", "boolean", "integer", "long")}


def check(operation: str, body: dict[str, Any]) -> None:
    """ValidationException for the first top-level member that its type cannot hold
    (a JSON null is a member left out, as DynamoDB reads it)."""
    types = _scalars(operation)
    for name, value in body.items():
        kind = types.get(name)
        if kind is None or value is None:
            continue
        if kind == "string" and not isinstance(value, str):
            raise _wrong(name, "a string", value)
        if kind == "boolean" and isinstance(value, str | list | dict):
            raise _wrong(name, "a boolean", value)
        if kind in INT_RANGE:
            low, high = INT_RANGE[kind]
            if isinstance(value, bool | str | list | dict) or not low <= value <= high:
                raise _wrong(name, f"a whole number from {low} to {high}", value)


def _wrong(name: str, wanted: str, value: Any) -> ServeError:
    given = KINDS.get(type(value), "another JSON value")
    shown = f" ({value:.3g})" if isinstance(value, int | float) and not isinstance(value, bool) else ""
    return validation(f"{name} must be {wanted}, not {given}{shown}")
