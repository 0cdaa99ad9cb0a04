"""The boto3 clients replication talks to DynamoDB and DynamoDB Streams with, made for its
two bulk calls: GetRecords' answers (forward) and BatchWriteItem's requests (reverse).

botocore walks every attribute value of every item through the service model's shapes:
to parse an answer, to validate a request and to write it out. For a page of 1,000
records or a batch of 25 items that walk is most of the client's time (GetRecords: half
the time replicate spent reading, benchmarks/README.md; BatchWriteItem of AWS's Movies
items, 2026-12-07: 150-180 us an item to validate and 280-300 us to write out, against
4-50 us with orjson, machine load 12-21). So:

- GetRecords' answer is parsed with orjson, left as DynamoDB JSON (stream_records.py
  turns it into records);
- BatchWriteItem's body is written with orjson (binary values as base64, as DynamoDB's
  JSON protocol carries them): the request goes through botocore's own path with its
  tables' lists empty, and the `before-call` hook, after serialization and before
  signing, puts the real body in (botocore's documented events: `provide-client-params`
  may return the parameters to use, `before-call` gets the request to send);
- parameters are not validated on the client (`parameter_validation`): replication makes
  them from DynamoDB's own records, and DynamoDB still refuses what it would not take
  (a ValidationException, a dead letter in reverse/writes.py).

Every other call, and every error answer, goes through botocore as usual.
"""

from __future__ import annotations

import base64
import functools
from typing import Any

import orjson

from ..spec.aws_endpoints import bounded_retries

RAW_BODY = "ddb2bigtable_body"  # where the real body waits in the request's context


def clients(region: str, endpoint_url: str | None, config: Any) -> tuple[Any, Any]:
    """The DynamoDB and DynamoDB Streams clients. One botocore session makes both, with the
    process's one data loader: parsing the endpoint and model files took a tenth of a second
    per session (benchmarks/README.md)."""
    import boto3
    import botocore.session
    from botocore.config import Config
    from botocore.parsers import PROTOCOL_PARSERS, ResponseParserFactory

    json_parser = PROTOCOL_PARSERS["json"]

    class RawRecordsParser(json_parser):  # type: ignore[misc, valid-type]
        def _do_parse(self, response: dict[str, Any], shape: Any) -> dict[str, Any]:
            if shape is not None and shape.name == "GetRecordsOutput" and response["body"]:
                parsed: dict[str, Any] = orjson.loads(response["body"])
                return parsed
            return super()._do_parse(response, shape)

    class Factory(ResponseParserFactory):  # this session's own: no parser defaults are ever set on it
        def create_parser(self, protocol_name: str) -> Any:
            return RawRecordsParser() if protocol_name == "json" else super().create_parser(protocol_name)

    session = botocore.session.get_session()
    session.register_component("data_loader", _data_loader())
    session.register_component("response_parser_factory", Factory())
    aws = boto3.Session(botocore_session=session)
    config = config.merge(Config(parameter_validation=False))

    def client(service: str) -> Any:  # timeouts and connection retries bounded (spec/aws_endpoints.py)
        return bounded_retries(aws.client(service, region_name=region, endpoint_url=endpoint_url, config=config))

    dynamodb = client("dynamodb")
    dynamodb.meta.events.register("provide-client-params.dynamodb.BatchWriteItem", _body_aside)
    dynamodb.meta.events.register("before-call.dynamodb.BatchWriteItem", _body_back)
    return dynamodb, client("dynamodbstreams")


def request_body(params: dict[str, Any]) -> bytes:
    """A request's parameters as DynamoDB's JSON protocol carries them (binary in base64)."""
    return orjson.dumps(params, default=base64_text)


def base64_text(value: Any) -> str:
    """orjson's `default` for DynamoDB JSON: binary as base64, anything else refused."""
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    raise TypeError(f"{type(value).__name__} is not a DynamoDB JSON value")


def _body_aside(params: dict[str, Any], context: dict[str, Any], **_: Any) -> dict[str, Any]:
    """BatchWriteItem's body written out once, kept in the request's context; botocore
    serializes the tables alone in its place (the endpoint rules read their names,
    `keys(RequestItems)`: a table ARN names its account's endpoint)."""
    context[RAW_BODY] = request_body(params)
    return {"RequestItems": {table: [] for table in params.get("RequestItems", {})}}


def _body_back(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
    """The body written out by `_body_aside`, into the request botocore is about to sign and send."""
    params["body"] = context.pop(RAW_BODY)


@functools.cache
def _data_loader() -> Any:
    """botocore's file loader, which caches what it parsed (read-only data files)."""
    from botocore.loaders import create_loader

    return create_loader()
