"""Segment and TotalSegments out of their ranges are refused with AWS's request-validation
words, value and constraint included (the message said neither)."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError


@pytest.mark.parametrize(("segment", "total", "message"), [
    (0, 0, "Value '0' at 'totalSegments' failed to satisfy constraint: Member must have value greater than or equal to 1"),
    (0, 1000001, "Value '1000001' at 'totalSegments' failed to satisfy constraint: Member must have value less than or "
                 "equal to 1000000"),
    (-1, 2, "Value '-1' at 'segment' failed to satisfy constraint: Member must have value greater than or equal to 0"),
])
def test_out_of_range_segments_name_value_and_constraint(served, segment, total, message):
    client = served.client(parameter_validation=False)  # boto3 would refuse them before sending
    with pytest.raises(ClientError) as caught:
        client.scan(TableName="Movies", Segment=segment, TotalSegments=total)
    assert caught.value.response["Error"]["Message"] == f"1 validation error detected: {message}"


def test_the_last_of_a_million_segments_is_served(served):
    answer = served.client().scan(TableName="Movies", Segment=999999, TotalSegments=1000000)
    assert answer["Count"] == len(answer["Items"])
