#!/usr/bin/env bash
# The main job of the README: the `local` stage on the Bigtable emulator. Validates the
# specs, then `ddb2bigtable up --stage local` starts the emulator on 127.0.0.1, creates the
# plan's tables, families and GC rules, loads the shipped DynamoDB exports
# (exports/<table id>/), verifies every item and prints one screen: a line per table and
# where the whole report (the plan, the mapping's notes) was written.
# Extra arguments go to `up` (e.g. --keep-running to use the emulator afterwards, --verbose
# for the whole plan and reports on the terminal).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
uv run --frozen ddb2bigtable validate specs/*.yaml
status=0
uv run --frozen ddb2bigtable up --stage local "$@" || status=$?
echo "The CLI: source .venv/bin/activate (then: ddb2bigtable --help), or .venv/bin/ddb2bigtable" >&2
exit "$status"
