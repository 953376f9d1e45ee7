#!/bin/sh
# openapi-lint.sh - lint api/openapi.json with the @redocly/cli version pinned in
# tools/openapi (package.json + package-lock.json, installed with `npm ci` when missing or
# stale). Exits non-zero on any error.
set -eu
T=tools/openapi
want=$(sed -n 's/.*"@redocly\/cli": *"\([^"]*\)".*/\1/p' "$T/package.json")
have=$(node -p "require('./$T/node_modules/@redocly/cli/package.json').version" 2>/dev/null || true)
if [ "$have" != "$want" ]; then
    echo "openapi-lint: installing @redocly/cli $want (npm ci in $T)" >&2
    (cd "$T" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null)
fi
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
"$T/node_modules/.bin/redocly" lint --config "$T/redocly.yaml" api/openapi.json
