"""The `ddb2bigtable` command line (exit codes: 0 ok, 1 a check failed, 2 bad input).

- `app.main`: the click group; one module per command group registers into it.
- `plan` (`validate`, `plan`), `diff`, `load` (`load`, `verify`, `up`; they run `load_runs`).
- `output.report_error`: any engine error as a message and its exit code (`app` calls it for every command).
"""

import os

# This package is the program: its process forks encoders (load/encoder.py says why fork),
# so it turns gRPC's fork handlers off before anything imports gRPC (read once, at import).
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")
