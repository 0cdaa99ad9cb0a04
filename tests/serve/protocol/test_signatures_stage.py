"""`serve --stage S` honours the stage's `serve.signing_regions` and `serve.public_hosts`
without a flag (issue 43): a signature for an added region or name is served, any other
still refused in DynamoDB's words, over raw HTTP and through boto3."""

from __future__ import annotations

import boto3
import pytest
import yaml
from botocore.config import Config

from ddb2bigtable.bigtable.emulator import stop_process
from ddb2bigtable.serve.protocol.signatures import KEYS_ENV

from ..conftest import STAGE, Served, start_serve
from .test_signatures import KEY, SCRATCH, _raw, _signed

SCOPED = "serve-scoped"  # the served stage's settings (instances, tables) with a `serve:` block


@pytest.fixture(scope="module")
def scoped(served):
    stacks = served.root / "stacks"
    stack = yaml.safe_load((stacks / f"Pulumi.{STAGE}.yaml").read_text())
    stack["config"]["ddb2bigtable:stage"]["serve"] = {
        "enabled": True, "signing": "none", "signing_regions": ["eu-central-1"],
        "public_hosts": ["DDB.example.test", "*.edge.example.test:8443"]}
    (stacks / f"Pulumi.{SCOPED}.yaml").write_text(yaml.safe_dump(stack, sort_keys=False))
    process, endpoint = start_serve(served.root, SCOPED, env={KEYS_ENV: f"{KEY[0]}:{KEY[1]}"})
    served.client().put_item(TableName="Scratch", Item={**SCRATCH, "v": {"S": "keep"}})
    yield Served(served.root, endpoint, process)
    stop_process(process)


def _refused(answer: dict) -> str:
    return answer["__type"].split("#")[1]


def test_a_region_the_stage_adds_is_answered_and_no_other(scoped):
    for region in ("eu-central-1", "us-west-2"):  # the stage's signing_regions; its tables' region
        status, answer = _raw(scoped.endpoint, _signed(scoped.endpoint, "GetItem", region=region))
        assert status == 200 and answer["Item"]["v"] == {"S": "keep"}, (region, answer)
    status, answer = _raw(scoped.endpoint, _signed(scoped.endpoint, "DeleteItem", region="eu-west-3"))
    assert (status, _refused(answer)) == (400, "InvalidSignatureException")
    assert answer["message"] == "Credential should be scoped to a valid region, not 'eu-west-3'. "
    sdk = boto3.client("dynamodb", endpoint_url=scoped.endpoint, region_name="eu-central-1",  # an application
                       aws_access_key_id=KEY[0], aws_secret_access_key=KEY[1],  # configured for the added region
                       config=Config(retries={"max_attempts": 1}, connect_timeout=5, read_timeout=30))
    assert sdk.get_item(TableName="Scratch", Key=SCRATCH)["Item"]["v"] == {"S": "keep"}


def test_a_name_the_stage_adds_is_answered_and_no_other(scoped):
    for host in ("ddb.example.test", "pop-7.edge.example.test:8443"):  # the stage wrote DDB.example.test
        status, answer = _raw(scoped.endpoint, _signed(scoped.endpoint, "GetItem", host=host))
        assert status == 200 and answer["Item"]["v"] == {"S": "keep"}, (host, answer)
    for host in ("evil.example", "ddb.example.test.evil.example", "pop-7.edge.example.test",
                 "a.b.edge.example.test:8443"):
        status, answer = _raw(scoped.endpoint, _signed(scoped.endpoint, "DeleteItem", host=host))
        assert (status, _refused(answer)) == (400, "InvalidSignatureException"), (host, answer)
        assert "is not a name this endpoint answers as" in answer["message"]
    assert "Item" in scoped.client(KEY).get_item(TableName="Scratch", Key=SCRATCH, ConsistentRead=True)
