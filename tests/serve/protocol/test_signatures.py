"""SigV4: with key pairs configured, serve answers only requests an AWS SDK signed with one
of them, and refuses the rest in DynamoDB's words; off loopback it refuses to start without
them (or --unsigned)."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from ddb2bigtable.bigtable.emulator import stop_process
from ddb2bigtable.serve.errors import ServeError
from ddb2bigtable.serve.protocol.signatures import KEYS_ENV, check

from ..conftest import STAGE, Served, start_serve

KEY = ("AKIDSERVE0001", "serve-secret-1")
BODY = b'{"TableName": "Movies", "Key": {"year": {"N": "2013"}, "title": {"S": "Rush"}}}'


@pytest.fixture(scope="module")
def signed(served):
    process, endpoint = start_serve(served.root, STAGE, env={KEYS_ENV: f"{KEY[0]}:{KEY[1]},OTHER:other-secret"})
    yield Served(served.root, endpoint, process)
    stop_process(process)


def _code(call) -> str:
    with pytest.raises(ClientError) as caught:
        call()
    return caught.value.response["Error"]["Code"]


def test_a_request_signed_with_a_configured_key_is_served(signed):
    item = signed.client(KEY).get_item(TableName="Movies", Key={"year": {"N": "2013"}, "title": {"S": "Rush"}})
    assert item["Item"]["title"] == {"S": "Rush"}
    assert "Movies" in signed.client(("OTHER", "other-secret")).list_tables()["TableNames"]


def test_a_wrong_secret_or_an_unknown_key_is_refused(signed):
    assert _code(lambda: signed.client((KEY[0], "not-the-secret")).list_tables()) == "InvalidSignatureException"
    assert _code(lambda: signed.client(("AKIDUNKNOWN", KEY[1])).list_tables()) == "UnrecognizedClientException"


def _send(endpoint: str, body: bytes, sign_body: bytes | None = None) -> tuple[int, bytes]:
    headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.GetItem"}
    if sign_body is not None:
        request = AWSRequest(method="POST", url=endpoint + "/", data=sign_body, headers=dict(headers))
        SigV4Auth(Credentials(*KEY), "dynamodb", "us-west-2").add_auth(request)
        headers = dict(request.headers.items())
    try:
        with urllib.request.urlopen(urllib.request.Request(endpoint + "/", data=body, headers=headers,
                                                           method="POST"), timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_an_unsigned_or_altered_request_is_refused(signed):
    status, answer = _send(signed.endpoint, BODY)
    assert status == 403 and b"MissingAuthenticationTokenException" in answer
    status, answer = _send(signed.endpoint, BODY, sign_body=BODY)
    assert status == 200 and b"Rush" in answer  # the raw signer agrees with serve
    altered = BODY.replace(b"Rush", b"Thor")
    status, answer = _send(signed.endpoint, altered, sign_body=BODY)
    assert status == 400 and b"InvalidSignatureException" in answer


def test_a_signature_from_another_time_is_refused():
    request = AWSRequest(method="POST", url="http://127.0.0.1:1/", data=BODY, headers={"X-Amz-Target": "x"})
    SigV4Auth(Credentials(*KEY), "dynamodb", "us-west-2").add_auth(request)
    headers = {k.lower(): v for k, v in request.headers.items()} | {"host": "127.0.0.1:1"}
    check(dict([KEY]), "POST", "/", headers, BODY)  # now: accepted
    with pytest.raises(ServeError) as caught:
        check(dict([KEY]), "POST", "/", headers, BODY, now=datetime.now(UTC) + timedelta(minutes=16))
    assert caught.value.name == "InvalidSignatureException" and "expired" in caught.value.message


def test_a_network_address_without_keys_or_unsigned_is_refused(served):
    env = {k: v for k, v in os.environ.items() if k != KEYS_ENV}
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "serve", "--stage", STAGE, "--root", str(served.root),
                          "--host", "0.0.0.0"], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "not a loopback address" in out.stderr and KEYS_ENV in out.stderr and "--unsigned" in out.stderr
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "serve", "--stage", STAGE, "--root", str(served.root)],
                         capture_output=True, text=True, env={**env, KEYS_ENV: "AKID-without-secret"}, timeout=120)
    assert out.returncode == 2 and KEYS_ENV in out.stderr and "pair 1" in out.stderr
