#!/usr/bin/env bash
# The test command of the README (and of CI): the lint (ruff, with its complexity rules)
# and the type check (mypy), both configured in pyproject.toml, then the whole suite on
# the locked environment.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
bash scripts/dynamodb_local.sh  # DynamoDB Local for tests/replicate (installed once)
uv run --frozen ruff check .
uv run --frozen mypy
exec uv run --frozen pytest "$@"
