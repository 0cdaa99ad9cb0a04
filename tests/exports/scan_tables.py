"""DynamoDB Local tables for the export tests: every attribute type, N items."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any


def every_type_item(i: int) -> dict[str, Any]:
    """An item holding every DynamoDB type, as a low-level client returns it (B as bytes)."""
    return {
        "pk": {"S": f"customer-{i % 37:03d}"}, "sk": {"N": str(i)},
        "name": {"S": f"name {i} é#"}, "price": {"N": f"{i}.25"}, "blob": {"B": bytes([i % 256, 0, 255])},
        "active": {"BOOL": i % 2 == 0}, "nothing": {"NULL": True},
        "tags": {"SS": sorted({f"t{i % 5}", "all"})}, "scores": {"NS": sorted({str(i), "-1.5"})},
        "blobs": {"BS": [b"\x01", bytes([i % 200 + 2])]},
        "address": {"M": {"city": {"S": "Lyon"}, "zip": {"N": str(69000 + i % 10)}, "flags": {"L": [{"BOOL": True}]}}},
        "history": {"L": [{"S": "created"}, {"N": str(i)}, {"M": {"by": {"S": "app"}}}]},
    }


def make_table(client: Any, name: str, count: int, *, stream: bool = False) -> list[dict[str, Any]]:
    """A provisioned table (100 RCU) keyed pk (S) + sk (N) holding `count` items of every type."""
    spec: dict[str, Any] = {"StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}} \
        if stream else {}
    client.create_table(TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                                   {"AttributeName": "sk", "KeyType": "RANGE"}],
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                              {"AttributeName": "sk", "AttributeType": "N"}],
                        ProvisionedThroughput={"ReadCapacityUnits": 100, "WriteCapacityUnits": 100}, **spec)
    items = [every_type_item(i) for i in range(count)]
    for start in range(0, count, 25):
        client.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": item}}
                                                     for item in items[start:start + 25]]})
    return items


def killed_after_files(export: subprocess.Popen, checkpoint: Path, files: int = 2) -> dict[str, Any]:
    """SIGKILL a running `export` once its checkpoint records `files` finished data files (with
    more to come), and return the checkpoint as the kill left it."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done = json.loads(checkpoint.read_text())["segments"] if checkpoint.exists() else []
        if sum(len(s["files"]) for s in done) >= files:
            break
        time.sleep(0.05)
    export.send_signal(signal.SIGKILL)
    export.wait(10)
    saved: dict[str, Any] = json.loads(checkpoint.read_text())
    return saved
