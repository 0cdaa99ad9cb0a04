#!/usr/bin/env bash
# Run by scripts/test.sh and scripts/local-servers.sh start (and runnable alone): makes sure
# DynamoDB Local (AWS's emulator, which has streams) is in .tools/dynamodb-local/ for the
# replicate tests and the local rehearsal. Its jar ships in the npm package
# amplify-dynamodb-simulator; only the package's emulator/ folder (64 MB) is kept. Needs
# npm once (to fetch it) and Java 17+ (to run it): a missing one fails with what to install,
# never a skipped test.
#
# Two runs at once (test.sh beside local-servers.sh start) are safe: the install holds
# .tools/dynamodb-local.lock (flock), so the second waits and finds the jar in place; each
# run fetches into a folder of its own (removed when it ends) and renames the emulator into
# place whole, so an interrupted install leaves nothing that counts as installed.
# DDB2BIGTABLE_DYNAMODB_LOCAL_PACKAGE names another npm package spec (a mirror, a tarball).
set -euo pipefail
DYNAMODB_LOCAL_PACKAGE="${DDB2BIGTABLE_DYNAMODB_LOCAL_PACKAGE:-amplify-dynamodb-simulator@2.9.30}"
tools="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.tools"
dynamodb_local="$tools/dynamodb-local"
command -v java >/dev/null 2>&1 \
  || { echo "DynamoDB Local needs Java 17 or newer: install it (e.g. apt-get install openjdk-17-jre-headless)" >&2; exit 2; }
[ -f "$dynamodb_local/DynamoDBLocal.jar" ] && exit 0
command -v npm >/dev/null 2>&1 \
  || { echo "DynamoDB Local is fetched with npm ($DYNAMODB_LOCAL_PACKAGE): install Node.js and npm, or put DynamoDBLocal.jar and DynamoDBLocal_lib/ in $dynamodb_local" >&2; exit 2; }
mkdir -p "$tools"
if command -v flock >/dev/null 2>&1; then  # util-linux, on every Linux; elsewhere the rename below still holds
  exec 9>"$tools/dynamodb-local.lock"
  flock 9
  [ -f "$dynamodb_local/DynamoDBLocal.jar" ] && exit 0  # installed by the run that held the lock
fi
fetch="$(mktemp -d "$tools/dynamodb-local.fetch.XXXXXX")"
trap 'rm -rf "$fetch"' EXIT
echo "Installing DynamoDB Local from npm ($DYNAMODB_LOCAL_PACKAGE) into $dynamodb_local" >&2
(cd "$fetch" && npm install --no-audit --no-fund --silent "$DYNAMODB_LOCAL_PACKAGE" >&2)
rm -rf "$dynamodb_local.partial"  # left by an install before this lock existed
[ -f "$dynamodb_local/DynamoDBLocal.jar" ] || rm -rf "$dynamodb_local"  # a folder without the jar is no install
# one rename: whole or absent (under the lock no other run renames at the same time)
[ -e "$dynamodb_local" ] || mv "$fetch/node_modules/amplify-dynamodb-simulator/emulator" "$dynamodb_local"
[ -f "$dynamodb_local/DynamoDBLocal.jar" ] \
  || { echo "$DYNAMODB_LOCAL_PACKAGE holds no emulator/DynamoDBLocal.jar: nothing was installed in $dynamodb_local" >&2; exit 2; }
