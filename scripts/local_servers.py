"""The local servers a migration is rehearsed on, with no AWS or Google Cloud account:
DynamoDB Local (tables, streams, TTL), moto in server mode (CloudWatch, Application Auto
Scaling: what DynamoDB Local lacks) and the Bigtable emulator, on 127.0.0.1 and free
ports, started and stopped by their PIDs.

    eval "$(bash scripts/local-servers.sh start)"   # starts them, prints the variables to export
    bash scripts/local-servers.sh stop              # stops them (by PID)

They are started by the code the tests start them with (tests/replicate/dynamodb_local.py,
tests/sources/moto_server.py, both through tests/local_servers.py; the engine's
bigtable/emulator.py), so the rehearsal runs exactly the servers the tests run. They keep
their data in memory: it is gone when they stop. The PIDs, commands and ports are kept in
.ddb2bigtable/local-servers.json (0600); `stop` stops a PID only while it still runs the
command recorded there, so a PID reused by another process is never signalled.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ddb2bigtable.bigtable import emulator  # noqa: E402
from ddb2bigtable.bigtable.emulator import EMULATOR_ENV, EmulatorError  # noqa: E402
from ddb2bigtable.load.work_folder import private_dir, replace_private  # noqa: E402

STATE = ROOT / ".ddb2bigtable" / "local-servers.json"
REGION = "us-east-1"


def _variables(dynamodb: str, moto: str, bigtable: str) -> list[str]:
    """What a shell must export for boto3, the Bigtable client and so every ddb2bigtable
    command to use them."""
    return [f"export {EMULATOR_ENV}={bigtable}",
            f"export AWS_ENDPOINT_URL_DYNAMODB={dynamodb}", f"export AWS_ENDPOINT_URL_DYNAMODB_STREAMS={dynamodb}",
            f"export AWS_ENDPOINT_URL_CLOUDWATCH={moto}", f"export AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING={moto}",
            "export AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local",  # any key: neither server checks it
            f"export AWS_DEFAULT_REGION={REGION} AWS_REGION={REGION}"]


def _running(entry: dict) -> bool:
    """The recorded PID still runs the recorded command (not a stranger that reused it)."""
    try:
        cmdline = Path(f"/proc/{entry['pid']}/cmdline").read_bytes().split(b"\0")[:-1]
    except OSError:
        return False
    return [part.decode(errors="replace") for part in cmdline] == entry["command"]


def start() -> int:
    if STATE.exists():
        saved = json.loads(STATE.read_text())
        if all(_running(entry) for entry in saved["servers"]):
            print("# already running (bash scripts/local-servers.sh stop stops them)", file=sys.stderr)
            print("\n".join(_variables(saved["dynamodb"], saved["moto"], saved["bigtable"])))
            return 0
        stop()  # one of them is gone: start both afresh
    from tests.replicate import dynamodb_local
    from tests.sources import moto_server

    started: list = []
    try:
        started.append(("DynamoDB Local", dynamodb_local.start()))
        started.append(("moto", moto_server.start()))
        bigtable = emulator.start()
        started.append(("the Bigtable emulator", bigtable))
    except (RuntimeError, EmulatorError) as error:
        for _, server in started:
            server.stop()
        print(f"error: {error}", file=sys.stderr)
        return 2
    (_, dynamodb), (_, moto) = started[:2]
    servers = [{"name": name, "pid": server.process.pid, "command": [str(a) for a in server.process.args]}
               for name, server in started]
    private_dir(STATE.parent)
    replace_private(STATE, json.dumps({"dynamodb": dynamodb.endpoint, "moto": moto.endpoint,
                                       "bigtable": bigtable.address, "servers": servers}))
    print("# " + ", ".join(f"{name} (pid {server.process.pid})" for name, server in started)
          + " on 127.0.0.1; stop them: bash scripts/local-servers.sh stop", file=sys.stderr)
    print("\n".join(_variables(dynamodb.endpoint, moto.endpoint, bigtable.address)))
    return 0


def stop() -> int:
    if not STATE.exists():
        print("nothing to stop: no servers started by scripts/local-servers.sh", file=sys.stderr)
        return 0
    for entry in json.loads(STATE.read_text())["servers"]:
        if not _running(entry):
            continue
        os.kill(entry["pid"], signal.SIGTERM)
        deadline = time.monotonic() + 10
        while _running(entry) and time.monotonic() < deadline:
            time.sleep(0.1)
        if _running(entry):
            os.kill(entry["pid"], signal.SIGKILL)
        print(f"stopped {entry['name']} (pid {entry['pid']})", file=sys.stderr)
    STATE.unlink()
    return 0


if __name__ == "__main__":
    commands = {"start": start, "stop": stop}
    if len(sys.argv) != 2 or sys.argv[1] not in commands:
        print("usage: bash scripts/local-servers.sh start|stop", file=sys.stderr)
        sys.exit(2)
    sys.exit(commands[sys.argv[1]]())
