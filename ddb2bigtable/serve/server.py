"""Running the endpoint: uvicorn, one or more worker processes, on a loopback address by
default.

uvicorn (a well-kept ASGI server, pinned in pyproject.toml) binds the socket once and
spawns `workers` processes that share it; each imports the application through
`app.from_environment`, which reads the settings this process put in the environment
(a spawned worker inherits nothing else). The settings are plain JSON: the project root,
the stage, the Bigtable project and each table's recorded attribute types.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..codec.type_inference import AttributeTypes
from .app import CONFIG_ENV

LOOPBACK = "127.0.0.1"
QUIET = "ignore:Connecting to Bigtable emulator:RuntimeWarning"


def run(root: Path, stage: str, project: str, types: dict[str, AttributeTypes], *, host: str = LOOPBACK,
        port: int = 8000, workers: int = 1) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM: uvicorn finishes open requests first)."""
    import uvicorn

    os.environ[CONFIG_ENV] = json.dumps({"root": str(root), "stage": stage, "project": project, "types": types})
    # The client warns "Connecting to Bigtable emulator" in every worker; the user set the variable.
    os.environ["PYTHONWARNINGS"] = ",".join(filter(None, [os.environ.get("PYTHONWARNINGS"), QUIET]))
    uvicorn.run("ddb2bigtable.serve.app:from_environment", factory=True, host=host, port=port, workers=workers,
                log_level="warning", access_log=False, timeout_graceful_shutdown=10, lifespan="on")
