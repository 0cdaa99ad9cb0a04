"""The live-import tests' servers, one of each for the session, stopped by PID: DynamoDB
Local (the replicate tests' helper) and a moto server. Both fail loudly, never skip."""

from __future__ import annotations

import pytest

from ..replicate import dynamodb_local
from . import moto_server


@pytest.fixture(scope="session")
def dynamodb_local_server():
    running = dynamodb_local.start()
    yield running
    running.stop()


@pytest.fixture(scope="session")
def moto():
    running = moto_server.start()
    yield running
    running.stop()


@pytest.fixture
def aws_env(monkeypatch, tmp_path):
    """Throw-away credentials and no profile, instance metadata or endpoint variables: the
    tests reach only the servers they name."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL",
                 "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_CLOUDWATCH",
                 "AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return monkeypatch
