#!/usr/bin/env bash
# The main job of the README: the `local` stage on the Bigtable emulator. Validates the
# specs, prints the plan, then `ddb2bigtable up --stage local` starts the emulator on
# 127.0.0.1, creates the plan's tables, families and GC rules, loads the shipped DynamoDB
# exports (exports/<table id>/), verifies every item and prints the report.
# Extra arguments go to `up` (e.g. --keep-running to use the emulator afterwards).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
uv run --frozen ddb2bigtable validate specs/*.yaml
uv run --frozen ddb2bigtable plan --stage local
status=0
uv run --frozen ddb2bigtable up --stage local "$@" || status=$?
echo "The CLI: source .venv/bin/activate (then: ddb2bigtable --help), or .venv/bin/ddb2bigtable" >&2
exit "$status"
