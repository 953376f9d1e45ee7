#!/bin/sh
# bench/http/run.sh BUILD_DIR - the http suite (BENCH.md section 4), then the latency suite
# (what HTTP adds to one retrieve, next to the in-process scan of the same run).
B=${1:-build/release}
python3 "$(dirname "$0")/run.py" "$B/mnemod" bench/results/http.json
status=$?
python3 "$(dirname "$0")/latency.py" "$B" bench/results/latency.json || status=$?
exit $status
