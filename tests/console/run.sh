#!/bin/sh
# run.sh MNEMOD_BINARY - the console test in headless Chromium: installs the pinned
# playwright-core (npm ci, only when the lock changed), then runs test_console.mjs.
# Chromium is Debian's package (scripts/deps.sh installs it); screenshots land in
# build/test-artifacts/ (MNEMOD_TEST_ARTIFACTS to change).
set -eu
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "$0")"
if ! cmp -s package-lock.json node_modules/.mnemod-lock 2>/dev/null; then
    npm ci --no-audit --no-fund --loglevel=error
    cp package-lock.json node_modules/.mnemod-lock
fi
MNEMOD_BINARY="$BIN" node --test test_console.mjs
