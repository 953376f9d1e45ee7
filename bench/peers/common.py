"""common.py - what every peer of bench/peers reads: the corpus that bench/latency_inproc
dumped (rows as given, Unix-ms timestamps, queries, params) and the exact answers."""
import json
import os
import struct


def load(d):
    p = json.load(open(os.path.join(d, "params.json")))
    n, dim, nq = p["n"], p["dim"], p["queries"]
    rows = open(os.path.join(d, "corpus.f32"), "rb").read()
    queries = open(os.path.join(d, "queries.f32"), "rb").read()
    ts = [int(x) for x in open(os.path.join(d, "ts.txt"))]
    truth = json.load(open(os.path.join(d, "truth.json")))
    assert len(rows) == n * dim * 4 and len(queries) == nq * dim * 4 and len(ts) == n
    return p, rows, queries, ts, truth


def decay_weights(p, ts):
    """mnemod's exponential decay: 0.5 ** (|origin - ts| / half_life)."""
    hl, o = p["half_life_s"], p["origin_ms"]
    return [0.5 ** (abs(o - t) / 1000.0 / hl) if hl > 0 else 1.0 for t in ts]


def recall(got_ids, truth):
    hit = sum(len(set(g) & set(t)) for g, t in zip(got_ids, truth))
    return hit / float(sum(len(t) for t in truth))


def f32s(buf, i, dim):
    return struct.unpack_from("<%df" % dim, buf, i * dim * 4)
