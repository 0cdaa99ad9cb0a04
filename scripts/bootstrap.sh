#!/usr/bin/env bash
# Sourced by the other scripts: puts uv on PATH (installing it into .tools/ from PyPI when
# the machine has none) and syncs the locked environment into .venv/. Needs Python 3.11+.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
UV_VERSION=0.13.9
if ! command -v uv >/dev/null 2>&1; then
  if [ ! -x .tools/bin/uv ]; then
    python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
      || { echo "ddb2bigtable needs Python 3.11 or newer as python3" >&2; exit 2; }
    python3 -m venv .tools
    .tools/bin/python -m pip install --quiet --disable-pip-version-check "uv==${UV_VERSION}"
  fi
  export PATH="$root/.tools/bin:$PATH"
fi
uv sync --frozen --quiet
