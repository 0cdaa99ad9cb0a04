"""One PrepareQuery per view statement shape, reused by every ExecuteQuery of that shape
until shortly before the prepared query expires: a page of an index costs one call, not
two.

google-cloud-bigtable 2.50.2's `execute_query` prepares the statement on every call and
offers no prepared statement (googleapis/python-bigtable#1095, 2025-03-10: "In the future
there will also be an option to prepare once and reuse a PreparedStatement"). So the
prepare goes through the generated client over the data client's own transport (as
reverse_rows.py does), and the answer is read by the data client's own
`ExecuteQueryIteratorAsync` (its reader of ProtoRows batches, checksums, resume tokens and
retries), built as `execute_query` builds it, with two of the client's helpers
(`_pb_metadata_to_metadata_types`, `_format_execute_query_params`): the iterator's
constructor is documented "not meant to be constructed directly ... subject to change",
so uv.lock pins the client and tests/serve/queries/test_views_wire.py counts the calls.

A prepared query carries `valid_until` (PrepareQueryResponse, google/bigtable/v2/
bigtable.proto); it is used until REFRESH_SECONDS before then. An ExecuteQuery refused
with FAILED_PRECONDITION (a prepared query the server no longer takes, e.g. the view made
again) drops it and prepares again, once.
"""

from __future__ import annotations

import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from google.api_core import exceptions as google_errors
from google.cloud.bigtable.data.execute_query import ExecuteQueryIteratorAsync
from google.cloud.bigtable.data.execute_query._parameters_formatting import _format_execute_query_params
from google.cloud.bigtable.data.execute_query.metadata import SqlType, _pb_metadata_to_metadata_types
from google.cloud.bigtable_v2.services.bigtable import BigtableAsyncClient

from .view_sql import Statement

REFRESH_SECONDS = 60.0  # prepare again this long before a prepared query's valid_until
KEPT = 256  # statement shapes kept per worker, least recently used dropped
RETRIED = (google_errors.DeadlineExceeded, google_errors.ServiceUnavailable, google_errors.Aborted)


@dataclass(frozen=True)
class Prepared:
    token: bytes
    metadata: Any  # the client's Metadata of the result's columns
    until: float  # epoch seconds after which it is prepared again


class PreparedQueries:
    """The prepared view statements of one data client (one per worker process)."""

    def __init__(self, client: Any):
        self.client = client
        self.gapic = BigtableAsyncClient(transport=client.transport)
        self.kept: OrderedDict[tuple[Any, ...], Prepared] = OrderedDict()

    async def rows(self, statement: Statement, instance_id: str, profile: str | None, seconds: float,
                   attempt_seconds: float) -> list[Any]:
        """The statement's result rows (QueryResultRow), prepared once per shape."""
        types: dict[str, SqlType.Type] = {n: SqlType.Bytes() if isinstance(v, bytes) else SqlType.Float64()
                                          for n, v in statement.params.items()}
        key = (instance_id, profile, statement.sql, tuple(sorted((n, type(t).__name__) for n, t in types.items())))
        instance = self.gapic.instance_path(self.client.project, instance_id)
        for again in (False, True):
            prepared = await self._prepared(key, statement.sql, instance, profile, types, attempt_seconds)
            body = {"instance_name": instance, "app_profile_id": profile, "prepared_query": prepared.token,
                    "params": _format_execute_query_params(dict(statement.params), types)}
            answer = ExecuteQueryIteratorAsync(self.client, instance_id, profile, body, prepared.metadata,
                                               attempt_seconds, seconds, retryable_excs=RETRIED)
            try:
                return [row async for row in answer]
            except google_errors.FailedPrecondition:
                self.kept.pop(key, None)
                if again:
                    raise
        raise AssertionError("unreachable: the second try returns or raises")

    async def _prepared(self, key: tuple[Any, ...], sql: str, instance: str, profile: str | None,
                        types: dict[str, SqlType.Type], attempt_seconds: float) -> Prepared:
        found = self.kept.get(key)
        if found is not None and time.time() < found.until:
            self.kept.move_to_end(key)
            return found
        answer = await self.gapic.prepare_query(
            request={"instance_name": instance, "query": sql, "app_profile_id": profile,
                     "param_types": {n: t._to_type_pb_dict() for n, t in types.items()}, "proto_format": {}},
            timeout=attempt_seconds)
        until = answer.valid_until.timestamp() - REFRESH_SECONDS if answer.valid_until else 0.0
        found = Prepared(answer.prepared_query, _pb_metadata_to_metadata_types(answer.metadata), until)
        self.kept[key] = found
        while len(self.kept) > KEPT:
            self.kept.popitem(last=False)
        return found


_BY_CLIENT: weakref.WeakKeyDictionary[Any, PreparedQueries] = weakref.WeakKeyDictionary()


def prepared_queries(client: Any) -> PreparedQueries:
    """The client's prepared statements, made at its first view query."""
    found = _BY_CLIENT.get(client)
    if found is None:
        found = _BY_CLIENT[client] = PreparedQueries(client)
    return found
