"""SigV4: with key pairs configured, serve answers only requests an AWS SDK signed with one
of them, for DynamoDB, a region and a Host it answers for, with every header that decides
the request signed, and refuses the rest in DynamoDB's words; off loopback it refuses to
start without them (or --unsigned)."""

from __future__ import annotations

import http.client
import json
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
from ddb2bigtable.serve.protocol.signatures import KEYS_ENV, Signing, answering_hosts, check

from ..conftest import STAGE, Served, start_serve

KEY = ("AKIDSERVE0001", "serve-secret-1")
BODY = b'{"TableName": "Movies", "Key": {"year": {"N": "2013"}, "title": {"S": "Rush"}}}'
PUBLIC = "ddb.example.internal"  # a name the operator gives with --public-host


@pytest.fixture(scope="module")
def signed(served):
    process, endpoint = start_serve(served.root, STAGE, "--signing-region", "ap-south-1", "--public-host", PUBLIC,
                                    env={KEYS_ENV: f"{KEY[0]}:{KEY[1]},OTHER:other-secret"})
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
    assert status == 400 and b"MissingAuthenticationTokenException" in answer
    status, answer = _send(signed.endpoint, BODY, sign_body=BODY)
    assert status == 200 and b"Rush" in answer  # the raw signer agrees with serve
    altered = BODY.replace(b"Rush", b"Thor")
    status, answer = _send(signed.endpoint, altered, sign_body=BODY)
    assert status == 400 and b"InvalidSignatureException" in answer


def test_a_signature_from_another_time_is_refused():
    request = AWSRequest(method="POST", url="http://127.0.0.1:1/", data=BODY, headers={"X-Amz-Target": "x"})
    SigV4Auth(Credentials(*KEY), "dynamodb", "us-west-2").add_auth(request)
    headers = [(k.lower().encode(), v.encode()) for k, v in request.headers.items()] + [(b"host", b"127.0.0.1:1")]
    signing = Signing(dict([KEY]), frozenset({"us-west-2"}), answering_hosts("127.0.0.1", 1, ()))
    check(signing, "POST", "/", headers, BODY)  # now: accepted
    with pytest.raises(ServeError) as caught:
        check(signing, "POST", "/", headers, BODY, now=datetime.now(UTC) + timedelta(minutes=16))
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


SCRATCH = {"pk": {"S": "signed"}, "sk": {"N": "1"}}
GET = json.dumps({"TableName": "Scratch", "Key": SCRATCH}).encode()


def _signed(endpoint: str, target: str, *, host: str | None = None, service: str = "dynamodb",
            region: str = "us-west-2", sign_only: tuple[str, ...] | None = None) -> dict[str, str]:
    """The headers an SDK sends for `target` (Host: the endpoint's, or `host`), signed for `service`
    in `region` over every header, or over `sign_only` with the others added after signing, as a
    client that signs less than it sends (the capture of issue 43)."""
    where = host or endpoint.removeprefix("http://")
    sent = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": f"DynamoDB_20120810.{target}"}
    signed = {k: v for k, v in sent.items() if sign_only is None or k.lower() in sign_only}
    request = AWSRequest(method="POST", url=f"http://{where}/", data=GET, headers=signed)
    SigV4Auth(Credentials(*KEY), service, region).add_auth(request)
    return {**sent, **dict(request.headers.items()), "Host": where}


def _raw(endpoint: str, headers: dict[str, str], body: bytes = GET) -> tuple[int, dict]:
    """POST with exactly these headers (Host included) over a socket to the endpoint."""
    host, port = endpoint.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.request("POST", "/", body=body, headers=headers)
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read() or b"{}")
    finally:
        connection.close()


def _still_there(signed) -> bool:
    return "Item" in signed.client(KEY).get_item(TableName="Scratch", Key=SCRATCH, ConsistentRead=True)


def test_a_captured_get_item_cannot_be_replayed_as_a_delete(signed):
    signed.client(KEY).put_item(TableName="Scratch", Item={**SCRATCH, "v": {"S": "keep"}})
    captured = _signed(signed.endpoint, "GetItem")
    status, answer = _raw(signed.endpoint, captured)
    assert status == 200 and answer["Item"]["v"] == {"S": "keep"}  # the capture itself is a valid request
    status, answer = _raw(signed.endpoint, captured | {"X-Amz-Target": "DynamoDB_20120810.DeleteItem"})
    assert status == 400 and answer["__type"].endswith("#InvalidSignatureException"), answer
    assert "does not match" in answer["message"]
    # signed over host and x-amz-date only, as the request of issue 43: the operation was not bound
    loose = _signed(signed.endpoint, "GetItem", sign_only=("host", "x-amz-date"))
    for target in ("GetItem", "DeleteItem"):
        status, answer = _raw(signed.endpoint, loose | {"X-Amz-Target": f"DynamoDB_20120810.{target}"})
        assert status == 400 and answer["__type"].endswith("#InvalidSignatureException"), answer
        assert answer["message"] == ("There were headers present in the request which were not signed: "
                                     "content-type, x-amz-target")
    assert _still_there(signed)


def test_a_signature_for_another_service_or_region_is_refused(signed):
    status, answer = _raw(signed.endpoint, _signed(signed.endpoint, "DeleteItem", service="s3"))
    assert (status, answer["__type"].split("#")[1]) == (400, "InvalidSignatureException")
    assert answer["message"] == "Credential should be scoped to correct service: 'dynamodb'. "
    status, answer = _raw(signed.endpoint, _signed(signed.endpoint, "DeleteItem", region="eu-central-1"))
    assert (status, answer["__type"].split("#")[1]) == (400, "InvalidSignatureException")
    assert answer["message"] == "Credential should be scoped to a valid region, not 'eu-central-1'. "
    assert _still_there(signed)
    # the stage's tables' region (Movies: us-west-2) and the one --signing-region added are answered
    for region in ("us-west-2", "ap-south-1"):
        status, answer = _raw(signed.endpoint, _signed(signed.endpoint, "GetItem", region=region))
        assert status == 200 and "Item" in answer, answer


def test_a_signature_for_another_host_is_refused(signed):
    signed.client(KEY).put_item(TableName="Scratch", Item={**SCRATCH, "v": {"S": "keep"}})
    status, answer = _raw(signed.endpoint, _signed(signed.endpoint, "DeleteItem", host="evil.example"))
    assert (status, answer["__type"].split("#")[1]) == (400, "InvalidSignatureException")
    assert "evil.example" in answer["message"] and "--public-host" in answer["message"]
    assert _still_there(signed)
    port = signed.endpoint.rsplit(":", 1)[1]
    for host in (PUBLIC, f"localhost:{port}"):  # the name --public-host gave; a client on this machine
        status, answer = _raw(signed.endpoint, _signed(signed.endpoint, "GetItem", host=host))
        assert status == 200 and "Item" in answer, (host, answer)


def test_signed_headers_must_be_there_once():
    request = AWSRequest(method="POST", url="http://127.0.0.1:1/", data=BODY,
                         headers={"X-Amz-Target": "DynamoDB_20120810.GetItem", "Content-Type": "x"})
    SigV4Auth(Credentials(*KEY), "dynamodb", "us-west-2").add_auth(request)
    headers = [(k.lower().encode(), v.encode()) for k, v in request.headers.items()] + [(b"host", b"127.0.0.1:1")]
    signing = Signing(dict([KEY]), frozenset({"us-west-2"}), answering_hosts("127.0.0.1", 1, ()))
    twice = [*headers, (b"x-amz-target", b"DynamoDB_20120810.DeleteItem")]
    without = [h for h in headers if h[0] != b"content-type"]
    for sent, words in ((twice, "appear more than once"), (without, "'content-type' is named as a SignedHeader")):
        with pytest.raises(ServeError) as caught:
            check(signing, "POST", "/", sent, BODY)
        assert caught.value.name == "IncompleteSignatureException" and words in caught.value.message


def test_a_public_host_pattern_stands_for_one_run_of_a_name():
    signing = Signing({}, frozenset(), answering_hosts("0.0.0.0", 8080, ("ddb2bigtable-prod-*.us-east4.run.app",
                                                                          "ddb2bigtable-prod-*.a.run.app")))
    for host in ("ddb2bigtable-prod-123456789012.us-east4.run.app", "ddb2bigtable-prod-x7k2q9ab-uk.a.run.app",
                 "localhost:8080", "127.0.0.1:8080"):
        assert signing.answers_as(host), host
    for host in ("ddb2bigtable-dev-123456789012.us-east4.run.app", "ddb2bigtable-prod-1.evil.example.us-east4.run.app",
                 "ddb2bigtable-prod-1.us-east4.run.app.evil.example", "0.0.0.0:8080", "localhost:8081"):
        assert not signing.answers_as(host), host
