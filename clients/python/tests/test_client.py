"""test_client.py - the Python client against the real mnemod binary.

    MNEMOD_BINARY=build/release/mnemod python3 -m unittest discover -s clients/python/tests

Every call goes over HTTP to a server started here (free port, temporary data directory),
and each answer is checked against what the server must have done: stored values read
back, scores recomputed from the scoring formula, error codes and fields exact.
"""

import asyncio
import base64
import datetime as dt
import http.server
import json
import math
import os
import struct
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import mnemod  # noqa: E402
from mnemod import errors  # noqa: E402
from server import Server, free_port  # noqa: E402

UTC = dt.timezone.utc
DAY = 86400.0


def unit(v):
    n = math.sqrt(sum(x * x for x in v))
    return [struct.unpack("f", struct.pack("f", x / n))[0] for x in v]


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def json_types(schema, schemas):
    """The JSON types a (possibly $ref'd, anyOf/oneOf) schema admits."""
    if "$ref" in schema:
        return json_types(schemas[schema["$ref"].rsplit("/", 1)[1]], schemas)
    out = set()
    t = schema.get("type")
    out.update(t if isinstance(t, list) else [t] if t else [])
    for k in ("anyOf", "oneOf"):
        for sub in schema.get(k, []):
            out |= json_types(sub, schemas)
    return out


def ts_of(s):
    return mnemod.parse_timestamp(s).timestamp()


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = Server().start()
        cls.c = mnemod.Client(cls.srv.url, api_key="")

    @classmethod
    def tearDownClass(cls):
        cls.c.close()
        rc = cls.srv.stop()
        assert rc == 0, "mnemod exited with %r" % rc

    def ns(self):
        """A fresh namespace name per test."""
        return "py_" + self._testMethodName[5:][:50]

    # ---------------------------------------------------------------- service

    def test_health_and_metrics(self):
        self.assertEqual(self.c.health(), {"status": "ok"})
        self.c.insert(self.ns(), embedding=[1, 0, 0])
        m = self.c.metrics()
        self.assertIn("mnemod_", m)
        self.assertRegex(m, r'segment|namespace')

    # ---------------------------------------------------------------- namespaces

    def test_namespace_lifecycle(self):
        ns = self.ns()
        made = self.c.create_namespace(ns, dim=3)
        self.assertEqual((made.name, made.dim, made.created), (ns, 3, True))
        again = self.c.create_namespace(ns, dim=3)
        self.assertFalse(again.created)
        with self.assertRaises(errors.ConflictError) as cm:
            self.c.create_namespace(ns, dim=4)
        self.assertEqual((cm.exception.status, cm.exception.code), (409, "namespace_exists"))
        st = self.c.get_namespace(ns)
        self.assertIsInstance(st, mnemod.NamespaceStats)
        self.assertEqual((st.name, st.dim, st.count, st.oldest, st.newest), (ns, 3, 0, None, None))
        self.c.insert(ns, embedding=[1, 0, 0], timestamp="2026-01-01T00:00:00Z")
        self.c.insert(ns, embedding=[1, 0.1, 0], timestamp="2026-01-02T00:00:00Z")
        st = self.c.get_namespace(ns)
        self.assertEqual(st.count, 2)
        self.assertEqual(st.oldest, "2026-01-01T00:00:00.000Z")
        self.assertEqual(st.newest, "2026-01-02T00:00:00.000Z")
        self.assertEqual((st.graph_edges, st.max_degree), (1, 1))  # cos > 0.55
        names = {n.name: n for n in self.c.list_namespaces()}
        self.assertIn(ns, names)
        self.assertEqual(names[ns].count, 2)
        self.c.delete_namespace(ns)
        with self.assertRaises(errors.NotFoundError) as cm:
            self.c.get_namespace(ns)
        self.assertEqual(cm.exception.code, "not_found")
        self.assertNotIn(ns, {n.name for n in self.c.list_namespaces()})

    def test_bad_namespace_name(self):
        with self.assertRaises(errors.BadRequestError) as cm:
            self.c.get_namespace("a/b")  # sent as a%2Fb: never a path separator
        self.assertEqual((cm.exception.code, cm.exception.field), ("invalid_field", "namespace"))

    # ---------------------------------------------------------------- segments

    def test_insert_get_delete(self):
        ns = self.ns()
        r = self.c.insert(ns, "the staging password is hunter2", id="pw", source="ops",
                          metadata={"user": "ana", "n": [1, 2]},
                          timestamp=dt.datetime(2026, 11, 2, 9, 0, tzinfo=UTC))
        self.assertTrue(r.created)
        self.assertEqual(len(r.inserted), 1)
        self.assertEqual((r.inserted[0].id, r.inserted[0].seq), ("pw", 1))
        self.assertEqual(r.inserted[0].timestamp, "2026-11-02T09:00:00.000Z")
        seg = self.c.get_segment(ns, "pw")
        self.assertIsInstance(seg, mnemod.Segment)
        self.assertEqual((seg.id, seg.seq, seg.text, seg.source), ("pw", 1,
                         "the staging password is hunter2", "ops"))
        self.assertEqual(seg.metadata, {"user": "ana", "n": [1, 2]})
        self.assertEqual((seg.supersedes, seg.superseded_by, seg.archived), ([], None, False))
        self.assertIsNone(seg.embedding)
        withvec = self.c.get_segment(ns, "pw", embedding=True)
        self.assertEqual(len(withvec.embedding), 256)  # the built-in embedder's dimension
        self.assertAlmostEqual(dot(withvec.embedding, withvec.embedding), 1.0, places=5)
        # identical retry: 200, nothing written
        again = self.c.insert(ns, "the staging password is hunter2", id="pw", source="ops",
                              metadata={"user": "ana", "n": [1, 2]},
                              timestamp="2026-11-02T09:00:00Z")
        self.assertFalse(again.created)
        self.assertEqual(again.inserted[0].seq, 1)
        with self.assertRaises(errors.ConflictError) as cm:
            self.c.insert(ns, "something else", id="pw", timestamp="2026-11-03T00:00:00Z")
        self.assertEqual(cm.exception.code, "duplicate_id")
        self.c.delete_segment(ns, "pw")
        with self.assertRaises(errors.NotFoundError):
            self.c.get_segment(ns, "pw")
        with self.assertRaises(errors.NotFoundError):
            self.c.delete_segment(ns, "pw")

    def test_base64_embeddings(self):
        ns = self.ns()
        v = [0.6, 0.8, 0.0]
        b64 = base64.b64encode(struct.pack("<3f", *v)).decode()
        self.c.insert(ns, embedding=b64, id="b")
        seg = self.c.get_segment(ns, "b", embedding="base64")
        self.assertIsInstance(seg.embedding, str)
        self.assertEqual(list(struct.unpack("<3f", base64.b64decode(seg.embedding))), unit(v))
        arr = self.c.get_segment(ns, "b", embedding=True).embedding  # shortest float32 text
        self.assertEqual([struct.unpack("f", struct.pack("f", x))[0] for x in arr], unit(v))
        hit = self.c.retrieve(ns, embedding=base64.b64encode(struct.pack("<3f", 0, 1, 0))
                              .decode(), explain=True).results[0]
        self.assertAlmostEqual(hit.similarity, unit(v)[1], places=6)
        with self.assertRaises(errors.BadRequestError) as cm:
            self.c.insert(ns, embedding="not base64!")
        self.assertEqual(cm.exception.field, "embedding")

    def test_ids_are_percent_encoded(self):
        ns = self.ns()
        odd = "a/b c?d#e%f&g=h+i"
        self.c.insert(ns, embedding=[0.6, 0.8], id=odd)
        self.assertEqual(self.c.get_segment(ns, odd).id, odd)
        self.c.delete_segment(ns, odd)
        self.assertEqual(self.c.get_namespace(ns).count, 0)

    def test_batch_and_supersedes(self):
        ns = self.ns()
        r = self.c.insert_batch(ns, [
            {"id": "a", "embedding": [1, 0], "timestamp": 1_700_000_000},
            {"id": "b", "embedding": (0.0, 1.0), "timestamp": 1_700_000_000.5},
            {"id": "c", "embedding": [1, 1], "supersedes": ["a"],
             "timestamp": dt.datetime(2023, 11, 15, tzinfo=UTC)},
        ])
        self.assertEqual([i.id for i in r.inserted], ["a", "b", "c"])
        self.assertEqual([i.seq for i in r.inserted], [1, 2, 3])
        self.assertEqual(r.inserted[1].timestamp, "2023-11-14T22:13:20.500Z")
        self.assertEqual(self.c.get_segment(ns, "a").superseded_by, "c")
        hits = self.c.retrieve(ns, embedding=[1, 0], k=5)
        self.assertEqual({h.id for h in hits.results}, {"b", "c"})
        hits = self.c.retrieve(ns, embedding=[1, 0], k=5, include_superseded=True)
        self.assertEqual(hits.results[0].id, "a")
        # atomic: one bad member rejects the batch
        with self.assertRaises(errors.BadRequestError) as cm:
            self.c.insert_batch(ns, [{"id": "d", "embedding": [1, 0]},
                                     {"id": "e", "embedding": [1, 0, 0]}])
        self.assertEqual(cm.exception.code, "dimension_mismatch")
        self.assertEqual(self.c.get_namespace(ns).count, 3)

    def test_errors_carry_code_message_field(self):
        ns = self.ns()
        self.c.insert(ns, embedding=[1, 0], timestamp="2026-05-01T00:00:00Z")
        with self.assertRaises(errors.ConflictError) as cm:
            self.c.insert(ns, embedding=[1, 0], timestamp="2026-04-01T00:00:00Z")
        e = cm.exception
        self.assertEqual((e.status, e.code), (409, "non_monotonic_timestamp"))
        self.assertEqual(e.details["last_timestamp"], "2026-05-01T00:00:00.000Z")
        self.assertTrue(e.message)
        self.assertIn("non_monotonic_timestamp", str(e))
        with self.assertRaises(errors.BadRequestError) as cm:
            self.c.retrieve(ns, embedding=[1, 0], k=0)
        self.assertEqual((cm.exception.code, cm.exception.field), ("invalid_field", "k"))
        with self.assertRaises(errors.BadRequestError) as cm:
            self.c.insert(ns, embedding=[1, 0], timestamp="2999-01-01T00:00:00Z")
        self.assertEqual(cm.exception.code, "timestamp_in_future")
        with self.assertRaises(ValueError):
            self.c.insert(ns, embedding=[1, 0], timestamp=dt.datetime(2026, 1, 1))  # naive
        with self.assertRaises(errors.NotFoundError):
            self.c.retrieve("py_nothing_here", embedding=[1, 0])
        # the escape hatch reaches routes by path and still maps errors
        with self.assertRaises(errors.ApiError) as cm:
            self.c.request("POST", "/v1/namespaces/" + ns + "/segments", {"bogus": 1})
        self.assertEqual((cm.exception.code, cm.exception.field), ("invalid_field", "bogus"))
        with self.assertRaises(errors.NotFoundError):
            self.c.request("GET", "/v1/nowhere")

    def test_listing_pages_and_iterator(self):
        ns = self.ns()
        self.c.insert_batch(ns, [{"id": "s%d" % i, "embedding": [1, i / 10],
                                  "source": "even" if i % 2 == 0 else "odd",
                                  "timestamp": 1_760_000_000 + i * 3600} for i in range(7)])
        self.c.insert(ns, embedding=[0, 1], id="s7", supersedes=["s0"],
                      timestamp=1_760_000_000 + 7 * 3600)
        page = self.c.list_segments(ns, limit=3)
        self.assertIsInstance(page, mnemod.SegmentPage)
        self.assertEqual([s.id for s in page.segments], ["s1", "s2", "s3"])  # s0: superseded
        self.assertIsInstance(page.segments[0], mnemod.Segment)
        self.assertIsNotNone(page.next)
        page2 = self.c.list_segments(ns, limit=3, after=page.next)
        self.assertEqual([s.id for s in page2.segments], ["s4", "s5", "s6"])
        every = list(self.c.iter_segments(ns, page_size=2, include_superseded=True))
        self.assertEqual([s.id for s in every], ["s%d" % i for i in range(8)])
        self.assertEqual([s.seq for s in every], list(range(1, 9)))
        self.assertEqual(every[0].superseded_by, "s7")
        odd = [s.id for s in self.c.iter_segments(ns, source="odd")]
        self.assertEqual(odd, ["s1", "s3", "s5"])
        window = [s.id for s in self.c.iter_segments(
            ns, since=dt.datetime.fromtimestamp(1_760_000_000 + 2 * 3600, UTC),
            until=1_760_000_000 + 4 * 3600)]
        self.assertEqual(window, ["s2", "s3", "s4"])
        vec = self.c.list_segments(ns, limit=1, embedding=True).segments[0].embedding
        self.assertAlmostEqual(dot(vec, vec), 1.0, places=5)
        raw = self.c.request("GET", "/v1/namespaces/%s/segments?limit=1000" % ns).body
        self.assertEqual([s.to_dict() for s in self.c.list_segments(ns, limit=1000).segments],
                         raw["segments"])
        with self.assertRaises(errors.BadRequestError) as cm:
            self.c.list_segments(ns, limit=0)
        self.assertEqual(cm.exception.field, "limit")
        # a source with a space or a '+' (urlencode writes them '+' and %2B)
        self.c.insert(ns, embedding=[1, 1], id="sp", source="team a", timestamp=1_760_100_000)
        self.c.insert(ns, embedding=[1, 1], id="pl", source="c++", timestamp=1_760_100_001)
        self.assertEqual([s.id for s in self.c.iter_segments(ns, source="team a")], ["sp"])
        self.assertEqual([s.id for s in self.c.iter_segments(ns, source="c++")], ["pl"])

    def test_types_match_the_servers_openapi(self):
        import dataclasses
        import inspect
        doc = self.c.openapi()
        self.assertTrue(doc["openapi"].startswith("3.1"))
        schemas = doc["components"]["schemas"]
        local = {"extra", "created"}
        for cls, name in [(mnemod.NamespaceStats, "NamespaceStats"), (mnemod.Segment, "Segment"),
                          (mnemod.NamespaceCreated, "NamespaceCreated"),
                          (mnemod.InsertResult, "Inserted"), (mnemod.ScoredSegment, "Result"),
                          (mnemod.RetrieveResult, "RetrieveResponse"),
                          (mnemod.CompactResult, "CompactResponse"),
                          (mnemod.SegmentPage, "SegmentList"),
                          (mnemod.ImportResult, "ImportResult"),
                          (mnemod.Inserted, "Inserted.inserted[]")]:
            schema = schemas[name.split(".")[0]]
            if name.endswith("[]"):  # the items of an array property
                schema = schema["properties"][name.split(".")[1][:-2]]["items"]
            fields = {f.name for f in dataclasses.fields(cls)} - local
            self.assertEqual(fields, set(schema["properties"]),
                             "%s vs components.schemas.%s" % (cls.__name__, name))
            for req in schema.get("required", []):
                f = {x.name: x for x in dataclasses.fields(cls)}[req]
                nullable = "null" in json_types(schema["properties"][req], schemas)
                self.assertTrue(f.default is dataclasses.MISSING or nullable
                                or f.default is not None or f.default_factory
                                is not dataclasses.MISSING,
                                "%s.%s is required by the schema" % (cls.__name__, req))
        self.assertEqual(set(mnemod.SegmentInput.__annotations__),
                         set(schemas["SegmentIn"]["properties"]))

        def kwargs(fn, skip=("self", "ns")):
            return {p for p in inspect.signature(fn).parameters if p not in skip}
        self.assertEqual(kwargs(mnemod.Client.retrieve),
                         set(schemas["RetrieveRequest"]["properties"]))
        self.assertEqual(kwargs(mnemod.Client.compact),
                         set(schemas["CompactRequest"]["properties"]))
        self.assertEqual(kwargs(mnemod.Client.create_namespace),
                         set(schemas["NamespaceCreate"]["properties"]))
        self.assertEqual(kwargs(mnemod.Client.update_segment, ("self", "ns", "id")),
                         set(schemas["SegmentPatch"]["properties"]))
        # an error's fields: code and message as attributes, the rest in details
        err = schemas["Error"]["properties"]["error"]
        self.assertEqual(set(err["required"]), {"code", "message"})
        e = errors.error_from_response(400, {"error": {p: "x" for p in err["properties"]}})
        self.assertEqual(set(e.details), set(err["properties"]))
        self.assertEqual((e.code, e.message, e.field), ("x", "x", "x"))
        params = doc["components"]["parameters"]
        listing = doc["paths"]["/v1/namespaces/{ns}/segments"]["get"]["parameters"]
        names = {params[p["$ref"].rsplit("/", 1)[1]]["name"] for p in listing}
        self.assertEqual(kwargs(mnemod.Client.list_segments), names)
        one = doc["paths"]["/v1/namespaces/{ns}/segments/{id}"]["get"].get("parameters", [])
        self.assertEqual(kwargs(mnemod.Client.get_segment, ("self", "ns", "id")),
                         {params[p["$ref"].rsplit("/", 1)[1]]["name"] for p in one})
        # every operation of the document has its method here
        ops = {op["operationId"] for path in doc["paths"].values() for op in path.values()
               if isinstance(op, dict) and "operationId" in op
               and not op.get("x-mnemod-cluster-only")}  # cluster administration: no methods
        mine = {"health": "health", "metrics": "metrics", "openapi": "openapi",
                "listNamespaces": "list_namespaces", "createNamespace": "create_namespace",
                "getNamespace": "get_namespace", "deleteNamespace": "delete_namespace",
                "insertSegments": "insert", "listSegments": "list_segments",
                "getSegment": "get_segment", "deleteSegment": "delete_segment",
                "patchSegment": "update_segment", "retrieve": "retrieve", "compact": "compact",
                "exportNamespace": "export", "importNamespace": "import_segments",
                "clusterStatus": "cluster_status", "clusterSnapshot": "cluster_snapshot"}
        rest = {o for o in ops if o != "mcp"}  # MCP is JSON-RPC for agents, not a REST route
        self.assertEqual(rest - set(mine), set(), "operations without a client method")
        for op in rest:
            self.assertTrue(callable(getattr(mnemod.Client, mine[op])), op)
        self.assertEqual(kwargs(mnemod.Client.cluster_snapshot),
                         set(schemas["SnapshotRequest"]["properties"]))
        # and the async client has every one of them too
        public = {n for n in dir(mnemod.Client) if not n.startswith("_")} - {"close"}
        self.assertEqual(public - set(dir(mnemod.AsyncClient)), set(), "missing in AsyncClient")

    def test_update_segment(self):
        ns = self.ns()
        self.c.insert(ns, "a memory", id="m", source="chat", metadata={"u": "ana", "p": 1})
        seg = self.c.update_segment(ns, "m", metadata={"u": "bo", "tags": ["x"]})
        self.assertIsInstance(seg, mnemod.Segment)
        self.assertEqual((seg.metadata, seg.source), ({"u": "bo", "tags": ["x"]}, "chat"))
        seg = self.c.update_segment(ns, "m", source="ops")
        self.assertEqual((seg.metadata, seg.source), ({"u": "bo", "tags": ["x"]}, "ops"))
        seg = self.c.update_segment(ns, "m", metadata=None)
        self.assertIsNone(seg.metadata)
        self.assertEqual(self.c.get_segment(ns, "m").to_dict(), seg.to_dict())
        self.assertEqual(seg.text, "a memory")
        with self.assertRaises(errors.BadRequestError) as cm:
            self.c.request("PATCH", "/v1/namespaces/%s/segments/m" % ns, {"text": "changed"})
        self.assertEqual(cm.exception.field, "text")
        with self.assertRaises(errors.NotFoundError):
            self.c.update_segment(ns, "nope", source="x")

    def test_metadata_filters(self):
        ns = self.ns()
        self.c.insert_batch(ns, [
            {"id": "a", "embedding": [1, 0], "metadata": {"user": "ana", "prio": 3, "t": {"k": 1}}},
            {"id": "b", "embedding": [0.9, 0.1], "metadata": {"user": "bo", "prio": 1}},
            {"id": "c", "embedding": [0.8, 0.2], "metadata": {"user": "ana", "prio": 1}},
            {"id": "d", "embedding": [0.7, 0.3]}])
        def ids(f):
            return [r.id for r in self.c.retrieve(ns, embedding=[1, 0], filter=f).results]
        self.assertEqual(ids({"user": "ana"}), ["a", "c"])
        self.assertEqual(ids({"prio": {"$gte": 2}}), ["a"])
        self.assertEqual(ids({"user": {"$in": ["bo", "cy"]}}), ["b"])
        self.assertEqual(ids({"t.k": 1}), ["a"])
        self.assertEqual(ids({"user": {"$exists": False}}), ["d"])
        self.assertEqual(ids({"user": "ana", "prio": {"$lt": 2}}), ["c"])
        with self.assertRaises(errors.BadRequestError) as cm:
            ids({"user": {"$bogus": 1}})
        self.assertTrue(cm.exception.field.startswith("filter"), cm.exception.field)

    def test_export_import(self):
        ns, copy = self.ns(), self.ns() + "_copy"
        self.c.insert_batch(ns, [{"id": "s%d" % i, "text": "memory %d about %s" % (i, w),
                                  "metadata": {"i": i}, "source": "src%d" % (i % 2),
                                  "timestamp": 1_760_000_000 + i * 60}
                                 for i, w in enumerate(["cats", "dogs", "birds", "fish", "cats"])])
        self.c.insert(ns, "replaces s0", id="s5", supersedes=["s0"], timestamp=1_760_000_400)
        self.c.compact(ns, target=4, policy="coherence_weighted", context=[])
        lines = list(self.c.export(ns))
        self.assertEqual([x["id"] for x in lines], ["s%d" % i for i in range(6)])
        self.assertEqual(sum(1 for x in lines if x["archived"]), 1)
        self.assertEqual(lines[5]["supersedes"], ["s0"])
        self.assertEqual(len(lines[0]["embedding"]), 256)
        seen = []
        res = self.c.import_segments(copy, lines, progress=seen.append, chunk_bytes=2000)
        self.assertIsInstance(res, mnemod.ImportResult)
        self.assertEqual((res.imported, res.skipped), (6, 0))
        self.assertGreater(len(seen), 2, "several chunks with progress")
        self.assertEqual([p.lines for p in seen][-1], 6)
        self.assertTrue(seen[-1].done and not any(p.done for p in seen[:-1]))
        self.assertEqual(seen[-1].bytes, sum(len(json.dumps(x, separators=(",", ":"))) + 1
                                             for x in ({k: v for k, v in x.items()
                                                        if v is not None} for x in lines)))
        self.assertEqual(list(self.c.export(copy)), lines, "export, import, export: the same")
        st, st2 = self.c.get_namespace(ns), self.c.get_namespace(copy)
        for f in ("count", "superseded", "archived", "graph_edges", "max_degree", "oldest",
                  "newest"):
            self.assertEqual(getattr(st, f), getattr(st2, f), f)
        # the copy answers a text query as the original does: with the server's default match
        # (what a user sends) and with each match named
        for match in (None, "hybrid", "text", "vector"):
            q = dict(k=10, half_life="1d", origin=1_760_000_600, explain=True, match=match)
            a = self.c.retrieve(ns, "memory about cats", **q)
            b = self.c.retrieve(copy, "memory about cats", **q)
            self.assertEqual(a.match, b.match, "match %s" % match)
            self.assertEqual([(r.id, r.score) for r in a.results],
                             [(r.id, r.score) for r in b.results], "match %s" % match)
        # identical lines are skipped; a file object works (text or binary)
        import io
        import tempfile
        with tempfile.TemporaryFile() as f:
            n = self.c.export_to(ns, f)
            self.assertEqual(n, 6)
            f.seek(0)
            again = self.c.import_segments(copy, f)
        self.assertEqual((again.imported, again.skipped), (0, 6))
        text = io.StringIO("".join(json.dumps({"id": "t%d" % i, "embedding": [1, i]}) + "\n"
                                   for i in range(3)))
        fresh = self.c.import_segments(self.ns() + "_text", text)
        self.assertEqual(fresh.imported, 3)
        # all or nothing: a bad line is named, nothing written
        bad = [{"id": "ok1", "embedding": [1, 0]}, {"id": "ok2", "embedding": [1, 1]},
               {"id": "bad", "embedding": [1]}]
        with self.assertRaises(errors.BadRequestError) as cm:
            self.c.import_segments(self.ns() + "_bad", iter(bad))
        self.assertEqual((cm.exception.code, cm.exception.details.get("line")),
                         ("dimension_mismatch", 3))
        with self.assertRaises(errors.NotFoundError):
            self.c.get_namespace(self.ns() + "_bad")

    # ---------------------------------------------------------------- retrieval

    def test_retrieve_scores_follow_the_formula(self):
        ns = self.ns()
        origin = dt.datetime(2026, 3, 1, tzinfo=UTC)
        vecs = {"old": [1, 0.2, 0], "mid": [0.9, 0.4, 0.1], "new": [0.5, 0.5, 0.5]}
        ages = {"old": 60, "mid": 20, "new": 1}
        self.c.insert_batch(ns, [{"id": i, "embedding": vecs[i],
                                  "timestamp": origin - dt.timedelta(days=ages[i])}
                                 for i in ("old", "mid", "new")])
        q = [1, 0.3, 0.05]
        res = self.c.retrieve(ns, embedding=q, k=3, half_life=dt.timedelta(days=14),
                              origin=origin, explain=True)
        self.assertIsInstance(res, mnemod.RetrieveResult)
        self.assertEqual(res.namespace, ns)
        self.assertEqual(res.scanned, 3)
        self.assertTrue(res.kernel)
        want = {}
        for i in vecs:
            sim = dot(unit(q), unit(vecs[i]))
            want[i] = sim * 0.5 ** (ages[i] / 14.0)
        order = sorted(want, key=lambda i: -want[i])
        self.assertEqual([r.id for r in res.results], order)
        for r in res.results:
            self.assertAlmostEqual(r.score, want[r.id], places=5)
            self.assertAlmostEqual(r.decay, 0.5 ** (ages[r.id] / 14.0), places=5)
            self.assertAlmostEqual(r.age_seconds, ages[r.id] * DAY, places=1)
            self.assertIsNotNone(r.similarity)
        # the same request with strings and numbers instead of datetime/timedelta
        res2 = self.c.retrieve(ns, embedding=q, k=3, half_life="14d",
                               origin="2026-03-01T00:00:00Z")
        self.assertEqual([(r.id, round(r.score, 6)) for r in res2.results],
                         [(r.id, round(r.score, 6)) for r in res.results])
        self.assertIsNone(res2.results[0].decay)  # no explain: no parts
        # as_of: later memories are excluded, decay counts back from then
        past = self.c.retrieve(ns, embedding=q, k=3, as_of=origin - dt.timedelta(days=10),
                               half_life_days=14, explain=True)
        self.assertEqual({r.id for r in past.results}, {"old", "mid"})
        for r in past.results:
            self.assertAlmostEqual(r.age_seconds, (ages[r.id] - 10) * DAY, places=1)
        # min_score and k
        top = self.c.retrieve(ns, embedding=q, k=1, half_life="14d", origin=origin)
        self.assertEqual([r.id for r in top.results], order[:1])
        cut = self.c.retrieve(ns, embedding=q, half_life="14d", origin=origin,
                              min_score=want[order[1]] - 1e-4)
        self.assertEqual([r.id for r in cut.results], order[:2])

    def test_text_query_and_source(self):
        ns = self.ns()
        self.c.insert(ns, "the staging database password is hunter2", id="pw-old", source="ops",
                      timestamp="2026-11-02T09:00:00Z")
        self.c.insert(ns, "team lunch moved to thursday", id="lunch",
                      timestamp="2026-11-20T12:00:00Z")
        self.c.insert(ns, "rotated: staging database password is now swordfish", id="pw-new",
                      source="ops", timestamp="2026-11-28T09:00:00Z")
        plain = self.c.retrieve(ns, "staging database password", k=2)
        self.assertEqual([r.id for r in plain.results], ["pw-old", "pw-new"])
        decayed = self.c.retrieve(ns, "staging database password", k=2, half_life="7d",
                                  origin="2026-11-30T00:00:00Z")
        self.assertEqual(decayed.results[0].id, "pw-new")
        only_ops = self.c.retrieve(ns, "thursday lunch", source="ops")
        self.assertEqual({r.id for r in only_ops.results}, {"pw-old", "pw-new"})
        self.assertEqual(self.c.retrieve(ns, "password", k=1, as_of="2026-11-10T00:00:00Z")
                         .results[0].id, "pw-old")
        for match in ("text", "vector", "hybrid"):
            r = self.c.retrieve(ns, "staging database password", match=match, explain=True)
            self.assertEqual(r.match, match)
            top = r.results[0]
            if match == "hybrid":
                self.assertIsInstance(top.text_score, float)
                self.assertIsInstance(top.vector_score, float)
            elif match == "text":
                self.assertAlmostEqual(top.similarity, top.text_score, places=6)
        with self.assertRaises(errors.BadRequestError) as cm:
            self.c.retrieve(ns, "x", match="fuzzy")
        self.assertEqual(cm.exception.field, "match")

    def test_compact(self):
        ns = self.ns()
        self.c.insert_batch(ns, [{"id": "s%d" % i, "embedding": [1, i * 0.1, (i % 3) * 0.2],
                                  "timestamp": 1_750_000_000 + i * 60} for i in range(10)])
        dry = self.c.compact(ns, target=4, dry_run=True)
        self.assertIsInstance(dry, mnemod.CompactResult)
        self.assertEqual((dry.before, dry.after), (10, 4))
        self.assertEqual(len(dry.evicted), 6)
        self.assertEqual(self.c.get_namespace(ns).archived, 0)
        done = self.c.compact(ns, ratio=0.5, policy="coherence_weighted", context=[])
        self.assertEqual((done.before, done.after, done.policy), (10, 5, "coherence_weighted"))
        st = self.c.get_namespace(ns)
        self.assertEqual((st.count, st.archived), (5, 5))
        evicted = done.evicted[0]
        self.assertTrue(self.c.get_segment(ns, evicted).archived)
        with self.assertRaises(errors.BadRequestError) as cm:
            self.c.compact(ns, target=3, policy="no_such_policy")
        self.assertEqual(cm.exception.field, "policy")

    def test_models_keep_unknown_fields(self):
        seg = mnemod.Segment.from_dict({"id": "x", "seq": 1, "timestamp": "t", "future": 7})
        self.assertEqual(seg.extra, {"future": 7})
        self.assertEqual(seg.to_dict()["future"], 7)
        self.assertIsNone(seg.to_dict()["superseded_by"])

    # ---------------------------------------------------------------- async

    def test_cluster_routes_outside_cluster_mode(self):
        # a single server has no cluster: both routes answer 404 with the JSON error code
        for call in (self.c.cluster_status, lambda: self.c.cluster_snapshot(trim=True)):
            with self.assertRaises(mnemod.NotFoundError) as cm:
                call()
            self.assertEqual((cm.exception.status, cm.exception.code), (404, "not_found"))
            self.assertIn("not in cluster mode", cm.exception.message)

    def test_async_client(self):
        ns = self.ns()

        async def go():
            async with mnemod.AsyncClient(self.srv.url, api_key="") as ac:
                await ac.create_namespace(ns, dim=2)
                await asyncio.gather(*(ac.insert(ns, embedding=[1, i / 10], id="a%d" % i)
                                       for i in range(1, 6)))
                st = await ac.get_namespace(ns)
                hits = await ac.retrieve(ns, embedding=[1, 0], k=2)
                listed = [x.id async for x in ac.iter_segments(ns, page_size=2)]
                lines = [json.loads(x) async for x in ac.export_lines(ns)]
                return st, hits, listed, lines
        st, hits, listed, lines = asyncio.run(go())
        self.assertEqual(st.count, 5)
        self.assertEqual([r.id for r in hits.results], ["a1", "a2"])
        self.assertEqual(sorted(listed), ["a%d" % i for i in range(1, 6)])
        self.assertEqual(sorted(x["id"] for x in lines), sorted(listed))


def client(case, url, **kw):
    c = mnemod.Client(url, **kw)
    case.addCleanup(c.close)
    return c


class InstallTest(unittest.TestCase):
    """`pip install clients/python` into a fresh venv, offline, then use the installed copy."""

    def test_pip_install_in_venv(self):
        import re
        import shutil
        import subprocess
        import tempfile
        tmp = tempfile.mkdtemp(prefix="mnemod-venv-")
        self.addCleanup(shutil.rmtree, tmp, True)
        src = os.path.join(tmp, "src")
        shutil.copytree(os.path.dirname(HERE), src,
                        ignore=shutil.ignore_patterns("__pycache__", "tests"))
        venv = os.path.join(tmp, "venv")
        py = os.path.join(venv, "bin", "python")
        env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
        # Seeding a venv with its own pip costs most of this test's time; a pip that can
        # install into another interpreter (--python, pip >= 22.3) does the same install
        # into a bare venv. Without one (Debian's python3 has no pip), the venv gets its own.
        outer = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True,
                               text=True, env=env, timeout=60)
        m = re.match(r"pip (\d+)\.(\d+)", outer.stdout)
        if outer.returncode == 0 and m and (int(m.group(1)), int(m.group(2))) >= (22, 3):
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True,
                           timeout=120)
            pip = [sys.executable, "-m", "pip", "--python", py]
        else:
            subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=120)
            pip = [py, "-m", "pip"]
        p = subprocess.run(pip + ["install", "--no-index", src], env=env,
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        srv = Server().start()
        try:
            code = ("import mnemod, sys; c = mnemod.Client(sys.argv[1], api_key='');"
                    "c.insert('inst', 'installed from a wheel', id='w');"
                    "print(mnemod.__version__, mnemod.__file__, c.get_segment('inst', 'w').text)")
            out = subprocess.run([py, "-c", code, srv.url], cwd=tmp, capture_output=True,
                                 text=True, timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            version, path, text = out.stdout.strip().split(" ", 2)
        finally:
            self.assertEqual(srv.stop(), 0)
        with open(os.path.join(src, "pyproject.toml")) as f:
            self.assertEqual(version, re.search(r'^version = "(.*)"', f.read(), re.M).group(1))
        self.assertEqual(version, mnemod.__version__)
        self.assertTrue(path.startswith(venv), path)
        self.assertEqual(text, "installed from a wheel")


class AuthTest(unittest.TestCase):
    """A server with a key: the client sends it from the argument or MNEMOD_API_KEY."""

    @classmethod
    def setUpClass(cls):
        cls.srv = Server(env={"MNEMOD_API_KEY": "s3cret-key"}).start()

    @classmethod
    def tearDownClass(cls):
        assert cls.srv.stop() == 0

    def test_key(self):
        with self.assertRaises(errors.UnauthorizedError) as cm:
            client(self, self.srv.url, api_key="").list_namespaces()
        self.assertEqual(cm.exception.code, "unauthorized")
        with self.assertRaises(errors.UnauthorizedError):
            client(self, self.srv.url, api_key="wrong").list_namespaces()
        self.assertEqual(client(self, self.srv.url, api_key="s3cret-key").list_namespaces(), [])
        old = dict(os.environ)
        try:
            os.environ["MNEMOD_API_KEY"] = "s3cret-key"
            os.environ["MNEMOD_URL"] = self.srv.url
            c = client(self, None)
            self.assertEqual(c.url, self.srv.url)
            c.insert("auth_ns", embedding=[1.0])
            self.assertEqual(c.get_namespace("auth_ns").count, 1)
            self.assertEqual(c.health(), {"status": "ok"})
        finally:
            os.environ.clear()
            os.environ.update(old)


class ClusterTest(unittest.TestCase):
    """The cluster routes and read-your-writes, against a node in cluster mode on a
    one-server NATS JetStream (Debian's nats-server, installed by scripts/deps.sh)."""

    @classmethod
    def setUpClass(cls):
        import shutil
        import socket
        import subprocess
        import tempfile
        cls.dir = tempfile.mkdtemp(prefix="mnemod-nats-")
        port = free_port()
        nats = shutil.which("nats-server") or "/usr/sbin/nats-server"
        with open(os.path.join(cls.dir, "nats.log"), "ab") as log:
            cls.nats = subprocess.Popen([nats, "-js", "-sd", os.path.join(cls.dir, "js"),
                                         "-a", "127.0.0.1", "-p", str(port)],
                                        stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or cls.nats.poll() is not None:
                    cls.tearDownClass()
                    raise
                time.sleep(0.05)
        cls.srv = Server(env={"MNEMOD_NATS_URL": "nats://127.0.0.1:%d" % port,
                              "MNEMOD_NODE_ID": "py", "MNEMOD_REPLICAS": "1",
                              "MNEMOD_STREAMS": "1"}).start()
        cls.c = mnemod.Client(cls.srv.url, api_key="")

    @classmethod
    def tearDownClass(cls):
        import shutil
        rc = None
        if getattr(cls, "srv", None):
            cls.c.close()
            rc = cls.srv.stop()
        cls.nats.terminate()
        cls.nats.wait(20)
        shutil.rmtree(cls.dir, True)
        assert rc in (None, 0), "mnemod exited with %r" % rc

    def test_status_write_read_snapshot(self):
        st = self.c.cluster_status()
        self.assertEqual(st["node"], "py")
        self.assertEqual([(n["id"], n["alive"], n["self"]) for n in st["nodes"]],
                         [("py", True, True)])
        self.assertEqual([x["name"] for x in st["streams"]], ["MNEMOD_0"])
        ins = self.c.insert("py_cluster", "written through the log", id="w1")
        self.assertIsInstance(ins.log_seq, int)
        self.assertGreaterEqual(ins.log_seq, 1)
        hits = self.c.retrieve("py_cluster", "written through the log", min_seq=ins.log_seq)
        self.assertEqual([r.id for r in hits.results], ["w1"])
        st = self.c.cluster_status()
        self.assertGreaterEqual(st["streams"][0]["applied_seq"], ins.log_seq)
        self.assertGreaterEqual(st["counters"]["writes"], 1)
        snap = self.c.cluster_snapshot(trim=True)
        self.assertEqual(snap["node"], "py")
        self.assertGreaterEqual(snap["positions"]["MNEMOD_0"], ins.log_seq)
        # the async client reaches the same routes
        async def go():
            async with mnemod.AsyncClient(client=mnemod.Client(self.srv.url, api_key="")) as ac:
                return await ac.cluster_status()
        self.assertEqual(asyncio.run(go())["node"], "py")
        # a bad body is refused with its code
        with self.assertRaises(mnemod.BadRequestError) as cm:
            self.c.request("POST", "/v1/cluster/snapshot", {"trim": "yes"})
        self.assertEqual(cm.exception.status, 400)


class ReconnectTest(unittest.TestCase):
    """The server closes idle kept-alive connections; the next call opens a new one."""

    def test_idle_connection_closed_by_server(self):
        srv = Server("--idle-timeout", "1s").start()
        try:
            c = client(self, srv.url, api_key="")
            c.insert("idle", embedding=[1.0, 0.0])
            time.sleep(1.6)
            c.insert("idle", embedding=[0.0, 1.0])
            self.assertEqual(c.get_namespace("idle").count, 2)
        finally:
            self.assertEqual(srv.stop(), 0)


class _Flaky(http.server.BaseHTTPRequestHandler):
    """Answers 503 with Retry-After for the first `fail` requests, then 200."""
    fail = 0
    seen = []
    retry_after = "1"

    def do_GET(self):
        type(self).seen.append(time.monotonic())
        if len(type(self).seen) <= type(self).fail:
            body = b'{"error":{"code":"unavailable","message":"the store is still loading"}}'
            self.send_response(503)
            self.send_header("Retry-After", type(self).retry_after)
        else:
            body = b'{"namespaces":[]}'
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


class RetryTest(unittest.TestCase):
    """503 handling needs a server that answers 503 on demand: a stdlib stand-in."""

    def serve(self, fail, retry_after="1"):
        _Flaky.fail, _Flaky.seen, _Flaky.retry_after = fail, [], retry_after
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        self.addCleanup(httpd.server_close)
        self.addCleanup(httpd.shutdown)
        return "http://127.0.0.1:%d" % httpd.server_address[1]

    def test_retry_after_is_honoured(self):
        url = self.serve(fail=2)
        t0 = time.monotonic()
        self.assertEqual(client(self, url, retries=3).list_namespaces(), [])
        self.assertEqual(len(_Flaky.seen), 3)
        self.assertGreaterEqual(_Flaky.seen[1] - _Flaky.seen[0], 0.95)
        self.assertGreaterEqual(_Flaky.seen[2] - _Flaky.seen[1], 0.95)
        self.assertGreaterEqual(time.monotonic() - t0, 1.9)

    def test_gives_up_after_retries(self):
        url = self.serve(fail=10, retry_after="0")
        with self.assertRaises(errors.UnavailableError) as cm:
            client(self, url, retries=2).list_namespaces()
        self.assertEqual(len(_Flaky.seen), 3)
        self.assertEqual((cm.exception.code, cm.exception.retry_after), ("unavailable", 0.0))

    def test_no_retry_when_disabled(self):
        url = self.serve(fail=10)
        with self.assertRaises(errors.UnavailableError):
            client(self, url, retries=0).list_namespaces()
        self.assertEqual(len(_Flaky.seen), 1)

    def test_unreachable_is_transport_error(self):
        port = self.serve(fail=0).rsplit(":", 1)[1]
        with self.assertRaises(errors.TransportError):
            client(self, "http://127.0.0.1:1", timeout=2).list_namespaces()
        self.assertTrue(port)


if __name__ == "__main__":
    unittest.main()
