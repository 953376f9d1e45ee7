#!/bin/sh
# run.sh BUILD_DIR [all|unit|e2e] [SUITE...] - allocation-failure injection (make fault)
#
# unit: every unit binary of BUILD_DIR (a FLAVOR=fault build) under MEM_FAULT_UNIT=1: each
#       test is run once clean, then with its 1st, 2nd, ... Nth allocation failing until a
#       run ends without reaching N (tests/fault/fault_cmocka.c). FAULT_MAX_RUNS bounds the
#       runs per test (0: all; beyond it the N are spread evenly, FAULT_SEED shifts them).
# e2e:  tests/fault/test_fault_e2e.py against BUILD_DIR/mnemod: the real daemon with every
#       Kth allocation failing while requests run, then checked for a correct recovery.
# SUITE names (test_core_index ...) restrict the unit part. Prints one closing line and exits
# non-zero on any finding; the log of each finding stays in BUILD_DIR/logs.
B=${1:?build dir}
WHAT=${2:-all}
[ $# -ge 2 ] && shift 2 || shift $#
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export MEM_FAULT_LOGDIR="$ROOT/$B/logs"
export MEM_FAULT_MAX_RUNS=${FAULT_MAX_RUNS:-0}
export MEM_FAULT_SEED=${FAULT_SEED:-1}
mkdir -p "$MEM_FAULT_LOGDIR"
passed=0
failed=0
failures=""
start=$(date +%s)
if [ "$WHAT" = all ] || [ "$WHAT" = unit ]; then
    for t in "$B"/tests/unit/test_*; do
        [ -x "$t" ] || continue
        name=$(basename "$t")
        if [ $# -gt 0 ]; then
            case " $* " in *" $name "*) ;; *) continue ;; esac
        fi
        echo "== fault unit: $name (max runs per test: $MEM_FAULT_MAX_RUNS)"
        # the suite's own output goes to the per-run logs; the driver's lines come here
        out="$MEM_FAULT_LOGDIR/$name.out"
        MEM_FAULT_UNIT=1 "$t" >"$out" 2>&1
        rc=$?
        grep -a '^mnemod-fault: .*\(allocations,\|FINDING\|unverified\|runs,\)' "$out"
        if [ $rc -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); failures="$failures $name"; fi
    done
fi
if [ "$WHAT" = all ] || [ "$WHAT" = e2e ]; then
    echo "== fault e2e: test_fault_e2e.py"
    if python3 tests/fault/test_fault_e2e.py "$B/mnemod"; then passed=$((passed + 1)); else
        failed=$((failed + 1)); failures="$failures test_fault_e2e"; fi
fi
[ -n "$failures" ] && echo "fault: failed:$failures"
echo "fault: $passed passed, $failed failed, $(( $(date +%s) - start )) s"
[ "$failed" -eq 0 ]
