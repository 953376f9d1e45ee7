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
if [ -f bench/http/ingest.py ]; then
    echo "== ingest over HTTP (INGEST_N=${INGEST_N:-100000})"
    python3 bench/http/ingest.py "$B/mnemod" bench/results/ingest_http.json ||
        echo "bench/http/ingest.py exited with status $? (not fatal)"
fi
if [ -f bench/http/import.py ]; then
    echo "== import (BENCH_IMPORT_N=${BENCH_IMPORT_N:-20000})"
    python3 bench/http/import.py "$B/mnemod" bench/results/import.json ||
        echo "bench/http/import.py exited with status $? (not fatal)"
fi
if [ -f bench/cluster/run.py ]; then
    echo "== cluster"
    python3 bench/cluster/run.py "$B/mnemod" bench/results/cluster.json ||
        echo "bench/cluster/run.py exited with status $? (not fatal)"
fi
if [ -f bench/cluster/scale.py ]; then
    echo "== cluster scale"
    python3 bench/cluster/scale.py "$B/mnemod" bench/results/cluster_scale.json ||
        echo "bench/cluster/scale.py exited with status $? (not fatal)"
fi
if [ -f bench/peers/run.py ]; then
    # after http: the peers are reported as ratios to this run's latency figures too
    echo "== peers"
    python3 bench/peers/run.py "$B" bench/results/peers.json ||
        echo "bench/peers/run.py exited with status $? (not fatal)"
fi
if [ -f bench/http/text.py ]; then
    echo "== text over HTTP (BENCH_TEXT_N=${BENCH_TEXT_N:-20000})"
    BENCH_TEXT_N=${BENCH_TEXT_N:-20000} python3 bench/http/text.py "$B/mnemod" \
        bench/results/text_http.json || echo "bench/http/text.py exited with status $? (not fatal)"
fi
echo "results in bench/results/"
exit 0
