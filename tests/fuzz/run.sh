#!/bin/sh
# run.sh [SECONDS] [TARGET...] - run the libFuzzer targets of tests/fuzz/ for SECONDS each
#
# Builds them first when needed (make fuzz-build). Each target starts from its seed corpus
# (tests/fuzz/corpus/<t>/ or tests/fuzz/corpus-<t>/, copied to a scratch directory so the tree is not modified) and
# its dictionary, after replaying every saved reproducer in tests/fuzz/regress/<t>/ (a
# crash that was found once must stay fixed). Exits non-zero if any target finds a crash,
# a leak, a sanitizer report or a timeout; the reproducer is left in build/fuzz/findings/.
#
#   sh tests/fuzz/run.sh            # 10 s each (what `make test` runs)
#   sh tests/fuzz/run.sh 600 request decode
#   FUZZ_JOBS=2 sh tests/fuzz/run.sh 3600   # longer campaign, 2 workers per target
SECS=${1:-10}
[ $# -gt 0 ] && shift
DEFAULT="request decode router timefmt config provider json filter cluster"
[ -f "$(dirname "$0")/fuzz_api.c" ] && DEFAULT="$DEFAULT apifake"   # tests/fuzz/fuzz_api.c
DEFAULT="$DEFAULT ndjson"   # tests/fuzz/fuzz_ndjson.c (import lines, over the fake store)
DEFAULT="$DEFAULT http"     # tests/fuzz/fuzz_http.c (raw bytes into the real server loop)
TARGETS=${*:-$DEFAULT}
JOBS=${FUZZ_JOBS:-1}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
if ! command -v clang >/dev/null 2>&1; then
    echo "fuzz: SKIP (clang not installed)"
    exit 0
fi
make --no-print-directory fuzz-build >/dev/null || { echo "fuzz: build failed"; exit 1; }
mkdir -p build/fuzz/findings
failed=""
for t in $TARGETS; do
    bin=build/fuzz/fuzz_$t
    [ -x "$bin" ] || { echo "fuzz $t: no binary"; failed="$failed $t"; continue; }
    dict=""
    [ -f tests/fuzz/$t.dict ] && dict="-dict=tests/fuzz/$t.dict"
    # 1. regressions: every saved reproducer must run clean
    if [ -d tests/fuzz/regress/$t ] && [ -n "$(ls tests/fuzz/regress/$t)" ]; then
        if ! "$bin" $dict -runs=1 tests/fuzz/regress/$t/* </dev/null >build/fuzz/findings/$t.regress.log 2>&1; then
            echo "fuzz $t: REGRESSION (see build/fuzz/findings/$t.regress.log)"
            failed="$failed $t"
            continue
        fi
    fi
    # 2. a bounded run from the seed corpus
    work=$(mktemp -d /tmp/mnemod-fuzz-corpus-XXXXXX)
    [ -d tests/fuzz/corpus/$t ] && cp tests/fuzz/corpus/$t/* "$work"/ 2>/dev/null
    [ -d tests/fuzz/corpus-$t ] && cp tests/fuzz/corpus-$t/* "$work"/ 2>/dev/null
    [ "$t" = apifake ] && [ -d tests/fuzz/corpus-api ] && cp tests/fuzz/corpus-api/* "$work"/ 2>/dev/null
    [ -d build/fuzz/corpus/$t ] && cp build/fuzz/corpus/$t/* "$work"/ 2>/dev/null
    extra=""
    [ "$JOBS" -gt 1 ] && extra="-fork=$JOBS -ignore_crashes=0"
    log=build/fuzz/findings/$t.log
    if "$bin" $dict $extra -max_total_time="$SECS" -timeout=20 -rss_limit_mb=4096 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix=build/fuzz/findings/$t- "$work" </dev/null >"$log" 2>&1; then
        stats=$(grep -aE '^(stat::number_of_executed_units|#[0-9]+.*DONE)' "$log" | tail -1)
        execs=$(grep -aE '^stat::number_of_executed_units' "$log" | awk '{print $2}')
        cov=$(grep -aoE 'cov: [0-9]+' "$log" | tail -1)
        echo "fuzz $t: ok, ${SECS}s, ${execs:-?} runs, $cov, corpus $(ls "$work" | wc -l)"
        # keep what was learned for the next run (not in the tree)
        mkdir -p build/fuzz/corpus/$t && cp "$work"/* build/fuzz/corpus/$t/ 2>/dev/null
    else
        echo "fuzz $t: FAILED (log $log; reproducer build/fuzz/findings/$t-*)"
        grep -aE 'ERROR|SUMMARY|fuzz check failed' "$log" | head -5
        failed="$failed $t"
    fi
    rm -rf "$work"
done
[ -n "$failed" ] && { echo "fuzz: failed:$failed"; exit 1; }
echo "fuzz: all targets ok"
exit 0
