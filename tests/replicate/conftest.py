"""The replicate tests' DynamoDB Local, one process for the whole session."""

from __future__ import annotations

import pytest

from . import dynamodb_local


@pytest.fixture(scope="session")
def dynamodb():
    """A running DynamoDB Local; fails (never skips) when it is not installed."""
    running = dynamodb_local.start()
    yield running
    running.stop()
