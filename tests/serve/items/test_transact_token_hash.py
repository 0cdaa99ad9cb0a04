"""What a ClientRequestToken's retry must repeat is a hash of the request: any JSON a client
sends hashes (a number past 64 bits made TransactWriteItems answer 500: serve_fuzz, 2026-11-29),
the same request hashes the same, and the options a retry may change are left out."""

from __future__ import annotations

import json

from ddb2bigtable.serve.protocol.transact_requests import fingerprint as _request_hash

BODY = {"ClientRequestToken": "t1", "TransactItems": [
    {"Put": {"TableName": "Scratch", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}}, "Unread": 99999999999999999999}}]}


def test_any_json_number_hashes():
    assert len(_request_hash(BODY)) == 64
    assert len(_request_hash({**BODY, "Extra": [1e308, -(2**80), 0.5]})) == 64


def test_the_same_request_hashes_the_same_whatever_its_key_order():
    reordered = json.loads(json.dumps(dict(reversed(list(BODY.items())))))
    assert _request_hash(reordered) == _request_hash(BODY)
    assert _request_hash({**BODY, "ReturnConsumedCapacity": "TOTAL"}) == _request_hash(BODY)
    other = json.loads(json.dumps(BODY).replace('"a"', '"b"'))
    assert _request_hash(other) != _request_hash(BODY)
