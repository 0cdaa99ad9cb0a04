"""The wire: DynamoDB's JSON 1.0 protocol, its error shape for malformed and unsupported
requests, the table operations, and the command line around the server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
from botocore.exceptions import ClientError

from ddb2bigtable.bigtable.emulator import stop_process

from ..conftest import STAGE, start_serve


def raw(endpoint: str, target: str | None, body: bytes) -> tuple[int, dict]:
    headers = {"Content-Type": "application/x-amz-json-1.0"}
    if target:
        headers["X-Amz-Target"] = target
    request = urllib.request.Request(endpoint, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_malformed_requests_get_dynamodbs_error_shape(served):
    status, body = raw(served.endpoint, "DynamoDB_20120810.GetItem", b"{not json")
    assert status == 400 and body["__type"].endswith("#SerializationException") and body["message"]
    status, body = raw(served.endpoint, "DynamoDB_20120810.GetItem", b'{"TableName": "Scratch", "Key": {"pk": 5}}')
    assert (status, body["__type"]) == (400, "com.amazonaws.dynamodb.v20120810#ValidationException")
    status, body = raw(served.endpoint, "DynamoDB_20120810.PutItem",
                       b'{"TableName": "Scratch", "Item": {"pk": {"S": "m"}, "sk": {"N": "1"}, "b": {"B": "%%%"}}}')
    assert status == 400 and body["__type"].endswith("#ValidationException") and "b" in body["message"]
    status, body = raw(served.endpoint, "DynamoDB_20120810.RestoreTableFromBackup", b"{}")
    assert status == 400 and body["__type"].endswith("#UnknownOperationException")
    status, body = raw(served.endpoint, None, b"{}")
    assert status == 400 and "X-Amz-Target" in body["message"]
    assert "Item" not in served.client().get_item(TableName="Scratch", Key={"pk": {"S": "m"}, "sk": {"N": "1"}})


def test_describe_and_list_tables(served):
    c = served.client()
    assert c.list_tables()["TableNames"] == ["Invoices", "Movies", "ProductCatalog", "Scratch", "Videos"]
    first = c.list_tables(Limit=2)
    assert first["TableNames"] == ["Invoices", "Movies"] and first["LastEvaluatedTableName"] == "Movies"
    assert c.list_tables(ExclusiveStartTableName="Movies")["TableNames"] == ["ProductCatalog", "Scratch", "Videos"]
    table = c.describe_table(TableName="Movies")["Table"]
    assert table["TableStatus"] == "ACTIVE"
    assert table["KeySchema"] == [{"AttributeName": "year", "KeyType": "HASH"},
                                  {"AttributeName": "title", "KeyType": "RANGE"}]
    assert c.describe_time_to_live(TableName="Scratch")["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "ENABLED", "AttributeName": "expiresAt"}
    with pytest.raises(ClientError) as caught:
        c.describe_table(TableName="Orders")
    assert caught.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_creating_a_planned_table_says_it_exists(served):
    """Start-up code that creates its table unless it exists gets DynamoDB's answer."""
    c = served.client()
    with pytest.raises(c.exceptions.ResourceInUseException):
        c.create_table(TableName="Movies", BillingMode="PAY_PER_REQUEST",
                       KeySchema=[{"AttributeName": "year", "KeyType": "HASH"},
                                  {"AttributeName": "title", "KeyType": "RANGE"}],
                       AttributeDefinitions=[{"AttributeName": "year", "AttributeType": "N"},
                                             {"AttributeName": "title", "AttributeType": "S"}])


def test_delete_table_of_a_spec_table_is_refused_saying_why(served):
    """The plan owns the spec's tables (tables an application creates: test_create_table.py)."""
    c = served.client()
    with pytest.raises(ClientError) as caught:
        c.delete_table(TableName="Movies")
    assert caught.value.response["Error"]["Code"] == "ValidationException"
    assert "spec" in caught.value.response["Error"]["Message"]
    assert "Movies" in c.list_tables()["TableNames"]


def test_serve_refuses_an_emulator_stage_without_an_emulator(served):
    env = {k: v for k, v in os.environ.items() if k != "BIGTABLE_EMULATOR_HOST"}
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "serve", "--stage", STAGE, "--root", str(served.root)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "BIGTABLE_EMULATOR_HOST" in out.stderr and "nothing was served" in out.stderr


@pytest.mark.slow
def test_two_workers_serve_the_same_tables(served):
    process, endpoint = start_serve(served.root, STAGE, "--workers", "2")
    try:
        from ..conftest import Served
        client = Served(served.root, endpoint, process).client()
        for n in range(10):  # connections are spread over both workers
            client.put_item(TableName="Scratch", Item={"pk": {"S": "workers"}, "sk": {"N": str(n)}})
        assert client.query(TableName="Scratch", KeyConditionExpression="pk = :p",
                            ExpressionAttributeValues={":p": {"S": "workers"}})["Count"] == 10
    finally:
        stop_process(process)
    assert process.returncode is not None


KEY = {"year": {"N": "2013"}, "title": {"S": "Rush"}}
BAD = [
    ("PutItem", {"TableName": "Movies", "Item": KEY, "ConditionExpression": "a = :undefined"}),
    ("PutItem", {"TableName": "Movies", "Item": KEY, "ConditionExpression": "((("}),
    ("PutItem", {"TableName": "Movies", "Item": KEY, "ConditionExpression": "a = :v",
                 "ExpressionAttributeValues": {":v": "not a typed value"}}),
    ("PutItem", {"TableName": "Movies", "Item": KEY, "ConditionExpression": "#n = :v",
                 "ExpressionAttributeValues": {":v": {"S": "x"}}}),
    ("Query", {"TableName": "Movies", "KeyConditionExpression": "#y = :y", "ExpressionAttributeNames": {"#y": "year"},
               "ExpressionAttributeValues": {":y": {"S": "2013"}}}),
    ("BatchGetItem", {"RequestItems": {"Movies": "x"}}),
    ("TransactWriteItems", {"TransactItems": [{"Put": "x"}]}),
    ("TransactGetItems", {"TransactItems": ["x"]}),
    ("UpdateItem", {"TableName": "Movies", "Key": KEY, "UpdateExpression": "SET a = :v",
                    "ExpressionAttributeValues": {":v": {"N": "x"}}}),
    ("Scan", {"TableName": "Movies", "FilterExpression": "a BETWEEN", "Limit": 1}),
    ("GetItem", {"TableName": "Movies", "Key": KEY, "ProjectionExpression": 5}),
    ("GetItem", {"TableName": "Movies", "Key": KEY, "ProjectionExpression": "title",
                 "ExpressionAttributeNames": {"#unused": "info"}}),
    ("PutItem", {"TableName": "Movies", "Item": KEY, "ExpressionAttributeValues": {":v": {"S": "x"}}}),
    ("UpdateItem", {"TableName": "Movies", "Key": KEY, "UpdateExpression": "SET a = :a",
                    "ExpressionAttributeValues": {":a": {"S": "x"}, ":typo": {"S": "y"}}}),
    ("Scan", {"TableName": "Movies", "Select": "SPECIFIC_ATTRIBUTES", "Limit": 1}),
]


@pytest.mark.parametrize(("operation", "body"), BAD, ids=[f"{i}-{op}" for i, (op, _) in enumerate(BAD)])
def test_a_malformed_request_is_a_validation_error_never_a_500(served, operation, body):
    status, answer = raw(served.endpoint, f"DynamoDB_20120810.{operation}", json.dumps(body).encode())
    assert (status, answer["__type"]) == (400, "com.amazonaws.dynamodb.v20120810#ValidationException"), answer
    assert answer["message"]


def test_connections_of_the_shared_socket_have_nagle_off():
    """`--workers 2` took 48 ms a GetItem (8 with one worker): uvicorn's socket had proto 0,
    so asyncio left Nagle's algorithm on and each response waited for the client's delayed
    ACK. serve's own socket is TCP by protocol number: accepted connections get TCP_NODELAY."""
    import asyncio
    import socket

    from ddb2bigtable.serve.protocol.server import listening_socket

    async def accepted_nodelay() -> int:
        found: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport):
                sock = transport.get_extra_info("socket")
                found.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        sock = listening_socket("127.0.0.1", 0)
        server = await asyncio.get_running_loop().create_server(Probe, sock=sock)
        _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
        value = await asyncio.wait_for(found, 10)
        writer.close()
        server.close()
        return value

    assert asyncio.run(accepted_nodelay()) != 0


def test_a_port_in_use_is_bad_input_in_one_line(served):
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "serve", "--stage", STAGE, "--root",
                              str(served.root), "--port", str(port)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in out.stderr and "serving" not in out.stderr
