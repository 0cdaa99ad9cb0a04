"""The DynamoDB side: the table's stream through boto3, and its records as plain values.

Every AWS call is here (`cutover check`'s sampling Scan too), so the rest of the package
is pure decisions and Bigtable writes.
GetRecords' answers are parsed with orjson, not botocore's shape walker (which converted
every attribute value one model shape at a time: half the time replicate spent reading,
measured in benchmarks/README.md); only binary values need decoding (`_binary`).
boto3's "standard" retry mode retries throttling and dropped connections with backoff;
a call to an endpoint that never answers ends after one read timeout (the bounds are in
spec/aws_endpoints.py); an iterator that expired (15 minutes unused) is renewed after
the last record read.
Bad input (no such table, stream disabled or without new images, unreachable start
point, no credentials) is an `InputError` that says what to do; DynamoDB unreachable or
still refusing (throttled, 5xx) once those retries give up is `Unavailable`, a
`ServiceError` (exit 1) a run may wait out (outage.py).
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from ..codec.items import Item
from ..codec.scalars import binary_from_text
from ..spec.aws_endpoints import READ_TIMEOUT_SECONDS, bounded_retries, client_config, timed_out
from ..spec.errors import InputError, Problem, ServiceError, redact_userinfo
from .lineage import REEXPORT, Shard, shards_from

ENDPOINT_ENV = "AWS_ENDPOINT_URL_DYNAMODB"
# as GetRecords carries it (botocore's dynamodbstreams model, Identity; 2026-12-07), not Lambda's lower case
TTL_PRINCIPAL = {"Type": "Service", "PrincipalId": "dynamodb.amazonaws.com"}
APPLICABLE_VIEWS = ("NEW_IMAGE", "NEW_AND_OLD_IMAGES")  # INSERT and MODIFY need the new image
MAX_ATTEMPTS = 10  # per throttled AWS call: the first and 9 retries, with exponential backoff and jitter
# Still answered after MAX_ATTEMPTS: DynamoDB is overloaded or down, not the input at fault.
TRANSIENT_CODES = ("ThrottlingException", "LimitExceededException", "ProvisionedThroughputExceededException",
                   "RequestLimitExceeded", "InternalServerError", "ServiceUnavailable")
SPREAD = 8  # `sample`: the table is cut into this many times the segments read at once


@dataclass(frozen=True)
class StreamRecord:
    """One stream record, as much of it as replication uses."""

    shard: str
    sequence: str
    kind: str  # insert | modify | remove | ttl (a REMOVE by DynamoDB's TTL)
    micros: int  # ApproximateCreationDateTime, epoch microseconds (rounded down by AWS)
    keys: Item
    new_image: Item | None
    old_image: Item | None
    gone: bool = False  # a KEYS_ONLY record whose item GetItem no longer finds: delete it


def parse_record(shard: str, raw: dict[str, Any]) -> StreamRecord:
    """A record as GetRecords gives it (raw JSON: epoch seconds, base64 binaries) or as
    boto3's parser does (a datetime, bytes)."""
    data = raw["dynamodb"]
    kind = raw["eventName"].lower()
    if kind == "remove" and raw.get("userIdentity") == TTL_PRINCIPAL:
        kind = "ttl"
    moment = data["ApproximateCreationDateTime"]
    seconds = moment.timestamp() if isinstance(moment, datetime) else float(moment)
    new, old = data.get("NewImage"), data.get("OldImage")
    return StreamRecord(shard, data["SequenceNumber"], kind, int(seconds * 1_000_000), _binary(data["Keys"]),
                        None if new is None else _binary(new), None if old is None else _binary(old))


def _binary(image: dict[str, Any]) -> dict[str, Any]:
    """An image with its B and BS values as bytes (raw JSON has them in base64), in place."""
    for value in image.values():
        _binary_value(value)
    return image


def _binary_value(value: dict[str, Any]) -> None:
    tag, inner = next(iter(value.items()))
    if tag == "B" and isinstance(inner, str):
        value["B"] = binary_from_text(inner)
    elif tag == "BS" and inner and isinstance(inner[0], str):
        value["BS"] = [binary_from_text(x) for x in inner]
    elif tag == "M":
        for member in inner.values():
            _binary_value(member)
    elif tag == "L":
        for member in inner:
            _binary_value(member)


def _clients(region: str, endpoint_url: str | None, config: Any) -> tuple[Any, Any]:
    """The DynamoDB and DynamoDB Streams clients, GetRecords' answers left as parsed JSON.
    One botocore session makes both, with the process's one data loader: parsing the
    endpoint and model files took a tenth of a second per session (benchmarks/README.md)."""
    import boto3
    import botocore.session
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
    def client(service: str) -> Any:  # timeouts and connection retries bounded (spec/aws_endpoints.py)
        return bounded_retries(aws.client(service, region_name=region, endpoint_url=endpoint_url, config=config))

    return client("dynamodb"), client("dynamodbstreams")


@functools.cache
def _data_loader() -> Any:
    """botocore's file loader, which caches what it parsed (read-only data files)."""
    from botocore.loaders import create_loader

    return create_loader()


@dataclass(frozen=True)
class Stream:
    arn: str
    created_micros: int | None


@dataclass(frozen=True)
class Page:
    """One GetRecords answer of one shard, its records as DynamoDB JSON (`raw`). They are
    parsed when `records` is first asked for, in the asking thread: replicate asks in the
    thread that prepares the page, so the thread that reads the stream, whose GetRecords
    calls follow one another (each needs the last one's iterator), only waits and decodes JSON."""

    raw: list[dict[str, Any]]
    shard: str
    ended: bool  # a closed shard read to its end: finished

    @functools.cached_property
    def records(self) -> list[StreamRecord]:
        return [parse_record(self.shard, r) for r in self.raw]

    @property
    def last_sequence(self) -> str | None:
        return self.raw[-1]["dynamodb"]["SequenceNumber"] if self.raw else None


class Unavailable(ServiceError):
    """DynamoDB cannot be reached (connection refused, reset, timed out) or keeps refusing
    requests, past boto3's retries: the input may be fine, and a rerun resumes."""

    def __init__(self, where: str, detail: str):
        self.where, self.detail = where, detail
        super().__init__(f"{where} {detail}")


def _problem(where: str, message: str) -> InputError:
    return InputError([Problem.about(where, "", message)])


class StreamReader:
    """One table's stream, read shard by shard; keeps each open shard's next iterator."""

    def __init__(self, table: str, region: str, endpoint_url: str | None, connections: int = 10):
        config = client_config(MAX_ATTEMPTS, max_pool_connections=connections)
        self.table, self.where = table, f"DynamoDB table {table} ({redact_userinfo(endpoint_url or region)})"
        self._db, self._streams = _clients(region, endpoint_url, config)
        self._iterators: dict[str, str] = {}

    def stream(self, fetch_keys_only: bool = False) -> Stream:
        """The table's current stream; refuses a disabled one, and views without new images
        unless `fetch_keys_only` (the items are then read with BatchGetItem: `current`)."""
        table = self._call(self._db.describe_table, "Table", TableName=self.table)["Table"]
        spec = table.get("StreamSpecification") or {}
        if not spec.get("StreamEnabled") or not table.get("LatestStreamArn"):
            raise _problem(self.where, "has no stream enabled, so its writes cannot be replicated: enable one "
                                       f"(view type NEW_AND_OLD_IMAGES), then {REEXPORT}")
        view = spec.get("StreamViewType")
        if view not in APPLICABLE_VIEWS and not fetch_keys_only:
            raise _problem(self.where, f"streams {view} records, which lack the item's new image: change the "
                                       f"stream's view type to NEW_AND_OLD_IMAGES, then {REEXPORT}; or give "
                                       f"--fetch-keys-only to read each changed item with a consistent GetItem")
        arn = table["LatestStreamArn"]
        created = self._describe(arn).get("CreationRequestDateTime")
        return Stream(arn, int(created.timestamp() * 1_000_000) if created else None)

    def shards(self, arn: str) -> list[Shard]:
        """Every shard DescribeStream lists (it pages at 100)."""
        found, after = [], None
        while True:
            page = self._describe(arn, after)
            found += page["Shards"]
            after = page.get("LastEvaluatedShardId")
            if not after:
                return shards_from(found)

    def read(self, arn: str, shard: Shard, after: str | None) -> Iterator[Page]:
        """Pages of `shard` after sequence number `after` (None: from its oldest record),
        until an open shard's page is empty (caught up for now) or a closed shard ends. A
        closed shard can answer empty pages before its end (AWS: "it might take multiple
        calls to get to a portion of the shard that contains stream records"): read on."""
        from botocore.exceptions import ClientError

        iterator = self._iterators.pop(shard.id, None) or self._iterator(arn, shard.id, after)
        while iterator:
            try:
                answer = self._call(self._streams.get_records, "Records", ShardIterator=iterator, Limit=1000)
            except ClientError as error:
                if error.response["Error"]["Code"] != "ExpiredIteratorException":
                    raise
                iterator = self._iterator(arn, shard.id, after)
                continue
            page = Page(answer["Records"], shard.id, ended=answer.get("NextShardIterator") is None)
            after = page.last_sequence or after
            iterator = answer.get("NextShardIterator")
            if not page.raw and iterator and shard.closed:
                continue
            if not page.raw and iterator:
                self._iterators[shard.id] = iterator  # where the next poll starts
            yield page
            if not page.raw:
                return

    def forget(self) -> None:
        """Drops the kept iterators (after an outage: a restarted endpoint may not know
        them), so each shard is read again from its checkpoint."""
        self._iterators.clear()

    def current(self, keys: list[Item]) -> list[Item]:
        """The items at these keys as the table holds them now (strongly consistent
        BatchGetItem, 100 keys a call, unprocessed keys asked again); missing ones are gone."""
        found: list[Item] = []
        unique = list({json.dumps(k, sort_keys=True, default=repr): k for k in keys}.values())
        for i in range(0, len(unique), 100):
            wanted: dict[str, Any] = {self.table: {"Keys": unique[i:i + 100], "ConsistentRead": True}}
            while wanted:
                answer = self._call(self._db.batch_get_item, "Responses", RequestItems=wanted)
                found += answer["Responses"].get(self.table, [])
                wanted = answer.get("UnprocessedKeys") or {}
        return found

    def sample(self, count: int, segments: int, rng: random.Random) -> list[Item]:
        """About `count` items of the live table, strongly consistent, for `cutover check`:
        a parallel Scan of `segments` segments at a time, each stopping after its share.
        The table is cut into SPREAD times more segments than are read, taken in a random
        order, so repeated checks see different items (a segment is a range of partition-key
        hashes read from its start: a table of few partitions shows the same first items).
        A segment that runs dry (a small table) is made up for by the next ones; one that
        still has items (a partition holding most of them) goes back in line where it stopped."""
        total = max(1, segments) * SPREAD
        line: list[tuple[int, dict[str, Any] | None]] = [(s, None) for s in rng.sample(range(total), total)]
        found: list[Item] = []
        with ThreadPoolExecutor(max_workers=max(1, segments)) as pool:
            while line and len(found) < count:
                wave, line = line[:segments], line[segments:]
                share = -(-(count - len(found)) // len(wave))  # ceiling
                answers = pool.map(self._segment, [s for s, _ in wave], [total] * len(wave),
                                   [share] * len(wave), [start for _, start in wave])
                for (segment, _), (items, rest) in zip(wave, answers, strict=True):
                    found += items
                    if rest is not None:
                        line.append((segment, rest))
        return found[:count]

    def _segment(self, segment: int, total: int, share: int,
                 start: dict[str, Any] | None) -> tuple[list[Item], dict[str, Any] | None]:
        """Up to `share` items of one segment from `start`, and where the rest begins (None: no rest)."""
        items: list[Item] = []
        while len(items) < share:
            answer = self._call(self._db.scan, "Count", TableName=self.table, Segment=segment, TotalSegments=total,
                                Limit=share - len(items), ConsistentRead=True,
                                **({"ExclusiveStartKey": start} if start else {}))
            items += answer.get("Items", [])
            start = answer.get("LastEvaluatedKey")
            if start is None:
                break
        return items, start

    def call(self, operation: str, required: str, **kwargs: Any) -> Any:
        """One DynamoDB call by name (reverse replication's writes), failures as `_call` words them."""
        return self._call(getattr(self._db, operation), required, **kwargs)

    def _iterator(self, arn: str, shard: str, after: str | None) -> str:
        how = {"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": after} if after else \
            {"ShardIteratorType": "TRIM_HORIZON"}
        return self._call(self._streams.get_shard_iterator, "ShardIterator", StreamArn=arn, ShardId=shard,
                          **how)["ShardIterator"]

    def _describe(self, arn: str, after: str | None = None) -> dict[str, Any]:
        extra = {"ExclusiveStartShardId": after} if after else {}
        return self._call(self._streams.describe_stream, "StreamDescription", StreamArn=arn,
                          **extra)["StreamDescription"]

    def _call(self, operation: Any, required: str, **kwargs: Any) -> Any:
        """One AWS call, its bad-input failures as `InputError`s saying what to do, and
        DynamoDB out of reach (or overloaded) past the retries as `Unavailable`; an answer
        without the `required` field (an endpoint that is not DynamoDB's: an HTML page
        answered 200) is a ServiceError naming the endpoint, not a KeyError."""
        answer = self._answer(operation, **kwargs)
        if not isinstance(answer, dict) or required not in answer:
            raise ServiceError(f"{self.where} answered {operation.__name__} without its {required!r}: the endpoint "
                               f"does not speak DynamoDB's API; check --endpoint-url (or AWS_ENDPOINT_URL_DYNAMODB)")
        return answer

    def _answer(self, operation: Any, **kwargs: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError, HTTPClientError, NoCredentialsError
        from botocore.exceptions import ConnectionError as ConnectionFailed

        try:
            return operation(**kwargs)
        except NoCredentialsError:
            raise _problem(self.where, "no AWS credentials found: set AWS_PROFILE or AWS_ACCESS_KEY_ID and "
                                       "AWS_SECRET_ACCESS_KEY (any values for DynamoDB Local)") from None
        except ClientError as error:
            code = error.response["Error"]["Code"]
            if code == "ResourceNotFoundException":
                raise _problem(self.where, f"not found ({error.response['Error'].get('Message', code)}): check "
                                           f"source.table and source.region in the spec, or --endpoint-url") from None
            if code == "TrimmedDataAccessException":
                raise _problem(self.where, f"the stream no longer holds the records after the checkpoint "
                                           f"(older than 24 hours); {REEXPORT}") from None
            if code in ("AccessDeniedException", "UnrecognizedClientException"):
                raise _problem(self.where, f"{code}: the credentials may not read this table and its stream "
                                           f"(dynamodb:DescribeTable, dynamodb:DescribeStream, "
                                           f"dynamodb:GetShardIterator, dynamodb:GetRecords)") from None
            if code in TRANSIENT_CODES or error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) >= 500:
                raise Unavailable(self.where, f"keeps refusing requests after {MAX_ATTEMPTS} attempts "
                                              f"({code})") from None
            raise
        except (ConnectionFailed, HTTPClientError) as error:
            if timed_out(error):
                raise Unavailable(self.where, f"did not answer within {READ_TIMEOUT_SECONDS:g} s "
                                              f"({redact_userinfo(str(error))}): check that the endpoint is "
                                              f"running and reachable") from None
            raise Unavailable(self.where, f"cannot be reached: {redact_userinfo(str(error))}") from None
        except BotoCoreError as error:  # no region, a profile not found, ...: the configuration
            raise _problem(self.where, redact_userinfo(str(error))) from None
