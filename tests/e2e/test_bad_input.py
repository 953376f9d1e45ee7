"""test_bad_input.py - bad requests get the exact SPEC section 3 status and error code, and
after each one the server still answers and the namespace's data is unchanged."""

import json
import os
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import test, eq, check, expect_error, expect_ok  # noqa: E402

VICTIM = "victim"
DIM = 4
E = [0.1, 0.2, 0.3, 0.4]
DAY = 86400000
_NOW = h.now_ms()
NEWEST = _NOW - DAY            # the victim's newest timestamp
TS_OK = h.rfc3339_ms(_NOW - 3600 * 1000)   # a valid timestamp for bad inserts (newer than NEWEST)
INS = "/v1/namespaces/%s/segments" % VICTIM
RET = "/v1/namespaces/%s/retrieve" % VICTIM
CMP = "/v1/namespaces/%s/compact" % VICTIM
NSP = "/v1/namespaces/%s" % VICTIM
SMALL_ARGS = ["--max-body", "2KiB", "--max-batch", "3"]

_setup_done = set()


def seg(**kw):
    s = {"embedding": E, "timestamp": TS_OK}
    s.update(kw)
    for k in [k for k, v in s.items() if v is _DROP]:
        del s[k]
    return s


class _Drop:
    pass


_DROP = _Drop()


def server(kind):
    srv = h.shared(SMALL_ARGS, key="small") if kind == "small" else h.shared()
    if id(srv) not in _setup_done:
        t0 = NEWEST - 5 * DAY
        segs = [{"id": "v%d" % i, "text": "victim %d" % i, "embedding": [1, i, i * i % 3, 1],
                 "timestamp": h.rfc3339_ms(t0 + i * DAY), "source": "src%d" % (i % 2),
                 "metadata": {"i": i}} for i in range(5)]
        segs.append({"id": "v5", "embedding": [1, 0, 0, 1], "timestamp": h.rfc3339_ms(NEWEST),
                     "supersedes": ["v0"]})
        for i in range(0, 6, 3):    # batches of 3: fits the small server's --max-batch
            expect_ok(srv.insert(VICTIM, {"segments": segs[i:i + 3]}), 201, "victim setup")
        _setup_done.add(id(srv))
    return srv


def snapshot(srv):
    st = expect_ok(srv.ns_stats(VICTIM), 200, "victim stats")
    names = sorted(x["name"] for x in expect_ok(srv.get("/v1/namespaces"))["namespaces"])
    segs = {}
    for i in range(6):
        g = expect_ok(srv.seg(VICTIM, "v%d" % i, embedding=True), 200, "victim segment v%d" % i)
        segs[g["id"]] = g
    return st, names, segs


def assert_unchanged(srv, before, what):
    st = srv.get("/healthz")
    eq(st[0], 200, "%s: server still answers /healthz" % what)
    after = snapshot(srv)
    for f in ("count", "superseded", "archived", "dim", "oldest", "newest", "graph_edges", "max_degree"):
        eq(after[0].get(f), before[0].get(f), "%s: victim stats %s unchanged" % (what, f))
    eq(after[1], before[1], "%s: namespace list unchanged" % what)
    eq(after[2], before[2], "%s: victim segments unchanged" % what)


# ------------------------------------------------------------------ the cases
# (name, server kind, method, path, body, headers, status, code(s), unknown field to be named)

JSON_OR_FIELD = {"invalid_json", "invalid_field"}
CASES = []


def case(name, method, path, body, status, code, headers=None, kind="default", names=None):
    CASES.append((name, kind, method, path, body, headers, status, code, names))


def b(s):
    return s.encode("utf-8") if isinstance(s, str) else s


deep = b"{\"embedding\":[1,2,3,4],\"metadata\":{\"x\":" + b"[" * 100000 + b"]" * 100000 + b"}}"

# malformed JSON
case("truncated_json", "POST", INS, b('{"embedding": [1,2,3,4]'), 400, "invalid_json")
case("trailing_garbage", "POST", INS, b('{"embedding": [1,2,3,4]} xyz'), 400, "invalid_json")
case("trailing_second_object", "POST", INS, b('{"embedding": [1,2,3,4]}{}'), 400, "invalid_json")
case("unquoted_key", "POST", INS, b('{embedding: [1,2,3,4]}'), 400, "invalid_json")
case("single_quotes", "POST", INS, b("{'embedding': [1,2,3,4]}"), 400, "invalid_json")
case("trailing_comma", "POST", INS, b('{"embedding": [1,2,3,4],}'), 400, "invalid_json")
case("empty_body_insert", "POST", INS, b"", 400, "invalid_json")
case("empty_body_retrieve", "POST", RET, b"", 400, "invalid_json")
case("nan_literal", "POST", INS, b('{"embedding": [NaN,1,2,3]}'), 400, "invalid_json")
case("infinity_literal", "POST", INS, b('{"embedding": [Infinity,1,2,3]}'), 400, "invalid_json")
case("invalid_utf8_ff", "POST", INS, b'{"text":"a\xff\xfeb","embedding":[1,2,3,4]}', 400, "invalid_json")
case("invalid_utf8_overlong", "POST", INS, b'{"text":"\xc0\xaf","embedding":[1,2,3,4]}', 400, "invalid_json")
case("invalid_utf8_surrogate", "POST", INS, b'{"text":"\xed\xa0\x80","embedding":[1,2,3,4]}', 400,
     "invalid_json")
case("invalid_utf8_in_key", "POST", RET, b'{"embed\xffding":[1,2,3,4]}', 400, "invalid_json")
case("deep_nesting_metadata", "POST", INS, deep, 400, JSON_OR_FIELD)
case("deep_nesting_body", "POST", RET, b"[" * 200000 + b"]" * 200000, 400, JSON_OR_FIELD)
case("duplicate_key", "POST", INS, b('{"embedding":[1,2,3,4],"embedding":[4,3,2,1]}'), 400, JSON_OR_FIELD)
# well-formed JSON of the wrong type: SPEC does not say which of the two codes
case("top_level_array", "POST", INS, b("[1,2,3,4]"), 400, JSON_OR_FIELD)
case("top_level_array_retrieve", "POST", RET, b("[]"), 400, JSON_OR_FIELD)
case("top_level_string", "POST", RET, b('"text"'), 400, JSON_OR_FIELD)
case("huge_number_1e400", "POST", INS, b('{"embedding":[1e400,1,1,1]}'), 400, JSON_OR_FIELD)

# insert: wrong types and values for every field
case("id_number", "POST", INS, seg(id=5), 400, "invalid_field")
case("id_empty", "POST", INS, seg(id=""), 400, "invalid_field")
case("id_129_bytes", "POST", INS, seg(id="x" * 129), 400, "invalid_field")
case("id_129_bytes_utf8", "POST", INS, seg(id="\u00e9" * 64 + "x"), 400, "invalid_field")
case("id_null", "POST", INS, seg(id=None), 400, {"invalid_field", "__ok__"})   # null may mean absent
case("text_number", "POST", INS, seg(text=5), 400, "invalid_field")
case("text_array", "POST", INS, seg(text=["a"]), 400, "invalid_field")
case("text_over_1mib", "POST", INS, seg(text="a" * (1024 * 1024 + 1)), 400, "invalid_field")
case("embedding_string", "POST", INS, seg(embedding="1,2,3,4"), 400, "invalid_field")
case("embedding_strings", "POST", INS, seg(embedding=["1", "2", "3", "4"]), 400, "invalid_field")
case("embedding_nested", "POST", INS, seg(embedding=[[1], [2], [3], [4]]), 400, "invalid_field")
case("embedding_bools", "POST", INS, seg(embedding=[True, 1, 1, 1]), 400, "invalid_field")
case("embedding_object", "POST", INS, seg(embedding={"0": 1}), 400, "invalid_field")
case("embedding_null_element", "POST", INS, seg(embedding=[None, 1, 1, 1]), 400, "invalid_field")
case("embedding_dim_mismatch", "POST", INS, seg(embedding=[1, 2, 3]), 400, "dimension_mismatch")
case("embedding_dim_mismatch_long", "POST", INS, seg(embedding=[1] * 5), 400, "dimension_mismatch")
case("embedding_zero", "POST", INS, seg(embedding=[0, 0, 0, 0]), 400, "invalid_field")
case("embedding_1e39", "POST", INS, seg(embedding=[1e39, 1, 1, 1]), 400, "invalid_field")
case("embedding_neg_1e39", "POST", INS, seg(embedding=[1, -1e39, 1, 1]), 400, "invalid_field")
case("embedding_norm_overflow", "POST", INS, seg(embedding=[3e38, 3e38, 3e38, 3e38]), 400,
     {"invalid_field", "__ok__"})
case("timestamp_bool", "POST", INS, seg(timestamp=True), 400, "invalid_field")
case("timestamp_object", "POST", INS, seg(timestamp={"a": 1}), 400, "invalid_field")
case("timestamp_no_zone", "POST", INS, seg(timestamp="2026-01-01T00:00:00"), 400, "invalid_field")
case("timestamp_feb_30", "POST", INS, seg(timestamp="2026-02-30T00:00:00Z"), 400, "invalid_field")
case("timestamp_month_13", "POST", INS, seg(timestamp="2026-13-01T00:00:00Z"), 400, "invalid_field")
case("timestamp_hour_25", "POST", INS, seg(timestamp="2026-01-01T25:00:00Z"), 400, "invalid_field")
case("timestamp_words", "POST", INS, seg(timestamp="yesterday"), 400, "invalid_field")
case("timestamp_empty", "POST", INS, seg(timestamp=""), 400, "invalid_field")
case("timestamp_date_only", "POST", INS, seg(timestamp="2026-01-01"), 400, "invalid_field")
case("timestamp_bad_offset", "POST", INS, seg(timestamp="2026-01-01T00:00:00+25:00"), 400, "invalid_field")
case("timestamp_nan_string", "POST", INS, seg(timestamp="NaN"), 400, "invalid_field")
case("timestamp_huge_number", "POST", INS, seg(timestamp=1e300), 400, {"invalid_field",
                                                                         "timestamp_in_future"})
case("timestamp_in_future", "POST", INS, seg(timestamp=h.rfc3339_ms(_NOW + 7 * DAY)), 400, "timestamp_in_future")
case("timestamp_non_monotonic", "POST", INS, seg(timestamp=h.rfc3339_ms(NEWEST - 1000)), 409,
     "non_monotonic_timestamp")
case("source_number", "POST", INS, seg(source=5), 400, "invalid_field")
case("source_object", "POST", INS, seg(source={}), 400, "invalid_field")
case("metadata_array", "POST", INS, seg(metadata=[1, 2]), 400, "invalid_field")
# metadata deeper than its 1000 levels (the JSON itself within its 2048)
case("metadata_1001_levels", "POST", INS,
     b'{"embedding":[1,2,3,4],"metadata":' + b'{"a":' * 1001 + b'1' + b'}' * 1002, 400,
     "invalid_field")
case("metadata_string", "POST", INS, seg(metadata="{}"), 400, "invalid_field")
case("supersedes_string", "POST", INS, seg(supersedes="v1"), 400, "invalid_field")
case("supersedes_numbers", "POST", INS, seg(supersedes=[1]), 400, "invalid_field")
case("supersedes_unknown", "POST", INS, seg(supersedes=["ghost"]), 400, "unknown_id")
case("supersedes_mixed_unknown", "POST", INS, seg(supersedes=["v1", "ghost"]), 400, "unknown_id")
case("unknown_field_insert", "POST", INS, seg(txt="typo"), 400, "invalid_field", names="txt")
case("unknown_field_insert_ts", "POST", INS, seg(timestmp=1), 400, "invalid_field", names="timestmp")
case("no_text_no_embedding", "POST", INS, {"id": "lonely", "timestamp": TS_OK}, 400, "invalid_field")
case("empty_object", "POST", INS, {}, 400, "invalid_field")
case("duplicate_id", "POST", INS, seg(id="v1", embedding=[4, 3, 2, 1]), 409, "duplicate_id")
case("segments_string", "POST", INS, {"segments": "x"}, 400, "invalid_field")
case("segments_object", "POST", INS, {"segments": {"a": seg()}}, 400, "invalid_field")
case("segments_numbers", "POST", INS, {"segments": [5]}, 400, "invalid_field")
case("segments_empty", "POST", INS, {"segments": []}, 400, "invalid_field")
case("segments_unknown_member_field", "POST", INS, {"segments": [seg(), seg(colour="red")]}, 400,
     "invalid_field", names="colour")
case("segments_plus_extra_field", "POST", INS, {"segments": [seg()], "extra": 1}, 400, "invalid_field",
     names="extra")
case("segments_one_bad_member", "POST", INS, {"segments": [seg(id="okA"), seg(id="okB", embedding=[1, 2])]},
     400, "dimension_mismatch")
case("batch_over_1000", "POST", INS, {"segments": [{"embedding": E} for _ in range(1001)]}, 400,
     "invalid_field")
case("new_ns_dim_4097", "POST", "/v1/namespaces/fresh_big/segments", {"embedding": [0.5] * 4097}, 400,
     "invalid_field")
case("new_ns_dim_0", "POST", "/v1/namespaces/fresh_empty/segments", {"embedding": []}, 400, "invalid_field")
case("new_ns_bad_text", "POST", "/v1/namespaces/fresh_text/segments", {"text": 7}, 400, "invalid_field")

# retrieve
Q = {"embedding": E}


def rq(**kw):
    r = dict(Q)
    r.update(kw)
    return r


case("k_zero", "POST", RET, rq(k=0), 400, "invalid_field")
case("k_1001", "POST", RET, rq(k=1001), 400, "invalid_field")
case("k_string", "POST", RET, rq(k="10"), 400, "invalid_field")
case("k_fraction", "POST", RET, rq(k=2.5), 400, "invalid_field")
case("k_negative", "POST", RET, rq(k=-1), 400, "invalid_field")
case("k_huge", "POST", RET, rq(k=2 ** 63), 400, JSON_OR_FIELD)
case("half_life_bad_unit", "POST", RET, rq(half_life="90x"), 400, "invalid_field")
case("half_life_words", "POST", RET, rq(half_life="abc"), 400, "invalid_field")
case("half_life_negative", "POST", RET, rq(half_life="-1d"), 400, "invalid_field")
case("half_life_negative_number", "POST", RET, rq(half_life=-5), 400, "invalid_field")
case("half_life_bool", "POST", RET, rq(half_life=True), 400, "invalid_field")
case("half_life_unit_only", "POST", RET, rq(half_life="d"), 400, "invalid_field")
case("half_life_empty", "POST", RET, rq(half_life=""), 400, "invalid_field")
case("half_life_and_days", "POST", RET, rq(half_life="10d", half_life_days=10), 400, "invalid_field")
case("half_life_days_string", "POST", RET, rq(half_life_days="90"), 400, "invalid_field")
case("half_life_days_negative", "POST", RET, rq(half_life_days=-1), 400, "invalid_field")
case("recency_bias_above_1", "POST", RET, rq(recency_bias=1.5), 400, "invalid_field")
case("recency_bias_negative", "POST", RET, rq(recency_bias=-0.1), 400, "invalid_field")
case("recency_bias_string", "POST", RET, rq(recency_bias="1"), 400, "invalid_field")
case("decay_unknown", "POST", RET, rq(decay="cubic"), 400, "invalid_field")
case("decay_number", "POST", RET, rq(decay=5), 400, "invalid_field")
case("decay_unknown_object", "POST", RET, rq(decay={"gamma": {"shape": 1}}), 400, "invalid_field")
case("weibull_shape_0", "POST", RET, rq(decay={"weibull": {"shape": 0}}), 400, "invalid_field")
case("weibull_shape_10_5", "POST", RET, rq(decay={"weibull": {"shape": 10.5}}), 400, "invalid_field")
case("weibull_shape_negative", "POST", RET, rq(decay={"weibull": {"shape": -1}}), 400, "invalid_field")
case("weibull_shape_missing", "POST", RET, rq(decay={"weibull": {}}), 400, "invalid_field")
case("weibull_shape_string", "POST", RET, rq(decay={"weibull": {"shape": "1.5"}}), 400, "invalid_field")
case("weibull_not_object", "POST", RET, rq(decay={"weibull": 1.5}), 400, "invalid_field")
# "weibull:SHAPE" takes a JSON number, as the object form does (and as --decay does)
case("weibull_string_hex", "POST", RET, rq(decay="weibull:0x1p0"), 400, "invalid_field")
case("weibull_string_space", "POST", RET, rq(decay="weibull: 1"), 400, "invalid_field")
case("weibull_string_nan", "POST", RET, rq(decay="weibull:nan"), 400, "invalid_field")
case("origin_no_zone", "POST", RET, rq(origin="2026-01-01T00:00:00"), 400, "invalid_field")
case("origin_bool", "POST", RET, rq(origin=False), 400, "invalid_field")
case("offset_bad_unit", "POST", RET, rq(offset="5x"), 400, "invalid_field")
case("offset_negative", "POST", RET, rq(offset="-5d"), 400, "invalid_field")
case("coherence_weight_above_1", "POST", RET, rq(coherence_weight=1.5), 400, "invalid_field")
case("coherence_weight_negative", "POST", RET, rq(coherence_weight=-1), 400, "invalid_field")
case("since_bad", "POST", RET, rq(since="last week"), 400, "invalid_field")
case("until_object", "POST", RET, rq(until={"x": 1}), 400, "invalid_field")
case("until_bad_date", "POST", RET, rq(until="2026-02-29T00:00:00Z"), 400, "invalid_field")
case("source_filter_number", "POST", RET, rq(source=5), 400, "invalid_field")
case("as_of_no_zone", "POST", RET, rq(as_of="2026-01-01T00:00:00"), 400, "invalid_field")
case("min_score_string", "POST", RET, rq(min_score="0.5"), 400, "invalid_field")
case("include_superseded_string", "POST", RET, rq(include_superseded="yes"), 400, "invalid_field")
case("include_archived_number", "POST", RET, rq(include_archived=1), 400, "invalid_field")
case("explain_string", "POST", RET, rq(explain="true"), 400, "invalid_field")
case("unknown_field_retrieve", "POST", RET, rq(half_lfe="9d"), 400, "invalid_field", names="half_lfe")
case("retrieve_dim_mismatch", "POST", RET, {"embedding": [1, 2, 3]}, 400, "dimension_mismatch")
case("retrieve_no_query", "POST", RET, {"k": 3}, 400, "invalid_field")
case("retrieve_query_number", "POST", RET, {"query": 5}, 400, "invalid_field")
case("retrieve_zero_vector", "POST", RET, {"embedding": [0, 0, 0, 0]}, 400, "invalid_field")
case("retrieve_1e39", "POST", RET, {"embedding": [1e39, 0, 0, 0]}, 400, "invalid_field")
# the victim's vectors (dim 4) cannot be made from text: vector and hybrid match are refused
# (a text query without "match" matches by text)
case("retrieve_text_dim_mismatch", "POST", RET, {"query": "victim", "match": "vector"}, 400,
     "dimension_mismatch")
case("retrieve_hybrid_dim_mismatch", "POST", RET, {"query": "victim", "match": "hybrid"}, 400,
     "dimension_mismatch")
case("retrieve_match_unknown", "POST", RET, {"query": "victim", "match": "fuzzy"}, 400,
     "invalid_field")
case("retrieve_match_number", "POST", RET, {"query": "victim", "match": 1}, 400, "invalid_field")
case("retrieve_match_text_embedding", "POST", RET, {"embedding": [1, 0, 0, 0], "match": "text"},
     400, "invalid_field")

# compact
case("compact_target_negative", "POST", CMP, {"target": -1}, 400, "invalid_field")
case("compact_target_string", "POST", CMP, {"target": "3"}, 400, "invalid_field")
case("compact_target_fraction", "POST", CMP, {"target": 2.5}, 400, "invalid_field")
case("compact_ratio_zero", "POST", CMP, {"ratio": 0}, 400, "invalid_field")
case("compact_ratio_above_1", "POST", CMP, {"ratio": 1.5}, 400, "invalid_field")
case("compact_no_target", "POST", CMP, {"policy": "coherence_weighted"}, 400, "invalid_field")
case("compact_policy_unknown", "POST", CMP, {"target": 2, "policy": "lru"}, 400, "invalid_field")
case("compact_dry_run_string", "POST", CMP, {"target": 2, "dry_run": "yes"}, 400, "invalid_field")
case("compact_purge_number", "POST", CMP, {"target": 2, "purge": 1}, 400, "invalid_field")
case("compact_weights_number", "POST", CMP, {"target": 2, "weights": 5}, 400, "invalid_field")
case("compact_weights_string_value", "POST", CMP, {"target": 2, "weights": {"recency": "a"}}, 400,
     "invalid_field")
case("compact_weights_unknown_key", "POST", CMP, {"target": 2, "weights": {"recncy": 1}}, 400,
     "invalid_field", names="recncy")
case("compact_context_string", "POST", CMP, {"target": 2, "context": "x"}, 400, "invalid_field")
case("compact_context_dim", "POST", CMP, {"target": 2, "context": [[1, 2]]}, 400,
     {"dimension_mismatch", "invalid_field"})
case("compact_dedup_string", "POST", CMP, {"target": 2, "dedup_threshold": "a"}, 400, "invalid_field")
case("compact_unknown_field", "POST", CMP, {"targt": 2}, 400, "invalid_field", names="targt")

# namespaces
case("ns_dim_0", "PUT", "/v1/namespaces/fresh_dim", {"dim": 0}, 400, "invalid_field")
case("ns_dim_4097", "PUT", "/v1/namespaces/fresh_dim", {"dim": 4097}, 400, "invalid_field")
case("ns_dim_string", "PUT", "/v1/namespaces/fresh_dim", {"dim": "384"}, 400, "invalid_field")
case("ns_dim_fraction", "PUT", "/v1/namespaces/fresh_dim", {"dim": 2.5}, 400, "invalid_field")
case("ns_dim_missing", "PUT", "/v1/namespaces/fresh_nodim", {}, 400, {"invalid_field", "__ok__"})  # may default
case("ns_unknown_field", "PUT", "/v1/namespaces/fresh_dim", {"dim": 4, "dims": 4}, 400, "invalid_field",
     names="dims")
case("ns_exists_other_dim", "PUT", NSP, {"dim": 5}, 409, "namespace_exists")
case("ns_put_malformed", "PUT", "/v1/namespaces/fresh_dim", b("{\"dim\":"), 400, "invalid_json")

# bad namespace names
for nm, path in [("dot", "."), ("dotdot", ".."), ("slash_encoded", "a%2Fb"), ("slash_encoded_lower", "a%2fb"),
                 ("len_65", "a" * 65), ("empty", ""), ("leading_dash", "-abc"), ("leading_dot", ".abc"),
                 ("space", "a%20b"), ("non_ascii", "%C3%A9t%C3%A9"), ("nul", "a%00b"), ("colon", "a:b")]:
    case("ns_name_%s_insert" % nm, "POST", "/v1/namespaces/%s/segments" % path, {"embedding": E}, 400,
         "invalid_field")
for nm, path in [("dot", "."), ("slash_encoded", "a%2Fb"), ("len_65", "a" * 65)]:
    case("ns_name_%s_create" % nm, "PUT", "/v1/namespaces/%s" % path, {"dim": 4}, 400, "invalid_field")
    case("ns_name_%s_retrieve" % nm, "POST", "/v1/namespaces/%s/retrieve" % path, {"embedding": E}, 400,
         "invalid_field")
case("ns_name_slash_encoded_stats", "GET", "/v1/namespaces/a%2Fb", None, 400, "invalid_field")

# content types
case("ctype_text_plain", "POST", INS, seg(), 415, "unsupported_media_type", headers={"Content-Type": "text/plain"})
case("ctype_form", "POST", INS, seg(), 415, "unsupported_media_type",
     headers={"Content-Type": "application/x-www-form-urlencoded"})
case("ctype_retrieve_xml", "POST", RET, Q, 415, "unsupported_media_type", headers={"Content-Type": "text/xml"})
case("ctype_put_octet", "PUT", "/v1/namespaces/fresh_ct", {"dim": 4}, 415, "unsupported_media_type",
     headers={"Content-Type": "application/octet-stream"})
case("ctype_compact_plain", "POST", CMP, {"target": 1}, 415, "unsupported_media_type",
     headers={"Content-Type": "text/plain"})
# a compressed body is named as such, not parsed as JSON bytes (gzip of one segment here)
GZ_SEG = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xabV*\xc9\xafLU\xb2R\xca\x05\x00\x8b\xdd\xc2\xd5\x0c\x00\x00\x00"
case("cenc_gzip_insert", "POST", INS, GZ_SEG, 415, "unsupported_media_type",
     headers={"Content-Encoding": "gzip"})
case("cenc_br_retrieve", "POST", RET, Q, 415, "unsupported_media_type", headers={"Content-Encoding": "br"})
case("cenc_gzip_import", "POST", "/v1/namespaces/%s/import" % VICTIM, b'{"text": "x"}\n', 415,
     "unsupported_media_type", headers={"Content-Type": "application/x-ndjson", "Content-Encoding": "gzip"})
case("cenc_gzip_mcp", "POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, 415,
     "unsupported_media_type", headers={"Content-Encoding": "GZIP"})

# methods and routes
case("method_patch_ns", "PATCH", NSP, {"dim": 4}, 405, "method_not_allowed")
case("method_delete_retrieve", "DELETE", RET, None, 405, "method_not_allowed")
case("method_get_retrieve", "GET", RET, None, 405, "method_not_allowed")
case("method_put_segments", "PUT", INS, seg(), 405, "method_not_allowed")
case("method_post_segment_id", "POST", INS + "/v1", seg(), 405, "method_not_allowed")
case("method_post_healthz", "POST", "/healthz", {}, 405, "method_not_allowed")
case("method_delete_namespaces", "DELETE", "/v1/namespaces", None, 405, "method_not_allowed")
case("method_get_compact", "GET", CMP, None, 405, "method_not_allowed")
case("route_v1_unknown", "GET", "/v1/nope", None, 404, "not_found")
case("route_ns_unknown_sub", "GET", NSP + "/nope", None, 404, "not_found")
case("route_root_unknown", "GET", "/nope", None, 404, "not_found")
case("route_v2", "POST", "/v2/namespaces/%s/segments" % VICTIM, seg(), 404, "not_found")
case("segment_missing", "GET", INS + "/ghost", None, 404, "not_found")
case("segment_delete_missing", "DELETE", INS + "/ghost", None, 404, "not_found")

case("body_over_default_16mib", "POST", RET, b'{"embedding":[' + b"0.5," * (17 * 1024 * 1024 // 4) + b'0.5]}',
     413, "payload_too_large")
case("timestamp_feb_29_non_leap", "POST", INS, seg(timestamp="2026-02-29T00:00:00Z"), 400, "invalid_field")

# decisions the README records where the SPEC is silent
case("readme_unknown_query_param", "GET", INS + "/v1?embeddings=true", None, 400, "invalid_field")
case("readme_bad_query_value", "GET", INS + "/v1?embedding=maybe", None, 400, "invalid_field")
# a parameter given twice is ambiguous, as in the listing
case("segment_query_param_twice", "GET", INS + "/v1?embedding=true&embedding=false", None, 400,
     "invalid_field")
case("export_query_param_twice", "GET", NSP + "/export?embedding=base64&embedding=true", None, 400,
     "invalid_field")
case("readme_since_after_until", "POST", RET, rq(since=TS_OK, until=h.rfc3339_ms(NEWEST - DAY)), 400,
     "invalid_field")
case("readme_leap_second", "POST", INS, seg(timestamp="2016-12-31T23:59:60Z"), 400, "invalid_field")
case("readme_source_empty", "POST", INS, seg(source=""), 400, "invalid_field")
case("readme_source_257", "POST", INS, seg(source="s" * 257), 400, "invalid_field")
case("readme_supersedes_itself", "POST", INS, seg(id="selfish", supersedes=["selfish"]), 400,
     {"invalid_field", "unknown_id"})
case("readme_text_without_words", "POST", "/v1/namespaces/fresh_punct/segments", {"text": "!!! ??? ..."}, 400,
     "invalid_field")
case("readme_compact_target_and_ratio", "POST", CMP, {"target": 2, "ratio": 0.5}, 400, "invalid_field")
case("readme_compact_negative_weight", "POST", CMP, {"target": 2, "weights": {"recency": -1}}, 400,
     "invalid_field")
case("readme_in_batch_duplicate", "POST", INS, {"segments": [seg(id="twin"), seg(id="twin", text="other")]}, 409,
     "duplicate_id")

# the small-limits server (--max-body 2KiB --max-batch 3)
case("small_body_over_max", "POST", INS, seg(text="x" * 4096), 413, "payload_too_large", kind="small")
case("small_body_1mib", "POST", RET, rq(pad=["y" * 1024] * 1024), 413, "payload_too_large", kind="small")
case("small_batch_over_max", "POST", INS, {"segments": [seg(id="s%d" % i) for i in range(4)]}, 400,
     "invalid_field", kind="small")
case("small_retrieve_k_0", "POST", RET, rq(k=0), 400, "invalid_field", kind="small")


def _make_case_test(c):
    name, kind, method, path, body, headers, status, code, names = c

    def fn():
        srv = server(kind)
        before = snapshot(srv)
        # paths with "." segments or raw bytes go through the raw socket so nothing normalises them
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode("utf-8")
        hdr_ct = (headers or {}).get("Content-Type", "application/json")
        extra = "".join("%s: %s\r\n" % kv for kv in (headers or {}).items() if kv[0] != "Content-Type")
        raw = h.raw_request(method, path, data or b"", ctype=hdr_ct if data is not None else None,
                            extra=extra.encode("latin-1"))
        resp = srv.raw(raw, timeout=60.0)
        codes = code if isinstance(code, set) else {code}
        if "__ok__" in codes:     # either rejected with the listed code or accepted: only safety checked
            if resp[0] in (200, 201):
                eq(srv.get("/healthz")[0], 200, "%s: server still answers" % name)
                return
            codes = codes - {"__ok__"}
        err = expect_error(resp, status, codes, name)
        if names:
            check(err.get("field") == names or names in err.get("message", ""),
                  "%s: the error does not name the unknown field %r: %s" % (name, names, err))
        assert_unchanged(srv, before, name)

    fn.__name__ = "test_bad_" + name
    return fn


for _c in CASES:
    test(_make_case_test(_c))


@test
def test_bad_content_encoding_identity_is_accepted():
    # the one coding mnemod reads is none at all: "identity" (any case, spaces around) is a plain body
    srv = server("default")
    ins = "/v1/namespaces/cenc_identity/segments"   # its own namespace: the victim stays as it was
    body = json.dumps(seg(id="s1")).encode("utf-8")
    raw = h.raw_request("POST", ins, body, extra=b"Content-Encoding:  Identity \r\n")
    eq(srv.raw(raw, timeout=60.0)[0], 201, "identity-coded insert")
    eq(srv.get(ins + "/s1")[0], 200, "the identity-coded segment is stored")


# ------------------------------------------------------------------ transport-level abuse

@test
def test_bad_content_length_lies_over_max():
    """A declared body over --max-body is refused without waiting for it."""
    srv = server("small")
    before = snapshot(srv)
    raw = ("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n"
           "Connection: close\r\n\r\n{" % INS).encode()
    resp = srv.raw(raw, timeout=20.0)
    expect_error(resp, 413, "payload_too_large", "huge Content-Length")
    assert_unchanged(srv, before, "huge Content-Length")


@test
def test_bad_chunked_body_over_max():
    srv = server("small")
    before = snapshot(srv)
    chunk = b"[" + b"1," * 2000 + b"1]"
    body = b"%x\r\n%s\r\n" % (len(b'{"embedding":'), b'{"embedding":')
    body += b"%x\r\n%s\r\n" % (len(chunk), chunk) + b"1\r\n}\r\n0\r\n\r\n"
    raw = ("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
           "Connection: close\r\n\r\n" % INS).encode() + body
    resp = srv.raw(raw, timeout=20.0)
    expect_error(resp, 413, "payload_too_large", "chunked over max")
    assert_unchanged(srv, before, "chunked over max")


@test
def test_bad_garbage_request_line():
    srv = server("default")
    before = snapshot(srv)
    for junk in (b"\x00\x01\x02\x03garbage\r\n\r\n", b"GET\r\n\r\n", b"NOT-HTTP / HTTP/9.9\r\n\r\n",
                 b"POST " + INS.encode() + b" HTTP/1.1\r\nContent-Length: -5\r\n\r\n"):
        st, _, _ = srv.raw(junk, timeout=20.0)
        check(st is None or 400 <= st < 500 or st == 501 or st == 505,
              "garbage %r answered %r" % (junk[:20], st))
        assert_unchanged(srv, before, "garbage %r" % junk[:20])


@test
def test_bad_slow_client_does_not_block_others():
    """A client dribbling its request one byte at a time does not stall other clients."""
    srv = server("default")
    before = snapshot(srv)
    body = json.dumps({"embedding": E}).encode()
    raw = h.raw_request("POST", RET, body)
    result = {}

    def slow():
        try:
            result["resp"] = srv.raw(None, timeout=60.0, chunks=[raw[i:i + 1] for i in range(len(raw))],
                                     delay=0.01)
        except OSError as e:
            result["err"] = e

    t = threading.Thread(target=slow, daemon=True)
    t.start()
    served = 0
    deadline = time.monotonic() + 30
    while t.is_alive() and time.monotonic() < deadline:
        expect_ok(srv.get("/healthz"), 200, "healthz during a slow client")
        expect_ok(srv.retrieve(VICTIM, {"embedding": E, "k": 2}), 200, "retrieve during a slow client")
        served += 1
    t.join(60)
    check(served >= 3, "other clients were served while the slow one dribbled (%d)" % served)
    check("resp" in result, "slow client got no answer: %r" % result.get("err"))
    eq(result["resp"][0], 200, "the slow request completes")
    assert_unchanged(srv, before, "slow client")


@test
def test_bad_many_requests_on_one_connection():
    """Keep-alive: errors do not poison the connection for the next request."""
    srv = server("default")
    before = snapshot(srv)
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    try:
        for i in range(20):
            bad = i % 2 == 0
            payload = b'{"embedding": [1,2' if bad else json.dumps({"embedding": E, "k": 1}).encode()
            conn.request("POST", RET, body=payload, headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            data = json.loads(r.read())
            if bad:
                eq(r.status, 400, "bad on keep-alive")
                eq(data["error"]["code"], "invalid_json", "code on keep-alive")
            else:
                eq(r.status, 200, "good on keep-alive")
    finally:
        conn.close()
    assert_unchanged(srv, before, "keep-alive")


@test
def test_bad_many_idle_connections():
    """Hundreds of idle connections (and half-sent requests) do not stop other clients."""
    import socket
    srv = server("default")
    before = snapshot(srv)
    socks = []
    try:
        for i in range(300):
            c = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
            if i % 3 == 1:
                c.sendall(b"POST " + INS.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n")
            elif i % 3 == 2:
                c.sendall(b"POST " + RET.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 100\r\n\r\n{\"embedding\":")
            socks.append(c)
        for _ in range(5):
            expect_ok(srv.retrieve(VICTIM, {"embedding": E, "k": 3}), 200, "retrieve with 300 idle connections")
        assert_unchanged(srv, before, "idle connections")
    finally:
        for c in socks:
            c.close()
    expect_ok(srv.get("/healthz"), 200, "after the idle connections closed")


def _closed_within(sock, seconds):
    """True when the server closes the connection (or answers and closes) within seconds."""
    sock.settimeout(seconds)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            b = sock.recv(65536)
            if not b:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except OSError:
        return False
    return False


@test
def test_bad_request_and_idle_timeouts():
    """--request-timeout drops a request never completed; --idle-timeout closes an idle
    keep-alive connection (bounded waits, generous margins)."""
    import socket
    srv = h.shared(["--request-timeout", "1s", "--idle-timeout", "1s"], key="timeouts")
    c = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    c.sendall(b"POST /v1/namespaces/t/segments HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Content-Length: 100\r\n\r\n{\"embedding\":")
    check(_closed_within(c, 20), "an incomplete request is dropped after --request-timeout")
    c.close()
    c = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    c.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    check(_closed_within(c, 20), "an idle keep-alive connection is closed after --idle-timeout")
    c.close()
    c = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    check(_closed_within(c, 20), "a connection that never sends is closed")
    c.close()
    expect_ok(srv.get("/healthz"), 200, "server still answers")
    st, _, _ = srv.get("/v1/namespaces/t")
    eq(st, 404, "the dropped insert wrote nothing")


@test
def test_bad_max_namespaces():
    srv = h.shared(["--max-namespaces", "3"], key="maxns")
    for i in range(3):
        r = srv.put("/v1/namespaces/lim%d" % i, {"dim": 2})
        check(r[0] in (200, 201), "namespace %d of 3: %r" % (i, r))
    before = sorted(x["name"] for x in expect_ok(srv.get("/v1/namespaces"))["namespaces"])
    expect_error(srv.put("/v1/namespaces/lim3", {"dim": 2}), 400, "invalid_field", "a 4th namespace (PUT)")
    expect_error(srv.insert("lim4", {"embedding": [1, 2]}), 400, "invalid_field", "a 4th namespace (insert)")
    after = sorted(x["name"] for x in expect_ok(srv.get("/v1/namespaces"))["namespaces"])
    eq(after, before, "no namespace created over the limit")
    expect_ok(srv.insert("lim0", {"embedding": [1, 2]}), 201, "existing namespaces still take inserts")
    expect_ok(srv.delete("/v1/namespaces/lim1"), 200)
    expect_ok(srv.insert("lim4", {"embedding": [1, 2]}), 201, "room again after a drop")


@test
def test_bad_overload_answers_503_with_retry_after():
    """A tiny work queue under a burst of heavy requests: every answer is 200 or 503
    unavailable with Retry-After; health stays responsive. (Whether a 503 happens at all
    depends on timing, so only the shape of each answer is asserted.)"""
    srv = h.shared(["--max-queue", "1", "--threads", "1"], key="overload")
    ns = "heavy"
    rng = __import__("random").Random(5)
    if srv.ns_stats(ns)[0] == 404:
        for k in range(10):
            segs = [{"embedding": [rng.gauss(0, 1) for _ in range(64)]} for _ in range(1000)]
            r = srv.insert(ns, {"segments": segs})
            check(r[0] in (201, 503), "load: %r" % (r[0],))
    results = []

    def hit():
        q = [rng.gauss(0, 1) for _ in range(64)]
        try:
            results.append(srv.retrieve(ns, {"embedding": q, "k": 50, "half_life": "1d"}))
        except OSError as e:
            results.append((None, {}, str(e)))

    threads = [threading.Thread(target=hit, daemon=True) for _ in range(40)]
    for t in threads:
        t.start()
    expect_ok(srv.get("/healthz"), 200, "health during the burst")
    for t in threads:
        t.join(60)
    eq(len(results), 40, "every request answered")
    for st, hdr, body in results:
        check(st in (200, 503), "status under load: %r %s" % (st, body))
        if st == 503:
            expect_error((st, hdr, body), 503, "unavailable", "overload")
            check(re.match(r"^[1-9][0-9]*$", hdr.get("retry-after", "")), "Retry-After in seconds: %r" % hdr)


@test
def test_bad_mutated_requests_never_5xx():
    """Seeded byte-level mutations of valid requests (insert, batch, retrieve, compact,
    namespace create, MCP): every answer is a 2xx/4xx with a JSON body, never a 5xx or a
    dropped connection; the victim namespace is untouched."""
    import random
    srv = server("default")
    before = snapshot(srv)
    rng = random.Random(int(os.environ.get("MEM_TEST_SEED", "20260906")))
    ns = "fuzzed"
    expect_ok(srv.insert(ns, {"id": "seed", "embedding": E, "timestamp": TS_OK}), 201)
    seeds = [
        ("POST", "/v1/namespaces/%s/segments" % ns,
         {"id": "a", "text": "hello", "embedding": E, "timestamp": TS_OK, "source": "s", "metadata": {"k": [1, 2]},
          "supersedes": ["seed"]}),
        ("POST", "/v1/namespaces/%s/segments" % ns, {"segments": [{"embedding": E}, {"text": "x", "embedding": E}]}),
        ("POST", "/v1/namespaces/%s/retrieve" % ns,
         {"embedding": E, "k": 5, "half_life": "9d", "decay": {"weibull": {"shape": 1.5}}, "origin": TS_OK,
          "offset": "1h", "since": 1.5e9, "until": TS_OK, "min_score": -1, "explain": True, "coherence_weight": 0.2}),
        ("POST", "/v1/namespaces/%s/retrieve" % ns, {"query": "hello there", "k": 3, "half_life_days": 2}),
        ("POST", "/v1/namespaces/%s/compact" % ns,
         {"target": 3, "policy": "dedup_gated", "dry_run": True, "weights": {"recency": 0.5}, "context": [E]}),
        ("PUT", "/v1/namespaces/fuzzed_new", {"dim": 4}),
        ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": "memory_retrieve", "arguments": {"namespace": ns, "query": "x"}}}),
    ]
    answered = 0
    for i in range(400):
        method, path, body = rng.choice(seeds)
        data = bytearray(json.dumps(body).encode())
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            pos = rng.randrange(len(data))
            if op < 0.4:
                data[pos] = rng.randrange(256)
            elif op < 0.6:
                del data[pos]
            elif op < 0.8:
                data[pos:pos] = bytes([rng.choice(b'{}[]",:0123456789.eE-+ntfu\\')])
            else:
                data[pos:pos] = data[rng.randrange(len(data)):][:rng.randint(1, 40)]
        st, hdr, resp = srv.raw(h.raw_request(method, path, bytes(data)), timeout=30)
        check(st is not None, "mutation %d: no answer to %r" % (i, bytes(data)[:200]))
        check(st < 500, "mutation %d: %d for %r: %s" % (i, st, bytes(data)[:200], resp))
        if st >= 400 and path != "/mcp":
            expect_error((st, hdr, resp), st, {"invalid_json", "invalid_field", "dimension_mismatch",
                                               "timestamp_in_future", "unknown_id", "not_found",
                                               "non_monotonic_timestamp", "duplicate_id", "namespace_exists"},
                         "mutation %d" % i)
        answered += 1
    eq(answered, 400, "every mutation answered")
    after = snapshot(srv)
    eq((after[0], after[2]), (before[0], before[2]), "mutations: the victim namespace is untouched")


if __name__ == "__main__":
    h.main()
