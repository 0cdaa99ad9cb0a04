#!/usr/bin/env bash
# Run by scripts/test.sh (and runnable alone): makes sure the JavaScript SDK v3's DynamoDB
# Streams client (@aws-sdk/client-dynamodb-streams, from npm) is in .tools/js-streams-client/
# for tests/serve/streams' side-by-side read of serve's stream and DynamoDB Local's through
# the clients applications use (issue #52). Needs npm once (to fetch it) and Node.js 18+ (to
# run it, the SDK's floor): a missing one fails with what to install, never a skipped test.
#
# As scripts/dynamodb_local.sh: two runs at once are safe (flock on
# .tools/js-streams-client.lock), each fetches into a folder of its own and renames it into
# place whole, so an interrupted install leaves nothing that counts as installed.
# DDB2BIGTABLE_JS_STREAMS_PACKAGE names another npm package spec (a mirror, a tarball).
set -euo pipefail
JS_STREAMS_PACKAGE="${DDB2BIGTABLE_JS_STREAMS_PACKAGE:-@aws-sdk/client-dynamodb-streams@3.1141.0}"
tools="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.tools"
client="$tools/js-streams-client"
installed="$client/node_modules/@aws-sdk/client-dynamodb-streams/package.json"
command -v node >/dev/null 2>&1 \
  || { echo "the JavaScript SDK's DynamoDB Streams client needs Node.js 18 or newer: install it (e.g. apt-get install nodejs npm)" >&2; exit 2; }
[ -f "$installed" ] && exit 0
command -v npm >/dev/null 2>&1 \
  || { echo "the JavaScript SDK is fetched with npm ($JS_STREAMS_PACKAGE): install npm" >&2; exit 2; }
mkdir -p "$tools"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$tools/js-streams-client.lock"
  flock 9
  [ -f "$installed" ] && exit 0  # installed by the run that held the lock
fi
fetch="$(mktemp -d "$tools/js-streams-client.fetch.XXXXXX")"
trap 'rm -rf "$fetch"' EXIT
echo "Installing $JS_STREAMS_PACKAGE from npm into $client" >&2
(cd "$fetch" && npm install --no-audit --no-fund --silent "$JS_STREAMS_PACKAGE" >&2)
[ -f "$fetch/node_modules/@aws-sdk/client-dynamodb-streams/package.json" ] \
  || { echo "$JS_STREAMS_PACKAGE installed no @aws-sdk/client-dynamodb-streams: nothing was installed in $client" >&2; exit 2; }
rm -rf "$client"  # a folder without the client is no install
mv "$fetch" "$client"  # one rename: whole or absent
trap - EXIT
