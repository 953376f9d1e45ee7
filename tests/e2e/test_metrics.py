"""test_metrics.py - /metrics parsed strictly as the Prometheus text format (0.0.4).

After known traffic on a server of its own, the exposition must parse line by line (HELP
and TYPE once per family and before its samples, families in one group, legal metric and
label names, escaped label values, float values, no duplicate series), histograms must be
well formed (buckets sorted by le, cumulative, ending in +Inf equal to _count, a _sum),
counters must end in _total and never go down between scrapes, and the families the
deployment issue names must be there with the values the traffic implies.
"""

import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}
DIM = 4


def parse_value(s, where):
    if s in ("+Inf", "Inf"):
        return math.inf
    if s == "-Inf":
        return -math.inf
    if s == "NaN":
        return math.nan
    h.check(re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", s),
            "%s: value %r is not a float" % (where, s))
    return float(s)


def parse_labels(s, i, where):
    """s[i] == '{' -> (labels dict, index after '}')."""
    labels = {}
    i += 1
    while True:
        if s[i] == "}":
            return labels, i + 1
        m = LABEL.match(s, i)
        h.check(m, "%s: bad label name at %r" % (where, s[i:i + 20]))
        name = m.group(0)
        h.check(not name.startswith("__"), "%s: reserved label name %s" % (where, name))
        i = m.end()
        h.check(s[i:i + 2] == '="', "%s: label %s not followed by =\"" % (where, name))
        i += 2
        val = []
        while True:
            h.check(i < len(s), "%s: unterminated label value" % where)
            c = s[i]
            if c == "\\":
                h.check(i + 1 < len(s) and s[i + 1] in '\\"n', "%s: bad escape in label value"
                        % where)
                val.append({"\\": "\\", '"': '"', "n": "\n"}[s[i + 1]])
                i += 2
            elif c == '"':
                i += 1
                break
            else:
                val.append(c)
                i += 1
        h.check(name not in labels, "%s: label %s twice" % (where, name))
        labels[name] = "".join(val)
        if s[i] == ",":
            i += 1
            continue
        h.check(s[i] == "}", "%s: expected , or } after a label" % where)


def family_of(sample, types):
    for suffix in ("_bucket", "_sum", "_count"):
        if sample.endswith(suffix):
            base = sample[:-len(suffix)]
            if types.get(base) in ("histogram", "summary"):
                return base
    return sample


def parse(text):
    """-> (families {name: {"type", "help", "samples": [(name, labels, value)]}})."""
    h.check(text.endswith("\n"), "exposition does not end with a newline")
    fams, types, order, seen_series = {}, {}, [], set()
    current = None
    for n, line in enumerate(text.split("\n")[:-1], 1):
        where = "line %d %r" % (n, line[:80])
        h.check(line == line.rstrip(" \t") or line.startswith("#"), "%s: trailing blanks" % where)
        if not line:
            continue
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                h.check(NAME.fullmatch(name), "%s: bad metric name" % where)
                f = fams.setdefault(name, {"type": None, "help": None, "samples": []})
                if name not in order:
                    order.append(name)
                h.check(not f["samples"], "%s: %s after the family's samples" % (where, parts[1]))
                if parts[1] == "HELP":
                    h.check(f["help"] is None, "%s: second HELP" % where)
                    f["help"] = parts[3] if len(parts) > 3 else ""
                else:
                    h.check(f["type"] is None, "%s: second TYPE" % where)
                    h.check(len(parts) == 4 and parts[3] in TYPES, "%s: bad TYPE" % where)
                    f["type"] = types[name] = parts[3]
                current = name
            continue
        m = NAME.match(line)
        h.check(m, "%s: bad metric name" % where)
        sname = m.group(0)
        i = m.end()
        labels = {}
        if i < len(line) and line[i] == "{":
            labels, i = parse_labels(line, i, where)
        h.check(i < len(line) and line[i] == " ", "%s: no blank before the value" % where)
        rest = line[i + 1:].split(" ")
        h.check(1 <= len(rest) <= 2, "%s: value [timestamp] expected" % where)
        value = parse_value(rest[0], where)
        if len(rest) == 2:
            h.check(re.fullmatch(r"-?\d+", rest[1]), "%s: bad timestamp" % where)
        fam = family_of(sname, types)
        f = fams.setdefault(fam, {"type": None, "help": None, "samples": []})
        if fam not in order:
            order.append(fam)
        h.check(current == fam, "%s: family %s is not in one group (current %s)"
                % (where, fam, current))
        current = fam
        key = (sname, tuple(sorted(labels.items())))
        h.check(key not in seen_series, "%s: duplicate series" % where)
        seen_series.add(key)
        f["samples"].append((sname, labels, value))
    for name, f in fams.items():
        h.check(f["type"] is not None, "family %s has no TYPE" % name)
        h.check(f["help"], "family %s has no HELP" % name)
        check_family(name, f)
    return fams


def check_family(name, f):
    t = f["type"]
    if t == "counter":
        h.check(name.endswith("_total"), "counter %s does not end in _total" % name)
    if t in ("counter", "gauge"):
        for sname, labels, v in f["samples"]:
            h.eq(sname, name, "sample name in family %s" % name)
            h.check(not math.isnan(v), "%s is NaN" % sname)
            if t == "counter":
                h.check(v >= 0, "counter %s%s is negative" % (sname, labels))
    if t == "histogram":
        groups = {}
        for sname, labels, v in f["samples"]:
            rest = tuple(sorted((k, x) for k, x in labels.items() if k != "le"))
            g = groups.setdefault(rest, {"buckets": [], "sum": None, "count": None})
            if sname == name + "_bucket":
                h.check("le" in labels, "%s without le" % sname)
                g["buckets"].append((parse_value(labels["le"], sname + " le"), v))
            elif sname == name + "_sum":
                h.check("le" not in labels, "%s with le" % sname)
                g["sum"] = v
            elif sname == name + "_count":
                h.check("le" not in labels, "%s with le" % sname)
                g["count"] = v
            else:
                h.check(False, "histogram %s has a sample %s" % (name, sname))
        for rest, g in groups.items():
            what = "%s%s" % (name, dict(rest))
            b = g["buckets"]
            h.check(len(b) >= 2, "%s: fewer than 2 buckets" % what)
            les = [le for le, _ in b]
            h.eq(les, sorted(les), "%s: buckets sorted by le" % what)
            h.eq(len(set(les)), len(les), "%s: distinct le" % what)
            h.check(les[-1] == math.inf, "%s: last bucket is not +Inf" % what)
            for (_, a), (_, c) in zip(b, b[1:]):
                h.check(a <= c, "%s: buckets not cumulative" % what)
            h.check(all(v == int(v) and v >= 0 for _, v in b), "%s: bucket counts" % what)
            h.check(g["count"] is not None and g["sum"] is not None, "%s: _sum/_count" % what)
            h.eq(b[-1][1], g["count"], "%s: +Inf bucket equals _count" % what)
            h.check(g["sum"] >= 0 or g["count"] == 0, "%s: negative _sum" % what)


def scrape(srv):
    st, hdr, body = srv.get("/metrics")
    h.eq(st, 200, "/metrics status")
    ctype = hdr.get("content-type", "")
    h.check(ctype.startswith("text/plain") and "version=0.0.4" in ctype,
            "content type %r" % ctype)
    h.check(isinstance(body, str), "metrics body is text")
    return parse(body)


def series(fams, name, **labels):
    """Value of the sample name{labels...} (labels may be a subset)."""
    fam = fams.get(family_of(name, {k: v["type"] for k, v in fams.items()}))
    h.check(fam is not None, "family of %s present" % name)
    hits = [v for s, l, v in fam["samples"]
            if s == name and all(l.get(k) == x for k, x in labels.items())]
    h.eq(len(hits), 1, "one series %s%s" % (name, labels))
    return hits[0]


def traffic(srv):
    """Known requests: returns what they were."""
    emb = [[1.0, 0, 0, 0], [0.9, 0.1, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 0], [0, 0, 0.9, 0.1]]
    h.expect_ok(srv.put("/v1/namespaces/m.one", {"dim": DIM}), 201)
    for i, e in enumerate(emb):
        h.expect_ok(srv.insert("m.one", {"id": "s%d" % i, "embedding": e}), 201)
    h.expect_ok(srv.insert("m-two", {"segments": [{"id": "a", "embedding": [1.0, 0, 0, 0]},
                                                  {"id": "b", "embedding": [0, 1.0, 0, 0]}]}),
                201)
    kernels = set()
    for _ in range(3):
        body = h.expect_ok(srv.retrieve("m.one", {"embedding": [1.0, 0, 0, 0], "k": 2}))
        kernels.add(body["kernel"])
    h.expect_ok(srv.retrieve("m-two", {"embedding": [0, 1.0, 0, 0]}))
    h.expect_error(srv.get("/v1/namespaces/none"), 404, "not_found")
    h.expect_error(srv.get("/no/such/route"), 404, "not_found")
    comp = h.expect_ok(srv.compact("m.one", {"target": 3}))
    return {"kernels": kernels, "evicted": len(comp.get("evicted", [])), "retrieves": 4}


@h.test
def test_metrics_format_and_families():
    srv = h.Server().start()
    before = scrape(srv)
    t = traffic(srv)
    fams = scrape(srv)

    # Requests by route and status: exactly the traffic above.
    req = "mnemod_http_requests_total"
    h.eq(fams[req]["type"], "counter", req)
    for s, labels, v in fams[req]["samples"]:
        h.check({"route", "status"} <= set(labels), "%s labels %s" % (req, labels))
        h.check(re.fullmatch(r"[1-5]\d\d", labels["status"]), "status label %r" % labels)
    h.eq(series(fams, req, route="segments", status="201"), 6, "insert requests counted (5 single, 1 batch)")
    h.eq(series(fams, req, route="retrieve", status="200"), 4, "retrieves counted")
    h.eq(series(fams, req, route="compact", status="200"), 1, "compactions counted")
    h.eq(series(fams, req, route="namespace", status="201"), 1, "creates counted")
    h.eq(series(fams, req, route="metrics", status="200"), 1, "the first scrape counted")
    notfound = sum(v for s, l, v in fams[req]["samples"] if l["status"] == "404")
    h.eq(notfound, 2, "404s counted")

    # Latency histograms by route; their counts agree with the request counters.
    lat = "mnemod_http_request_duration_seconds"
    h.eq(fams[lat]["type"], "histogram", lat)
    for route in ("segments", "retrieve", "compact", "namespace"):
        total = sum(v for s, l, v in fams[req]["samples"] if l["route"] == route)
        h.eq(series(fams, lat + "_count", route=route), total, "latency count of %s" % route)
        h.check(series(fams, lat + "_sum", route=route) > 0, "latency sum of %s" % route)

    # Segments and archived segments per namespace.
    segs, arch = "mnemod_segments", "mnemod_segments_archived"
    h.eq(fams[segs]["type"], "gauge", segs)
    h.eq(fams[arch]["type"], "gauge", arch)
    h.check(t["evicted"] >= 1, "the compaction evicted something")
    h.eq(series(fams, segs, namespace="m.one"), 5 - t["evicted"], "segments of m.one")
    h.eq(series(fams, arch, namespace="m.one"), t["evicted"], "archived of m.one")
    h.eq(series(fams, segs, namespace="m-two"), 2, "segments of m-two")
    h.eq(series(fams, arch, namespace="m-two"), 0, "archived of m-two")

    # Scan kernel: the one retrieve reports.
    kern = "mnemod_scan_kernel"
    h.eq(len(t["kernels"]), 1, "one kernel")
    h.eq(series(fams, kern, kernel=t["kernels"].pop()), 1, "scan kernel gauge")
    h.eq(len(fams[kern]["samples"]), 1, "one kernel series")

    # Scanned fraction: one observation per retrieve, each in [0, 1].
    frac = "mnemod_retrieve_scanned_fraction"
    h.eq(fams[frac]["type"], "histogram", frac)
    h.eq(series(fams, frac + "_count"), t["retrieves"], "scanned-fraction observations")
    h.check(0 < series(fams, frac + "_sum") <= t["retrieves"], "scanned-fraction sum")

    # Writer queue depth, commit latency, fsync count.
    h.eq(fams["mnemod_writer_queue_depth"]["type"], "gauge", "queue depth type")
    h.check(series(fams, "mnemod_writer_queue_depth") >= 0, "queue depth")
    commit = "mnemod_commit_duration_seconds"
    h.eq(fams[commit]["type"], "histogram", commit)
    fs = series(fams, "mnemod_fsyncs_total")
    h.eq(fams["mnemod_fsyncs_total"]["type"], "counter", "fsync type")
    h.check(fs >= 1, "fsyncs counted")
    h.check(series(fams, commit + "_count") >= 1, "commits observed")

    # The request pool: the first scrape ran on a worker, this one is running there now.
    pool = {n: series(fams, "mnemod_pool_" + n) for n in
            ("jobs_total", "completions_total", "wakeups_total", "batches_total", "spins_total",
             "sleeps_total", "busy")}
    for n, v in pool.items():
        h.eq(fams["mnemod_pool_" + n]["type"], "gauge" if n == "busy" else "counter", n)
    jobs = pool["jobs_total"] - series(before, "mnemod_pool_jobs_total")
    h.check(jobs >= 1, "pool jobs counted: %r" % pool)
    h.eq(pool["busy"], 1, "busy: this scrape's own job")
    # every job comes back as a completion, and so does every write acknowledgement
    writes = 8  # the create, six inserts and the compaction
    done = pool["completions_total"] - series(before, "mnemod_pool_completions_total")
    h.check(done >= jobs + writes, "completions %d for %d jobs and %d writes (this scrape is "
            "in neither yet)" % (done, jobs, writes))
    h.check(1 <= pool["batches_total"] <= pool["completions_total"], "batches: %r" % pool)
    h.check(pool["wakeups_total"] <= pool["completions_total"], "wake-ups: %r" % pool)
    h.check(pool["sleeps_total"] >= 1, "idle workers slept: %r" % pool)

    # Counters never go down between scrapes.
    for name, f in fams.items():
        if f["type"] != "counter" or name not in before:
            continue
        old = {tuple(sorted(l.items())): v for s, l, v in before[name]["samples"]}
        for s, l, v in f["samples"]:
            k = tuple(sorted(l.items()))
            if k in old:
                h.check(v >= old[k], "%s%s went down" % (name, l))
    srv.stop()


@h.test
def test_every_route_and_status_counted():
    """Many routes, each with several statuses: every (route, status) the server answered is
    one series whose value is exactly how often it answered it, and nothing else appears."""
    srv = h.Server().start()
    key = "mnemod_http_requests_total"
    before = {(l["route"], l["status"]): v for s, l, v in scrape(srv)[key]["samples"]}
    sent = {("metrics", "200"): 1}  # the scrape just made

    def send(label, method, path, body=None, **kw):
        st = srv.call(method, path, body, **kw)[0]
        sent[(label, str(st))] = sent.get((label, str(st)), 0) + 1

    ns = "/v1/namespaces/mx"
    seg = {"id": "a", "embedding": [1.0, 0, 0, 0], "text": "alpha"}
    send("healthz", "GET", "/healthz")
    send("healthz", "POST", "/healthz", {})
    send("openapi", "GET", "/openapi.json")
    send("openapi", "DELETE", "/openapi.json")
    send("namespaces", "GET", "/v1/namespaces")
    send("namespace", "PUT", ns, {"dim": DIM})
    send("namespace", "PUT", ns, {"dim": "four"})
    send("namespace", "GET", ns)
    send("namespace", "GET", ns + "-none")
    send("namespace", "POST", ns, {})
    send("segments", "POST", ns + "/segments", seg)
    send("segments", "POST", ns + "/segments", seg)  # the same id again
    send("segments", "POST", ns + "/segments", {"id": "b", "embedding": [1.0]})
    send("segments", "POST", ns + "/segments", b"{not json")
    send("segments", "POST", ns + "-none/segments", {"segments": []})
    send("segments", "GET", ns + "/segments")
    send("segments", "GET", ns + "/segments?after=zz")
    send("segment", "GET", ns + "/segments/a")
    send("segment", "GET", ns + "/segments/nope")
    send("segment", "PATCH", ns + "/segments/a", {"text": "alpha two"})
    send("segment", "PATCH", ns + "/segments/a", {"unknown": 1})
    send("retrieve", "POST", ns + "/retrieve", {"embedding": [1.0, 0, 0, 0]})
    send("retrieve", "POST", ns + "/retrieve", {"embedding": [1.0, 0]})
    send("retrieve", "POST", ns + "/retrieve", {"k": 0, "embedding": [1.0, 0, 0, 0]})
    send("retrieve", "GET", ns + "/retrieve")
    send("compact", "POST", ns + "/compact", {"target": 1})
    send("compact", "POST", ns + "/compact", {"target": -1})
    send("export", "GET", ns + "/export")
    send("export", "GET", ns + "-none/export")
    send("import", "POST", ns + "/import", b"not ndjson")
    send("mcp", "POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    send("mcp", "GET", "/mcp")
    send("unknown", "GET", "/no/such/route")
    send("segment", "DELETE", ns + "/segments/a")
    send("segment", "DELETE", ns + "/segments/a")
    send("namespace", "DELETE", ns)
    h.check(len(sent) >= 25, "distinct (route, status) pairs sent: %d" % len(sent))
    h.check(len({st for _, st in sent}) >= 6, "statuses: %r" % sorted(sent))
    fams = scrape(srv)  # counted after its answer: not in this scrape
    got = {}
    for s, l, v in fams[key]["samples"]:
        k = (l["route"], l["status"])
        if v != before.get(k, 0):
            got[k] = v - before.get(k, 0)
    h.eq(got, sent, "requests by route and status")
    srv.stop()


@h.test
def test_parser_rejects_bad_expositions():
    """The checker itself: each broken text must be refused."""
    good = ("# HELP x_total X.\n# TYPE x_total counter\nx_total{a=\"1\"} 3\n"
            "# HELP l Lat.\n# TYPE l histogram\nl_bucket{le=\"1\"} 1\nl_bucket{le=\"+Inf\"} 2\n"
            "l_sum 0.5\nl_count 2\n")
    parse(good)
    bad = [
        good.replace("x_total{a=\"1\"} 3", "x_total{a=\"1\"} three"),          # value
        good.replace("{a=\"1\"}", "{1a=\"1\"}"),                                # label name
        good.replace("{a=\"1\"}", "{a=1}"),                                     # unquoted
        good.replace("l_bucket{le=\"+Inf\"} 2", "l_bucket{le=\"+Inf\"} 3"),     # +Inf != count
        good.replace("l_bucket{le=\"1\"} 1", "l_bucket{le=\"1\"} 5"),           # not cumulative
        good.replace("l_bucket{le=\"+Inf\"} 2\n", ""),                          # no +Inf
        good.replace("# TYPE x_total counter\n", ""),                           # no TYPE
        good.replace("x_total{a=\"1\"} 3\n", "x_total{a=\"1\"} 3\nx_total{a=\"1\"} 4\n"),
        good + "x_total{a=\"2\"} 1\n",                                          # split group
        good.replace("x_total", "x"),                                           # counter name
        good.replace("x_total{a=\"1\"} 3", "x_total{a=\"1\"} -3"),              # negative
        good.rstrip("\n"),                                                      # final newline
        good.replace("l_sum 0.5\n", ""),                                        # no _sum
    ]
    for i, text in enumerate(bad):
        try:
            parse(text)
        except h.Failure:
            continue
        raise h.Failure("broken exposition %d was accepted" % i)


if __name__ == "__main__":
    h.main()
