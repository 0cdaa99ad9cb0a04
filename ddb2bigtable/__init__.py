"""ddb2bigtable: DynamoDB workloads onto Cloud Bigtable (README.md, docs/)."""

import os

# A load forks helper processes that never use gRPC (load/encoder.py: inference and encoding).
# gRPC's fork handlers would only pause its threads around each fork and log "skipping
# fork() handlers" when a call is in flight; they stay off unless the user turns them on.
# gRPC reads this when it is first imported, so this package is imported before it (the
# CLI, tests/conftest.py, the benchmarks).
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")
