#!/bin/sh
# bench/http/run.sh BUILD_DIR - the http suite (BENCH.md section 4).
exec python3 "$(dirname "$0")/run.py" "${1:-build/release}/mnemod" bench/results/http.json
