#!/usr/bin/env bash
# The local servers for rehearsing a migration with no cloud account (DynamoDB Local, moto's
# server, the Bigtable emulator) on 127.0.0.1: `start` prints the AWS_ENDPOINT_URL_*, key
# and BIGTABLE_EMULATOR_HOST variables to export, so use it as
#   eval "$(bash scripts/local-servers.sh start)"
# and `stop` stops them by PID. What it runs and why: scripts/local_servers.py. Everything
# but the variables goes to stderr.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh" >&2
if [ "${1:-}" = start ]; then
  bash scripts/dynamodb_local.sh >&2  # the DynamoDB Local jar, installed once
fi
exec uv run --frozen python scripts/local_servers.py "$@"
