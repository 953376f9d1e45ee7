#!/usr/bin/env python3
"""bench-figures.py - the figures of docs/performance.md, printed from bench/results/*.json.

    python3 scripts/bench-figures.py                  # every block, to stdout
    python3 scripts/bench-figures.py --write FILE     # replace FILE's blocks with fresh ones
    python3 scripts/bench-figures.py --check FILE     # exit 1 when a block differs or is missing

A block is the text between `<!-- bench:SUITE -->` and `<!-- /bench:SUITE -->`; SUITE is a
result file's name without `.json`. Every figure is the result file's own value, as written
there, and every result file must have its block: a new or re-run suite shows up in the
document, or the check fails. The targets are the product's goals; whether each is met is
computed here from the same figures.
"""

import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")


def load(name):
    with open(os.path.join(RESULTS, name + ".json"), encoding="utf-8") as f:
        return json.load(f)


def v(x):
    """A figure as the result file writes it (floats in their shortest form)."""
    if isinstance(x, bool):
        return "yes" if x else "no"
    if x is None:
        return "-"
    return json.dumps(x)


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def machine(d):
    """One line: the machine as the result file records it."""
    m = d.get("machine") if isinstance(d, dict) else None
    if not m:
        return "Machine: not recorded in the result file."
    parts = []
    if "cpu" in m:
        parts.append("CPU `%s`" % m["cpu"])
    if "cores" in m:
        parts.append("%s cores" % v(m["cores"]))
    if "isa" in m:
        parts.append("scan kernel `%s`" % m["isa"])
    if "kernel" in m:
        parts.append("Linux `%s`" % m["kernel"])
    if "loadavg" in m:
        parts.append("load average %s" % " / ".join(m["loadavg"]))
    if "load_avg_at_start" in m:
        parts.append("load average %s at the start, %s at the end"
                     % (v(round(m["load_avg_at_start"][0], 2)),
                        v(round(m["load_avg_at_end"][0], 2))))
    return "Machine (as recorded): " + ", ".join(parts) + "."


# ---------------------------------------------------------------- one function per suite

def b_vec(d):
    rows = []
    for r in d["results"]:
        rows.append((r["set"], r["dim"], r["isa"], v(r["ns_per_row"]), v(r["gb_per_s"]),
                     v(r["floor_gb_per_s"])))
    return table(["working set", "dim", "kernel", "ns per row", "GB/s", "floor GB/s"], rows)


def b_tcd(d):
    q = table(["figure", "measured"], [
        ("graph edges, max degree, mean gate", "%s, %s, %s" % (v(d["graph_edges"]),
                                                              v(d["max_degree"]),
                                                              v(d["mean_gate"]))),
        ("recall@10 flat / temporal / coherence", "%s / %s / %s" % (
            v(d["flat_recall10"]), v(d["temporal_recall10"]), v(d["coherence_recall10"]))),
        ("temporal mean recency, coherence mean gate", "%s, %s" % (
            v(d["temporal_mean_recency"]), v(d["coherence_mean_gate"]))),
        ("every answer equals the scalar reference", v(d["identical_to_reference"])),
        ("near-tie swaps (scores within 1e-6)", v(d["near_tie_swaps"])),
        ("two-thread split equals one thread", v(d["split_identical"])),
        ("graph build", "%s ms" % v(d["graph_build_ms"])),
        ("memory per segment (of it f32 vector)", "%s bytes (%s)" % (
            v(d["bytes_per_segment"]), v(d["vector_bytes_per_segment"]))),
    ])
    f = d["floor_us"]
    rows = [("floor (one read pass)", v(f["mean"]), v(f["p50"]), v(f["p95"]), "", "1", "", "",
             "", "")]
    for name in ("flat", "temporal", "coherence"):
        r = d[name]
        rows.append((name, v(r["mean_us"]), v(r["p50_us"]), v(r["p95_us"]), v(r["qps"]),
                     v(r["floor_ratio"]), v(r["scanned_fraction"]), v(r["published_mean_us"]),
                     v(r["speedup_vs_published_p50"]) + "×", v(r["two_threads_p50_us"])))
    s = table(["variant", "mean µs", "p50 µs", "p95 µs", "queries/s", "p50 / floor",
               "scanned", "published mean µs", "speed-up (p50)", "two threads p50 µs"], rows)
    return q + "\n\n" + s


def b_scale(d):
    rows = []
    for r in d["results"]:
        rows.append(("%s × %s" % (r["n"], r["dim"]), v(r["floor_us"]), v(r["hl0"]["p50_us"]),
                     v(r["hl0"]["p95_us"]), v(r["hl0"]["floor_ratio"]), v(r["hl30d"]["p50_us"]),
                     v(r["hl30d"]["p95_us"]), v(r["hl30d"]["scanned_fraction"]),
                     v(r["bytes_per_segment"]), v(r["graph_link_ms_per_insert"]),
                     v(r["graph_link_batch_ms_per_insert"]), v(r["identical_to_reference"])))
    return ("K = %s; 1M × 768 %s.\n\n" % (d["k"], "included" if d["full"] else
                                           "not run (`BENCH_FULL=1`)") +
            table(["N × dim", "floor µs", "half-life 0: p50 µs", "p95 µs", "p50 / floor",
                   "30 days: p50 µs", "p95 µs", "scanned", "bytes a segment",
                   "graph link, one insert, ms", "in a batch of 1000, ms an insert",
                   "same answers as the reference"], rows))


def b_parscan(d):
    rows = []
    for r in d["results"]:
        a, b = r["hl0"], r["hl30d"]
        rows.append(("%s × %s" % (r["n"], r["dim"]), v(a["whole_p50_us"]), v(a["split_p50_us"]),
                     v(a["defaults_p50_us"]), v(b["whole_p50_us"]), v(b["split_p50_us"]),
                     v(b["defaults_p50_us"]), v(r["identical"])))
    return ("%s helper, concurrency %s, K = %s.\n\n" % (d["helpers"], d["concurrency"], d["k"]) +
            table(["N × dim", "half-life 0: whole p50 µs", "split p50 µs", "defaults p50 µs",
                   "30 days: whole p50 µs", "split p50 µs", "defaults p50 µs", "identical"],
                  rows))


def b_filter(d):
    rows = [(r["filter"], v(r["p50_us"]), v(r["p95_us"]), v(r["mean_us"]), v(r["scanned"]))
            for r in d["results"]]
    return ("%s × %s, K = %s, half-life %s days.\n\n" % (d["n"], d["dim"], d["k"],
                                                         d["half_life_days"]) +
            table(["filter", "p50 µs", "p95 µs", "mean µs", "scanned"], rows))


def b_graph(d):
    rows = []
    for name in ("tile", "per_query_i8", "f32_only"):
        r = d[name]
        rows.append((name, v(r["ms"]), v(r["cpu_ms"]), v(r["rows_per_cpu_s"]),
                     v(r["pairs_per_cpu_s"])))
    return ("%s new rows linked against %s members at dim %s: %s edges, the same for every "
            "variant: %s.\n\n" % (d["fresh"], d["members"], d["dim"], d["edges"],
                                  v(d["same_edges"])) +
            table(["variant", "wall ms", "CPU ms", "rows per CPU second",
                   "pairs per CPU second"], rows))


def b_stb(d):
    rows = []
    for name, p in d["policies"].items():
        rows.append((name + (" (default)" if name == d["default_policy"] else ""),
                     v(p["exp1_survival_mean_pct"]), v(p["exp1_survival_min_pct"]),
                     v(p["exp1_coverage_min_pct"]), v(p["exp2_recall_mean_pct"]),
                     v(p["exp2_recall_min_delta_pp"]), v(p["time_us_median"]),
                     v(p["time_ratio_vs_coherence_weighted"])))
    return ("%d seeds. Published figures reproduced: seed 20260906 %s, all 22-seed rows %s.\n\n"
            % (len(d["seeds"]), v(d["published_seed_20260906_reproduced"]),
               v(d["published_22_seed_rows_reproduced"])) +
            table(["policy", "regime shifts kept, mean %", "min %", "topic coverage, min %",
                   "Recall@10 after halving, mean %", "worst seed vs coherence_weighted, pp",
                   "time µs (median)", "time × coherence_weighted"], rows))


def b_quality(d):
    rows = []
    for r in d["variants"]:
        c = r["per_category"]
        rows.append((r["group"], r["name"], v(c["micro"]["r5"]), v(c["micro"]["r10"]),
                     v(c["macro"]["r10"])))
    return ("%s: %s conversations, %s segments.\n\n" % (d["data"], d["conversations"],
                                                        d["segments"]) +
            table(["group", "variant", "R@5", "R@10", "R@10 macro"], rows))


def b_text(d):
    b = d["bytes_per_segment"]
    head = table(["figure", "measured"], [
        ("segments (mean text bytes)", "%s (%s)" % (v(d["segments"]), v(d["text_bytes_mean"]))),
        ("inserts a second, in memory", v(d["insert_per_s_in_memory"])),
        ("lexical index: segments a second (with trigrams)", "%s (%s)" % (
            v(d["lexical_index_per_s"]), v(d["lexical_index_with_trigrams_per_s"]))),
        ("bytes a segment: lexical (with trigrams), vector index", "%s (%s), %s" % (
            v(b["lexical"]), v(b["lexical_with_trigrams"]), v(b["vector_index"]))),
        ("answers checked against the brute force, mismatches", "%s, %s" % (
            v(d["checked"]), v(d["mismatches"]))),
    ])
    rows = [(r["config"], v(r["p50_us"]), v(r["p95_us"]), v(r["mean_us"]), v(r["scanned_mean"]))
            for r in d["latency"]]
    return (head + "\n\n%s queries:\n\n" % d["queries"] +
            table(["match", "p50 µs", "p95 µs", "mean µs", "scanned (mean)"], rows))


def b_num(d):
    head = table(["figure", "mnemod", "the alternative", "ratio"], [
        ("parse one float32, ns", v(d["parse_f32_ns"]), "strtof " + v(d["strtof_ns"]),
         v(d["parse_ratio"])),
        ("print one float32, ns", v(d["print_f32_ns"]), "retry loop " +
         v(d["print_f32_retry_ns"]), v(d["print_f32_ratio"])),
        ("print one double, ns", v(d["print_f64_ns"]), "retry loop " +
         v(d["print_f64_retry_ns"]), v(d["print_f64_ratio"])),
        ("128-float retrieve body (%s bytes): parse and decode, µs" % d["retrieve_body"]["bytes"],
         v(d["retrieve_body"]["parse_decode_us"]), "jansson " +
         v(d["retrieve_body"]["jansson_us"]), v(d["retrieve_body"]["ratio"])),
        ("retrieve answer with explain: write, µs", v(d["retrieve_answer_explain"]["write_us"]),
         "jansson " + v(d["retrieve_answer_explain"]["jansson_retry_us"]),
         v(d["retrieve_answer_explain"]["ratio"])),
        ("segment with 384 floats: write, µs", v(d["segment_384"]["write_us"]),
         "jansson " + v(d["segment_384"]["jansson_retry_us"]), v(d["segment_384"]["ratio"])),
    ])
    e = d["embedding_arrays"]
    rows = []
    for name, label in (("python_repr", "Python's float repr"), ("printf_8g", "`%.8g`"),
                        ("shortest_f32", "shortest float32")):
        r = e[name]
        rows.append((label, v(r["bytes_per_number"]), v(r["parse_ns"]), v(r["body_ns"]),
                     v(r["strtof_ns"]), v(r["body_mb_s"])))
    return (head + "\n\nEmbedding arrays of dim %s (load average %s):\n\n" % (
        e["dim"], v(d["load_avg_1min"])) +
        table(["numbers written as", "bytes a number", "parse ns", "whole body, ns a number",
               "strtof ns", "body MB/s"], rows))


def b_ingest(d):
    e, lo, fu, s, g = d["empty"], d["load"], d["full"], d["single_c32"], d["graph"]
    return ("%s batches of %s × %s per phase.\n\n" % (d["batches"], d["batch"], d["dim"]) +
            table(["phase", "acknowledged a second", "batch p50 ms", "batch p95 ms",
                   "graph rows a second"], [
                ("into an empty namespace", v(e["acked_per_s"]), v(e["batch_p50_ms"]),
                 v(e["batch_p95_ms"]), v(e["graph_rows_per_s"])),
                ("loading %s" % lo["n"], v(lo["acked_per_s"]), "", "", ""),
                ("into a namespace of %s" % fu["n"], v(fu["acked_per_s"]), v(fu["batch_p50_ms"]),
                 v(fu["batch_p95_ms"]), v(fu["graph_rows_per_s"])),
                ("single inserts, 32 threads", v(s["per_s"]), "p50 %s" % v(s["p50_ms"]),
                 "p95 %s" % v(s["p95_ms"]), ""),
            ]) + "\n\nThe graph linked %s rows in %s batches in %s s." % (
                v(g["rows"]), v(g["batches"]), v(g["seconds"])))


def b_ingest_http(d):
    rows = []
    for key, label in (("empty", "batches into an empty namespace, %s connections"),
                       ("empty_1_client", "the same, %s connection"),
                       ("full", "batches into the namespace of %s, %%s connections" % d["n"])):
        r = d[key]
        rows.append((label % r["clients"], v(r["acked_per_s"]), v(r["batch_p50_ms"]),
                     v(r["batch_p95_ms"]), v(r["server_cpu_ms_per_batch"]) + " ms a batch",
                     v(r["load_before"])))
    s = d["single_c32"]
    rows.append(("durable single inserts, concurrency 32, into %s" % d["n"], v(s["rps"]),
                 "%s µs" % v(s["p50_us"]), "p99 %s µs" % v(s["p99_us"]),
                 "%s µs an insert" % v(s["server_cpu_us_per_insert"]), v(s["load_before"])))
    g = d["graph"]
    return ("%s batches of %s × %s per phase, %s, %s bodies of %s bytes; the %s segments "
            "loaded first in %s s.\n\n" % (d["batches_per_phase"], d["batch"], d["dim"],
                                           d["durable"], d["body"], d["body_bytes"],
                                           d["load"]["segments"], v(d["load"]["seconds"])) +
            table(["run", "segments a second", "p50 ms", "p95 ms", "server CPU",
                   "load average"], rows) +
            "\n\nSingle inserts: %s writes a commit, commit mean %s ms. The coherence graph "
            "linked %s rows a second afterwards (measured over %s s; caught up by then: %s)." % (
                v(s["writes_per_commit"]), v(s["commit_mean_ms"]), v(g["rows_per_s"]),
                v(g["waited_s"]), v(g["caught_up"])))


def b_http(d):
    rows = []
    for key, label in (("retrieve_c1", "retrieve, concurrency 1"),
                       ("retrieve_c16", "retrieve, concurrency 16"),
                       ("retrieve_c64", "retrieve, concurrency 64"),
                       ("single_insert_c32", "durable single inserts, concurrency 32"),
                       ("mixed_90_10_c16", "90 % retrieve / 10 % insert, concurrency 16")):
        r = d[key]
        rows.append((label, v(r["rps"]), v(r["p50_us"]), v(r["p99_us"]), v(r["errors"])))
    b = d["batch_insert"]
    return ("%s segments × %s, %s s a run. Loading them in 1000-segment batches: %s segments "
            "a second. In-process retrieve p50: %s µs; the round trip at concurrency 1 is %s× "
            "that.\n\n" % (d["n"], d["dim"], d["seconds_per_run"], v(b["segments_per_s"]),
                           v(d["inprocess_retrieve_p50_us"]), v(d["http_overhead_ratio_c1"])) +
            table(["run", "requests a second", "p50 µs", "p99 µs", "errors"], rows))


def b_latency(d):
    rows = []
    for key, label in (("tcd_temporal", "tcd 5000 × 128, temporal"),
                       ("scale_384_30d", "100k × 384, 30-day half-life")):
        r = d.get(key)
        if r is None:
            continue
        for pre, server in (("", "as is"), ("pinned_", "pinned"), ("apart_", "apart")):
            if r.get(pre + "took_ratio") is None:
                continue
            rows.append((label, server, v(r["inprocess_p50_us"]) if not pre else "",
                         v(r[pre + "took_ms_p50_us"]), v(r[pre + "took_ratio"]),
                         v(r.get(pre + "wrk_took_ms_p50_us")), v(r.get(pre + "wrk_took_ratio")),
                         v(r[pre + "roundtrip_p50_us"]),
                         v(r[pre + "roundtrip_minus_inprocess_us"])))
    return ("%s rounds of %s s each. Every column is the median over the rounds of its own "
            "figure: a ratio or a difference is each round's own (its scan and its server side by "
            "side), so it need not equal the medians beside it divided or subtracted.\n\n"
            % (d["rounds"], d["wrk_seconds"]) +
            table(["workload", "server", "in process p50 µs", "took_ms p50 µs, Python client",
                   "÷ in process", "took_ms p50 µs, wrk", "÷ in process",
                   "wrk round trip p50 µs", "round trip − in process µs"], rows))


def b_peers(d):
    out = []
    for key, label in (("tcd_temporal", "tcd 5000 × 128, temporal (cosine × decay), K = 10"),
                       ("scale_384_30d", "100k × 384, 30-day half-life, K = 10")):
        r = d[key]
        m = r["mnemod"]
        rows = [("mnemod", "in process", v(m["inprocess_p50_us"]), "", v(m["recall_at_k"]), "1"),
                ("mnemod", "took_ms over HTTP", v(m["took_ms_p50_us"]), "", "", ""),
                ("mnemod", "HTTP round trip", v(m["roundtrip_p50_us"]), "", "", "")]
        for peer, p in r["peers"].items():
            for var, x in p["variants"].items():
                rows.append(("%s %s" % (peer, p["version"]), var, v(x["p50_us"]), v(x["p95_us"]),
                             v(x["recall_at_k"]), v(x["x_mnemod_inprocess"])))
        out.append("%s:\n\n" % label + table(["engine", "variant", "p50 µs", "p95 µs",
                                              "recall of the decayed top K",
                                              "× mnemod in process"], rows))
    return "%s repetitions.\n\n" % d["reps"] + "\n\n".join(out)


def b_import(d):
    return table(["figure", "measured"], [
        ("segments × dim", "%s × %s" % (d["n"], d["dim"])),
        ("body", "%s MB" % v(d["body_mb"])),
        ("import: seconds, lines a second, MB a second", "%s, %s, %s" % (
            v(d["import_seconds"]), v(d["import_lines_per_s"]), v(d["import_mb_per_s"]))),
        ("server CPU seconds (lines a CPU second)", "%s (%s)" % (
            v(d["import_server_cpu_s"]), v(d["import_lines_per_cpu_s"]))),
        ("longest silence of the progress log, s", v(d["import_longest_silence_s"])),
        ("resident memory: start, after the import, KiB", "%s, %s" % (
            v(d["rss_kib_start"]), v(d["rss_kib_after_import"]))),
        ("export: seconds, lines", "%s, %s" % (v(d["export_seconds"]), v(d["export_lines"]))),
        ("load average", v(d["load_average"])),
    ])


def b_text_http(d):
    rows = []
    for key, label in (("text_insert_no_graph", "text, no coherence graph"),
                       ("text_insert", "text, with the graph"),
                       ("vector_insert_no_graph", "client vectors, no coherence graph")):
        if key in d:
            r = d[key]
            rows.append((label, v(r["segments_per_s"]), v(r["segments_per_cpu_s"]),
                         v(r["server_cpu_s_until_idle"]), v(r["errors"])))
    lt = d["load_text_ns"]
    return ("%s segments in batches of %s from %s connections (%s MB of bodies).\n\n" % (
        d["n"], d["batch"], d["clients"], v(d["body_mb"])) +
        table(["insert", "segments a second", "segments a CPU second",
               "server CPU s until idle", "errors"], rows) +
        "\n\nRestart: %s s (the text namespace, %s segments, in %s s, %s s of it the texts); "
        "the same answers after it: %s." % (v(d["restart_seconds"]), v(lt["segments"]),
                                           v(lt["seconds"]), v(lt["text_seconds"]),
                                           v(d["same_answer_after_restart"])))


def b_cluster_scale(d):
    rows = []
    for key, label in (("single_server", "one server, no cluster"), ("nodes_1", "1 node"),
                       ("nodes_2", "2 nodes"), ("nodes_3", "3 nodes")):
        r = d[key]
        cells = [label]
        for w in ("writes_one_node", "reads_one_node", "writes_spread", "reads_spread"):
            x = r[w]
            cells.append("%s (p50 %s ms)" % (v(x["per_s"]), v(x["p50_ms"])))
        rows.append(cells)
    return ("%s writers (batches of %s), %s readers over %s namespaces of %s segments, "
            "dim %s, %s NATS servers, stream replicas %s, %s s a run; segments or reads a "
            "second.\n\n" % (d["writers"], d["batch"], d["readers"], d["read_namespaces"],
                             d["read_segments_each"], d["dim"], d["nats_servers"],
                             d["stream_replicas"], v(d["seconds"])) +
            table(["set-up", "writes, one node", "reads, one node", "writes, spread",
                   "reads, spread"], rows))


BLOCKS = {
    "vec": b_vec, "tcd": b_tcd, "scale": b_scale, "parscan": b_parscan, "filter": b_filter,
    "graph": b_graph, "stb": b_stb, "quality": b_quality, "text": b_text, "num": b_num,
    "ingest": b_ingest, "ingest_http": b_ingest_http, "http": b_http, "latency": b_latency,
    "peers": b_peers, "import": b_import, "text_http": b_text_http,
    "text_http_nograph": b_text_http, "cluster_scale": b_cluster_scale,
}


# ---------------------------------------------------------------- targets

def targets():
    """[(target, figure, suite, met)] for the goals the product sets itself."""
    tcd, scale, lat, ih, stb = (load("tcd"), load("scale"), load("latency"),
                                load("ingest_http"), load("stb"))
    out = []
    for name in ("flat", "temporal", "coherence"):
        r = tcd[name]["floor_ratio"]
        out.append(("tcd %s: p50 at most 1.2× the floor" % name, "%s×" % v(r), "tcd", r <= 1.2))
    big = [r for r in scale["results"] if r["n"] == 1000000 and r["dim"] == 128]
    if big:
        r = big[0]["hl0"]["floor_ratio"]
        out.append(("scale 1M × 128: exact retrieve at most 1.3× the floor", "%s×" % v(r),
                    "scale", r <= 1.3))
    worst = max(r["hl30d"]["scanned_fraction"] for r in scale["results"])
    out.append(("scale, 30-day half-life: at most 20 % of the rows scanned",
                "at most %s" % v(worst), "scale", worst <= 0.2))
    out.append(("stb: every regime shift kept, Recall@10 never below coherence_weighted",
                "%s %% / %s pp" % (v(stb["policies"]["novelty"]["exp1_survival_min_pct"]),
                                   v(stb["policies"]["novelty"]["exp2_recall_min_delta_pp"])),
                "stb", stb["goal_met"]))
    t = ih["targets"]
    for key, label in (("empty", "batches into an empty namespace"),
                       ("full", "batches into a namespace of %s" % ih["n"]),
                       ("single_c32", "durable single inserts, concurrency 32")):
        got, goal = t[key + "_acked_per_s" if key != "single_c32" else "single_c32_per_s"], \
            t[key + "_goal"]
        out.append(("%s: %s segments a second" % (label, v(goal)), v(got), "ingest_http",
                    got >= goal))
    for key, label in (("tcd_temporal", "tcd temporal"), ("scale_384_30d", "100k × 384, 30 days")):
        if key not in lat:
            continue
        r, g = lat[key], lat[key]["goals"]
        met = (lambda name: "yes" if g.get(name) else
               ("pinned only" if g.get("pinned_" + name) else "no"))
        py = "%s× (pinned %s×) from a Python client" % (v(r["took_ratio"]),
                                                        v(r["pinned_took_ratio"]))
        with_wrk = r.get("wrk_took_ratio") is not None  # older files: the Python client only
        out.append(("%s: took_ms at most %s× in process" % (label, v(g["took_ratio_max"])),
                    "%s× (pinned %s×) on wrk's requests; %s" % (
                        v(r["wrk_took_ratio"]), v(r.get("pinned_wrk_took_ratio")), py)
                    if with_wrk else py, "latency", met("wrk_took_met" if with_wrk else "took_met")))
        if "roundtrip_minus_inprocess_max_us" in g:
            out.append(("%s: round trip at most %s µs over in process" % (
                label, v(g["roundtrip_minus_inprocess_max_us"])), "%s µs (pinned %s µs)" % (
                v(r["roundtrip_minus_inprocess_us"]),
                v(r["pinned_roundtrip_minus_inprocess_us"])), "latency", met("roundtrip_met")))
        if "roundtrip_minus_inprocess_max_us" in g and with_wrk:
            out.append(("%s: both of its goals on the same requests" % label,
                        "%s×, + %s µs (pinned %s×, + %s µs)" % (
                            v(r.get("wrk_took_ratio")), v(r["roundtrip_minus_inprocess_us"]),
                            v(r.get("pinned_wrk_took_ratio")),
                            v(r["pinned_roundtrip_minus_inprocess_us"])), "latency",
                        met("wrk_both_met")))
    return out


def b_targets():
    rows = []
    for target, figure, suite, met in targets():
        mm = machine(load(suite)).replace("Machine (as recorded): ", "").rstrip(".")
        rows.append((target, figure, "`%s`: %s" % (suite, mm),
                     met if isinstance(met, str) else ("yes" if met else "**no**")))
    return table(["target", "measured", "suite and machine", "met"], rows)


def render(name):
    if name == "targets":
        return b_targets()
    d = load(name)
    return machine(d) + "\n\n" + BLOCKS[name](d)


def suites():
    return sorted(f[:-5] for f in os.listdir(RESULTS) if f.endswith(".json"))


BLOCK = re.compile(r"<!-- bench:([a-z0-9_]+) -->\n(.*?)<!-- /bench:\1 -->", re.S)


def main(argv):
    names = suites()
    unknown = [n for n in names if n not in BLOCKS]
    if unknown:
        print("bench-figures.py: no block for %s" % ", ".join(unknown), file=sys.stderr)
        return 1
    if len(argv) == 1:
        for n in names + ["targets"]:
            print("<!-- bench:%s -->\n%s\n<!-- /bench:%s -->\n" % (n, render(n), n))
        return 0
    mode, path = argv[1], argv[2]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found = set(BLOCK.findall(text) and [m for m, _ in BLOCK.findall(text)])
    missing = [n for n in names + ["targets"] if n not in found]
    if mode == "--write":
        text = BLOCK.sub(lambda m: "<!-- bench:%s -->\n%s\n<!-- /bench:%s -->" % (
            m.group(1), render(m.group(1)), m.group(1)), text)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        if missing:
            print("%s has no block for %s" % (path, ", ".join(missing)), file=sys.stderr)
        return 1 if missing else 0
    bad = missing[:]
    for m in BLOCK.finditer(text):
        if m.group(1) not in BLOCKS and m.group(1) != "targets":
            bad.append(m.group(1) + " (no such result file)")
        elif m.group(2) != render(m.group(1)) + "\n":
            bad.append(m.group(1) + " (differs from bench/results/%s.json)" % m.group(1))
    if bad:
        print("%s: figures out of date or missing: %s (run python3 scripts/bench-figures.py "
              "--write %s)" % (path, ", ".join(bad), path), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
