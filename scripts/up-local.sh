#!/usr/bin/env bash
# The main job of the README: the `local` stage. For now (issue #2) it validates the specs
# and prints the local stage's plan; the data load on the emulator extends it (issue #4).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
uv run --frozen ddb2bigtable validate specs/*.yaml
exec uv run --frozen ddb2bigtable plan --stage local "$@"
