#!/bin/sh
# run.sh BUILD_DIR - run every bench binary (repo root as cwd), then the HTTP and cluster suites.
# Benches measure and never fail the build: a failing bench is reported, not fatal.
# Env: BENCH_FULL=1 adds 1M x 768 to scale; BENCH_SCALE_MAX_N caps its N; MNEMOD_SIMD
# forces a kernel ISA.
B=${1:-build/release}
cd "$(dirname "$0")/.." || exit 0
mkdir -p bench/results
for b in "$B"/bench/bench_*; do
    [ -x "$b" ] || continue
    echo "== $(basename "$b")"
    start=$(date +%s)
    "$b" || echo "bench $(basename "$b") exited with status $? (not fatal)"
    echo "   ($(( $(date +%s) - start )) s)"
done
if [ -f bench/http/run.sh ]; then
    echo "== http"
    sh bench/http/run.sh "$B" || echo "bench/http/run.sh exited with status $? (not fatal)"
fi
# py_suite TITLE SCRIPT ARGS... - one Python suite, when its script exists; never fatal.
py_suite() {
    title=$1 script=$2
    shift 2
    [ -f "$script" ] || return 0
    echo "== $title"
    python3 "$script" "$@" || echo "$script exited with status $? (not fatal)"
}
py_suite "ingest over HTTP (INGEST_N=${INGEST_N:-100000})" bench/http/ingest.py "$B/mnemod" \
    bench/results/ingest_http.json
py_suite "import (BENCH_IMPORT_N=${BENCH_IMPORT_N:-20000})" bench/http/import.py "$B/mnemod" \
    bench/results/import.json
py_suite "cluster" bench/cluster/run.py "$B/mnemod" bench/results/cluster.json
py_suite "cluster scale" bench/cluster/scale.py "$B/mnemod" bench/results/cluster_scale.json
# after http: the peers are reported as ratios to this run's latency figures too
py_suite "peers" bench/peers/run.py "$B" bench/results/peers.json
export BENCH_TEXT_N="${BENCH_TEXT_N:-20000}"
py_suite "text over HTTP (BENCH_TEXT_N=$BENCH_TEXT_N)" bench/http/text.py "$B/mnemod" \
    bench/results/text_http.json
echo "results in bench/results/"
exit 0
