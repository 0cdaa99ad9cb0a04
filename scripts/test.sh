#!/usr/bin/env bash
# The test command of the README (and of CI): the whole suite on the locked environment.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
exec uv run --frozen pytest "$@"
