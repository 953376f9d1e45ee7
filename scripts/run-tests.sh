#!/bin/sh
# run-tests.sh BUILD_DIR [unit|lint|e2e|cluster|fuzz|fault|clients] - run every unit binary, the
# OpenAPI lint, then the end-to-end suites, three cluster suites, the fuzz replay, a quick pass of
# allocation-failure injection, the clients, the command line and the console.
# Prints one closing line "N passed, N failed" (suites counted) and exits non-zero on any failure.
B=${1:?build dir}
WHAT=${2:-all}
passed=0
failed=0
failures=""
run() { # name, command...
    name=$1; shift
    if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); failures="$failures $name"; fi
}
if [ "$WHAT" = all ] || [ "$WHAT" = unit ]; then
    for t in "$B"/tests/unit/test_*; do
        [ -x "$t" ] || continue
        echo "== unit: $(basename "$t")"
        run "$(basename "$t")" timeout 600 "$t"
    done
fi
if [ "$WHAT" = all ] || [ "$WHAT" = lint ]; then
    echo "== lint: api/openapi.json (@redocly/cli, pinned in tools/openapi)"
    run openapi-lint sh scripts/openapi-lint.sh
fi
if [ "$WHAT" = all ] || [ "$WHAT" = e2e ]; then
    for t in tests/e2e/test_*.py; do
        [ -e "$t" ] || continue
        echo "== e2e: $(basename "$t")"
        run "$(basename "$t")" timeout 900 python3 "$t" "$B/mnemod"
    done
fi
if [ "$WHAT" = all ] || [ "$WHAT" = cluster ]; then
    # the lean part of `make cluster-test`: a real nats-server and real nodes on loopback
    for t in tests/cluster/test_outage.py tests/cluster/test_import.py tests/cluster/test_upgrade.py; do
        echo "== cluster: $(basename "$t")"
        run "$(basename "$t")" timeout 600 python3 "$t" "$B/mnemod"
    done
fi
if { [ "$WHAT" = all ] && [ "$B" = build/release ]; } || [ "$WHAT" = fuzz ]; then
    # libFuzzer with ASan+UBSan: replays every saved crash input, then each target briefly
    echo "== fuzz: tests/fuzz/run.sh ${FUZZ_SECONDS:-10}"
    run fuzz sh tests/fuzz/run.sh "${FUZZ_SECONDS:-10}"
fi
if { [ "$WHAT" = all ] && [ "$B" = build/release ]; } || [ "$WHAT" = fault ]; then
    # the API and embedder suites with their allocations failing in turn (a bounded sample
    # of each test's; `make fault` runs them all), then the daemon under failing allocations
    echo "== fault: make fault-quick"
    run fault make --no-print-directory fault-quick
fi
if { [ "$WHAT" = all ] && [ "$B" = build/release ]; } || [ "$WHAT" = clients ]; then
    # the clients, the CLI and the console, each against the real binary it starts
    echo "== clients: python (clients/python/tests)"
    run client-python env MNEMOD_BINARY="$B/mnemod" timeout 600 \
        python3 -m unittest discover -s clients/python/tests
    echo "== clients: typescript + LangChain.js (clients/typescript/test)"
    run client-typescript timeout 900 sh clients/typescript/test/run.sh "$B/mnemod"
    echo "== clients: web console in headless Chromium (tests/console)"
    run console timeout 600 sh tests/console/run.sh "$B/mnemod"
fi
if [ "$WHAT" = all ] && [ "$B" = build/release ]; then
    echo "== install: test_install.sh"
    run test_install.sh sh tests/install/test_install.sh
fi
[ -n "$failures" ] && echo "failed suites:$failures"
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
