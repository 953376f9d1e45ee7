#!/usr/bin/env python3
"""peers bench: other vector-search engines installable here, next to mnemod, same run.

Usage: run.py BUILD_DIR [results.json]. Env: PEERS_SCALE_N (default 100000, 0 skips the
scale corpus), PEERS_REPS (default 3).

For each corpus (tcd 5000 x 128, temporal; the scale suite's N x 384, 30-day half-life),
bench/latency_inproc builds mnemod's index, writes the corpus and gives the exact decayed
top K of every query (truth.json); then each peer loads the same rows and answers the same
queries, one thread per query: FAISS (Debian's python3-faiss: faiss_peer.py), usearch and
hnswlib (npm, pinned in package.json: peers.mjs). Every figure is reported as a ratio to
mnemod's in-process scan p50 measured right before and after the peers, and to mnemod's
HTTP figures (took_ms and the keep-alive round trip) from the latency suite of the same
`make bench` run (bench/results/latency.json). The machine differs from run to run: compare
ratios, never absolute times across runs. Writes bench/results/peers.json.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build/release"
OUT = sys.argv[2] if len(sys.argv) > 2 else "bench/results/peers.json"
SCALE_N = int(os.environ.get("PEERS_SCALE_N", "100000"))
REPS = int(os.environ.get("PEERS_REPS", "3"))
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import benchlib  # noqa: E402

LATENCY = os.path.join(os.path.dirname(OUT), "latency.json")


def run_json(argv, timeout):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1"))
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": "%s: %s" % (argv[0], e)}
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"error": "%s exited %d: %s" % (argv[0], r.returncode, r.stderr[-300:])}
    return json.loads(lines[-1])


def corpus(name, args, latency_key, tmp):
    inp = benchlib.Inproc(BUILD, args, tmp)
    d, params = inp.dir, inp.params
    truth = [inp.ids(q) for q in range(params["queries"])]
    json.dump(truth, open(os.path.join(d, "truth.json"), "w"))
    before = inp.run(REPS)
    peers = {}
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    peers["faiss"] = run_json([py, os.path.join(HERE, "faiss_peer.py"), d, str(REPS)], 1800)
    if shutil.which("node") and os.path.isdir(os.path.join(HERE, "node_modules")):
        js = run_json(["node", os.path.join(HERE, "peers.mjs"), d, str(REPS)], 3600)
        if "peers" in js:
            peers.update(js["peers"])
        else:
            peers["usearch"] = peers["hnswlib"] = js
    else:
        peers["usearch"] = peers["hnswlib"] = {
            "error": "npm packages not installed (make bench runs scripts/deps.sh --bench)"}
    after = inp.run(REPS)
    inp.close()
    inproc = (before["p50_us"] + after["p50_us"]) / 2
    http = {}
    try:
        lat = json.load(open(LATENCY)).get(latency_key, {})
        http = {"took_ms_p50_us": lat.get("took_ms_p50_us"),
                "roundtrip_p50_us": lat.get("roundtrip_p50_us"),
                "latency_json_age_s": round(time.time() - os.path.getmtime(LATENCY))}
    except (OSError, ValueError):
        pass
    for peer in peers.values():
        for v in peer.get("variants", {}).values():
            v["x_mnemod_inprocess"] = round(v["p50_us"] / inproc, 2)
            if http.get("took_ms_p50_us"):
                v["x_mnemod_took_ms"] = round(v["p50_us"] / http["took_ms_p50_us"], 2)
            if http.get("roundtrip_p50_us"):
                v["x_mnemod_http_roundtrip"] = round(v["p50_us"] / http["roundtrip_p50_us"], 2)
    return {"n": params["n"], "dim": params["dim"], "queries": params["queries"], "k": params["k"],
            "half_life_s": params["half_life_s"],
            "mnemod": {"inprocess_p50_us": round(inproc, 2), "recall_at_k": 1.0,
                       "kernel": before.get("kernel"), **http},
            "peers": peers}


def main():
    tmp = tempfile.mkdtemp(prefix="mnemod-bench-peers-")
    res = {"reps": REPS}
    try:
        res["tcd_temporal"] = corpus("tcd", ["tcd"], "tcd_temporal", tmp)
        if SCALE_N:
            res["scale_384_30d"] = corpus("scale", ["scale", str(SCALE_N), "384"],
                                          "scale_384_30d", tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res["machine"] = benchlib.machine()
    for name in ("tcd_temporal", "scale_384_30d"):
        c = res.get(name)
        if not c:
            continue
        m = c["mnemod"]
        print("== peers, %s (%d x %d, K=%d): mnemod in-process p50 %.1f us, took_ms p50 %s us, "
              "round trip p50 %s us" % (name, c["n"], c["dim"], c["k"], m["inprocess_p50_us"],
                                        m.get("took_ms_p50_us"), m.get("roundtrip_p50_us")))
        print("   %-9s %-22s %10s %9s %10s %10s" % ("peer", "variant", "p50 us", "recall",
                                                    "x inproc", "x http rt"))
        for pname, peer in c["peers"].items():
            if "error" in peer:
                print("   %-9s %s" % (pname, peer["error"]))
                continue
            for vname, v in peer["variants"].items():
                print("   %-9s %-22s %10.1f %9.4f %10.2f %10s" % (
                    pname, vname, v["p50_us"], v["recall_at_k"], v["x_mnemod_inprocess"],
                    v.get("x_mnemod_http_roundtrip", "-")))
    benchlib.write_results(OUT, res)
    print("wrote %s" % OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
