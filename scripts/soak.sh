#!/bin/sh
# soak.sh BINARY [SECONDS] - bounded soak: mixed wrk load on loopback, RSS sampled every 10 s
#
# Starts BINARY on a free loopback port with a temporary data directory, seeds one
# namespace, then runs wrk (scripts/soak.lua: inserts, retrieves, and a compaction with
# purge every 200 requests, so the data stays bounded) for SECONDS (default 300). Prints
# the RSS series and fails when: any request errs or answers non-2xx, the server dies,
# does not stop cleanly on SIGTERM, or its RSS keeps growing after warm-up (the mean of the
# last third of the samples is more than 10 % and 4 MiB above the mean of the samples
# right after warm-up, the first 60 s). SOAK_MIX=read runs retrieves and dry-run
# compactions only over 3000 seeded segments (no data growth at all).
#   make soak                      # 300 s
#   sh scripts/soak.sh build/release/mnemod 60
BIN=${1:?usage: soak.sh BINARY [SECONDS]}
SECS=${2:-300}
THREADS=${SOAK_THREADS:-2}
CONNS=${SOAK_CONNECTIONS:-16}
command -v wrk >/dev/null 2>&1 || { echo "soak: wrk not installed"; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=$(mktemp -d /tmp/mnemod-soak-XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT
"$BIN" --listen 127.0.0.1:$PORT --data "$DIR/soak.db" --log-level warn 2>"$DIR/stderr.log" &
PID=$!
cleanup() { kill -9 $PID 2>/dev/null; rm -rf "$DIR"; }
trap cleanup EXIT INT TERM HUP PIPE
i=0
until curl -sf "$URL/healthz" >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -gt 200 ] && { echo "soak: server did not start"; cat "$DIR/stderr.log"; exit 1; }
    sleep 0.1
done
curl -sf -X PUT -H 'Content-Type: application/json' -d '{"dim":64}' "$URL/v1/namespaces/soak" >/dev/null ||
    { echo "soak: cannot create the namespace"; exit 1; }
if [ "${SOAK_MIX:-full}" = read ]; then   # data for the read-only mix
    python3 - "$URL" <<'PY' || { echo "soak: cannot seed"; exit 1; }
import json, random, sys, urllib.request
rng = random.Random(1)
for b in range(3):
    segs = [{"embedding": [rng.uniform(-1, 1) for _ in range(64)], "source": "soak"} for _ in range(1000)]
    req = urllib.request.Request(sys.argv[1] + "/v1/namespaces/soak/segments", json.dumps({"segments": segs}).encode(),
                                 {"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=60).read()
PY
fi
rss() { awk '/^VmRSS/ {print int($2 / 1024)}' /proc/$PID/status 2>/dev/null; }
echo "soak: pid $PID port $PORT, ${SECS}s, wrk -t$THREADS -c$CONNS, RSS (MiB) every 10 s"
wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" --timeout 10s -s "$ROOT/scripts/soak.lua" "$URL" >"$DIR/wrk.out" 2>"$DIR/wrk.err" &
WRK=$!
: >"$DIR/rss"
t=0
while kill -0 $WRK 2>/dev/null; do
    sleep 10
    t=$((t + 10))
    r=$(rss)
    [ -z "$r" ] && { echo "soak: the server died at ${t}s"; tail -20 "$DIR/stderr.log"; exit 1; }
    echo "$t $r" >>"$DIR/rss"
    printf '  t=%4ss rss=%s MiB\n' "$t" "$r"
done
wait $WRK
cat "$DIR/wrk.err" | head -5
line=$(grep SOAKJSON "$DIR/wrk.out")
echo "soak: ${line#SOAKJSON }"
count=$(curl -sf "$URL/v1/namespaces/soak" | python3 -c 'import json,sys; print(json.load(sys.stdin)["count"])' 2>/dev/null)
echo "soak: segments at the end: ${count:-?}"
fail=0
echo "$line" | python3 -c '
import json, sys
d = json.loads(sys.stdin.read().split(" ", 1)[1])
bad = d["connect"] + d["read"] + d["write"] + d["status"] + d["timeout"]
print("soak: %d requests, %d errors (status %d, timeout %d)" % (d["requests"], bad, d["status"], d["timeout"]))
sys.exit(1 if bad or d["requests"] == 0 else 0)' || fail=1
python3 - "$DIR/rss" <<'PY' || fail=1
import sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
warm = [r for t, r in rows if 60 <= t <= 120] or [r for t, r in rows[:2]]
tail = [r for t, r in rows[-max(1, len(rows) // 3):]]
a, b = sum(warm) / len(warm), sum(tail) / len(tail)
grow = b - a
print("soak: RSS after warm-up %.0f MiB, last third %.0f MiB, growth %+.0f MiB (%+.1f %%), peak %d MiB"
      % (a, b, grow, 100 * grow / a if a else 0, max(r for _, r in rows)))
if grow > 4 and grow > 0.10 * a:
    print("soak: FLAG: resident memory keeps growing after warm-up")
    sys.exit(1)
PY
curl -sf "$URL/healthz" >/dev/null || { echo "soak: healthz failed after the load"; fail=1; }
kill -TERM $PID
i=0
while kill -0 $PID 2>/dev/null; do
    i=$((i + 1)); [ $i -gt 300 ] && { echo "soak: no exit 30 s after SIGTERM"; fail=1; break; }
    sleep 0.1
done
wait $PID; rc=$?
[ "$rc" -eq 0 ] || { echo "soak: exit status $rc after SIGTERM"; tail -5 "$DIR/stderr.log"; fail=1; }
grep -iE 'error|assert|sanitizer' "$DIR/stderr.log" | head -5
[ $fail -eq 0 ] && echo "soak: PASS" || echo "soak: FAIL"
exit $fail
