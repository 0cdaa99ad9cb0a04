#!/usr/bin/env bash
# Run by scripts/test.sh (and runnable alone): makes sure shellcheck, the linter of the
# pipelines' shell steps (tests/examples/ci/test_lint.py, which fails without it, never
# skips), is on PATH. Debian's package, as on this machine (bookworm: 0.9.0), installed with
# apt-get when we may (root, or sudo without a password); the package lists are refreshed only
# when they lack it. Elsewhere it says what to install and fails (exit 2).
set -euo pipefail
command -v shellcheck >/dev/null 2>&1 && exit 0
apt=()
if [ "$(id -u)" = 0 ]; then
  apt=(apt-get)
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  apt=(sudo -n apt-get)
fi
if [ "${#apt[@]}" = 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "the tests lint the pipelines with shellcheck: install it (apt-get install shellcheck, brew install shellcheck; https://github.com/koalaman/shellcheck#installing)" >&2
  exit 2
fi
echo "Installing shellcheck with apt-get" >&2
"${apt[@]}" install -y -qq shellcheck >/dev/null \
  || { "${apt[@]}" update -qq && "${apt[@]}" install -y -qq shellcheck >/dev/null; }
command -v shellcheck >/dev/null 2>&1 \
  || { echo "apt-get installed no shellcheck: install it by hand (apt-get install shellcheck)" >&2; exit 2; }
