#!/bin/sh
# run.sh MNEMOD_BINARY - install the pinned dev dependencies (npm ci, only when the lock
# changed), compile, then run the Node test suites against that binary.
set -eu
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "$0")/.."
if ! cmp -s package-lock.json node_modules/.mnemod-lock 2>/dev/null; then
    npm ci --no-audit --no-fund --loglevel=error
    cp package-lock.json node_modules/.mnemod-lock
fi
./node_modules/.bin/tsc -p tsconfig.json
MNEMOD_BINARY="$BIN" node --test test/*.test.mjs
