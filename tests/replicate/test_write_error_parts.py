"""`WriteError` in parts: the load's messages word for word as before (what failed, then
"nothing is lost: rerun the load ..."), and replicate's outage wording from the same parts,
naming the Bigtable table and instance and the stream record, never the load's remedy."""

from __future__ import annotations

import pytest
from google.api_core import exceptions as api_exceptions
from google.cloud.bigtable.data.exceptions import FailedMutationEntryError, MutationsExceptionGroup

from ddb2bigtable.codec.mutations import RowMutation, SetCell
from ddb2bigtable.load.client_hooks import Source
from ddb2bigtable.load.writer import WriteError, row_entry, sort_failures
from ddb2bigtable.replicate.outage import BIGTABLE, DYNAMODB, out_of_reach
from ddb2bigtable.replicate.stream import Unavailable

BIGTABLE_SIDE = "Bigtable table movies in instance films"


def failures(count: int) -> list[FailedMutationEntryError]:
    rows = [row_entry(RowMutation(f"r{i}".encode(), (SetCell("f", b"q", b"v", 1),)), Source("data/a.json.gz", i + 1))
            for i in range(count)]
    return [FailedMutationEntryError(i, row, api_exceptions.ServiceUnavailable("down")) for i, row in enumerate(rows)]


def raised(group: MutationsExceptionGroup) -> WriteError:
    with pytest.raises(WriteError) as caught:
        sort_failures(group, "movies", lambda source, reason: None)
    return caught.value


def test_some_rows_failed_the_loads_message_is_unchanged_and_replicate_words_its_own():
    error = raised(MutationsExceptionGroup(failures(3), 10))
    assert str(error) == ("3 row(s) could not be written to movies after retries (first: data/a.json.gz line 1: "
                          "ServiceUnavailable: 503 down); nothing is lost: rerun the load, it resumes with this "
                          "data file")
    assert (error.rows, error.first, error.cause) == (3, Source("data/a.json.gz", 1), "ServiceUnavailable: 503 down")
    side, what = out_of_reach(error, BIGTABLE_SIDE)
    assert side == BIGTABLE and what == (f"{BIGTABLE_SIDE} cannot be written: 3 row(s) failed past the writer's "
                                         "retries (first: shard data/a.json.gz record 1: ServiceUnavailable: 503 down)")


def test_more_failures_than_the_client_lists_the_loads_message_is_unchanged_and_counted_for_replicate():
    listed = failures(4)
    group = MutationsExceptionGroup.from_truncated_lists(listed[:2], listed[2:], 300, 300)
    error = raised(group)
    assert str(error) == (f"{group}: more rows failed than the client reports one by one, so they cannot be "
                          "dead-lettered; nothing is lost: rerun the load, it rewrites this data file")
    side, what = out_of_reach(error, BIGTABLE_SIDE)
    assert side == BIGTABLE and what.startswith(f"{BIGTABLE_SIDE} cannot be written: 300 row(s) failed past")
    assert "rerun the load" not in what and "truncated" not in what


def test_dynamodb_out_of_reach_is_worded_as_before():
    side, what = out_of_reach(Unavailable("DynamoDB table Movies (us-west-2)", "cannot be reached: refused"), "")
    assert (side, what) == (DYNAMODB, "DynamoDB table Movies (us-west-2) cannot be reached: refused")
