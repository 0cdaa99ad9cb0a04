#!/usr/bin/env bash
# Run by scripts/test.sh (and runnable alone): makes sure DynamoDB Local (AWS's emulator, which has streams)
# is in .tools/dynamodb-local/ for the replicate tests. Its jar ships in the npm package
# amplify-dynamodb-simulator; only the package's emulator/ folder (64 MB) is kept. Needs
# npm once (to fetch it) and Java 17+ (to run it): a missing one fails with what to install,
# never a skipped test.
set -euo pipefail
DYNAMODB_LOCAL_PACKAGE="amplify-dynamodb-simulator@2.9.30"
dynamodb_local="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.tools/dynamodb-local"
command -v java >/dev/null 2>&1 \
  || { echo "DynamoDB Local needs Java 17 or newer: install it (e.g. apt-get install openjdk-17-jre-headless)" >&2; exit 2; }
if [ ! -f "$dynamodb_local/DynamoDBLocal.jar" ]; then
  command -v npm >/dev/null 2>&1 \
    || { echo "DynamoDB Local is fetched with npm ($DYNAMODB_LOCAL_PACKAGE): install Node.js and npm, or put DynamoDBLocal.jar and DynamoDBLocal_lib/ in $dynamodb_local" >&2; exit 2; }
  fetch="$(mktemp -d)"
  echo "Installing DynamoDB Local from npm ($DYNAMODB_LOCAL_PACKAGE) into $dynamodb_local" >&2
  (cd "$fetch" && npm install --no-audit --no-fund --silent "$DYNAMODB_LOCAL_PACKAGE" >&2)
  rm -rf "$dynamodb_local.partial"
  mkdir -p "$(dirname "$dynamodb_local")"
  mv "$fetch/node_modules/amplify-dynamodb-simulator/emulator" "$dynamodb_local.partial"
  mv "$dynamodb_local.partial" "$dynamodb_local"  # whole or absent: an interrupted install is redone
  rm -rf "$fetch"
fi
