"""Errors in DynamoDB's own shape, so an AWS SDK reads, raises and retries them as it would
against DynamoDB.

DynamoDB answers a failed request with HTTP 400 (500 for its own faults) and a JSON body
`{"__type": "com.amazonaws.dynamodb.v20120810#<Name>", "message": "..."}`; the SDKs take
the exception class from `__type` and retry ProvisionedThroughputExceededException,
ThrottlingException and every 5xx with backoff (AWS, "Error handling with DynamoDB",
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html,
read 2026-11-25). Every failure of serve becomes one of these; an unsupported feature is
a ValidationException naming it, never a 500.
"""

from __future__ import annotations

from typing import Any

from ..spec.errors import Ddb2BigtableError, clip

PREFIX = "com.amazonaws.dynamodb.v20120810#"


class ServeError(Ddb2BigtableError):
    """One DynamoDB error: its name (without the prefix), message, HTTP status and any extra
    body fields (ConditionalCheckFailedException's `Item`). The answer to one request, never
    the end of the process: the application turns it into the response."""

    def __init__(self, name: str, message: str, status: int = 400, extra: dict[str, Any] | None = None):
        super().__init__(message)
        self.name, self.message, self.status, self.extra = name, message, status, extra or {}

    def body(self) -> dict[str, Any]:
        return {"__type": PREFIX + self.name, "message": self.message, **self.extra}


def validation(message: str) -> ServeError:
    return ServeError("ValidationException", message)


def unsupported(feature: str, why: str) -> ServeError:
    """A DynamoDB feature serve does not offer: the request is refused, nothing is written."""
    return validation(f"{feature} is not supported by ddb2bigtable serve: {why}")


class UnsupportedExpression(ServeError):
    """A node of moto's expression tree that serve does not evaluate (conditions.py): a
    ValidationException naming the construct, raised while parsing or while evaluating an
    item, so the request is refused whole rather than answered with a 500."""

    def __init__(self, construct: str):
        super().__init__("ValidationException",
                         f"this expression uses something ddb2bigtable serve does not support: {clip(construct)}")


def not_found(table: str) -> ServeError:
    """DynamoDB's words; a name no table can have (1 MB of it) cut, not sent back whole."""
    return ServeError("ResourceNotFoundException", f"Requested resource not found: Table: {clip(table)} not found")


def condition_failed(item: dict[str, Any] | None = None) -> ServeError:
    return ServeError("ConditionalCheckFailedException", "The conditional request failed",
                      extra={"Item": item} if item is not None else None)


def throttled(message: str) -> ServeError:
    """Retried with backoff by every SDK: Bigtable's RESOURCE_EXHAUSTED, or a row that other
    writers kept changing while a conditional write was being checked."""
    return ServeError("ProvisionedThroughputExceededException", message)


def internal(message: str) -> ServeError:
    """Bigtable out of reach or too slow: a 500, which the SDKs retry."""
    return ServeError("InternalServerError", message, status=500)
