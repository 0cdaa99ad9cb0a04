"""The DynamoDB side: the table's stream read through boto3, and every other DynamoDB call.

Every AWS call is here (`cutover check`'s sampling Scan, reverse replication's writes
too), so the rest of the package is pure decisions and Bigtable writes. The clients are
aws_clients.py's (GetRecords' answers parsed with orjson, BatchWriteItem's bodies written
with it); the records they read become `StreamRecord`s in stream_records.py.
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

import json
import random
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ..codec.items import Item
from ..spec.aws_endpoints import READ_TIMEOUT_SECONDS, client_config, timed_out
from ..spec.errors import InputError, Problem, ServiceError, redact_userinfo
from .aws_clients import clients
from .lineage import REEXPORT, Shard, shards_from
from .stream_records import Page

ENDPOINT_ENV = "AWS_ENDPOINT_URL_DYNAMODB"
APPLICABLE_VIEWS = ("NEW_IMAGE", "NEW_AND_OLD_IMAGES")  # INSERT and MODIFY need the new image
MAX_ATTEMPTS = 10  # per throttled AWS call: the first and 9 retries, with exponential backoff and jitter
# Still answered after MAX_ATTEMPTS: DynamoDB is overloaded or down, not the input at fault.
TRANSIENT_CODES = ("ThrottlingException", "LimitExceededException", "ProvisionedThroughputExceededException",
                   "RequestLimitExceeded", "InternalServerError", "ServiceUnavailable")
PAGE = 1000  # GetRecords' most records a call (API_streams_GetRecords, Limit, read 2026-12-07)
# A shard's first page in a run is short, so the write stage starts while the next, full
# page is read (pages.py): a full first page of serve's stream (800 Movies records, 1 MB)
# kept the writes waiting 0.1-0.2 s after serve's scan (a tenth of a reverse run of 4,609
# items, 2026-12-08). Only the first of each shard: later pages, visit after visit, stay full.
FIRST_PAGE = 100
SPREAD = 8  # `sample`: the table is cut into this many times the segments read at once


@dataclass(frozen=True)
class Stream:
    arn: str
    created_micros: int | None


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
        self._db, self._streams = clients(region, endpoint_url, config)
        self._iterators: dict[str, str] = {}
        self._begun: set[str] = set()  # shards read since this reader was made (their first page was short)
        # Binaries of its pages' records left as base64 text (stream_records.parse_record):
        # reverse, which writes the images to DynamoDB as they came, sets it.
        self.binary_text = False
        # what to do about a table with no stream (reverse replication reads serve's, with other advice)
        self.no_stream = f"enable one (view type NEW_AND_OLD_IMAGES), then {REEXPORT}"

    def stream(self, fetch_keys_only: bool = False) -> Stream:
        """The table's current stream; refuses a disabled one, and views without new images
        unless `fetch_keys_only` (the items are then read with BatchGetItem: `current`)."""
        table = self._call(self._db.describe_table, "Table", TableName=self.table)["Table"]
        spec = table.get("StreamSpecification") or {}
        arn = table.get("LatestStreamArn") if spec.get("StreamEnabled") else None
        return self._current(arn, spec.get("StreamViewType"), fetch_keys_only, self._describe(arn) if arn else {})

    def listed_stream(self, fetch_keys_only: bool = False) -> Stream:
        """`stream`, found through the Streams API alone: the newest stream ListStreams gives
        the table (labels are creation times), if DescribeStream says it is enabled. Reverse
        replication finds serve's stream so: serve's DescribeTable counts the table's items
        (table_counts.py: 3.5 s of serve's CPU for AWS's 4,609 Movies items, 2026-12-07),
        which the stream needs none of."""
        listed, after = [], None
        while True:
            page = self._call(self._streams.list_streams, "Streams", TableName=self.table,
                              **({"ExclusiveStartStreamArn": after} if after else {}))
            listed += page["Streams"]
            after = page.get("LastEvaluatedStreamArn")
            if not after:
                break
        newest = max(listed, key=lambda s: s["StreamLabel"], default=None)
        described = self._describe(newest["StreamArn"]) if newest else {}
        on = described.get("StreamStatus") in ("ENABLED", "ENABLING")
        return self._current(described["StreamArn"] if on else None, described.get("StreamViewType"),
                             fetch_keys_only, described)

    def _current(self, arn: str | None, view: str | None, fetch_keys_only: bool,
                 described: dict[str, Any]) -> Stream:
        """The stream `arn` (None: no stream enabled) of view type `view`, if replication can read it."""
        if arn is None:
            raise _problem(self.where, f"has no stream enabled, so its writes cannot be replicated: {self.no_stream}")
        if view not in APPLICABLE_VIEWS and not fetch_keys_only:
            raise _problem(self.where, f"streams {view} records, which lack the item's new image: change the "
                                       f"stream's view type to NEW_AND_OLD_IMAGES, then {REEXPORT}; or give "
                                       f"--fetch-keys-only to read each changed item with a consistent GetItem")
        created = described.get("CreationRequestDateTime")
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
                limit = PAGE if shard.id in self._begun else FIRST_PAGE
                answer = self._call(self._streams.get_records, "Records", ShardIterator=iterator, Limit=limit)
                self._begun.add(shard.id)
            except ClientError as error:
                if error.response["Error"]["Code"] != "ExpiredIteratorException":
                    raise
                iterator = self._iterator(arn, shard.id, after)
                continue
            page = Page(answer["Records"], shard.id, answer.get("NextShardIterator") is None, self.binary_text)
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
