#!/usr/bin/env bash
# The test command of the README (and of CI): the lint (ruff, with its complexity rules)
# and the type check (mypy), both configured in pyproject.toml, then the tests on the
# locked environment.
#
#   bash scripts/test.sh              what CI runs: every test (README, "Tests", says how long)
#   bash scripts/test.sh --quick      before pushing: the same lint and types, the tests not
#                                     marked slow (end-to-end runs against local servers)
#   bash scripts/test.sh tests/load   arguments after the options go to pytest as they are
#
# The tests run in DDB2BIGTABLE_TEST_WORKERS processes (pytest-xdist, default 3; 0 runs
# them in this one): each test file stays in one process (--dist loadfile), so a file's
# servers start once, and every server a test starts listens on a free port of its own.
# Most of a test's time is waiting on a server or a subprocess, so three processes keep a
# two-core machine busy without starving the servers.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
# Bytecode for the environment and the package, written once: the suite starts many Python
# processes (the CLI, serve), and where PYTHONDONTWRITEBYTECODE is set (CI machines often set
# it) each one compiled some 1,650 modules again. Measured: serve's imports 5-6 s -> 1.4 s,
# tests/cli/test_process_state.py with tests/plan/test_plan_features.py 26.6 s -> 5.8 s.
uv sync --frozen --quiet --compile-bytecode
uv run --frozen python -m compileall -q ddb2bigtable >/dev/null
quick=()
if [ "${1:-}" = --quick ]; then
  quick=(-m "not slow")
  shift
fi
bash scripts/dynamodb_local.sh  # DynamoDB Local for tests/replicate (installed once)
bash scripts/js_streams_client.sh  # the JavaScript SDK's DynamoDB Streams client (installed once)
bash scripts/shellcheck.sh  # the pipelines' shell linter, for tests/examples/ci (installed once)
uv run --frozen ruff check .
uv run --frozen mypy
workers="${DDB2BIGTABLE_TEST_WORKERS:-3}"
parallel=()
if [ "$workers" != 0 ]; then
  parallel=(-n "$workers" --dist loadfile)
fi
# ${a[@]+"${a[@]}"}: an empty array under set -u on the bash 3.2 of macOS too
exec uv run --frozen pytest ${parallel[@]+"${parallel[@]}"} ${quick[@]+"${quick[@]}"} "$@"
